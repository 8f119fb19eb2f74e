"""Receivers of the kernel signals the business-case services send inside their transaction:
approval starts initiation, the first steering committee held completes it, an act that ends
delivery (Kill, Archive, Close) settles the project's undecided exception. And the writes that
move a project's stored health: every save or delete of a fact its derivation reads (registers,
business case, status, the project's approval state) announces the project
(`governance.signals.project_facts_changed`), and the announcement rewrites its row in the same
transaction; a change of the site's thresholds rewrites every row."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import datetime as dt

    from governance.permissions import Caller


from django.db.models import QuerySet

from governance import signals
from governance.models import Project, SiteSettings
from status import exceptions, health, services


class ProjectFact(Protocol):
    """A row of a project's facts (a register row, a report, the business case)."""

    project_id: int


def on_charter_approved(
    sender: object, *, project: Project, at: dt.datetime, **kwargs: Any
) -> None:
    services.status_initiation_start(project=project, at=at)


def on_initiation_completed(
    sender: object, *, project: Project, at: dt.datetime, **kwargs: Any
) -> None:
    services.status_initiation_complete(project=project, at=at)


def on_charter_ended(
    sender: object,
    *,
    project: Project,
    act: str,
    label: str,
    caller: Caller,
    at: dt.datetime,
    reason: str = "",
    **kwargs: Any,
) -> None:
    exceptions.exception_settle(
        project=project, act=act, label=label, caller=caller, at=at, reason=reason
    )


def on_fact_saved(
    sender: object, *, instance: ProjectFact, raw: bool = False, **kwargs: Any
) -> None:
    if not raw:
        signals.project_facts_changed(instance.project_id)


def _deleting_the_project(origin: object) -> bool:
    if isinstance(origin, Project):
        return True
    return isinstance(origin, QuerySet) and origin.model is Project


def on_fact_deleted(
    sender: object, *, instance: ProjectFact, origin: object = None, **kwargs: Any
) -> None:
    # Deleting a project deletes its facts and its health row together: nothing to derive.
    if not _deleting_the_project(origin):
        signals.project_facts_changed(instance.project_id)


def on_project_saved(
    sender: object,
    *,
    instance: Project,
    created: bool,
    update_fields: frozenset[str] | None = None,
    raw: bool = False,
    **kwargs: Any,
) -> None:
    # A new project gets its row when first read; of the project's own fields only the approval
    # state (the business case's mirror) is derived from.
    if raw or created:
        return
    if update_fields is None or "approval_status" in update_fields:
        signals.project_facts_changed(instance.pk)


def on_project_changed(sender: object, *, project_ids: Iterable[int], **kwargs: Any) -> None:
    health.refresh(project_ids)


def on_site_settings_saved(
    sender: object, *, instance: SiteSettings, created: bool, raw: bool = False, **kwargs: Any
) -> None:
    if not (raw or created):
        health.refresh_outdated(instance)
