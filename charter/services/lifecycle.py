"""The approval lifecycle of the business case: start drafting, submit (the adoption gate),
return with notes, address a note, approve (baselines frozen), re-open for amendment,
archive, kill, and the first steering committee (schedule, confirm)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from charter.services.common import Write


import datetime as dt
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from charter import acts, derive, finance
from charter.models import ApprovedVersion, BusinessCase
from charter.serializers import stored_fields
from charter.services.common import (
    TEXT_MAX,
    act_body,
    begin,
    body,
    body_act,
    current_case,
    ended,
    precheck,
    stamping_act,
)
from charter.services.minutes import clean_attendees
from charter.specs import (
    THESIS,
    ApproveSpec,
    ReopenSpec,
    ReturnNoteSpec,
    ReturnSpec,
    SteercoConfirmSpec,
    SteercoScheduleSpec,
    StopSpec,
)
from governance import notifications, outbox, signals, specs
from governance.cleaning import FieldErrors, decimal_to_json, only
from governance.concurrency import check_version
from governance.errors import Conflict, GateBlocked, NotFound, ValidationFailed
from governance.permissions import Caller
from governance.seats import seat_account_id
from registers.derive import carried_changes, carried_record, change_application_state
from registers.models import ChangeRequest, WorkPackage
from registers.services import (
    change_apply,
    change_create,
    change_for_update,
    change_withdraw,
    work_packages_baseline,
)

ADOPTION_MESSAGES = {
    "adoptionAffected": "Say who or what is affected by the change.",
    "adoptionKpi": "Give the adoption KPI.",
    "changeSaturation": "Choose the change saturation (None, Low, Modest or High).",
    "adoptionOwner": (
        "Name an adoption owner: a tracker user, or an external person with an e-mail address."
    ),
}
SPONSOR_MESSAGE = "Name the sponsor (decision authority) who will approve the case."


# --- gates ---------------------------------------------------------------------------------


def submission_missing(case: BusinessCase) -> dict[str, str]:
    """What the submission gate still needs, by field: the four adoption inputs (the spec's
    hard content gate) and the sponsor seat. Empty when the case may be submitted. The live
    checklist on the page shows exactly this."""
    missing = {field: ADOPTION_MESSAGES[field] for field in derive.adoption_gap_fields(case)}
    if not seat_account_id(case.decision_authority):
        missing["decisionAuthority"] = SPONSOR_MESSAGE
    return missing


# --- acts ----------------------------------------------------------------------------------


charter_draft = stamping_act(
    "draft", "charter.drafting_started", "Exploring -> Draft.", status="Draft"
)


def charter_submit(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """Exploring or Draft -> Submitted. Refused with 422 `gate` naming each missing adoption
    input and a missing sponsor. Queues the best-effort approval nudge."""
    precheck(caller, acts.ACTS["submit"], expected_revision)
    only(body(data))
    with transaction.atomic():
        write = begin(caller, acts.ACTS["submit"], expected_revision)
        case = write.case
        missing = submission_missing(case)
        if missing:
            raise GateBlocked(
                "The business case cannot be submitted yet. Still needed: "
                + ", ".join(missing)
                + ".",
                fields={field: [message] for field, message in missing.items()},
            )
        case.approval_status = "Submitted"
        submitted_at = timezone.now()
        case.submitted_at = submitted_at
        case.submitted_by_account_id = caller.account_id
        case = write.finish("charter.submitted")
        outbox.enqueue(
            "charter.approval_nudge",
            {"projectKey": write.project.key, "submittedAt": submitted_at.isoformat()},
        )
        project = write.project
        notifications.notify(
            kind="case_submitted",
            recipient_account_id=seat_account_id(case.decision_authority)
            or project.sponsor_account_id,
            dedupe_key=f"case_submitted:{project.key}:{submitted_at.isoformat()}",
            subject=f"{project.key}: business case submitted for your approval",
            body=(
                f"The business case of {project.name} ({project.key}), version {case.version}, "
                "was submitted for your approval. Approve it, or return it with notes."
            ),
            url=reverse("charter:index", args=[project.key]),
            project_key=project.key,
        )
        return case


def _returned(write: Write, sent: ReturnSpec) -> None:
    case = write.case
    case.return_notes = [*(case.return_notes or []), *sent.return_notes]
    case.returned_at = timezone.now()
    case.approval_status = "Draft"


charter_return = body_act(
    "return",
    "charter.returned",
    "Submitted -> Draft by the sponsor, with at least one note; sets returnedAt.",
    ReturnSpec,
    _returned,
)


NOTE_LISTS = (
    ("return_notes", "returnNotes", acts.ADDRESS_NOTE, "charter.return_note_addressed"),
    (
        "closeout_return_notes",
        "closeOutReturnNotes",
        acts.ADDRESS_CLOSEOUT_NOTE,
        "closeout.return_note_addressed",
    ),
)


def _note_home(case: BusinessCase, note_id: str) -> tuple[str, str, acts.Act, str]:
    for attr, name, act, kind in NOTE_LISTS:
        if any(n.get("id") == note_id for n in getattr(case, attr) or []):
            return attr, name, act, kind
    raise NotFound("No such return note.")


def return_note_address(
    *, caller: Caller, note_id: str, data: Any = None, expected_revision: int | None = None
) -> tuple[BusinessCase, dict[str, Any]]:
    """Mark a return note addressed (or not): a business-case note while Draft, a close-out
    note while the close-out is being reworked. Editors only."""
    case = current_case(caller.project)
    attr, _, act, kind = _note_home(case, note_id)
    acts.check(act, case, caller)
    check_version(case.revision, expected_revision, current_repr=case)
    data = body(data)
    if "addressed" not in data and not set(data) - set(specs.writable(ReturnNoteSpec)):
        raise ValidationFailed({"addressed": [specs.REQUIRED_MESSAGE]})
    addressed = act_body(ReturnNoteSpec, data).addressed
    with transaction.atomic():
        write = begin(caller, act, expected_revision)
        notes = [dict(n) for n in getattr(write.case, attr) or []]
        note = next((n for n in notes if n.get("id") == note_id), None)
        if note is None:
            raise NotFound("No such return note.")
        if note.get("addressed") is addressed:
            return write.case, note
        note["addressed"] = addressed
        setattr(write.case, attr, notes)
        write.finish(kind, extra={"noteId": {"before": None, "after": note_id}})
        return write.case, note


def plan_baseline(
    case: BusinessCase,
    packages: list[WorkPackage],
    approved_at: dt.datetime,
    carried: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """{version, approvedAt, workPackages: {id: {budget, plannedStartDate, plannedEndDate}},
    totalBudget, totalBenefit, carriedChanges}: the frozen plan that the status page's cost
    and schedule RAG read, the approved benefit (the financial case's total benefit,
    `finance.total_benefit`; null when it states none) that the benefit forecast reads, and
    the approved changes the approval carried on top of the plan (`registers.derive.
    carried_record`: they go on counting as approved variations, so the approved budget and
    end date read the same just before and just after approval)."""
    total = sum((p.budget or Decimal(0) for p in packages), Decimal(0))
    return {
        "version": case.version,
        "approvedAt": approved_at.isoformat(),
        "workPackages": {
            str(p.pk): {
                "budget": decimal_to_json(p.budget),
                "plannedStartDate": p.planned_start_date.isoformat()
                if p.planned_start_date
                else None,
                "plannedEndDate": p.planned_end_date.isoformat() if p.planned_end_date else None,
            }
            for p in packages
        },
        "totalBudget": decimal_to_json(total),
        "totalBenefit": decimal_to_json(finance.total_benefit(case.financial_case)),
        "carriedChanges": list(carried or []),
    }


def charter_approve(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """Submitted -> Approved by the sponsor. Freezes budgetBaseline := budget on every work
    package, writes planBaseline, records the approved version; for an amendment (version 2
    and up) the enabling change must be Approved and is stamped with its applicationRecord.
    The Approved budget and schedule changes standing on top of the plan are carried: listed
    in planBaseline.carriedChanges and in the audit entry (carriedChanges), they go on
    counting as approved variations, so approval moves neither the approved budget nor the
    approved end date."""
    precheck(caller, acts.ACTS["approve"], expected_revision)
    partial = act_body(ApproveSpec, data)
    comment = partial.approval_comment or ""
    rationale = partial.approval_rationale or ""
    # Every package's baseline, the case and the status change: the health is derived once.
    with transaction.atomic(), signals.deferred_project_changes():
        write = begin(caller, acts.ACTS["approve"], expected_revision)
        case, project = write.case, write.project
        now = timezone.now()
        change = None
        if case.version >= 2:
            change = change_for_update(project, case.amendment_enabled_by_change_id)
            if change is None:
                raise Conflict(
                    "This amendment has no enabling change request any more; re-open it "
                    "citing an approved change, or raise a new one."
                )
            if change.status != "Approved":
                raise Conflict(
                    f"The enabling change “{change.summary}” is {change.status}: it must be "
                    "Approved before the amended business case can be approved."
                )
        packages = work_packages_baseline(caller, project)
        case.approval_status = "Approved"
        case.approved_at = now
        case.approved_by_account_id = caller.account_id
        case.approval_comment = comment
        case.approval_rationale = rationale
        # The tolerances sent (each one not sent keeps the value in force).
        specs.apply(partial, case, skip=("approval_comment", "approval_rationale"))
        carried = carried_record(carried_changes(project))
        case.plan_baseline = plan_baseline(case, packages, now, carried)
        if change is not None:
            change_apply(caller, project, change, kind="charter", ref=case.version, at=now)
        ApprovedVersion.objects.create(
            business_case=case,
            version=case.version,
            approved_at=now,
            approved_by_account_id=caller.account_id,
            approval_comment=comment,
            approval_rationale=rationale,
            enabling_change_id=str(change.pk) if change else None,
            plan_baseline=case.plan_baseline,
            thesis={k: v for k, v in stored_fields(case).items() if k in THESIS},
        )
        case = write.finish(
            "charter.approved", extra={"carriedChanges": {"before": None, "after": carried}}
        )
        signals.charter_approved.send(sender=BusinessCase, project=project, at=now)
        if case.first_steerco_held_at:
            # The committee met before approval: initiation is complete as soon as it starts.
            signals.initiation_completed.send(sender=BusinessCase, project=project, at=now)
        return case


def charter_reopen(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """Approved -> Draft at version + 1, enabled by a change request: cite an Approved change
    deriving AwaitingApplication ({"changeId"}), or have one raised ({"summary", "reason"};
    the reason is required; it routes to the sponsor, Proposed). A Draft amendment whose
    enabling change was rejected, withdrawn or deleted may re-point to a new one (the version
    stays). Audited as charter.reopened citing the change."""
    precheck(caller, acts.ACTS["reopen"], expected_revision)
    data = body(data)
    only(data, *specs.writable(ReopenSpec))
    change_id = data.get("changeId")
    if change_id and ("summary" in data or "reason" in data):
        raise ValidationFailed(
            {"changeId": ["Cite an approved change, or give a summary and reason: not both."]}
        )
    partial = act_body(ReopenSpec, data)
    with transaction.atomic():
        write = begin(caller, acts.ACTS["reopen"], expected_revision)
        case, project = write.case, write.project
        if change_id:
            change = change_for_update(project, change_id)
            if change is None:
                raise ValidationFailed({"changeId": ["No such change request in this project."]})
            state = change_application_state(change)
            if state != "AwaitingApplication":
                raise ValidationFailed(
                    {
                        "changeId": [
                            f"Only an Approved change awaiting application can enable an "
                            f"amendment; this one is {state}."
                        ]
                    }
                )
            raised = False
        else:
            reason, summary = partial.reason, partial.summary
            if not reason:
                raise ValidationFailed(
                    {"reason": ["A reason is required to raise the enabling change."]}
                )
            sponsor_id = seat_account_id(case.decision_authority)
            change = change_create(
                caller=caller,
                data={
                    "summary": summary or f"Amend the business case (version {_next(case)})",
                    "reason": reason,
                    "approverSeat": {"accountId": sponsor_id} if sponsor_id else None,
                },
                approver_locked=True,
            )
            raised = True
        previous = case.amendment_enabled_by_change_id
        if case.approval_status == "Approved":
            case.version += 1
        case.approval_status = "Draft"
        case.amendment_enabled_by_change_id = str(change.pk)
        return write.finish(
            "charter.reopened",
            extra={
                "enablingChange": {
                    "before": previous,
                    "after": {"id": str(change.pk), "summary": change.summary, "raised": raised},
                }
            },
        )


def _next(case: BusinessCase) -> int:
    return case.version + 1 if case.approval_status == "Approved" else case.version


def charter_archive(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """Exploring, Draft or Submitted -> Archived (explored, not pursued), for a case that was
    never approved (else 409: the sponsor kills it). Reason required."""
    return _archive(caller, "archive", "archived", data, expected_revision)


def charter_kill(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """Approved -> Archived by the sponsor: a stop decision on a running investment; also
    from Draft or Submitted while an approved case is being amended."""
    return _archive(caller, "kill", "killed", data, expected_revision)


def _withdraw_enabling_change(write: Write, disposition: str, reason: str) -> ChangeRequest | None:
    """The Proposed change that enables the amendment (derive.change_withdrawn_on_stop) could
    not be decided once the case is archived (its register freezes), and the amendment it asks
    for will not be made: it is withdrawn in the same transaction, by the person who stopped
    the case, saying why. An Approved enabling change is a decision already taken: kept."""
    case = write.case
    change = change_for_update(
        write.project, case.amendment_enabled_by_change_id, status="Proposed"
    )
    if change is None:
        return None
    why = (
        f"Withdrawn because the business case was {disposition} while the amendment this "
        f"change enables (version {case.version}) was in progress. Reason given: "
    )
    room = TEXT_MAX - len(why)
    comment = why + (reason if len(reason) <= room else reason[: room - 1] + "…")
    change_withdraw(write.caller, write.project, change, comment)
    return change


def _archive(
    caller: Caller, act_name: str, disposition: str, data: Any, expected_revision: int | None
) -> BusinessCase:
    precheck(caller, acts.ACTS[act_name], expected_revision)
    reason = act_body(StopSpec, data).reason
    assert reason is not None  # StopSpec requires it
    with transaction.atomic():
        write = begin(caller, acts.ACTS[act_name], expected_revision)
        case = write.case
        case.archived_from_status = case.approval_status
        case.approval_status = "Archived"
        case.archived_at = timezone.now()
        case.archived_by_account_id = caller.account_id
        case.archive_reason = reason
        case.terminal_disposition = disposition
        withdrawn = _withdraw_enabling_change(write, disposition, reason)
        extra = (
            {"withdrawnChange": {"before": None, "after": str(withdrawn.pk)}} if withdrawn else None
        )
        case = write.finish(f"charter.{disposition}", extra=extra)
        ended(write, act_name, reason)
        return case


def _schedule_steerco(write: Write, sent: SteercoScheduleSpec) -> None:
    write.case.first_steerco_scheduled_for = sent.scheduled_for


charter_steerco_schedule = body_act(
    "steerco-schedule",
    "charter.steerco_scheduled",
    "Set (or clear) the date the first steering committee is scheduled for.",
    SteercoScheduleSpec,
    _schedule_steerco,
)


def charter_steerco_confirm(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """Confirm the first steering committee was held without recording minutes: sets
    firstSteercoHeldAt (and, optionally, firstSteercoAttendees), completing initiation."""
    precheck(caller, acts.ACTS["steerco-confirm"], expected_revision)
    sent = act_body(SteercoConfirmSpec, data)
    errors = FieldErrors()
    attendees = clean_attendees(sent.attendees, errors)
    errors.raise_if_any()
    with transaction.atomic():
        write = begin(caller, acts.ACTS["steerco-confirm"], expected_revision)
        now = timezone.now()
        write.case.first_steerco_held_at = now
        write.case.first_steerco_attendees = attendees
        case = write.finish("charter.steerco_confirmed")
        signals.initiation_completed.send(sender=BusinessCase, project=write.project, at=now)
        return case
