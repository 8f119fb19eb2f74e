"""Register records as the API represents them: the spec's camelCase field names, derived
read-only fields included, server-only fields as the spec allows (`imported` only on
bulk-imported rows)."""

from typing import Any

from governance.cleaning import decimal_to_json
from registers.derive import (
    change_application_state,
    decision_state,
    package_schedule,
    plan_baseline_of,
)
from registers.models import ChangeRequest, Decision, Risk, WorkPackage


def _iso(value):
    return value.isoformat() if value else None


def _imported(record) -> dict:
    """The spec's `imported`: present (true) only on bulk-imported rows, absent otherwise."""
    return {"imported": True} if record.imported else {}


READ_PLAN = object()


def work_package_to_dict(wp: WorkPackage, plan: Any = READ_PLAN) -> dict:
    """`plan`: the project's plan baseline in force (`plan_baseline_of`), read once by a caller
    that serialises many packages; read here when not given."""
    if plan is READ_PLAN:
        plan = plan_baseline_of(wp.project)
    schedule = package_schedule(wp, plan)
    return {
        "id": str(wp.pk),
        "projectKey": wp.project.key,
        "name": wp.name,
        "type": wp.type,
        "ownerAccountId": wp.owner_account_id,
        "plannedStartDate": _iso(wp.planned_start_date),
        "plannedEndDate": _iso(wp.planned_end_date),
        "actualStartDate": _iso(wp.actual_start_date),
        "actualEndDate": _iso(wp.actual_end_date),
        "actualEnd": _iso(wp.actual_end_date),
        "forecastStartDate": _iso(wp.forecast_start_date),
        "forecastEndDate": _iso(wp.forecast_end_date),
        "scheduleVarianceDays": schedule.variance_days,
        "scheduleVarianceBasis": schedule.basis,
        "baselineStartDate": _iso(schedule.start) if schedule.basis == "baseline" else None,
        "baselineEndDate": _iso(schedule.end) if schedule.basis == "baseline" else None,
        "status": wp.status,
        "rag": wp.rag,
        "progress": wp.progress,
        "budget": decimal_to_json(wp.budget),
        "budgetPhasing": wp.budget_phasing,
        "budgetBaseline": decimal_to_json(wp.budget_baseline),
        "budgetForecast": decimal_to_json(wp.budget_forecast),
        "budgetActual": decimal_to_json(wp.budget_actual),
        "commentary": wp.commentary,
        "linkedIssueKeys": list(wp.linked_issue_keys or []),
        "brokenIssueKeys": dict(wp.broken_issue_keys or {}),
        "sortOrder": wp.sort_order,
        "budgetBaselineLockedAt": _iso(wp.budget_baseline_locked_at),
        "plannedDatesBaselineLockedAt": _iso(wp.planned_dates_baseline_locked_at),
        "createdAt": _iso(wp.created_at),
        "updatedAt": _iso(wp.updated_at),
        "updatedByAccountId": wp.updated_by_account_id or None,
        "revision": wp.revision,
    }


def risk_to_dict(risk: Risk, treating_decision_ids: list[str]) -> dict:
    """`treating_decision_ids`: the decisions whose treatedRiskId is this risk (derived)."""
    return {
        "id": str(risk.pk),
        "projectKey": risk.project.key,
        "title": risk.title,
        "description": risk.description,
        "ownerAccountId": risk.owner_account_id,
        "status": risk.status,
        "direction": risk.direction,
        "materialised": risk.materialised,
        "impact": risk.impact,
        "likelihood": risk.likelihood,
        "residualImpact": risk.residual_impact,
        "residualLikelihood": risk.residual_likelihood,
        "score": risk.score,
        "treatment": risk.treatment,
        "mitigation": risk.mitigation,
        "acceptedByAccountId": risk.accepted_by_account_id,
        "acceptedAt": _iso(risk.accepted_at),
        "acceptanceRationale": risk.acceptance_rationale,
        "treatingDecisionIds": treating_decision_ids,
        "createdAt": _iso(risk.created_at),
        "updatedAt": _iso(risk.updated_at),
        "updatedByAccountId": risk.updated_by_account_id,
        **_imported(risk),
        "revision": risk.revision,
    }


def decision_to_dict(decision: Decision) -> dict:
    return {
        "id": str(decision.pk),
        "projectKey": decision.project.key,
        "decision": decision.decision,
        "decisionNotes": decision.decision_notes,
        "madeOn": _iso(decision.made_on),
        "madeByAccountId": decision.made_by_account_id,
        "recordedBy": decision.recorded_by,
        "rationale": decision.rationale,
        "state": decision_state(decision.made_on),
        "minutesRef": decision.minutes_ref,
        "riskId": decision.risk_id,
        "treatedRiskId": decision.treated_risk_id,
        "evidenceLinks": list(decision.evidence_links or []),
        "notes": list(decision.notes or []),
        "ownerAccountId": decision.owner_account_id,
        "approverAccountId": decision.approver_account_id,
        "approverSeat": decision.approver_seat,
        "status": decision.status,
        "decidedAt": _iso(decision.decided_at),
        "decidedByAccountId": decision.decided_by_account_id,
        "createdAt": _iso(decision.created_at),
        "createdByAccountId": decision.created_by_account_id or None,
        "updatedAt": _iso(decision.updated_at),
        **_imported(decision),
        "revision": decision.revision,
    }


def change_to_dict(change: ChangeRequest) -> dict:
    return {
        "id": str(change.pk),
        "projectKey": change.project.key,
        "summary": change.summary,
        "reason": change.reason,
        "dimensions": list(change.dimensions or []),
        "dimensionsChosen": change.dimensions_chosen,
        "impactScheduleDays": change.impact_schedule_days,
        "impactBudget": decimal_to_json(change.impact_budget),
        "impactScope": change.impact_scope,
        "impactQualityOther": change.impact_quality_other,
        "impactTimeline": change.impact_timeline,
        "targetWorkPackageId": str(change.target_work_package_id)
        if change.target_work_package_id
        else None,
        "proposerAccountId": change.proposer_account_id,
        "approverAccountId": change.approver_account_id,
        "approverSeat": change.approver_seat,
        "approverLocked": change.approver_locked,
        "status": change.status,
        "decidedAt": _iso(change.decided_at),
        "decidedByAccountId": change.decided_by_account_id,
        "decisionComment": change.decision_comment,
        "createdAt": _iso(change.created_at),
        "createdByAccountId": change.created_by_account_id,
        "updatedAt": _iso(change.updated_at),
        **_imported(change),
        "applicationRecord": change.application_record,
        "applicationState": change_application_state(change),
        "revision": change.revision,
    }
