"""Register records as the API represents them: the declared fields (registers.specs, with
the audited server stamps) as JSON, then the derived read-only fields; server-only fields as
the spec allows (`imported` only on bulk-imported rows)."""

import datetime as dt
from typing import Any

from governance import specs
from governance.cleaning import decimal_to_json
from registers.derive import (
    change_application_state,
    decision_state,
    package_schedule,
    plan_baseline_of,
)
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from registers.specs import ChangeSpec, DecisionSpec, RiskSpec, WorkPackageSpec


def iso(value: dt.date | None) -> str | None:
    """A date or a moment as the API answers it (ISO 8601), or null."""
    return value.isoformat() if value else None


Record = WorkPackage | Risk | Decision | ChangeRequest


def _imported(record: Risk | Decision | ChangeRequest) -> dict[str, Any]:
    """The spec's `imported`: present (true) only on bulk-imported rows, absent otherwise."""
    return {"imported": True} if record.imported else {}


def _declared(spec: type[specs.Spec], record: Record) -> dict[str, Any]:
    """What every register record answers first: its id, its project and its spec's fields."""
    return {"id": str(record.pk), "projectKey": record.project.key, **specs.to_dict(spec, record)}


READ_PLAN = object()


def work_package_to_dict(wp: WorkPackage, plan: Any = READ_PLAN) -> dict[str, Any]:
    """`plan`: the project's plan baseline in force (`plan_baseline_of`), read once by a caller
    that serialises many packages; read here when not given."""
    if plan is READ_PLAN:
        plan = plan_baseline_of(wp.project)
    schedule = package_schedule(wp, plan)
    return {
        **_declared(WorkPackageSpec, wp),
        "actualEnd": iso(wp.actual_end_date),
        "scheduleVarianceDays": schedule.variance_days,
        "scheduleVarianceBasis": schedule.basis,
        "baselineStartDate": iso(schedule.start) if schedule.basis == "baseline" else None,
        "baselineEndDate": iso(schedule.end) if schedule.basis == "baseline" else None,
        "budgetBaseline": decimal_to_json(wp.budget_baseline),
        "brokenIssueKeys": dict(wp.broken_issue_keys or {}),
        "budgetBaselineLockedAt": iso(wp.budget_baseline_locked_at),
        "plannedDatesBaselineLockedAt": iso(wp.planned_dates_baseline_locked_at),
        "createdAt": iso(wp.created_at),
        "updatedAt": iso(wp.updated_at),
        "updatedByAccountId": wp.updated_by_account_id or None,
        "revision": wp.revision,
    }


def risk_to_dict(risk: Risk, treating_decision_ids: list[str]) -> dict[str, Any]:
    """`treating_decision_ids`: the decisions whose treatedRiskId is this risk (derived)."""
    return {
        **_declared(RiskSpec, risk),
        "score": risk.score,
        "treatingDecisionIds": treating_decision_ids,
        "createdAt": iso(risk.created_at),
        "updatedAt": iso(risk.updated_at),
        "updatedByAccountId": risk.updated_by_account_id,
        **_imported(risk),
        "revision": risk.revision,
    }


def decision_to_dict(decision: Decision) -> dict[str, Any]:
    return {
        **_declared(DecisionSpec, decision),
        "recordedBy": decision.recorded_by,
        "state": decision_state(decision.made_on),
        "notes": list(decision.notes or []),
        "ownerAccountId": decision.owner_account_id,
        "approverAccountId": decision.approver_account_id,
        "approverSeat": decision.approver_seat,
        "status": decision.status,
        "decidedAt": iso(decision.decided_at),
        "decidedByAccountId": decision.decided_by_account_id,
        "createdAt": iso(decision.created_at),
        "createdByAccountId": decision.created_by_account_id or None,
        "updatedAt": iso(decision.updated_at),
        **_imported(decision),
        "revision": decision.revision,
    }


def change_to_dict(change: ChangeRequest) -> dict[str, Any]:
    return {
        **_declared(ChangeSpec, change),
        "impactTimeline": change.impact_timeline,
        "approverLocked": change.approver_locked,
        "createdAt": iso(change.created_at),
        "createdByAccountId": change.created_by_account_id,
        "updatedAt": iso(change.updated_at),
        **_imported(change),
        "applicationRecord": change.application_record,
        "applicationState": change_application_state(change),
        "revision": change.revision,
    }
