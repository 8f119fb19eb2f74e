"""Derived register values, computed here once and shown the same everywhere (pages, API,
exports, status, portfolio): decision state, risk score, change dimensions and application
state, approved variations, schedule variance; and the state predicates (may this decision
be updated, this risk have a decision recorded, this change be edited or decided) that the
services enforce and the pages read to offer or hide their controls."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from registers.models import Decision, Risk


import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from governance import formatting
from governance.cleaning import decimal_to_json
from governance.models import Project
from governance.rag import risk_zone
from registers.models import ChangeRequest

AMENDMENT_DIMENSIONS = {"Scope", "Quality", "Other"}
VARIATION_DIMENSIONS = {"Budget", "Schedule"}


def decision_state(made_on: dt.date | None) -> str:
    """Pending when madeOn is null, else Made."""
    return "Made" if made_on else "Pending"


def decision_is_editable(decision: Decision) -> bool:
    """A pending decision may be updated; a made one refuses every update (only notes are
    appended to it)."""
    return decision_state(decision.made_on) == "Pending"


def decision_can_be_recorded(risk: Risk) -> bool:
    """The Record-decision act is possible only for a materialised risk (direction Risk)."""
    return risk.direction == "Risk" and bool(risk.materialised)


def change_is_open(change: ChangeRequest) -> bool:
    """A change request is edited, deleted and adjudicated only while Proposed; a decided
    change is immutable."""
    return change.status == "Proposed"


def infer_dimensions(
    *,
    impact_scope: str,
    impact_budget: Decimal | None,
    impact_schedule_days: int | None,
) -> list[str]:
    """The dimensions the impacts imply, for a change whose person never chose them: scope
    prose gives Scope, a non-zero budget impact Budget, a non-zero schedule delta Schedule.
    Quality and Other are never inferred."""
    inferred = []
    if impact_scope and impact_scope.strip():
        inferred.append("Scope")
    if impact_budget:
        inferred.append("Budget")
    if impact_schedule_days:
        inferred.append("Schedule")
    return inferred


def change_dimensions(change: ChangeRequest) -> list[str]:
    """The dimensions of a change: the person's choice once they made one, else those its
    current impacts imply (re-inferred on every save, so they follow the impacts)."""
    if change.dimensions_chosen:
        return list(change.dimensions or [])
    return infer_dimensions(
        impact_scope=change.impact_scope,
        impact_budget=change.impact_budget,
        impact_schedule_days=change.impact_schedule_days,
    )


def application_state(
    status: str, dimensions: Iterable[str], application_record: Mapping[str, Any] | None
) -> str:
    """The spec's derived application state of a change request (never stored)."""
    if status in ("Proposed", "Rejected", "Withdrawn"):
        return status
    if application_record:
        return "Applied"
    dims = set(dimensions)
    if dims and dims <= VARIATION_DIMENSIONS:
        return "Applied"  # the variation roll-up is the application; it happens at approval
    return "AwaitingApplication"


def change_application_state(change: ChangeRequest) -> str:
    return application_state(change.status, change.dimensions or [], change.application_record)


def change_awaits_baseline(change: ChangeRequest) -> bool:
    """An Approved change awaiting application that names a work package: it may be applied
    to that package's baseline (by the Project Lead; the business case's service checks the
    baseline itself)."""
    return (
        change_application_state(change) == "AwaitingApplication"
        and change.target_work_package_id is not None
    )


# --- the plan baseline in force and what is measured against it ----------------------------


def _business_case_model() -> Any:
    """The business case's model, read through the project's reverse relation (the registers
    never import the charter)."""
    # django-stubs types a reverse relation's get_field as its descriptor (it is a OneToOneRel).
    return Project._meta.get_field("business_case").related_model  # type: ignore[attr-defined]


def plan_baseline_of(project: Project) -> dict[str, Any] | None:
    """The plan baseline in force: the business case's planBaseline ({version, approvedAt,
    workPackages: {id: {budget, plannedStartDate, plannedEndDate}}, totalBudget}) when an
    approval wrote one, else None. One query (the case is read through the project's reverse
    relation: the registers never import the charter)."""
    cases = _business_case_model().objects.filter(project=project)
    value = cases.values_list("plan_baseline", flat=True)
    return as_plan_baseline(value.first())


def plan_baselines_of(project_ids: Iterable[Any]) -> dict[Any, dict[str, Any] | None]:
    """`plan_baseline_of` for any number of projects, by project id, in one query."""
    rows = _business_case_model().objects.filter(project_id__in=list(project_ids))
    return {
        pk: as_plan_baseline(plan) for pk, plan in rows.values_list("project_id", "plan_baseline")
    }


