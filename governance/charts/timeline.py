"""The work-package timeline: planned and actual spans by month, with slips."""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from governance.charts.base import (
    Cell,
    Chart,
    Frame,
    _e,
    _lane_label,
    _n,
)
from governance.cleaning import clamp_date

# --- timeline ---------------------------------------------------------------------------------


@dataclass
class Span:
    start: dt.date | None
    end: dt.date | None

    @property
    def drawn(self) -> bool:
        return bool(self.start or self.end)

    def bounds(self) -> tuple[dt.date, dt.date] | None:
        start = self.start or self.end
        end = self.end or self.start
        if start is None or end is None:  # not drawn
            return None
        return (min(start, end), max(start, end))


@dataclass
class TimelineRow:
    label: str
    href: str = ""
    baseline: Span = field(default_factory=lambda: Span(None, None))
    forecast: Span = field(default_factory=lambda: Span(None, None))
    actual: Span = field(default_factory=lambda: Span(None, None))
    milestone: bool = False
    done: bool = False
    # The slip as the caller derived it (a work package's schedule variance, registers.derive)
    # when `slip_derived`; else measured between the bars.
    slip: int | None = None
    slip_derived: bool = False

    def actual_bounds(self, today: dt.date) -> tuple[dt.date, dt.date] | None:
        """The actual bar: started and not finished runs to today."""
        if self.actual.start and not self.actual.end:
            return (self.actual.start, max(self.actual.start, today))
        return self.actual.bounds()

    @property
    def slip_days(self) -> int | None:
        """The derived slip when given; else the days the actual (else forecast) end lies after
        the baseline end; None without both."""
        if self.slip_derived:
            return self.slip
        end = self.actual.end or self.forecast.end
        if not (self.baseline.end and end):
            return None
        return (end - self.baseline.end).days


# The months' abbreviations as `%b` writes them: a lane's dates are written without strftime
# (a hundred lanes write some four hundred dates).
_MONTHS = tuple(dt.date(2000, month, 1).strftime("%b") for month in range(1, 13))


def _fmt(day: dt.date | None) -> str:
    """`22 Nov 2026`: the day, the month's abbreviation and the year (`%d %b %Y` without
    the day's leading zero)."""
    if not day:
        return "—"
    if day.year < 1000:  # %Y's own form of a short year
        return f"{day.day} {day:%b %Y}"
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


def _span_text(span: Span) -> str:
    if not span.drawn:
        return "—"
    return f"{_fmt(span.start)} to {_fmt(span.end)}"


