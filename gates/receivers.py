"""Receivers of the kernel signals: approving the business case starts the stage plan's
first stage (its status phase follows). The gate reviews awaiting a person are answered to
"Waiting for me" through `governance.signals.answer_waiting_with` (see `gates.apps`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gates import services

if TYPE_CHECKING:
    import datetime as dt

    from governance.models import Project


def on_charter_approved(
    sender: object, *, project: Project, at: dt.datetime, **kwargs: Any
) -> None:
    services.stage_plan_start(project=project, at=at)
