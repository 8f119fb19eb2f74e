"""Decisions: an append-only log. A pending decision (no madeOn) is editable; filling madeOn
takes it (audited as decision.made); a made decision refuses every update and accepts only
appended notes. Nobody approves a decision: there is no adjudication of decisions."""

import uuid
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from governance import audit, specs
from governance.cleaning import FieldErrors, text
from governance.concurrency import check_version
from governance.errors import Conflict
from governance.links import clean_links
from governance.models import Project
from governance.permissions import Caller
from registers.derive import decision_is_editable
from registers.models import TEXT_MAX, Decision, SteeringMinutes
from registers.services.common import (
    as_uuid,
    check_people,
    get_in_project,
    insert_created,
    lock_project,
    refuse_members,
    require_editor,
    save_revised,
    writable_project,
    writable_record,
)
from registers.specs import DecisionSpec


def _clean_minutes_ref(project: Project, value: Any, errors: FieldErrors) -> dict[str, Any] | None:
    """One of the project's own steering minutes, by id; stored as {id, title, url, pageId?}
    from the stored minutes, whatever else the client sends."""
    if value in (None, "", {}):
        return None
    minutes_id = value.get("id") if isinstance(value, dict) else value
    pk = as_uuid(minutes_id) if isinstance(minutes_id, str) else None
    minutes = SteeringMinutes.objects.filter(project=project, pk=pk).first() if pk else None
    if minutes is None:
        errors.add("minutesRef", f"Must be one of the steering minutes of {project.key}.")
        return None
    ref = {"id": str(minutes.pk), "title": minutes.title, "url": minutes.url}
    if minutes.page_id:
        ref["pageId"] = minutes.page_id
    return ref


def _clean(
    project: Project, decision: Decision, data: dict[str, Any], *, creating: bool
) -> FieldErrors:
    """The declaration's rules (`DecisionSpec`), then the stateful ones: not made in the
    future, made by a tracker user, minutes of this project, evidence links."""
    partial, errors = specs.validate(DecisionSpec, data, creating=creating)
    values = specs.sent(partial)
    made_on = values.pop("made_on", None)
    if made_on and made_on > timezone.localdate():
        errors.add("madeOn", "The date a decision was taken cannot be in the future.")
    elif "made_on" in partial.model_fields_set:
        decision.made_on = made_on
    for name in ("decision", "decision_notes", "rationale"):
        if name in values:
            setattr(decision, name, values[name])
    check_people(DecisionSpec, decision, partial, errors)
    if "minutes_ref" in values:
        decision.minutes_ref = _clean_minutes_ref(project, values["minutes_ref"], errors)
    if "evidence_links" in values:
        links = clean_links(
            values["evidence_links"],
            "evidenceLinks",
            errors,
            stored=decision.evidence_links,
            project_key=project.key,
        )
        if links is not None:
            decision.evidence_links = links
    return errors


def build_decision(
    caller: Caller,
    project: Project,
    data: dict[str, Any],
    *,
    imported: bool = False,
    risk_id: str | None = None,
) -> Decision:
    """A new decision of `project` from `data`, checked and not written: ValidationFailed
    names every refused field. Reads, never writes: a refused row leaves nothing to
    undo, so an import needs no savepoint per row."""
    decision = Decision(
        project=project,
        status="Proposed",
        created_by_account_id=caller.account_id,
        recorded_by=caller.account_id,
        imported=imported,
        risk_id=risk_id,
        treated_risk_id=risk_id,
    )
    _clean(project, decision, data, creating=True).raise_if_any()
    if imported and decision.made_on is None:
        decision.made_on = timezone.localdate()  # historical rows are decisions already taken
    return decision


def write_decision(caller: Caller, project: Project, decision: Decision) -> Decision:
    """Insert a decision `build_decision` made, with its audit entry (inside `batch()`,
    queued). Call inside the caller's transaction, with the project locked and checked
    writable."""
    insert_created(caller, project, decision, "decision", "decision.created", DecisionSpec)
    return decision


def require_editable(decision: Decision) -> None:
    """409 for a made decision: it refuses every update; only notes are appended to it."""
    if not decision_is_editable(decision):
        assert decision.made_on is not None  # a made decision has its date
        raise Conflict(
            f"This decision was made on {decision.made_on.isoformat()} and can no longer "
            "be changed. Add a note to correct or extend it."
        )


def decision_create(*, caller: Caller, data: dict[str, Any], imported: bool = False) -> Decision:
    """Log a decision (pending without madeOn). Imported rows without madeOn are dated today."""
    with transaction.atomic():
        project = writable_project(caller)
        decision = build_decision(caller, project, data, imported=imported)
        return write_decision(caller, project, decision)


def decision_update(
    *,
    caller: Caller,
    decision_id: Any,
    data: dict[str, Any],
    expected_revision: int | None = None,
) -> Decision:
    """updateDecision: pending decisions only (409 once made). Filling madeOn takes the
    decision and is audited as decision.made. recordedBy is stamped on every edit."""
    with transaction.atomic():
        project, decision = writable_record(
            caller, Decision, decision_id, expected_revision, check=require_editable
        )
        before = specs.snapshot(DecisionSpec, decision)
        _clean(project, decision, data, creating=False).raise_if_any()
        changes = audit.diff(before, specs.snapshot(DecisionSpec, decision))
        if changes:
            made = before["madeOn"] is None and decision.made_on is not None
            if decision.recorded_by != caller.account_id:
                changes["recordedBy"] = {"before": decision.recorded_by, "after": caller.account_id}
            decision.recorded_by = caller.account_id
            kind = "decision.made" if made else "decision.updated"
            save_revised(caller, project, decision, "decision", kind, changes)
    return decision


def decision_append_note(
    *,
    caller: Caller,
    decision_id: Any,
    text_value: Any,
    expected_revision: int | None = None,
    other_members: Iterable[str] = (),
) -> Decision:
    """appendDecisionNote: the one write onto a made decision, allowed on frozen registers
    too. Author and timestamp are server-written. The text is checked last (422), after
    the editor check (403), the decision (404) and the revision (412)."""
    require_editor(caller)
    with transaction.atomic():
        project = lock_project(caller.project)
        decision = get_in_project(Decision, project, decision_id)
        check_version(decision.revision, expected_revision, current_repr=decision)
        errors = FieldErrors()
        refuse_members(errors, other_members)
        note_text, error = text(text_value, max_length=TEXT_MAX, required=True)
        if error:
            errors.add("text", error)
        errors.raise_if_any()
        note = {
            "id": str(uuid.uuid4()),
            "text": note_text,
            "authorAccountId": caller.account_id,
            "at": timezone.now().isoformat(),
        }
        decision.notes = [*(decision.notes or []), note]
        added = {"notes": {"before": None, "after": note}}
        save_revised(caller, project, decision, "decision", "decision.note_added", added, ["notes"])
    return decision
