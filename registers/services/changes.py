"""Change requests: raise, edit and delete while Proposed; adjudicate (Approved, Rejected,
Withdrawn). Decided changes are immutable."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import uuid

    from governance.models import Project


import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from governance import audit, notifications, specs
from governance.cleaning import FieldErrors, text
from governance.concurrency import check_version
from governance.errors import Conflict, Forbidden
from governance.permissions import (
    Caller,
    change_duty,
    editor_account_ids,
    may_browse,
    require,
)
from governance.seats import clean_seats, seat_account_id
from registers.derive import change_application_state, change_dimensions, change_is_open
from registers.models import TEXT_MAX, ChangeRequest, WorkPackage
from registers.services.common import (
    as_uuid,
    audit_write,
    batch_memo,
    check_people,
    get_in_project,
    insert_created,
    lock_project,
    refuse_members,
    save_revised,
    writable_project,
    writable_record,
)
from registers.specs import ChangeSpec

REFUSED_WHEN_CHANGED = specs.refused_when_changed(ChangeSpec)
MOVED_MESSAGES = {
    "status": "Decide a change with POST .../adjudicate, not by editing its status.",
}
OUTCOMES = ["Approved", "Rejected", "Withdrawn"]
# Checked against stored state below, not set as sent.
PEOPLE_AND_LINKS = {
    "target_work_package_id",
    "proposer_account_id",
    "approver_account_id",
    "approver_seat",
}
PROPOSER = ("proposerAccountId",)


def _clean(change: ChangeRequest, data: dict[str, Any], *, creating: bool) -> FieldErrors:
    """The declaration's rules (`ChangeSpec`), then the stateful and cross-field ones: the
    status moves by adjudication only, the target is a package of this project, the
    proposer is named once, the approver is someone who may approve it."""
    partial, errors = specs.validate(ChangeSpec, data, creating=creating)
    for key in REFUSED_WHEN_CHANGED:  # sent back unchanged: ignored
        if key in data and data[key] != getattr(change, specs.fields(ChangeSpec)[key].name):
            errors.add(key, MOVED_MESSAGES[key])
    values = specs.sent(partial)
    specs.apply(partial, change, skip=PEOPLE_AND_LINKS)
    if "dimensions" in values:
        # A non-empty list is the person's choice, kept from now on; an empty one hands
        # the dimensions back to the impacts.
        change.dimensions_chosen = bool(values["dimensions"])
    if "target_work_package_id" in values:
        target = values["target_work_package_id"]
        if target in (None, ""):
            change.target_work_package_id = None
        else:
            package_id = _package_of(change.project, target)
            if package_id is None:
                errors.add("targetWorkPackageId", "Must be a work package of this project.")
            else:
                change.target_work_package_id = package_id
    # Recorded on behalf of someone else: the proposer defaults to the raiser.
    names_proposer = creating and data.get("proposerAccountId") not in (None, "")
    if not creating and data.get("proposerAccountId", change.proposer_account_id) != (
        change.proposer_account_id
    ):
        errors.add("proposerAccountId", "The proposer is recorded when the change is raised.")
    approver_before = (change.approver_account_id, seat_account_id(change.approver_seat))
    check_people(ChangeSpec, change, partial, errors, also=PROPOSER if names_proposer else ())
    proposer = change.proposer_account_id
    if (
        names_proposer
        and "proposerAccountId" not in errors
        and proposer is not None
        and proposer != change.created_by_account_id
        and not _may_browse(proposer, change.project)
    ):
        errors.add("proposerAccountId", PROPOSER_MESSAGE.format(key=change.project.key))
    if "approver_seat" in values:
        seats = clean_seats({"approverSeat": values["approver_seat"]}, errors)
        change.approver_seat = seats.get("approverSeat")
    approver_after = (change.approver_account_id, seat_account_id(change.approver_seat))
    if change.approver_locked and not creating and approver_after != approver_before:
        field = "approverAccountId" if "approverAccountId" in data else "approverSeat"
        errors.add(
            field,
            "This change was raised to amend the business case and routes to the sponsor; "
            "its approver cannot be changed.",
        )
    named = change.approver_account_id or seat_account_id(change.approver_seat)
    field = "approverAccountId" if change.approver_account_id else "approverSeat"
    approver_named = creating or approver_after != approver_before
    if named and approver_named and field not in errors and not change.approver_locked:
        duty = _duty(change.project, named, change)
        if duty:
            errors.add(field, APPROVER_MESSAGES[duty])
    if not errors:
        change.dimensions = change_dimensions(change)
    return errors


def _package_of(project: Project, target: Any) -> uuid.UUID | None:
    """The id of the project's work package `target` names, or None (inside `batch()`, the
    project's package ids are read once for the batch)."""
    pk = as_uuid(target)
    if pk is None:
        return None
    ids = batch_memo(
        project,
        "work-package-ids",
        lambda: set(WorkPackage.objects.filter(project=project).values_list("pk", flat=True)),
    )
    if ids is not None:
        return pk if pk in ids else None
    return WorkPackage.objects.filter(project=project, pk=pk).values_list("pk", flat=True).first()


