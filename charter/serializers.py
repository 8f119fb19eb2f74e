"""The business case as the API represents it: the spec's camelCase fields, the read-time
fallbacks (legacy objectives as outcome, changeSaturation Unknown, terminalDisposition
archived, financialCase mode none, recomputed financial metrics) and the derived read-only
fields adoptionGap and registersFrozen."""

from charter import derive, finance
from charter.acts import available_acts
from charter.models import BusinessCase
from registers.models import SteeringMinutes


def iso(value):
    return value.isoformat() if value else None


# Spec field name -> model attribute, for the fields stored as they are shown.
PLAIN = {
    "businessProblem": "business_problem",
    "returnExpected": "return_expected",
    "scopeInBounds": "scope_in_bounds",
    "scopeBoundaries": "scope_boundaries",
    "theme": "theme",
    "designPrinciples": "design_principles",
    "supportingLinks": "supporting_links",
    "decisionAuthority": "decision_authority",
    "projectManager": "project_manager",
    "customerRep": "customer_rep",
    "supplierRep": "supplier_rep",
    "steeringCommittee": "steering_committee",
    "planBaseline": "plan_baseline",
    "updatedByAccountId": "updated_by_account_id",
    "adoptionAffected": "adoption_affected",
    "adoptionKpi": "adoption_kpi",
    "adoptionOwner": "adoption_owner",
    "approvalStatus": "approval_status",
    "version": "version",
    "approvedByAccountId": "approved_by_account_id",
    "approvalComment": "approval_comment",
    "approvalRationale": "approval_rationale",
    "returnNotes": "return_notes",
    "archivedByAccountId": "archived_by_account_id",
    "archiveReason": "archive_reason",
    "archivedFromStatus": "archived_from_status",
    "amendmentEnabledByChangeId": "amendment_enabled_by_change_id",
    "amendmentNoChangeReason": "amendment_no_change_reason",
    "firstSteercoAttendees": "first_steerco_attendees",
    "closeOut": "close_out",
    "closeOutReturnNotes": "closeout_return_notes",
    "closedByAccountId": "closed_by_account_id",
    "returnRealised": "return_realised",
    "realisationSummary": "realisation_summary",
    "realisationLessons": "realisation_lessons",
    "kpiResolution": "kpi_resolution",
    "brOwner": "br_owner",
    "realisationReviews": "realisation_reviews",
    "realisationDecidedByAccountId": "realisation_decided_by_account_id",
}
TIMESTAMPS = {
    "updatedAt": "updated_at",
    "submittedAt": "submitted_at",
    "approvedAt": "approved_at",
    "returnedAt": "returned_at",
    "archivedAt": "archived_at",
    "firstSteercoScheduledFor": "first_steerco_scheduled_for",
    "firstSteercoHeldAt": "first_steerco_held_at",
    "closedAt": "closed_at",
    "realisationDate": "realisation_date",
    "realisationStartedAt": "realisation_started_at",
    "realisationDecidedAt": "realisation_decided_at",
    "maintenanceStartedAt": "maintenance_started_at",
    "maintenanceRetiredAt": "maintenance_retired_at",
    "lastRealisationReviewAt": "last_realisation_review_at",
}


def stored_fields(case: BusinessCase) -> dict:
    """Every stored spec field with its read-time fallback (no derived fields): the shape the
    audit log diffs."""
    data = {name: getattr(case, attr) for name, attr in PLAIN.items()}
    data.update({name: iso(getattr(case, attr)) for name, attr in TIMESTAMPS.items()})
    data["outcome"] = derive.outcome(case)
    data["changeSaturation"] = derive.change_saturation(case.change_saturation)
    data["terminalDisposition"] = derive.terminal_disposition(case)
    data["realisationConfidence"] = derive.confidence(case.realisation_confidence)
    data["financialCase"] = finance.present(case.financial_case)
    return data


def charter_to_dict(case: BusinessCase, *, caller=None) -> dict:
    data = {"projectKey": case.project.key, **stored_fields(case)}
    data["adoptionGap"] = derive.adoption_gap(case)
    data["registersFrozen"] = case.project.registers_frozen
    saved = not case._state.adding
    data["approvedVersions"] = (
        [version_to_dict(v) for v in case.approved_versions.all()] if saved else []
    )
    if caller is not None:
        data["availableActs"] = available_acts(case, caller)
    data["revision"] = case.revision
    return data


def version_to_dict(version) -> dict:
    return {
        "version": version.version,
        "approvedAt": iso(version.approved_at),
        "approvedByAccountId": version.approved_by_account_id,
        "approvalComment": version.approval_comment,
        "approvalRationale": version.approval_rationale,
        "enablingChangeId": version.enabling_change_id,
    }


def minutes_to_dict(minutes: SteeringMinutes) -> dict:
    data = {
        "id": str(minutes.pk),
        "title": minutes.title,
        "url": minutes.url,
        "heldOn": iso(minutes.held_on),
        "attendees": list(minutes.attendees or []),
        "createdAt": iso(minutes.created_at),
        "createdByAccountId": minutes.created_by_account_id or None,
    }
    if minutes.page_id:
        data["pageId"] = minutes.page_id
    return data
