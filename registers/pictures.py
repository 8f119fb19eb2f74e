"""What the register pictures draw, from rows already loaded (no query here): the risk matrix
cells, the work-package timeline lanes and the budget curve by month. `governance.charts`
draws them; the register pages, the status page and the portfolio call these."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from registers.models import Risk, WorkPackage


import datetime as dt
import math
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple, Protocol

from django.db.models import BooleanField, Case, Count, F, Q, Sum, Value, When
from django.db.models.functions import TruncMonth
from django.utils.http import urlencode

from governance import charts
from governance.cleaning import DATE_MAX, DATE_MIN, clamp_date
from registers.derive import BASIS_NO_BASELINE, package_schedule

MATRIX_VIEWS = {"inherent": "Inherent", "residual": "Residual"}


# --- risk matrix ------------------------------------------------------------------------------


class Scored(Protocol):
    """What places a risk on a matrix: a risk, or its `Scores` read as a group."""

    @property
    def impact(self) -> int | None: ...
    @property
    def likelihood(self) -> int | None: ...
    @property
    def residual_impact(self) -> int | None: ...
    @property
    def residual_likelihood(self) -> int | None: ...


def risk_cell(risk: Scored, view: str) -> tuple[int, int] | None:
    """(impact, likelihood) of a risk in the inherent or the residual matrix. The residual
    matrix places a risk by its residual scores when both are assessed, else by its inherent
    ones (the same rule as its score)."""
    if view == "residual" and risk.residual_impact and risk.residual_likelihood:
        return (risk.residual_impact, risk.residual_likelihood)
    if risk.impact and risk.likelihood:
        return (risk.impact, risk.likelihood)
    return None


class Scores(NamedTuple):
    impact: int | None
    likelihood: int | None
    residual_impact: int | None
    residual_likelihood: int | None


def place_groups(groups: Iterable[tuple[Any, ...]]) -> dict[str, dict[tuple[int, int], int]]:
    """Open risks grouped by scores, `(impact, likelihood, residual_impact,
    residual_likelihood, count)`, counted per cell of each matrix where `risk_cell` places a
    risk with those scores: {view: {(impact, likelihood): count}}."""
    out: dict[str, dict[tuple[int, int], int]] = {view: {} for view in MATRIX_VIEWS}
    for *scores, n in groups:
        risk = Scores(*scores)
        for view, cells in out.items():
            cell = risk_cell(risk, view)
            if cell is not None:
                cells[cell] = cells.get(cell, 0) + n
    return out


# The risks the matrices show: open risks (not opportunities, not closed ones).
ON_MATRIX = {"status": "Open", "direction": "Risk"}


def on_matrix(risk: Risk) -> bool:
    return all(getattr(risk, name) == value for name, value in ON_MATRIX.items())


def matrix_counts(risks: Iterable[Any], view: str) -> dict[tuple[int, int], int]:
    return charts.collect(
        (cell, 1) for r in risks if on_matrix(r) and (cell := risk_cell(r, view)) is not None
    )


def cell_param(view: str, impact: int, likelihood: int) -> str:
    return f"{view}-{impact}-{likelihood}"


def parse_cell(value: str) -> tuple[str, int, int] | None:
    """`residual-4-3` -> ("residual", 4, 3); None for anything else."""
    parts = (value or "").split("-")
    if len(parts) != 3 or parts[0] not in MATRIX_VIEWS:
        return None
    if not all(p in {"1", "2", "3", "4", "5"} for p in parts[1:]):
        return None
    return parts[0], int(parts[1]), int(parts[2])


def cell_words(cell: tuple[str, int, int]) -> str:
    view, impact, likelihood = cell
    return f"{MATRIX_VIEWS[view].lower()} impact {impact}, likelihood {likelihood}"


def in_cell(risk: Risk, cell: tuple[str, int, int]) -> bool:
    view, impact, likelihood = cell
    return on_matrix(risk) and risk_cell(risk, view) == (impact, likelihood)


def cell_link(register_url: str, view: str) -> Callable[[int, int], str]:
    def link(impact: int, likelihood: int) -> str:
        query = {
            "status": "Open",
            "direction": "Risk",
            "cell": cell_param(view, impact, likelihood),
        }
        return f"{register_url}?{urlencode(query)}#register-table"

    return link


def risk_cells(risks: Iterable[Any]) -> dict[str, dict[tuple[int, int], int]]:
    """{view: {(impact, likelihood): count}} of the open risks among loaded rows."""
    listed = list(risks)
    return {view: matrix_counts(listed, view) for view in MATRIX_VIEWS}


def open_risk_cells(risks: QuerySet[Risk]) -> dict[str, dict[tuple[int, int], int]]:
    """`risk_cells` of a queryset's risks, counted in SQL by their scores (one query: the
    rows are never read)."""
    groups = (
        risks.filter(**ON_MATRIX)
        .values_list("impact", "likelihood", "residual_impact", "residual_likelihood")
        .annotate(n=Count("id"))
        .order_by()
    )
    return place_groups(groups)


def risk_matrices(
    cells: Mapping[str, Mapping[tuple[int, int], int]],
    thresholds: Mapping[str, Any],
    register_url: str,
    *,
    prefix: str = "risk",
) -> list[charts.Chart]:
    """The inherent and residual matrices of one project's open risks, from their counts per
    cell of each view (`risk_cells`, `open_risk_cells`), each cell linking to the register
    filtered to it."""
    # Whole scores: a fractional line (7.5) starts its zone at the next whole score, as
    # `risk_zone` reads it, so a cell is shaded as the register colours its score.
    amber = math.ceil(thresholds["riskAmberMinScore"])
    red = math.ceil(thresholds["riskRedMinScore"])
    return [
        charts.risk_matrix(
            dict(cells.get(view, {})),
            chart_id=f"{prefix}-matrix-{view}",
            title=f"{label} risk matrix",
            score_name=f"{label.lower()} score",
            amber_min=amber,
            red_min=red,
            link=cell_link(register_url, view),
        )
        for view, label in MATRIX_VIEWS.items()
    ]


# --- timeline ---------------------------------------------------------------------------------


def is_milestone(wp: WorkPackage) -> bool:
    """A work package typed Milestone, or planned to start and end on the same day."""
    if (wp.type or "").strip().casefold() == "milestone":
        return True
    return bool(wp.planned_start_date and wp.planned_start_date == wp.planned_end_date)


def timeline_rows(
    packages: Iterable[Any], base_url: str, plan: Mapping[str, Any] | None = None
) -> list[charts.TimelineRow]:
    """One lane per work package in register order. The baseline bar and the slip are the
    package's schedule against the plan baseline in force (`registers.derive.package_schedule`):
    its approved dates when the baseline names it, its planned dates before approval, and no
    baseline bar for a package added after approval (its label says so)."""
    rows = []
    for wp in packages:
        # The register page's rows carry their schedule against the same plan already
        # (registers.tables decorates them); the status page's are read as stored.
        schedule = getattr(wp, "schedule", None) or package_schedule(wp, plan)
        label = wp.name
        if schedule.basis == BASIS_NO_BASELINE:
            baseline = charts.Span(None, None)
            label = f"{wp.name} (no baseline)"
        else:
            baseline = charts.Span(schedule.start, schedule.end)
            if schedule.replanned:
                label = f"{wp.name} (re-planned)"
        rows.append(
            charts.TimelineRow(
                label=label,
                href=f"{base_url}{wp.pk}/",
                baseline=baseline,
                forecast=charts.Span(
                    wp.forecast_start_date or wp.planned_start_date,
                    wp.forecast_end_date or wp.planned_end_date,
                )
                if schedule.replanned
                else charts.Span(wp.forecast_start_date, wp.forecast_end_date),
                actual=charts.Span(wp.actual_start_date, wp.actual_end_date),
                milestone=is_milestone(wp),
                done=wp.status == "Complete",
                slip=schedule.variance_days,
                slip_derived=True,
            )
        )
    return rows


def work_package_timeline(
    packages: list[Any],
    base_url: str,
    today: dt.date,
    *,
    plan: Mapping[str, Any] | None = None,
    chart_id: str = "wp-timeline",
) -> charts.Chart:
    label = "Baseline (approved plan)" if plan else "Planned"
    return charts.timeline(
        timeline_rows(packages, base_url, plan),
        chart_id=chart_id,
        title="Work package timeline",
        today=today,
        baseline_label=label,
    )


# --- budget curve -----------------------------------------------------------------------------


def _month(day: dt.date) -> str:
    return f"{day.year:04d}-{day.month:02d}"


def _month_range(first: str, last: str) -> list[str]:
    year, month = int(first[:4]), int(first[5:7])
    out = []
    while f"{year:04d}-{month:02d}" <= last:
        out.append(f"{year:04d}-{month:02d}")
        month += 1
        if month > 12:
            year, month = year + 1, 1
    return out


def _amount(value: Any) -> Decimal | None:
    try:
        return Decimal(str(value)) if value is not None else None
    except InvalidOperation:
        return None


def profile(wp: WorkPackage) -> dict[str, Decimal]:
    """How a package's money falls by month: its budgetPhasing when it has one with a positive
    total, else its budget spread evenly over its planned months. Shares summing to 1."""
    weights: dict[str, Decimal] = {}
    for entry in wp.budget_phasing or []:
        amount = _amount(entry.get("amount"))
        period = str(entry.get("period") or "")[:7]
        if amount is not None and amount > 0 and len(period) == 7:
            # A month stored before the accepted range was enforced is drawn at its edge.
            period = min(max(period, f"{DATE_MIN:%Y-%m}"), f"{DATE_MAX:%Y-%m}")
            weights[period] = weights.get(period, Decimal(0)) + amount
    if not weights and wp.planned_start_date and wp.planned_end_date:
        first, last = sorted((clamp_date(wp.planned_start_date), clamp_date(wp.planned_end_date)))
        for period in _month_range(_month(first), _month(last)):
            weights[period] = Decimal(1)
    total = sum(weights.values())
    if not total:
        return {}
    return {period: amount / total for period, amount in weights.items()}


def budget_series(
    packages: Iterable[Any], today: dt.date
) -> tuple[list[str], dict[str, list[Any]]]:
    """Cumulative money by month across the packages: baseline (budgetBaseline), forecast
    (budgetForecast, else budget) and actual (budgetActual), each spread by the package's
    profile. Actual is spent up to this month: it falls on the profile's months up to today
    (on this month when none has begun) and stops at this month."""
    now = _month(today)
    monthly: dict[str, dict[str, Decimal]] = {"baseline": {}, "forecast": {}, "actual": {}}
    # Packages without a phasing that share their planned months share their profile: each
    # series' amounts are summed over such packages first (sums of money, exact), then
    # spread once by the shared profile, so a thousand packages cost their distinct months.
    sums: dict[Any, tuple[dict[str, Decimal], dict[str, Decimal]]] = {}
    seen_baseline = False
    for n, wp in enumerate(packages):
        key = n if wp.budget_phasing else (wp.planned_start_date, wp.planned_end_date)
        if key not in sums:
            sums[key] = (profile(wp), {})
        shares, amounts = sums[key]
        if not shares:
            continue
        totals = {
            "baseline": wp.budget_baseline,
            "forecast": wp.budget_forecast if wp.budget_forecast is not None else wp.budget,
            "actual": wp.budget_actual or None,
        }
        seen_baseline = seen_baseline or wp.budget_baseline is not None
        for name, total in totals.items():
            if total is not None:
                amounts[name] = amounts.get(name, Decimal(0)) + total
    for shares, amounts in sums.values():
        for name in ("baseline", "forecast"):
            if name in amounts:
                total = amounts[name]
                for period, share in shares.items():
                    monthly[name][period] = monthly[name].get(period, Decimal(0)) + total * share
        if "actual" in amounts:
            past = {p: s for p, s in shares.items() if p <= now}
            spread = past or {now: Decimal(1)}
            weight = sum(spread.values())
            for period, share in spread.items():
                monthly["actual"][period] = (
                    monthly["actual"].get(period, Decimal(0)) + amounts["actual"] * share / weight
                )
    periods = sorted({p for m in monthly.values() for p in m})
    if not periods:
        return [], {}
    labels = _month_range(periods[0], periods[-1])
    series: dict[str, list[Any]] = {}
    for name, by_month in monthly.items():
        if name == "baseline" and not seen_baseline:
            continue
        if not by_month:
            continue
        running, values = Decimal(0), []
        for period in labels:
            running += by_month.get(period, Decimal(0))
            values.append(None if (name == "actual" and period > now) else float(running))
        series[name] = values
    return labels, series


SUMMED = ("budget", "budget_baseline", "budget_forecast", "budget_actual")


def budget_rows(packages: QuerySet[WorkPackage]) -> list[Any]:
    """What `budget_series` reads of `packages`, in as few rows as give the same curve: a
    package with a phasing as itself; the others summed in SQL by their planned months (the
    first day of the start's and of the end's month: a profile depends on the months alone)
    and by whether they have a forecast, so that each sum is spread by the one profile those
    packages share. Sums only: which figure counts, and how it spreads, stay in `profile`
    and `budget_series`; the curve costs the register's distinct pairs of months, not its
    rows nor its days (one query whatever the size: a package with a phasing is a group of
    its own, by its id, and comes first)."""
    unphased = Q(budget_phasing__isnull=True) | Q(budget_phasing=[])
    grouped = (
        packages.order_by()
        .annotate(
            phased=Case(When(unphased, then=Value(False)), default=Value(True)),
            own=Case(When(unphased, then=Value(None)), default=F("pk")),
            forecasted=Case(
                When(budget_forecast__isnull=True, then=Value(False)),
                default=Value(True),
                output_field=BooleanField(),
            ),
        )
        .values(
            "phased",
            "own",
            "budget_phasing",
            "forecasted",
            start_month=TruncMonth("planned_start_date"),
            end_month=TruncMonth("planned_end_date"),
        )
        .annotate(**{f"sum_{name}": Sum(name) for name in SUMMED})
        .order_by("-phased", "start_month", "end_month", "forecasted")
    )
    rows: list[Any] = []
    for row in grouped:
        sums = {name: row[f"sum_{name}"] for name in SUMMED}
        rows.append(
            BudgetGroup(
                budget_phasing=row["budget_phasing"] if row["phased"] else None,
                planned_start_date=row["start_month"],
                planned_end_date=row["end_month"],
                **sums,
            )
        )
    return rows


class BudgetGroup(NamedTuple):
    """A package's (or alike packages' summed) money and months, as `budget_series` reads."""

    budget_phasing: Any
    planned_start_date: dt.date | None
    planned_end_date: dt.date | None
    budget: Decimal | None
    budget_baseline: Decimal | None
    budget_forecast: Decimal | None
    budget_actual: Decimal | None


SERIES = {
    "baseline": ("Baseline", "series-baseline"),
    "forecast": ("Forecast", "series-forecast"),
    "actual": ("Actual", "series-actual"),
}


def budget_curve(
    packages: list[Any], today: dt.date, *, chart_id: str = "budget-curve"
) -> charts.Chart:
    labels, series = budget_series(packages, today)
    now = _month(today)
    marker = (labels.index(now), "This month") if now in labels else None
    return charts.line_chart(
        [_month_label(p) for p in labels],
        [charts.Series(SERIES[k][0], SERIES[k][1], v) for k, v in series.items()],
        chart_id=chart_id,
        title="Budget by month (cumulative)",
        marker_line=marker,
    )


def _month_label(period: str) -> str:
    return dt.date(int(period[:4]), int(period[5:7]), 1).strftime("%b %Y")
