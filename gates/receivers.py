"""Receivers of the kernel signals: approving the business case starts the stage plan's
first stage (its status phase follows); the
"Waiting for me" queue lists the gate reviews awaiting the person."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.db.models import Q

from gates import selectors, services

if TYPE_CHECKING:
    import datetime as dt

    from governance.models import Project
    from governance.permissions import Caller


def on_charter_approved(
    sender: object, *, project: Project, at: dt.datetime, **kwargs: Any
) -> None:
    services.stage_plan_start(project=project, at=at)


def on_waiting_items(
    sender: object, *, rows: Iterable[tuple[Project, Caller]], **kwargs: Any
) -> dict[str, list[Any]]:
    """The gate reviews awaiting the person, for "Waiting for me"."""
    return {"gateReviews": selectors.awaiting(rows)}


def on_waiting_projects(sender: object, *, account_id: str, **kwargs: Any) -> Q:
    """The projects whose current stage has a gate review (`selectors.awaiting` decides)."""
    return selectors.with_gate_review()