def _months(first: dt.date, last: dt.date) -> list[dt.date]:
    months = []
    day = first.replace(day=1)
    while day <= last:
        months.append(day)
        day = (day.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return months


def timeline(
    rows: Sequence[TimelineRow],
    *,
    chart_id: str,
    title: str,
    today: dt.date,
    baseline_label: str = "Baseline",
) -> Chart:
    """One lane per work package: the baseline bar (outlined), the forecast bar (solid; red and
    marked with its slip in days when it ends after the baseline), the actual bar (hatched); a
    milestone as a diamond at its end; a dashed line for today; month ticks across."""
    # Each row's spans and slip, worked out once (the table, the extent and the lanes read them).
    lanes = [
        (
            row,
            row.baseline.bounds(),
            row.forecast.bounds(),
            row.actual_bounds(today),
            row.slip_days,
        )
        for row in rows
    ]
    bounds = [
        b
        for row, baseline, forecast, _, _ in lanes
        for b in (baseline, forecast, row.actual.bounds())
        if b
    ]
    bounds += [actual for _, _, _, actual, _ in lanes if actual]
    # A date stored before the accepted range was enforced (9999-12-31) is drawn at its edge.
    bounds = [(clamp_date(start), clamp_date(end)) for start, end in bounds]
    label_w, plot_w, lane, top = 190, 620, 34, 40
    columns = ["Work package", baseline_label, "Forecast", "Actual", "Slip"]
    table = [
        [
            Cell(r.label, r.href),
            Cell(_span_text(r.baseline)),
            Cell(_span_text(r.forecast)),
            Cell(
                f"{_fmt(r.actual.start)}, not finished"
                if r.actual.start and not r.actual.end
                else _span_text(r.actual)
            ),
            Cell(_slip_text(slip), css="late" if (slip or 0) > 0 else ""),
        ]
        for r, _, _, _, slip in lanes
    ]
    legend = [
        ("legend-bar legend-baseline", f"{baseline_label} (outlined)"),
        ("legend-bar legend-forecast", "Forecast (solid)"),
        ("legend-bar legend-slipped", "Forecast end after the baseline (dark)"),
        ("legend-slip", "+days: how late it ends"),
        ("legend-bar legend-actual", "Actual (hatched)"),
        ("legend-milestone", "Milestone (diamond)"),
        ("legend-today", "Today (dashed line)"),
    ]
    frame = Frame(chart_id, title, columns, table)
    if not bounds:
        return frame.empty("No work package has dates yet.", css="chart-timeline", legend=legend)
    first = min([b[0] for b in bounds] + [today])
    last = max([b[1] for b in bounds] + [today])
    first = first.replace(day=1)
    last = (last.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    span_days = max((last - first).days, 1)

    first_day = first.toordinal()

    def x(day: dt.date) -> float:
        return label_w + (clamp_date(day).toordinal() - first_day) / span_days * plot_w

    width = label_w + plot_w + 60
    height = top + lane * len(rows) + 10
    parts = []
    months = _months(first, last)
    step = max(1, len(months) // 12)
    for index, month in enumerate(months):
        mx = x(month)
        parts.append(
            f'<line x1="{_n(mx)}" y1="{top - 4}" x2="{_n(mx)}" y2="{height - 10}" '
            'class="grid-line"/>'
        )
        if index % step == 0:
            parts.append(
                f'<text x="{_n(mx + 2)}" y="{top - 8}" class="axis-tick">{month:%b}</text>'
            )
        if index == 0 or month.month == 1:
            parts.append(
                f'<text x="{_n(mx + 2)}" y="{top - 22}" class="axis-tick year">{month:%Y}</text>'
            )
    for index, (row, baseline, forecast, actual, slip) in enumerate(lanes):
        y = top + index * lane
        if index % 2:
            parts.append(
                f'<rect x="0" y="{y}" width="{_n(label_w + plot_w)}" height="{lane}" '
                'class="lane-alt"/>'
            )
        parts.append(_lane_label(row.label, row.href, y + lane / 2, 28))
        if baseline:
            x0 = x(baseline[0])
            parts.append(
                f'<rect x="{_n(x0)}" y="{y + 4}" width="{_n(max(x(baseline[1]) - x0, 2))}" '
                'height="9" class="bar-baseline"/>'
            )
        if forecast:
            late = bool(
                row.baseline.end and row.forecast.end and row.forecast.end > row.baseline.end
            )
            css = "bar-forecast bar-slipped" if late else "bar-forecast"
            x0 = x(forecast[0])
            parts.append(
                f'<rect x="{_n(x0)}" y="{y + 14}" width="{_n(max(x(forecast[1]) - x0, 2))}" '
                f'height="9" class="{css}"/>'
            )
        if actual:
            x0 = x(actual[0])
            at, w = _n(x0), _n(max(x(actual[1]) - x0, 2))
            parts.append(
                f'<rect x="{at}" y="{y + 24}" width="{w}" height="7" class="bar-actual"/>'
                f'<rect x="{at}" y="{y + 24}" width="{w}" height="7" '
                f'fill="url(#{_e(chart_id)}-hatch)" class="pat-hatch"/>'
            )
        if row.milestone:
            end = row.actual.end or row.forecast.end or row.baseline.end
            if end:
                cx, cy = x(end), y + lane / 2
                parts.append(
                    f'<path d="M{_n(cx)} {_n(cy - 8)}L{_n(cx + 8)} {_n(cy)}L{_n(cx)} '
                    f'{_n(cy + 8)}L{_n(cx - 8)} {_n(cy)}Z" class="milestone'
                    f'{" milestone-done" if row.done else ""}"><title>Milestone '
                    f"{_e(row.label)}: {_e(_fmt(end))}</title></path>"
                )
        ends = [b[1] for b in (forecast, actual) if b]
        if (slip or 0) > 0 and ends:
            gap = 12 if row.milestone else 4
            parts.append(
                f'<text x="{_n(x(max(ends)) + gap)}" y="{y + 21}" class="slip-label">'
                f"+{slip} d</text>"
            )
    tx = x(today)
    parts.append(
        f'<line x1="{_n(tx)}" y1="{top - 4}" x2="{_n(tx)}" y2="{height - 6}" class="today-line"/>'
        f'<text x="{_n(tx + 3)}" y="{height - 1}" class="today-label">Today</text>'
    )
    slipped = sum(1 for *_, slip in lanes if (slip or 0) > 0)
    desc = (
        f"{len(rows)} work packages from {_fmt(first)} to {_fmt(last)}; "
        f"{slipped} forecast to end after the baseline. Today is {_fmt(today)}."
    )
    return frame.drawn(width, height, desc, parts, legend=legend, css="chart-timeline")


def _slip_text(days: int | None) -> str:
    if days is None:
        return "—"
    if days > 0:
        return f"{days} days late"
    if days < 0:
        return f"{-days} days early"
    return "on the baseline"
