"""The realisation page's picture: the benefits the approved case planned (its builtin
financial model, cumulative by year) against those realised so far (the reviews'
benefitRealisedToDate). Read from the business case already loaded: no query."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from charter.models import BusinessCase


import datetime as dt
from decimal import Decimal, InvalidOperation
from typing import Any

from governance import charts


def _amount(value: Any) -> Decimal | None:
    try:
        return None if value is None or value == "" else Decimal(str(value))
    except InvalidOperation:
        return None


def _date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    try:
        return dt.datetime.fromisoformat(str(value)).date() if value else None
    except ValueError:
        return None


def planned_benefits(case: BusinessCase) -> dict[int, Decimal]:
    """Year index -> benefit planned that year, from the builtin financial model's lines."""
    builtin = (case.financial_case or {}).get("builtin") or {}
    planned: dict[int, Decimal] = {}
    for line in builtin.get("lines") or []:
        amount = _amount(line.get("benefit"))
        year = line.get("year")
        if isinstance(year, int) and amount is not None:
            planned[year] = planned.get(year, Decimal(0)) + amount
    return planned


def realised_benefits(case: BusinessCase, first_year: int) -> dict[int, Decimal]:
    """Year index -> the benefit realised to date at the last review of that year."""
    realised: dict[int, Decimal] = {}
    for review in case.realisation_reviews or []:
        amount = _amount(review.get("benefitRealisedToDate"))
        day = _date(review.get("at"))
        if amount is None or day is None:
            continue
        realised[day.year - first_year] = amount  # the log is oldest first: the last one wins
    return realised


def benefits_chart(case: BusinessCase) -> charts.Chart:
    """Cumulative planned benefit by year of the case (year 0 = the year it was approved)
    against the benefit realised to date as the reviews recorded it."""
    start = _date(case.approved_at) or _date(case.realisation_started_at) or dt.date.today()
    planned = planned_benefits(case)
    realised = realised_benefits(case, start.year)
    years = sorted(set(planned) | {y for y in realised if y >= 0})
    if years:
        years = list(range(min(years[0], 0), years[-1] + 1))
    running, planned_values = Decimal(0), []
    for year in years:
        running += planned.get(year, Decimal(0))
        planned_values.append(float(running) if planned else None)
    realised_values = [float(realised[y]) if y in realised else None for y in years]
    series = []
    if planned:
        series.append(charts.Series("Planned (cumulative)", "series-planned", planned_values))
    series.append(charts.Series("Realised to date", "series-realised", realised_values))
    chart = charts.line_chart(
        [f"Year {y} ({start.year + y})" for y in years],
        series,
        chart_id="benefits",
        title="Benefits: planned against realised",
        bars=True,
        label_column="Year",
    )
    if chart.empty:
        chart.empty = (
            "Nothing to draw yet: the business case plans no benefits by year, and no review "
            "has recorded a benefit realised so far."
        )
    return chart
