"""Register records as the API represents them: the spec's camelCase field names, derived
read-only fields included, server-only fields as the spec allows."""

from governance.cleaning import decimal_to_json
from registers.derive import change_application_state
from registers.models import ChangeRequest


def _iso(value):
    return value.isoformat() if value else None


def change_to_dict(change: ChangeRequest) -> dict:
    return {
        "id": str(change.pk),
        "projectKey": change.project.key,
        "summary": change.summary,
        "reason": change.reason,
        "dimensions": list(change.dimensions or []),
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
        "status": change.status,
        "decidedAt": _iso(change.decided_at),
        "decidedByAccountId": change.decided_by_account_id,
        "decisionComment": change.decision_comment,
        "createdAt": _iso(change.created_at),
        "createdByAccountId": change.created_by_account_id,
        "updatedAt": _iso(change.updated_at),
        "imported": change.imported,
        "applicationRecord": change.application_record,
        "applicationState": change_application_state(change),
        "revision": change.revision,
    }
