"""Benefits realisation after closure: start, the append-only review log, KPI resolution, the
sponsor's verdict (the Not-realised lessons gate), and maintenance (start, retire)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from charter.models import BusinessCase


import uuid
from typing import Any

from django.db import transaction
from django.utils import timezone

from charter import acts
from charter.services.common import begin, body, precheck, stamping_act
from charter.specs import KpiSpec, RealisationSpec, ReviewSpec, VerdictSpec
from governance import specs
from governance.cleaning import (
    decimal_to_json,
    only,
)
from governance.errors import GateBlocked
from governance.permissions import Caller

realisation_start = stamping_act(
    "realisation-start",
    "realisation.started",
    "Closed -> InRealisation (an editor or the sponsor): realisationStartedAt.",
    status="InRealisation",
    stamped="realisation_started_at",
)


def realisation_update(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """While InRealisation: the summary, the 'measured by' date and the benefits owner."""
    precheck(caller, acts.EDIT_REALISATION, expected_revision)
    data = body(data)
    only(data, *specs.writable(RealisationSpec))
    partial, errors = specs.validate(RealisationSpec, data)
    values = specs.sent(partial)
    errors.raise_if_any()
    with transaction.atomic():
        write = begin(caller, acts.EDIT_REALISATION, expected_revision)
        changed = False
        for attr, value in values.items():
            if getattr(write.case, attr) != value:
                setattr(write.case, attr, value)
                changed = True
        return write.finish("realisation.updated") if changed else write.case


def realisation_review(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """Append {id, at, byAccountId, note, confidence} to the review log, with the benefit
    realised so far (benefitRealisedToDate) when the reviewer gives it; the case takes the
    review's confidence and lastRealisationReviewAt."""
    precheck(caller, acts.ACTS["realisation-review"], expected_revision)
    data = body(data)
    only(data, *specs.writable(ReviewSpec))
    partial, errors = specs.validate(ReviewSpec, data, creating=True)
    errors.raise_if_any()
    note, confidence = partial.note, partial.confidence
    realised = partial.benefit_realised_to_date
    with transaction.atomic():
        write = begin(caller, acts.ACTS["realisation-review"], expected_revision)
        case = write.case
        now = timezone.now()
        review: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "at": now.isoformat(),
            "byAccountId": caller.account_id,
            "note": note,
            "confidence": confidence,
        }
        if realised is not None:
            review["benefitRealisedToDate"] = decimal_to_json(realised)
        case.realisation_reviews = [*(case.realisation_reviews or []), review]
        assert confidence is not None  # ReviewSpec requires it
        case.realisation_confidence = confidence
        case.last_realisation_review_at = now
        return write.finish("realisation.reviewed")


def kpi_resolve(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """kpiResolution {resolvedAt, resolvedBy, resolvedValue, met, notes}; `met` is required."""
    precheck(caller, acts.ACTS["kpi-resolve"], expected_revision)
    data = body(data)
    only(data, *specs.writable(KpiSpec))
    partial, errors = specs.validate(KpiSpec, data, creating=True)
    errors.raise_if_any()
    value, met, notes = partial.resolved_value or "", partial.met, partial.notes or ""
    with transaction.atomic():
        write = begin(caller, acts.ACTS["kpi-resolve"], expected_revision)
        write.case.kpi_resolution = {
            "resolvedAt": timezone.now().isoformat(),
            "resolvedBy": caller.account_id,
            "resolvedValue": value,
            "met": met,
            "notes": notes,
        }
        return write.finish("realisation.kpi_resolved")


def realisation_verdict(
    *, caller: Caller, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """InRealisation -> Realised or NotRealised, by the sponsor, with returnRealised. A
    NotRealised verdict needs realisationLessons: the spec's second hard content gate (422
    `gate`)."""
    precheck(caller, acts.ACTS["verdict"], expected_revision)
    data = body(data)
    only(data, *specs.writable(VerdictSpec))
    partial, errors = specs.validate(VerdictSpec, data, creating=True)
    errors.raise_if_any()
    values = specs.sent(partial)
    verdict = values.pop("verdict")
    with transaction.atomic():
        write = begin(caller, acts.ACTS["verdict"], expected_revision)
        case = write.case
        lessons = values.get("realisation_lessons", case.realisation_lessons)
        if verdict == "NotRealised" and not (lessons or "").strip():
            raise GateBlocked(
                "A Not-realised verdict needs the lessons learned.",
                fields={"realisationLessons": ["Record the lessons: what should others learn?"]},
            )
        for attr, value in values.items():
            setattr(case, attr, value)
        case.approval_status = verdict
        case.realisation_decided_at = timezone.now()
        case.realisation_decided_by_account_id = caller.account_id
        return write.finish(
            f"realisation.{'realised' if verdict == 'Realised' else 'not_realised'}"
        )


maintenance_start = stamping_act(
    "maintenance-start",
    "maintenance.started",
    "Realised or NotRealised -> InMaintenance: maintenanceStartedAt.",
    status="InMaintenance",
    stamped="maintenance_started_at",
)


maintenance_retire = stamping_act(
    "maintenance-retire",
    "maintenance.retired",
    "InMaintenance (state unchanged): maintenanceRetiredAt, once.",
    stamped="maintenance_retired_at",
)