def _duty(project: Project, account_id: str, change: ChangeRequest) -> str | None:
    """`change_duty` of `account_id` as the change's decider (inside `batch()`, against the
    project's editors read once for the batch)."""
    return change_duty(
        project,
        account_id,
        proposer_account_id=change.proposer_account_id,
        created_by_account_id=change.created_by_account_id,
        editor_account_ids=batch_memo(project, "editors", lambda: editor_account_ids(project)),
    )


def _may_browse(account_id: str, project: Project) -> bool:
    """`may_browse`, asked once per person inside `batch()`."""
    asked: dict[str, bool] | None = batch_memo(project, "may-browse", dict)
    if asked is None:
        return may_browse(account_id, project)
    if account_id not in asked:
        asked[account_id] = may_browse(account_id, project)
    return bool(asked[account_id])


PROPOSER_MESSAGE = (
    "This person cannot browse {key} in the tracker: the proposer must be someone who can "
    "see the project. Leave it empty to be the proposer yourself."
)
# Separation of duties (`permissions.change_duty`) when an approver is named (422) ...
APPROVER_MESSAGES = {
    "proposed": "The approver must be someone other than the proposer.",
    "recorded": "The approver must be someone other than whoever records the change.",
    "lead": (
        "The Project Lead cannot approve the project's changes: nobody approves their own "
        "work. Name someone who does not edit the project, or leave it to the sponsor."
    ),
    "editor": (
        "An editor of this project cannot approve its changes: nobody approves their own "
        "work. Name someone who does not edit the project, or leave it to the sponsor."
    ),
}
# ... and when the change's approver (or the sponsor) decides it (403).
DECIDER_REFUSALS = {
    "proposed": "You proposed this change, so you may not decide it",
    "recorded": "You recorded this change, so you may not decide it",
    "lead": "As the Project Lead you may not decide this project's changes",
    "editor": "As an editor of this project you may not decide its changes",
}
DECIDER_REFUSAL_END = (
    ": nobody approves their own work. An editor can name another approver (not the lead, "
    "an editor, the proposer or whoever recorded the change)."
)


def change_create(
    *,
    caller: Caller,
    data: dict[str, Any],
    imported: bool = False,
    approver_locked: bool = False,
) -> ChangeRequest:
    """Raise a change request (status Proposed), recorded by the caller (createdByAccountId).
    The proposer defaults to the caller; `proposerAccountId` names another person who can
    browse the project (the API, the add form, the agent and a bulk import alike).
    `approver_locked` (server-side only: the business case's re-open act) fixes the approver
    named in `data` for the life of the change."""
    with transaction.atomic():
        project = writable_project(caller)
        change = build_change(
            caller, project, data, imported=imported, approver_locked=approver_locked
        )
        return write_change(caller, project, change)


def build_change(
    caller: Caller,
    project: Project,
    data: dict[str, Any],
    *,
    imported: bool = False,
    approver_locked: bool = False,
) -> ChangeRequest:
    """A new change request of `project` from `data`, checked and not written:
    ValidationFailed names every refused field. Reads, never writes: a refused row leaves
    nothing to undo, so an import needs no savepoint per row."""
    change = ChangeRequest(
        project=project,
        created_by_account_id=caller.account_id,
        proposer_account_id=caller.account_id,
        imported=imported,
        approver_locked=approver_locked,
    )
    _clean(change, data, creating=True).raise_if_any()
    return change


