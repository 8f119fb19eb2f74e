"""Close-out: start, edit (as-built record, dispositions of every register row, lessons, BAU
owner), submit (the completeness check), return with close-out notes, close; then the BAU
handover (acknowledge by the BAU owner, escalate by an editor)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from governance.cleaning import FieldErrors
    from governance.models import Project


import datetime as dt
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from charter import acts
from charter.models import BusinessCase
from charter.services.common import (
    TEXT_MAX,
    Write,
    begin,
    bodiless_act,
    body,
    body_act,
    ended,
    precheck,
)
from charter.specs import LESSONS, CloseoutReturnSpec, CloseoutSpec, EscalateSpec
from governance import specs
from governance.cleaning import account_id, decimal_to_json, known_object, only, text
from governance.errors import ValidationFailed
from governance.people import resolve
from governance.permissions import Caller
from registers.derive import change_application_state
from registers.models import ChangeRequest, Decision, Risk, WorkPackage

HANDOVER_READ_ONLY = {
    "state",
    "ownerDisplayName",
    "acknowledgedAt",
    "acknowledgedByAccountId",
    "escalatedAt",
    "escalationReason",
}


def empty_closeout(now: dt.datetime) -> dict[str, Any]:
    return {
        "asBuiltOutcome": "",
        "asBuiltReturn": "",
        "asBuiltReturnValue": None,
        "asBuiltEndDate": None,
        "scopeDispositions": {},
        "rioDispositions": {},
        "pendingDispositions": {"decisions": {}, "changes": {}},
        "lessons": dict.fromkeys(LESSONS, ""),
        "bauHandover": {
            "state": "Pending",
            "ownerAccountId": None,
            "ownerDisplayName": None,
            "acknowledgedAt": None,
            "acknowledgedByAccountId": None,
            "escalatedAt": None,
            "escalationReason": None,
        },
        "commentary": "",
        "startedAt": now.isoformat(),
        "submittedAt": None,
    }


# --- what the close-out must cover -----------------------------------------------------------


def pending_register_rows(project: Project) -> dict[str, list[Any]]:
    """The register rows a close-out disposes of, four queries whatever their number: every
    work package, every open risk, every pending decision, every Proposed change and every
    change awaiting application."""
    changes = [
        change
        for change in ChangeRequest.objects.filter(
            project=project, status__in=["Proposed", "Approved"]
        ).order_by("created_at")
        if change_application_state(change) in ("Proposed", "AwaitingApplication")
    ]
    return {
        "workPackages": list(
            WorkPackage.objects.filter(project=project).order_by("sort_order", "name")
        ),
        "risks": list(
            Risk.objects.filter(project=project).exclude(status="Closed").order_by("title")
        ),
        "decisions": list(
            Decision.objects.filter(project=project, made_on__isnull=True).order_by("-created_at")
        ),
        "changes": changes,
    }


def missing_dispositions(
    close_out: Mapping[str, Any] | None, rows: dict[str, list[Any]]
) -> list[dict[str, Any]]:
    """What the completeness check still needs: [{field, kind, id, name}], in form order."""
    close_out = close_out or {}
    pending = close_out.get("pendingDispositions") or {}
    wanted = [
        (
            "scopeDispositions",
            "work package",
            rows["workPackages"],
            close_out.get("scopeDispositions"),
            "name",
        ),
        ("rioDispositions", "risk", rows["risks"], close_out.get("rioDispositions"), "title"),
        (
            "pendingDispositions.decisions",
            "decision",
            rows["decisions"],
            pending.get("decisions"),
            "decision",
        ),
        (
            "pendingDispositions.changes",
            "change request",
            rows["changes"],
            pending.get("changes"),
            "summary",
        ),
    ]
    missing = []
    for field, kind, records, given, label in wanted:
        given = given or {}
        for record in records:
            if str(record.pk) not in given:
                missing.append(
                    {
                        "field": f"{field}.{record.pk}",
                        "kind": kind,
                        "id": str(record.pk),
                        "name": getattr(record, label),
                    }
                )
    return missing


# --- cleaning --------------------------------------------------------------------------------

# The close-out's fields its rule alone decides (stored as JSON: numbers as numbers, dates
# in ISO form); the others merge onto what is stored.
SCALARS = [
    api
    for api, field in specs.fields(CloseoutSpec).items()
    if not field.read_only and not isinstance(field.rule, specs.Passed | specs.Checked)
]


def _json(value: Any) -> Any:
    if isinstance(value, Decimal):
        return decimal_to_json(value)
    return value.isoformat() if isinstance(value, dt.date) else value


def _clean_map(
    raw: Any,
    field: str,
    choices: Sequence[str],
    valid_ids: set[str],
    current: dict[str, Any],
    errors: FieldErrors,
) -> dict[str, Any]:
    """Merge {id: {disposition, note}} onto the current map; null removes an entry."""
    if not isinstance(raw, Mapping):
        errors.add(field, "Must be an object {id: {disposition, note}}.")
        return current
    result = dict(current)
    for key, value in raw.items():
        where = f"{field}.{key}"
        if key not in valid_ids:
            errors.add(where, "No such record in this project's registers.")
            continue
        if value is None:
            result.pop(key, None)
            continue
        if not known_object(value, ("disposition", "note"), errors, where, "disposition, note"):
            continue
        disposition = value.get("disposition")
        if disposition not in choices:
            errors.add(f"{where}.disposition", f"Must be one of: {', '.join(choices)}.")
        note, error = text(value.get("note"), max_length=TEXT_MAX)
        if error:
            errors.add(f"{where}.note", error)
        result[key] = {"disposition": disposition, "note": note}
    return result


# The registers whose rows the close-out's dispositions name: the scope (the work packages),
# the risks and opportunities, and the pending decisions and changes.
DISPOSED: dict[str, type[WorkPackage | Risk | Decision | ChangeRequest]] = {
    "scope": WorkPackage,
    "rio": Risk,
    "decisions": Decision,
    "changes": ChangeRequest,
}


def clean_closeout(
    data: Mapping[str, Any], close_out: Mapping[str, Any] | None, project: Project
) -> dict[str, Any]:
    """The close-out with `data` merged in (charter.specs.CloseoutSpec): text and scalars
    replace; dispositions merge per id (null removes); lessons merge per field; of bauHandover
    only the owner is writable."""
    partial, errors = specs.validate(CloseoutSpec, data)
    close_out = close_out or {}  # a started close-out is never null
    result = {**close_out}
    declared = specs.fields(CloseoutSpec)
    for api in SCALARS:
        if declared[api].name in partial.model_fields_set:
            result[api] = _json(getattr(partial, declared[api].name))
    if {"scopeDispositions", "rioDispositions", "pendingDispositions"} & set(data):
        # The ids each map may name: the project's rows of its register.
        ids = {
            key: {
                str(pk) for pk in model.objects.filter(project=project).values_list("pk", flat=True)
            }
            for key, model in DISPOSED.items()
        }
        for field, key in (("scopeDispositions", "scope"), ("rioDispositions", "rio")):
            if field in data:
                result[field] = _clean_map(
                    data[field],
                    field,
                    specs.choices(CloseoutSpec, field),
                    ids[key],
                    close_out.get(field) or {},
                    errors,
                )
        if "pendingDispositions" in data:
            raw = data["pendingDispositions"]
            current = close_out.get("pendingDispositions") or {"decisions": {}, "changes": {}}
            pending = {
                "decisions": current.get("decisions") or {},
                "changes": current.get("changes") or {},
            }
            members = ("decisions", "changes")
            if known_object(raw, members, errors, "pendingDispositions", "decisions, changes"):
                for key in members:
                    if key in raw:
                        pending[key] = _clean_map(
                            raw[key],
                            f"pendingDispositions.{key}",
                            specs.choices(CloseoutSpec, "pendingDispositions"),
                            ids[key],
                            pending[key],
                            errors,
                        )
            result["pendingDispositions"] = pending
    if "lessons" in partial.model_fields_set:
        result["lessons"] = {
            **dict.fromkeys(LESSONS, ""),
            **(close_out.get("lessons") or {}),
            **(partial.lessons or {}),
        }
    if "bauHandover" in data:
        raw = data["bauHandover"]
        handover = dict(close_out.get("bauHandover") or {})
        if (
            known_object(
                raw,
                {"ownerAccountId", *HANDOVER_READ_ONLY},
                errors,
                "bauHandover",
                "ownerAccountId",
            )
            and "ownerAccountId" in raw
        ):
            owner, error = account_id(raw["ownerAccountId"])
            person = resolve([owner]).get(owner) if owner else None
            if error:
                errors.add("bauHandover.ownerAccountId", error)
            elif owner and (person is None or not person.known):
                errors.add("bauHandover.ownerAccountId", f"No tracker user with accountId {owner}.")
            else:
                handover["ownerAccountId"] = owner
                handover["ownerDisplayName"] = person.display_name if person else None
        result["bauHandover"] = handover
    errors.raise_if_any()
    return result


# --- acts ----------------------------------------------------------------------------------


def _start_record(write: Write) -> None:
    write.case.close_out = empty_closeout(timezone.now())


closeout_start = bodiless_act(
    "closeout-start",
    "closeout.started",
    "Approved, close-out not started: the close-out record is created (startedAt).",
    _start_record,
)


def closeout_update(
    *, caller: Caller, data: Any, expected_revision: int | None = None
) -> BusinessCase:
    """Edit the close-out while it is open (Approved, started). Editors."""
    case = precheck(caller, acts.EDIT_CLOSEOUT, expected_revision)
    data = body(data)
    clean_closeout(data, case.close_out, caller.project)  # 422 before taking the lock
    with transaction.atomic():
        write = begin(caller, acts.EDIT_CLOSEOUT, expected_revision)
        merged = clean_closeout(data, write.case.close_out, write.project)
        if merged == write.case.close_out:
            return write.case
        write.case.close_out = merged
        return write.finish("closeout.updated")


def closeout_submit(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """Approved -> ClosingSubmitted when every work package, open risk, pending decision and
    pending change has its disposition. Otherwise refused (422 `validation`) listing, by
    field, every row still without one: a completeness check of the form, not a gate."""
    precheck(caller, acts.ACTS["closeout-submit"], expected_revision)
    only(body(data))
    with transaction.atomic():
        write = begin(caller, acts.ACTS["closeout-submit"], expected_revision)
        case = write.case
        missing = missing_dispositions(case.close_out, pending_register_rows(write.project))
        if missing:
            raise ValidationFailed(
                {
                    m["field"]: [f"The {m['kind']} “{m['name']}” needs a disposition."]
                    for m in missing
                },
                f"The close-out is not complete: {len(missing)} register "
                f"row{'s' if len(missing) != 1 else ''} still need a disposition.",
                missing=missing,
            )
        case.close_out = {**(case.close_out or {}), "submittedAt": timezone.now().isoformat()}
        case.approval_status = "ClosingSubmitted"
        return write.finish("closeout.submitted")


def _closeout_returned(write: Write, sent: CloseoutReturnSpec) -> None:
    case = write.case
    case.closeout_return_notes = [*(case.closeout_return_notes or []), *sent.return_notes]
    case.approval_status = "Approved"


closeout_return = body_act(
    "closeout-return",
    "closeout.returned",
    "ClosingSubmitted -> Approved by the sponsor, with close-out return notes.",
    CloseoutReturnSpec,
    _closeout_returned,
)


def charter_close(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """ClosingSubmitted -> Closed by the sponsor: stamps closedAt and closedByAccountId."""
    precheck(caller, acts.ACTS["close"], expected_revision)
    only(body(data))
    with transaction.atomic():
        write = begin(caller, acts.ACTS["close"], expected_revision)
        case = write.case
        case.approval_status = "Closed"
        case.closed_at = timezone.now()
        case.closed_by_account_id = caller.account_id
        case = write.finish("charter.closed")
        ended(write, "close", "")
        return case


def _handover(case: BusinessCase, **changes: Any) -> dict[str, Any]:
    close_out = dict(case.close_out or {})
    close_out["bauHandover"] = {**(close_out.get("bauHandover") or {}), **changes}
    return close_out


def _acknowledge(write: Write) -> None:
    write.case.close_out = _handover(
        write.case,
        state="Acknowledged",
        acknowledgedAt=timezone.now().isoformat(),
        acknowledgedByAccountId=write.caller.account_id,
    )


handover_acknowledge = bodiless_act(
    "handover-acknowledge",
    "closeout.handover_acknowledged",
    "Pending or Escalated -> Acknowledged, by the BAU owner.",
    _acknowledge,
)


def _escalate(write: Write, sent: EscalateSpec) -> None:
    write.case.close_out = _handover(
        write.case,
        state="Escalated",
        escalatedAt=timezone.now().isoformat(),
        escalationReason=sent.reason,
    )


handover_escalate = body_act(
    "handover-escalate",
    "closeout.handover_escalated",
    "Pending -> Escalated by an editor, with a reason.",
    EscalateSpec,
    _escalate,
)
