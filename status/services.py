"""Every write to project status and status reports, one function per rule:
`<thing>_<act>(*, caller, ...)`, atomic, audited, permission-checked through the `Caller`,
raising domain errors. Views, the API, the signal receivers and the demo call these.

Who writes: editors (the Project Lead and the editors they nominate) update the status, work
the initiation checklist, and draft and publish status reports. A project manager named on the
business case does so when they are an editor; the seat alone grants nothing."""

import datetime as dt
import uuid
from typing import Any

from django.db import transaction
from django.utils import timezone

from governance import audit, specs
from governance.cleaning import FieldErrors
from governance.concurrency import check_version
from governance.errors import BadRequest, Conflict, NotFound, ValidationFailed
from governance.models import Project
from governance.permissions import Caller, require
from status import derive, pack, selectors
from status.models import PHASE_MAX, ProjectStatus, StatusReport
from status.serializers import status_to_dict, stored_fields
from status.specs import StatusReportSpec, StatusSpec

EDIT_MESSAGE = "Only the Project Lead and the editors they nominate may change the status."


# --- cleaning -------------------------------------------------------------------------------


def _clean(status: ProjectStatus, data: dict[str, Any]) -> FieldErrors:
    """Validate `data` (status.specs) onto `status` in memory; every offending field is
    named."""
    partial, errors = specs.validate(StatusSpec, data)
    specs.apply(partial, status)
    return errors


def _audit_fields(status: ProjectStatus) -> dict[str, Any]:
    fields = stored_fields(status)
    fields.pop("projectKey")
    return fields


def _locked_status(project: Project) -> ProjectStatus:
    """Lock the project row (status writes of one project serialise behind it), then the
    project's status, created with the spec's defaults when it does not exist yet."""
    project = Project.objects.select_for_update().get(pk=project.pk)
    status, _ = ProjectStatus.objects.select_for_update().get_or_create(project=project)
    status.project = project
    return status


# --- project status -------------------------------------------------------------------------


def status_update(
    *,
    caller: Caller,
    data: dict[str, Any],
    expected_revision: int | None = None,
    now: dt.datetime | None = None,
) -> ProjectStatus:
    """Update the status fields sent in `data`. Always stamps lastUpdatedAt/By: saving without
    a change confirms the status as current (it is no longer stale)."""
    require(caller.can_edit, EDIT_MESSAGE)
    if not isinstance(data, dict):
        raise BadRequest()
    with transaction.atomic():
        status = _locked_status(caller.project)
        check_version(status.revision, expected_revision, current_repr=status)
        before = _audit_fields(status)
        _clean(status, data).raise_if_any()
        status.last_updated_at = now or timezone.now()
        status.last_updated_by_account_id = caller.account_id
        status.revision += 1
        status.save()
        audit.record_in(
            status.project,
            caller.account_id,
            "status.updated",
            "projectStatus",
            status.project.key,
            audit.diff(before, _audit_fields(status)),
        )
    return status


def status_phase_follow(*, project: Project, phase: str, actor_account_id: str) -> bool:
    """The status' free-text phase follows the stage plan's current stage (gates): set to
    `phase` (clamped to the column) and audited as status.phase_followed when it differs.
    Inside the caller's transaction. Returns whether it changed."""
    status = _locked_status(project)
    phase = phase[:PHASE_MAX]
    if status.phase == phase:
        return False
    before, status.phase = status.phase, phase
    status.revision += 1
    status.save(update_fields=["phase", "revision"])
    audit.record_in(
        status.project,
        actor_account_id,
        "status.phase_followed",
        "projectStatus",
        status.project.key,
        {"phase": {"before": before, "after": phase}},
    )
    return True


def _checklist_item(item_id: Any) -> str:
    if item_id not in derive.CHECKLIST_IDS:
        raise ValidationFailed({"itemId": [f"Must be one of: {', '.join(derive.CHECKLIST_IDS)}."]})
    return str(item_id)


def _set_dismissal(
    caller: Caller, item_id: Any, *, dismissed: bool, expected_revision: int | None
) -> ProjectStatus:
    require(caller.can_edit, EDIT_MESSAGE)
    item_id = _checklist_item(item_id)
    with transaction.atomic():
        status = _locked_status(caller.project)
        check_version(status.revision, expected_revision, current_repr=status)
        dismissals = dict(status.initiation_dismissals or {})
        if (item_id in dismissals) == dismissed:
            return status
        before = dict(dismissals)
        if dismissed:
            dismissals[item_id] = timezone.now().isoformat()
        else:
            dismissals.pop(item_id)
        status.initiation_dismissals = dismissals
        status.revision += 1
        status.save()
        audit.record_in(
            status.project,
            caller.account_id,
            "status.checklist_dismissed" if dismissed else "status.checklist_restored",
            "projectStatus",
            status.project.key,
            audit.diff({"initiationDismissals": before}, {"initiationDismissals": dismissals}),
        )
    return status


