"""Risks and opportunities: add, edit, delete, and the Record-decision act on a
materialised risk."""

from typing import Any

from django.db import transaction
from django.utils import timezone

from governance import audit, specs
from governance.cleaning import FieldErrors
from governance.errors import Conflict
from governance.formatting import with_article
from governance.models import Project
from governance.permissions import Caller
from registers.derive import decision_can_be_recorded
from registers.models import RISK_TREATMENTS, Decision, Risk
from registers.services.common import (
    audit_write,
    check_people,
    get_in_project,
    insert_created,
    save_revised,
    writable_project,
    writable_record,
)
from registers.services.decisions import build_decision, write_decision
from registers.specs import RiskSpec


def _clean(risk: Risk, data: dict[str, Any], *, creating: bool) -> FieldErrors:
    """The declaration's rules (`RiskSpec`), then the stateful and cross-field ones: the
    owner is a tracker user, an opportunity never materialises, the treatment suits the
    direction."""
    partial, errors = specs.validate(RiskSpec, data, creating=creating)
    specs.apply(partial, risk)
    check_people(RiskSpec, risk, partial, errors)
    if risk.direction == "Opportunity":
        risk.materialised = False  # meaningful only for a Risk
    if risk.treatment is not None and "direction" not in errors:
        allowed = RISK_TREATMENTS[risk.direction]
        if not isinstance(risk.treatment, str) or risk.treatment not in allowed:
            errors.add(
                "treatment",
                f"{with_article(risk.direction, capital=True)} is treated by one of: "
                f"{', '.join(allowed)}.",
            )
    return errors


def _stamp_acceptance(caller: Caller, risk: Risk) -> None:
    """The first move to treatment Accept stamps who, when, and the mitigation text at that
    moment as the acceptance rationale. Later moves keep the first stamp."""
    if risk.treatment == "Accept" and risk.accepted_at is None:
        risk.accepted_by_account_id = caller.account_id
        risk.accepted_at = timezone.now()
        risk.acceptance_rationale = risk.mitigation


def build_risk(
    caller: Caller, project: Project, data: dict[str, Any], *, imported: bool = False
) -> Risk:
    """A new risk of `project` from `data`, checked and not written: ValidationFailed names
    every refused field. Reads, never writes (an import builds every row before it writes
    any, without a savepoint per row). `risk_create` and the import's rows share it."""
    risk = Risk(project=project, updated_by_account_id=caller.account_id, imported=imported)
    _clean(risk, data, creating=True).raise_if_any()
    _stamp_acceptance(caller, risk)
    return risk


def write_risk(caller: Caller, project: Project, risk: Risk) -> Risk:
    """Insert a risk `build_risk` made, with its audit entry (inside `batch()`, queued)."""
    insert_created(caller, project, risk, "risk", "risk.created", RiskSpec)
    return risk


def risk_create(*, caller: Caller, data: dict[str, Any], imported: bool = False) -> Risk:
    with transaction.atomic():
        project = writable_project(caller)
        return write_risk(caller, project, build_risk(caller, project, data, imported=imported))


def risk_update(
    *, caller: Caller, risk_id: Any, data: dict[str, Any], expected_revision: int | None = None
) -> Risk:
    with transaction.atomic():
        project, risk = writable_record(caller, Risk, risk_id, expected_revision)
        before = specs.snapshot(RiskSpec, risk)
        _clean(risk, data, creating=False).raise_if_any()
        _stamp_acceptance(caller, risk)
        changes = audit.diff(before, specs.snapshot(RiskSpec, risk))
        if changes:
            risk.updated_by_account_id = caller.account_id
            save_revised(caller, project, risk, "risk", "risk.updated", changes)
    return risk


def risk_delete(*, caller: Caller, risk_id: Any, expected_revision: int | None = None) -> None:
    """Delete a risk. Decisions that treated it keep riskId and treatedRiskId as provenance."""
    with transaction.atomic():
        project, risk = writable_record(caller, Risk, risk_id, expected_revision)
        audit_write(
            caller,
            project,
            "risk",
            "risk.deleted",
            risk.pk,
            audit.diff(specs.snapshot(RiskSpec, risk), {}),
        )
        risk.delete()


def decision_prefill(risk: Risk) -> dict[str, Any]:
    """What the Record-decision act pre-fills from the risk."""
    return {
        "decision": risk.title,
        "decisionNotes": risk.description,
        "rationale": risk.mitigation,
    }


def require_decision_recordable(risk: Risk) -> None:
    """409 unless the Record-decision act is possible for this risk (registers.derive)."""
    if not decision_can_be_recorded(risk):
        raise Conflict(
            "Only a materialised risk has a decision recorded against it; "
            "mark the risk as materialised first."
        )


def risk_record_decision(
    *, caller: Caller, risk_id: Any, data: dict[str, Any] | None = None
) -> Decision:
    """Record the decision that treats a materialised risk: a new decision with riskId and
    treatedRiskId set, pre-filled from the risk; `data` overrides the pre-filled fields.
    Refused for a risk that has not materialised."""
    with transaction.atomic():
        project = writable_project(caller)
        risk = get_in_project(Risk, project, risk_id, lock=True)
        require_decision_recordable(risk)
        prefilled = {**decision_prefill(risk), **(data or {})}
        decision = build_decision(caller, project, prefilled, risk_id=str(risk.pk))
        write_decision(caller, project, decision)
        audit_write(
            caller,
            project,
            "risk",
            "risk.decision_recorded",
            risk.pk,
            {"treatingDecisionId": {"before": None, "after": str(decision.pk)}},
        )
    return decision
