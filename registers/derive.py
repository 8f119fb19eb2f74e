"""Derived register values, computed here once and shown the same everywhere (pages, API,
exports, status, portfolio): decision state, risk score, change dimensions and application
state, approved variations, schedule variance; and the state predicates (may this decision
be updated, this risk have a decision recorded, this change be edited or decided) that the
services enforce and the pages read to offer or hide their controls."""

import datetime as dt
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from django.db.models import Sum

from governance.models import Project

AMENDMENT_DIMENSIONS = {"Scope", "Quality", "Other"}
VARIATION_DIMENSIONS = {"Budget", "Schedule"}


def decision_state(made_on: dt.date | None) -> str:
    """Pending when madeOn is null, else Made."""
    return "Made" if made_on else "Pending"


def decision_is_editable(decision) -> bool:
    """A pending decision may be updated; a made one refuses every update (only notes are
    appended to it)."""
    return decision_state(decision.made_on) == "Pending"


def decision_can_be_recorded(risk) -> bool:
    """The Record-decision act is possible only for a materialised risk (direction Risk)."""
    return risk.direction == "Risk" and bool(risk.materialised)


def change_is_open(change) -> bool:
    """A change request is edited, deleted and adjudicated only while Proposed; a decided
    change is immutable."""
    return change.status == "Proposed"


def risk_score(
    impact: int | None,
    likelihood: int | None,
    residual_impact: int | None = None,
    residual_likelihood: int | None = None,
) -> int | None:
    """residualImpact x residualLikelihood when both are set, else impact x likelihood, else
    null. The same score drives the register's heat colour and the derived risk RAG."""
    if residual_impact and residual_likelihood:
        return residual_impact * residual_likelihood
    if impact and likelihood:
        return impact * likelihood
    return None


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


def change_dimensions(change) -> list[str]:
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


def change_application_state(change) -> str:
    return application_state(change.status, change.dimensions or [], change.application_record)


def change_awaits_baseline(change) -> bool:
    """An Approved change awaiting application that names a work package: it may be applied
    to that package's baseline (by the Project Lead; the business case's service checks the
    baseline itself)."""
    return (
        change_application_state(change) == "AwaitingApplication"
        and change.target_work_package_id is not None
    )


def approved_variations(project: Project) -> tuple[Decimal, int]:
    """Sums of impactBudget and impactScheduleDays over the project's Approved changes."""
    totals = project.changes.filter(status="Approved").aggregate(
        budget=Sum("impact_budget"), days=Sum("impact_schedule_days")
    )
    return totals["budget"] or Decimal("0"), totals["days"] or 0


def schedule_variance_days(
    planned_end_date: dt.date | None, forecast_end_date: dt.date | None
) -> int | None:
    """forecastEndDate minus plannedEndDate, in days (positive is late)."""
    if planned_end_date is None or forecast_end_date is None:
        return None
    return (forecast_end_date - planned_end_date).days


def risk_heat(score: int | None, thresholds: Mapping[str, float]) -> str:
    """The heat colour of a risk score on the register, on the same thresholds as the derived
    risk RAG: red from riskRedMinScore, amber from riskAmberMinScore, else green; none
    without a score."""
    if score is None:
        return "none"
    if score >= thresholds["riskRedMinScore"]:
        return "red"
    if score >= thresholds["riskAmberMinScore"]:
        return "amber"
    return "green"