def write_change(caller: Caller, project: Project, change: ChangeRequest) -> ChangeRequest:
    """Insert a change `build_change` made, with its audit entry (inside `batch()`, queued),
    and tell the person it is routed to."""
    insert_created(caller, project, change, "changeRequest", "change.created", ChangeSpec)
    notify_routed(caller, project, change)
    return change


def decider_account_id(project: Project, change: ChangeRequest) -> str | None:
    """Who decides this change: the named approver (account or seat), else the sponsor."""
    return (
        change.approver_account_id
        or seat_account_id(change.approver_seat)
        or project.sponsor_account_id
        or None
    )


def notify_routed(caller: Caller, project: Project, change: ChangeRequest) -> None:
    """Tell the person a proposed change is routed to (once per change and person); not the
    person who routed it to themselves, nor one who may not decide it (separation of duties)."""
    decider = decider_account_id(project, change)
    if not decider or decider == caller.account_id or not change_is_open(change):
        return
    if _duty(project, decider, change):
        return
    notifications.notify(
        kind="change_routed",
        recipient_account_id=decider,
        dedupe_key=f"change_routed:{change.pk}:{decider}",
        subject=f"{project.key}: change request “{change.summary[:120]}” awaits your decision",
        body=(
            f"A change request of {project.name} ({project.key}) is routed to you: "
            f"“{change.summary}”. Approve or reject it."
        ),
        url=reverse("registers:change-detail", args=[project.key, change.pk]),
        project_key=project.key,
    )


def reopen_routed(project: Project, *, resolved_since: Any) -> int:
    """The project's registers thawed (a close-out sent back): each change still awaiting a
    decision is again its decider's to decide, so the routed notice the freeze marked read
    opens again (not one the person read before the freeze)."""
    keys = [
        f"change_routed:{change.pk}:{decider}"
        for change in ChangeRequest.objects.filter(project=project, status="Proposed")
        if change_is_open(change) and (decider := decider_account_id(project, change))
    ]
    return notifications.reopen(keys, resolved_since=resolved_since)


def require_open(change: ChangeRequest, act: str) -> None:
    """409 for a decided change: it is edited, deleted and decided only while Proposed."""
    if not change_is_open(change):
        raise Conflict(f"This change was {change.status.lower()} and can no longer be {act}.")


def _while_open(act: str) -> Callable[[ChangeRequest], None]:
    """`require_open` for `act`, as `writable_record` checks the change it reads."""
    return functools.partial(require_open, act=act)


def change_update(
    *, caller: Caller, change_id: Any, data: dict[str, Any], expected_revision: int | None = None
) -> ChangeRequest:
    with transaction.atomic():
        project, change = writable_record(
            caller, ChangeRequest, change_id, expected_revision, check=_while_open("edited")
        )
        before = specs.snapshot(ChangeSpec, change)
        decider_before = decider_account_id(project, change)
        _clean(change, data, creating=False).raise_if_any()
        changes = audit.diff(before, specs.snapshot(ChangeSpec, change))
        if changes:
            save_revised(caller, project, change, "changeRequest", "change.updated", changes)
            if decider_before and decider_before != decider_account_id(project, change):
                # Routed to someone else: the former decider has nothing left to do.
                notifications.resolve(f"change_routed:{change.pk}:{decider_before}")
            notify_routed(caller, project, change)
    return change


def change_delete(*, caller: Caller, change_id: Any, expected_revision: int | None = None) -> None:
    with transaction.atomic():
        project, change = writable_record(
            caller, ChangeRequest, change_id, expected_revision, check=_while_open("deleted")
        )
        audit_write(
            caller,
            project,
            "changeRequest",
            "change.deleted",
            change.pk,
            audit.diff(specs.snapshot(ChangeSpec, change), {}),
        )
        resolve_routed(change)
        change.delete()


