"""The business case as the API represents it: the spec's camelCase fields, the read-time
fallbacks (legacy objectives as outcome, changeSaturation Unknown, terminalDisposition
archived, financialCase mode none, recomputed financial metrics) and the derived read-only
fields adoptionGap and registersFrozen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from governance.permissions import Caller


from charter import derive, finance
from charter.acts import available_acts
from charter.models import ApprovedVersion, BusinessCase
from charter.specs import STORED, CharterSpec
from governance import specs
from registers.models import SteeringMinutes
from registers.serializers import iso


def stored_fields(case: BusinessCase) -> dict[str, Any]:
    """Every stored field of the declaration (charter.specs) with its read-time fallback (no
    derived fields): the shape the audit log diffs."""
    data = specs.to_dict(CharterSpec, case, STORED)
    data["outcome"] = derive.outcome(case)
    data["changeSaturation"] = derive.change_saturation(case.change_saturation)
    data["terminalDisposition"] = derive.terminal_disposition(case)
    data["realisationConfidence"] = derive.confidence(case.realisation_confidence)
    data["financialCase"] = finance.present(case.financial_case)
    return data


def charter_to_dict(case: BusinessCase, *, caller: Caller | None = None) -> dict[str, Any]:
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


def version_to_dict(version: ApprovedVersion) -> dict[str, Any]:
    return {
        "version": version.version,
        "approvedAt": iso(version.approved_at),
        "approvedByAccountId": version.approved_by_account_id,
        "approvalComment": version.approval_comment,
        "approvalRationale": version.approval_rationale,
        "enablingChangeId": version.enabling_change_id,
    }


def minutes_to_dict(minutes: SteeringMinutes) -> dict[str, Any]:
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