def as_plan_baseline(value: Any) -> dict[str, Any] | None:
    """A stored planBaseline when it is one (an object), else None."""
    return value if isinstance(value, dict) and value else None


def baseline_entries(plan: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The packages a plan baseline names (`planBaseline.workPackages`), by id; none where it
    names none."""
    entries = plan.get("workPackages") if isinstance(plan, Mapping) else None
    return entries if isinstance(entries, Mapping) else {}


def baseline_entry(plan: Mapping[str, Any] | None, package_id: Any) -> Mapping[str, Any] | None:
    """A package's entry in a plan baseline (its baselined dates and budget), None where the
    baseline does not name it."""
    entry = baseline_entries(plan).get(str(package_id))
    return entry if isinstance(entry, Mapping) else None


def iso_day(value: Any) -> dt.date | None:
    """A day as a plan baseline stores it (an ISO date, or the start of a timestamp); None
    where there is none or it cannot be read."""
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def baseline_approved_at(plan: Mapping[str, Any] | None) -> dt.datetime | None:
    """When the baseline in force was approved (its approvedAt), or None."""
    if not plan:
        return None
    raw = plan.get("approvedAt")
    if isinstance(raw, dt.datetime):
        return raw
    try:
        at = dt.datetime.fromisoformat(str(raw)) if raw else None
    except ValueError:
        return None
    if at is not None and at.tzinfo is None:
        at = at.replace(tzinfo=dt.UTC)
    return at


BASIS_BASELINE = "baseline"  # the package's dates in the plan baseline in force
BASIS_PLANNED = "plannedDates"  # before approval: the package's planned dates
BASIS_NO_BASELINE = "noBaseline"  # added after approval: no baseline, its planned dates


@dataclass(frozen=True)
class PackageSchedule:
    """A work package's schedule against its baseline: what the variance is measured against
    (`basis`, and its start and end), the variance in days (positive is late), and whether the
    current plan differs from the baseline (a re-plan)."""

    basis: str
    start: dt.date | None
    end: dt.date | None
    variance_days: int | None
    replanned: bool

    @property
    def note(self) -> str:
        """The variance's basis in words, for the register, the export and the agent."""
        if self.basis == BASIS_NO_BASELINE:
            return "No baseline: added after approval; measured against its planned end."
        if self.basis == BASIS_PLANNED:
            return "Not approved yet: measured against its planned end."
        end = formatting.day(self.end) if self.end else "none"
        text = f"Measured against its baseline end {end}"
        return text + (", re-planned since approval." if self.replanned else ".")


def package_schedule(wp: Any, plan: Mapping[str, Any] | None) -> PackageSchedule:
    """The one computation of a package's schedule variance. Once a plan baseline exists the
    package is measured against its dates there (the current planned dates are a re-plan shown
    beside it); a package the baseline does not name was added after approval and has no
    baseline; before approval, the planned dates. The end measured is forecastEndDate, falling
    back to plannedEndDate when there is a baseline (a re-plan without a forecast still moves
    the end), and a finished package's actualEndDate before either (`measured_end`); without
    any, or without a basis end, there is no variance."""
    planned_start, planned_end = wp.planned_start_date, wp.planned_end_date
    entry = baseline_entry(plan, wp.pk)
    if entry is not None:
        start = iso_day(entry.get("plannedStartDate"))
        end = iso_day(entry.get("plannedEndDate"))
        measured = measured_end(wp)
        variance = (measured - end).days if measured and end else None
        replanned = (start, end) != (planned_start, planned_end)
        return PackageSchedule(BASIS_BASELINE, start, end, variance, replanned)
    basis = BASIS_NO_BASELINE if plan else BASIS_PLANNED
    actual_end = getattr(wp, "actual_end_date", None)
    variance = schedule_variance_days(planned_end, actual_end or wp.forecast_end_date)
    return PackageSchedule(basis, planned_start, planned_end, variance, False)


def measured_end(wp: Any) -> dt.date | None:
    """The end a package is measured by: its actualEndDate once it finished, else its
    forecastEndDate, else its plannedEndDate. A package's slip and the project's forecast end
    both read it."""
    end: dt.date | None = (
        getattr(wp, "actual_end_date", None) or wp.forecast_end_date or wp.planned_end_date
    )
    return end


def schedule_variance_days(
    planned_end_date: dt.date | None, forecast_end_date: dt.date | None
) -> int | None:
    """forecastEndDate minus the end it is measured against, in days (positive is late)."""
    if planned_end_date is None or forecast_end_date is None:
        return None
    return (forecast_end_date - planned_end_date).days


# --- approved variations on top of the baseline in force ------------------------------------


@dataclass(frozen=True)
class Variations:
    budget: Decimal = Decimal("0")
    days: int = 0
    budget_changes: int = 0  # counted changes with a non-zero budget impact


def counts_as_variation(change: Any) -> bool:
    """Whether an Approved change adds to the approved budget and schedule on top of the
    baseline in force: its application is the roll-up (Budget and/or Schedule only, derived
    state Applied without an applicationRecord). It counts for as long as it stands, through
    every approval after it: approving (or re-approving) the business case freezes the plan
    together with these changes (the approval lists them in its planBaseline's carriedChanges
    and its audit entry), never folding them away unseen. A change with an applicationRecord
    is folded into a baseline already; an AwaitingApplication change is not applied yet."""
    if change.status != "Approved" or change.application_record:
        return False
    return change_application_state(change) == "Applied"


def variations(changes: Iterable[Any]) -> Variations:
    """The sums of impactBudget and impactScheduleDays over the changes that count."""
    budget, days, count = Decimal("0"), 0, 0
    for change in changes:
        if not counts_as_variation(change):
            continue
        budget += change.impact_budget or 0
        days += change.impact_schedule_days or 0
        count += 1 if change.impact_budget else 0
    return Variations(budget, days, count)


VARIATION_FIELDS = (
    "project_id",
    "status",
    "dimensions",
    "application_record",
    "decided_at",
    "impact_budget",
    "impact_schedule_days",
    "impact_scope",
)


@dataclass(frozen=True)
class VariationFact:
    """The columns of a change that `counts_as_variation` reads (loaded in bulk)."""

    project_id: Any
    status: str
    dimensions: Any
    application_record: Any
    decided_at: dt.datetime | None
    impact_budget: Decimal | None
    impact_schedule_days: int | None
    impact_scope: str = ""


def approved_change_facts(project_ids: Iterable[Any]) -> dict[Any, list[VariationFact]]:
    """The Approved changes of any number of projects, by project id, in one query."""
    found: dict[Any, list[VariationFact]] = {}
    rows = ChangeRequest.objects.filter(project_id__in=list(project_ids), status="Approved")
    for row in rows.values_list(*VARIATION_FIELDS):
        found.setdefault(row[0], []).append(VariationFact(*row))
    return found


def approved_variations(project: Project) -> tuple[Decimal, int]:
    """Sums of impactBudget and impactScheduleDays over the project's Approved changes that
    count on top of the plan baseline in force (`counts_as_variation`)."""
    found = variations(approved_change_facts([project.pk]).get(project.pk, []))
    return found.budget, found.days


def carried_changes(project: Project) -> list[ChangeRequest]:
    """The changes an approval of the business case carries on top of the plan it freezes:
    the project's Approved changes that count as variations (`counts_as_variation`), oldest
    decision first. The approval panel lists them; the approval records them."""
    rows = ChangeRequest.objects.filter(project=project, status="Approved").order_by(
        "decided_at", "created_at", "pk"
    )
    return [change for change in rows if counts_as_variation(change)]


def carried_record(changes: Iterable[Any]) -> list[dict[str, Any]]:
    """The carried changes as the plan baseline and the audit entry record them."""
    return [
        {
            "id": str(change.pk),
            "summary": change.summary,
            "impactBudget": decimal_to_json(change.impact_budget),
            "impactScheduleDays": change.impact_schedule_days,
            "decidedAt": change.decided_at.isoformat() if change.decided_at else None,
        }
        for change in changes
    ]


def risk_heat(score: int | None, thresholds: Mapping[str, float]) -> str:
    """The heat class of a risk score on the register ("red", "amber", "green", "none"): the
    one colouring of a score (`governance.rag.risk_zone`), as the derived risk RAG and the
    matrices read it."""
    return risk_zone(score, thresholds).lower()


def residual_score(risk: Any) -> int | None:
    """The residual score as assessed: residualImpact x residualLikelihood when both are set,
    else None (the judged `score` then falls back to the inherent score)."""
    if risk.residual_impact and risk.residual_likelihood:
        return int(risk.residual_impact) * int(risk.residual_likelihood)
    return None
