"""The status page's earned-value picture: planned value, earned value and actual cost over
time, as one line chart (server-rendered SVG with its table, `governance.charts.line_chart`).

- Planned value is the plan: at the end of each month from the first to the last month of the
  baselined phasing (and up to this month), `earned_value.planned_value_on` that day; this
  month's point is today's planned value, the figure on the page.
- Earned value and actual cost are what was recorded: each published status report froze the
  project's figures (its snapshot's `earnedValue`), the last report of a month standing for
  the month; this month's point is today's figures.
"""

import calendar
import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from django.utils.dateparse import parse_datetime

from governance import charts
from status import earned_value

MAX_MONTHS = 120
SERIES = (
    ("pv", "Planned value", "series-baseline"),
    ("ev", "Earned value", "series-forecast"),
    ("ac", "Actual cost", "series-actual"),
)


def _month(day: dt.date) -> tuple[int, int]:
    return day.year, day.month


def _months(first: tuple[int, int], last: tuple[int, int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    year, month = first
    while (year, month) <= last and len(out) < MAX_MONTHS:
        out.append((year, month))
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def _label(month: tuple[int, int]) -> str:
    return f"{calendar.month_abbr[month[1]]} {month[0] % 100:02d}"


def recorded(reports: Iterable[Any]) -> dict[tuple[int, int], Mapping[str, Any]]:
    """The earned value each published report froze, by month (the month's last report)."""
    found: dict[tuple[int, int], tuple[dt.datetime, Mapping[str, Any]]] = {}
    for report in reports:
        snapshot = getattr(report, "snapshot", None) or {}
        values = (snapshot.get("status") or {}).get("earnedValue")
        at = getattr(report, "published_at", None) or parse_datetime(
            str(snapshot.get("publishedAt") or "")
        )
        if not isinstance(values, Mapping) or at is None:
            continue
        month = _month(at.date())
        if month not in found or found[month][0] < at:
            found[month] = (at, values)
    return {month: values for month, (_, values) in found.items()}


def history_chart(
    project_values: earned_value.ProjectEarnedValue,
    reports: Iterable[Any],
    today: dt.date,
    *,
    chart_id: str = "earned-value",
) -> charts.Chart:
    title = "Planned value, earned value and actual cost (cumulative)"
    span = earned_value.plan_span(project_values.inputs)
    past = recorded(reports)
    now = _month(today)
    firsts = [m for m in (*past, now) if m]
    if span is not None:
        firsts.append(_month(span[0]))
    last = max(now, _month(span[1])) if span is not None else now
    months = _months(min(firsts), last)
    if len(months) == MAX_MONTHS and now not in months:
        months = _months((now[0] - 5, now[1]), last)  # a very long plan: the recent years
    current = project_values.total.as_dict()
    values: dict[str, list[float | None]] = {key: [] for key, _, _ in SERIES}
    for month in months:
        end = dt.date(month[0], month[1], calendar.monthrange(*month)[1])
        day = today if month == now else end
        pv = earned_value.planned_value_on(project_values.inputs, day) if span else None
        values["pv"].append(earned_value.shown("pv", pv))
        point = current if month == now else past.get(month) if month < now else None
        for key in ("ev", "ac"):
            value = (point or {}).get(key)
            values[key].append(float(value) if value is not None else None)
    index = months.index(now) if now in months else None
    chart = charts.line_chart(
        [_label(m) for m in months],
        [charts.Series(name, css, values[key]) for key, name, css in SERIES],
        chart_id=chart_id,
        title=title,
        marker_line=(index, "Today") if index is not None else None,
    )
    chart.note = (
        "Planned value follows the approved plan; earned value and actual cost are as each "
        "published status report recorded them, and today's."
    )
    return chart