def status_checklist_dismiss(
    *, caller: Caller, item_id: Any, expected_revision: int | None = None
) -> ProjectStatus:
    """Dismiss an initiation checklist item; initiationDismissals keeps when."""
    return _set_dismissal(caller, item_id, dismissed=True, expected_revision=expected_revision)


def status_checklist_restore(
    *, caller: Caller, item_id: Any, expected_revision: int | None = None
) -> ProjectStatus:
    """Bring a dismissed checklist item back."""
    return _set_dismissal(caller, item_id, dismissed=False, expected_revision=expected_revision)


INITIATION_NOT_STARTED = (
    "Initiation starts when the business case is approved; acknowledge it as complete once "
    "the sponsor has approved the case."
)


def initiation_acknowledge_refusal(status: ProjectStatus) -> str | None:
    """Why initiation cannot be acknowledged as complete now, or None when it can: it must
    have started (the business case approved) and not be complete yet. The page offers the
    act only when this is None."""
    if status.initiation_started_at is None:
        return INITIATION_NOT_STARTED
    if status.initiation_completed_at is not None:
        return (
            "Initiation was already completed on "
            f"{timezone.localdate(status.initiation_completed_at).isoformat()}."
        )
    return None


def status_initiation_acknowledge(
    *, caller: Caller, expected_revision: int | None = None
) -> ProjectStatus:
    """An editor acknowledges that initiation is complete (initiationCompletedAt), once it
    has started (the business case is approved) and not yet completed; refused (409) with
    `initiation_acknowledge_refusal`'s words otherwise."""
    require(caller.can_edit, EDIT_MESSAGE)
    with transaction.atomic():
        status = _locked_status(caller.project)
        refusal = initiation_acknowledge_refusal(status)
        if refusal:
            raise Conflict(refusal)
        check_version(status.revision, expected_revision, current_repr=status)
        status.initiation_completed_at = timezone.now()
        status.revision += 1
        status.save()
        audit.record_in(
            status.project,
            caller.account_id,
            "status.initiation_completed",
            "projectStatus",
            status.project.key,
            {"initiationCompletedAt": {"before": None, "after": status.initiation_completed_at}},
        )
    return status


def _stamp_once(project: Project, attr: str, key: str, kind: str, at: dt.datetime) -> None:
    """Set the initiation start or completion once. Initiation never completes before it
    starts: a steering committee held before the approval completes it at the approval."""
    with transaction.atomic():
        status = _locked_status(project)
        if getattr(status, attr) is not None:
            return
        started, completed = status.initiation_started_at, status.initiation_completed_at
        if attr == "initiation_completed_at" and started is not None and at < started:
            at = started
        if attr == "initiation_started_at" and completed is not None and completed < at:
            status.initiation_completed_at = at
        setattr(status, attr, at)
        status.revision += 1
        status.save()
        # No person acts here: the business-case act that sent the signal is audited itself.
        audit.record_in(
            project, "", kind, "projectStatus", project.key, {key: {"before": None, "after": at}}
        )


def status_initiation_start(*, project: Project, at: dt.datetime) -> None:
    """Business-case approval: initiationStartedAt, when unset."""
    _stamp_once(
        project, "initiation_started_at", "initiationStartedAt", "status.initiation_started", at
    )


def status_initiation_complete(*, project: Project, at: dt.datetime) -> None:
    """First steering committee held: initiationCompletedAt, when unset."""
    _stamp_once(
        project,
        "initiation_completed_at",
        "initiationCompletedAt",
        "status.initiation_completed",
        at,
    )


# --- status reports -------------------------------------------------------------------------


def _clean_report(report: StatusReport, data: dict[str, Any]) -> FieldErrors:
    partial, errors = specs.validate(StatusReportSpec, data)
    specs.apply(partial, report)
    return errors


def _report_fields(report: StatusReport) -> dict[str, Any]:
    return {**specs.snapshot(StatusReportSpec, report), "state": report.state}


def _report_in_project(project: Project, report_id: Any) -> StatusReport:
    try:
        pk = uuid.UUID(str(report_id))
    except ValueError:
        raise NotFound() from None
    report: StatusReport | None = (
        StatusReport.objects.select_for_update().filter(project=project, pk=pk).first()
    )
    if report is None:
        raise NotFound(f"No such status report in {project.key}.")
    report.project = project
    return report


