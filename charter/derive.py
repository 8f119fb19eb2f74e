"""Derived business-case values, computed here once: adoptionGap, the read-time fallbacks of
the spec (changeSaturation, terminalDisposition, legacy objectives), lifecycle groupings."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from charter.models import BusinessCase


import uuid
from collections.abc import Mapping
from typing import Any

from charter.models import CHANGE_SATURATIONS, CONFIDENCES
from governance.seats import seat_is_actionable
from registers.models import ChangeRequest

# Closed or later: the derived RAG of the status page is Blue from here on.
CLOSED_OR_LATER = frozenset({"Closed", "InRealisation", "Realised", "NotRealised", "InMaintenance"})


def change_saturation(value: str | None) -> str:
    """None, Low, Modest, High; anything else (invalid or missing) reads as Unknown."""
    return value if value in CHANGE_SATURATIONS else "Unknown"


def confidence(value: str | None) -> str:
    return value if value in CONFIDENCES else "Unknown"


def outcome(case: BusinessCase) -> str:
    """A legacy 'objectives' value surfaces as outcome on read."""
    return case.outcome or case.objectives or ""


def terminal_disposition(case: BusinessCase) -> str | None:
    """Recorded at archive time; older archived records without one read as archived."""
    if case.terminal_disposition:
        return case.terminal_disposition
    return "archived" if case.approval_status == "Archived" else None


def adoption_missing(
    *,
    adoption_affected: str,
    adoption_kpi: str,
    change_saturation_value: str | None,
    adoption_owner: Mapping[str, Any] | None,
) -> list[str]:
    """The adoption inputs that keep adoptionGap true, by field name."""
    missing = []
    if not (adoption_affected or "").strip():
        missing.append("adoptionAffected")
    if not (adoption_kpi or "").strip():
        missing.append("adoptionKpi")
    if change_saturation(change_saturation_value) == "Unknown":
        missing.append("changeSaturation")
    if not seat_is_actionable(adoption_owner):
        missing.append("adoptionOwner")
    return missing


def adoption_gap_fields(case: BusinessCase) -> list[str]:
    return adoption_missing(
        adoption_affected=case.adoption_affected,
        adoption_kpi=case.adoption_kpi,
        change_saturation_value=case.change_saturation,
        adoption_owner=case.adoption_owner,
    )


def adoption_gap(case: BusinessCase) -> bool:
    """True when adoptionAffected or adoptionKpi is empty, changeSaturation is absent or
    Unknown, or the adoptionOwner seat is not actionable (no tracker account and no usable
    external address)."""
    return bool(adoption_gap_fields(case))


def open_blockers(case: BusinessCase) -> list[dict[str, Any]]:
    """The return notes of severity Blocker not yet addressed: submitting again with one
    open is taken only after a warning naming each (the business-case page)."""
    return [
        dict(note)
        for note in case.return_notes or []
        if isinstance(note, Mapping)
        and note.get("severity") == "Blocker"
        and not note.get("addressed")
    ]


def ever_approved(case: BusinessCase) -> bool:
    """Whether this business case has been approved at least once: it carries an approval
    stamp, or it is an amendment (version 2 and up only come from re-opening an approved
    case). Such a case is a running investment: stopping it is a kill, never an archive."""
    return case.approved_at is not None or (case.version or 1) >= 2


def enabling_change(case: BusinessCase) -> ChangeRequest | None:
    """The change request that enabled the current amendment (None when there is none or it
    was deleted). Looked up once per case instance."""
    if not case.amendment_enabled_by_change_id:
        return None
    cache = case.__dict__.setdefault("_enabling_change", {})
    key = case.amendment_enabled_by_change_id
    if key not in cache:
        pk = as_uuid(key)
        cache[key] = (
            ChangeRequest.objects.filter(project_id=case.project_id, pk=pk).first() if pk else None
        )
    change: ChangeRequest | None = cache[key]
    return change


def amendment_change_viable(case: BusinessCase) -> bool:
    """Whether the enabling change can still lead to approving the amendment: it exists and
    is Proposed (awaiting the sponsor) or Approved."""
    change = enabling_change(case)
    return change is not None and change.status in ("Proposed", "Approved")


def change_withdrawn_on_stop(case: BusinessCase) -> ChangeRequest | None:
    """The enabling change that archiving or killing this case withdraws: the amendment's
    change while it is still Proposed (None otherwise)."""
    change = enabling_change(case)
    return change if change is not None and change.status == "Proposed" else None


def as_uuid(value: object) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None