def adjudication_rights(caller: Caller, change: ChangeRequest) -> tuple[bool, bool]:
    """(may approve or reject, may withdraw) for this caller and change, whatever its state:
    the named approver (approverAccountId or approverSeat), else the sponsor, decides, unless
    they recorded or proposed it, lead the project or edit it; the proposer or an editor
    withdraws."""
    may_decide = caller.may_adjudicate_change(
        approver_account_id=change.approver_account_id,
        approver_seat=change.approver_seat,
        proposer_account_id=change.proposer_account_id,
        created_by_account_id=change.created_by_account_id,
    )
    may_withdraw = caller.may_withdraw_change(proposer_account_id=change.proposer_account_id)
    return may_decide, may_withdraw


def decider_refusal(caller: Caller, change: ChangeRequest) -> str | None:
    """Why the change's decider may not decide it (separation of duties), in plain words; None
    when the caller is not its decider or may decide it."""
    if not caller.is_change_decider(
        approver_account_id=change.approver_account_id, approver_seat=change.approver_seat
    ):
        return None
    duty = caller.change_duty(
        proposer_account_id=change.proposer_account_id,
        created_by_account_id=change.created_by_account_id,
    )
    return DECIDER_REFUSALS[duty] + DECIDER_REFUSAL_END if duty else None


@dataclass(frozen=True)
class DecidedElsewhere:
    """A change that is approved or rejected only as part of another decision (an exception
    plan's change, with the exception's decision): why, and where that decision is taken."""

    why: str
    url: str
    label: str


# Who answers for changes decided elsewhere: an app above the registers registers a function
# (changes -> {change id: DecidedElsewhere}) in its AppConfig (the status app: exception plans).
_ELSEWHERE: list[Callable[[list[ChangeRequest]], dict[Any, DecidedElsewhere]]] = []


def answer_decided_elsewhere_with(
    answer: Callable[[list[ChangeRequest]], dict[Any, DecidedElsewhere]],
) -> None:
    if answer not in _ELSEWHERE:
        _ELSEWHERE.append(answer)


def decided_elsewhere(changes: list[ChangeRequest]) -> dict[Any, DecidedElsewhere]:
    """Of these changes, those approved or rejected only through another decision, by id (one
    query per registered answer, whatever the number of changes)."""
    found: dict[Any, DecidedElsewhere] = {}
    if changes:
        for answer in _ELSEWHERE:
            found.update(answer(changes))
    return found


def change_adjudicate(
    *,
    caller: Caller,
    change_id: Any,
    outcome: Any,
    decision_comment: Any = "",
    expected_revision: int | None = None,
    other_members: Iterable[str] = (),
    as_part_of_its_decision: bool = False,
) -> ChangeRequest:
    """Approved or Rejected by the named approver (approverAccountId or approverSeat), else the
    sponsor, unless separation of duties keeps them from it; Withdrawn by the proposer or an
    editor. Rejecting needs a reason. Refused in the house order: who may act (403), frozen
    registers and a decided change (409), a stale revision (412), then the outcome and comment
    (422, every offending field named). A change decided elsewhere (`decided_elsewhere`: an
    exception plan's) is approved or rejected only by that decision's service, which passes
    `as_part_of_its_decision`; directly it is refused (409) saying where it is decided."""
    with transaction.atomic():
        project = lock_project(caller.project)
        change = get_in_project(ChangeRequest, project, change_id)
        may_decide, may_withdraw = adjudication_rights(caller, change)
        refusal = decider_refusal(caller, change)
        if refusal and (outcome in ("Approved", "Rejected") or not may_withdraw):
            raise Forbidden(refusal)
        require(
            may_decide or may_withdraw,
            "Only the named approver (or, with none named, the sponsor) decides this change; "
            "its proposer or an editor may withdraw it.",
        )
        if outcome == "Withdrawn":
            require(may_withdraw, "Only the proposer or an editor may withdraw this change.")
        elif outcome in OUTCOMES:
            require(
                may_decide,
                "Only the named approver (or, with none named, the sponsor) "
                "may decide this change.",
            )
        project.assert_registers_unfrozen()
        require_open(change, "decided")
        if outcome in OUTCOMES and not as_part_of_its_decision:
            # Withdrawn too: the exception's decision would find its plan gone.
            elsewhere = decided_elsewhere([change]).get(change.pk)
            if elsewhere is not None:
                raise Conflict(elsewhere.why)
        check_version(change.revision, expected_revision, current_repr=change)
        errors = FieldErrors()
        refuse_members(errors, other_members)
        if outcome not in OUTCOMES:
            errors.add("outcome", f"Must be one of: {', '.join(OUTCOMES)}.")
        comment, error = text(decision_comment, max_length=TEXT_MAX)
        if error:
            errors.add("decisionComment", error)
        elif outcome == "Rejected" and not comment:
            errors.add("decisionComment", "A reason is required to reject a change.")
        errors.raise_if_any()
        before = specs.snapshot(ChangeSpec, change)
        change.status = outcome
        change.decided_at = timezone.now()
        change.decided_by_account_id = caller.account_id
        change.decision_comment = comment
        changes = audit.diff(before, specs.snapshot(ChangeSpec, change))
        save_revised(caller, project, change, "changeRequest", f"change.{outcome.lower()}", changes)
        resolve_routed(change)
    return change