def _draft(report: StatusReport, act: str) -> None:
    if report.state != "Draft":
        raise Conflict(f"This report was published and can no longer be {act}.")


def default_key_messages(status: ProjectStatus) -> str:
    """A new draft starts from the status' key messages, else the PM's steering key message."""
    commentary = status.structured_commentary or {}
    return commentary.get("keyMessages") or status.pm_key_message or ""


def status_report_create(*, caller: Caller, data: dict[str, Any]) -> StatusReport:
    """Start a draft. One draft per project at a time."""
    require(caller.can_edit, "Only the Project Lead and the editors they nominate draft reports.")
    if not isinstance(data, dict):
        raise BadRequest()
    with transaction.atomic():
        status = _locked_status(caller.project)
        project = status.project
        existing = StatusReport.objects.filter(project=project, state="Draft").first()
        if existing is not None:
            raise Conflict(
                f"A draft report ({existing.title}) already exists: edit or publish it, or "
                "discard it first."
            )
        report = StatusReport(
            project=project,
            created_by_account_id=caller.account_id,
            title=f"Status report {timezone.localdate().isoformat()}",
            key_messages=default_key_messages(status),
        )
        _clean_report(report, data).raise_if_any()
        report.save()
        audit.record_in(
            project,
            caller.account_id,
            "status_report.created",
            "statusReport",
            report.pk,
            audit.diff({}, _report_fields(report)),
        )
    return report


def status_report_update(
    *, caller: Caller, report_id: Any, data: dict[str, Any], expected_revision: int | None = None
) -> StatusReport:
    require(caller.can_edit, "Only the Project Lead and the editors they nominate edit reports.")
    if not isinstance(data, dict):
        raise BadRequest()
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=caller.project.pk)
        report = _report_in_project(project, report_id)
        _draft(report, "edited")
        check_version(report.revision, expected_revision, current_repr=report)
        before = _report_fields(report)
        _clean_report(report, data).raise_if_any()
        changes = audit.diff(before, _report_fields(report))
        if changes:
            report.revision += 1
            report.save()
            audit.record_in(
                project,
                caller.account_id,
                "status_report.updated",
                "statusReport",
                report.pk,
                changes,
            )
    return report


def status_report_delete(
    *, caller: Caller, report_id: Any, expected_revision: int | None = None
) -> None:
    """Discard a draft. Published reports are never deleted."""
    require(caller.can_edit, "Only the Project Lead and the editors they nominate edit reports.")
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=caller.project.pk)
        report = _report_in_project(project, report_id)
        _draft(report, "discarded")
        check_version(report.revision, expected_revision, current_repr=report)
        audit.record_in(
            project,
            caller.account_id,
            "status_report.deleted",
            "statusReport",
            report.pk,
            audit.diff(_report_fields(report), {}),
        )
        report.delete()


def status_report_publish(
    *,
    caller: Caller,
    report_id: Any,
    expected_revision: int | None = None,
    now: dt.datetime | None = None,
) -> StatusReport:
    """Publish a draft: freeze the status, its derived values and drivers, the steering pack
    (`status.pack`), the key messages, who and when into an immutable snapshot."""
    require(caller.can_edit, "Only the Project Lead and the editors they nominate publish reports.")
    now = now or timezone.now()
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=caller.project.pk)
        report = _report_in_project(project, report_id)
        _draft(report, "published again")
        check_version(report.revision, expected_revision, current_repr=report)
        view = selectors.view_for(project, now=now)
        status = status_to_dict(view)
        previous = pack.previous_report(project, before=now)
        report.state = "Published"
        report.published_at = now
        report.published_by_account_id = caller.account_id
        report.snapshot = {
            "title": report.title,
            "keyMessages": report.key_messages,
            "publishedAt": now.isoformat(),
            "publishedByAccountId": caller.account_id,
            "projectKey": project.key,
            "projectName": project.name,
            "status": status,
            # The steering pack as it stood (risks, ends, decisions, changes since the last
            # report): a past pack reads as it was.
            "pack": pack.pack_of(view, status, previous=previous),
        }
        report.revision += 1
        report.save()
        audit.record_in(
            project,
            caller.account_id,
            "status_report.published",
            "statusReport",
            report.pk,
            {
                "state": {"before": "Draft", "after": "Published"},
                "publishedAt": {"before": None, "after": now},
            },
        )
    return report