def resolve_routed(change: ChangeRequest) -> None:
    """A change decided, withdrawn or deleted asks nothing more of its decider: the
    notification that routed it to them is resolved."""
    notifications.resolve(f"change_routed:{change.pk}:")


def change_for_update(project: Project, change_id: Any, **filters: Any) -> ChangeRequest | None:
    """A change of the project locked for a write by another app's act (the business case's
    amendment, re-opening, stopping), or None when there is no such change."""
    pk = as_uuid(change_id)
    if pk is None:
        return None
    return (
        ChangeRequest.objects.select_for_update().filter(project=project, pk=pk, **filters).first()
    )


def changes_awaiting_application(project: Project, *, excluding: Any = None) -> list[ChangeRequest]:
    """The project's Approved changes still awaiting application, latest decided first (the
    changes a business case may be re-opened to apply)."""
    approved = ChangeRequest.objects.filter(project=project, status="Approved")
    excluded = as_uuid(excluding)
    if excluded is not None:
        approved = approved.exclude(pk=excluded)
    return [
        change
        for change in approved.order_by("-decided_at")
        if change_application_state(change) == "AwaitingApplication"
    ]


def change_apply(
    caller: Caller, project: Project, change: ChangeRequest, *, kind: str, ref: Any, at: Any
) -> None:
    """Record how an approved change was applied (`applicationRecord {kind, ref, at, by}`:
    'charter' by an amended business case's approval, 'baseline' by its package's baseline),
    audited as change.applied. The caller holds the change's row lock and checked its act."""
    before = change.application_record
    change.application_record = {
        "kind": kind,
        "ref": ref,
        "at": at.isoformat(),
        "by": caller.account_id,
    }
    changes = audit.diff(
        {"applicationRecord": before}, {"applicationRecord": change.application_record}
    )
    save_revised(
        caller, project, change, "changeRequest", "change.applied", changes, ["application_record"]
    )


def change_withdraw(caller: Caller, project: Project, change: ChangeRequest, comment: str) -> None:
    """Withdraw a Proposed change as part of another app's act (the business case stopped while
    the amendment it enables was in progress), by the caller, with `comment` saying why;
    audited as change.withdrawn. The caller holds the change's row lock."""
    fields = ("status", "decided_at", "decided_by_account_id", "decision_comment")
    names = ("status", "decidedAt", "decidedByAccountId", "decisionComment")
    before = {name: getattr(change, attr) for name, attr in zip(names, fields, strict=True)}
    change.status = "Withdrawn"
    change.decided_at = timezone.now()
    change.decided_by_account_id = caller.account_id
    change.decision_comment = comment
    after = {name: getattr(change, attr) for name, attr in zip(names, fields, strict=True)}
    changes = audit.diff(before, after)
    save_revised(caller, project, change, "changeRequest", "change.withdrawn", changes, fields)
    resolve_routed(change)
