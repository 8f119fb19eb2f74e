"""Pictures drawn on the server as SVG: the risk matrix, the work-package timeline, line charts
(budget curve, benefits), the RAG trend strip, the portfolio heat map and scatter.

Pure functions: plain data in, a `Chart` out (its SVG markup and the table it draws). No query,
no model. The markup carries classes that `static/css/charts.css` colours and SVG presentation
attributes only (no `style=`, no script), so it passes the CSP. Every picture is readable
without colour: each RAG mark carries its letter, zones and series differ by pattern, dash or
marker, and the same figures are in the chart's table, one click away on the page.
"""

import datetime as dt
import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.utils.html import conditional_escape, escape
from django.utils.safestring import SafeString, mark_safe

from governance.cleaning import clamp_date

RAG_LETTERS = {"Red": "R", "Amber": "A", "Green": "G", "Blue": "B", "None": "\u2013"}
RAG_WORDS = {"Red": "Red", "Amber": "Amber", "Green": "Green", "Blue": "Blue", "None": "No RAG"}
RAG_ORDER = ["Red", "Amber", "Green", "Blue", "None"]


@dataclass
class Cell:
    """One table cell: text, an optional link, optional classes."""

    text: str
    href: str = ""
    css: str = ""
    anchor: str = ""  # an id, so that a picture's mark can link to its row


@dataclass
class Chart:
    """A drawn picture with the table of what it draws. `id` is unique on the page (it
    prefixes the SVG's own ids and anchors the table)."""

    id: str
    title: str
    svg: SafeString
    columns: list[str] = field(default_factory=list)
    rows: list[list[Cell]] = field(default_factory=list)
    caption: str = ""
    legend: list[tuple[str, str]] = field(default_factory=list)  # (css class, words)
    empty: str = ""  # when there is nothing to draw, this sentence instead of the picture
    css: str = ""
    table_href: str = ""  # the page already shows the table: link to it instead
    note: str = ""  # a line under the title (for example what a crowded picture leaves out)

    def body_html(self) -> SafeString:
        """The rows of the chart's table, written here rather than in the template: a
        portfolio of a thousand projects has a thousand cells (templates/charts/_figure.html
        keeps the template form of a row, and a test compares the two)."""
        e = conditional_escape  # as the template's autoescape
        out = []
        for row in self.rows:
            cells = []
            for index, cell in enumerate(row):
                anchor = f' id="{e(cell.anchor)}"' if index == 0 and cell.anchor else ""
                css = f' class="{e(cell.css)}"' if cell.css else ""
                text = f'<a href="{e(cell.href)}">{e(cell.text)}</a>' if cell.href else e(cell.text)
                tag = "th" if index == 0 else "td"
                scope = ' scope="row"' if index == 0 else ""
                cells.append(f"<{tag}{scope}{anchor}{css}>{text}</{tag}>")
            out.append(f"<tr>{''.join(cells)}</tr>")
        return mark_safe("".join(out))


def rag_key(value: str | None) -> str:
    return value if value in RAG_LETTERS else "None"


def _e(value: Any) -> str:
    return str(escape(str(value)))


def _n(value: float) -> str:
    """A coordinate: at most one decimal, no trailing zero."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _svg(chart_id: str, width: float, height: float, title: str, desc: str, body: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg" id="{_e(chart_id)}-svg" '
        f'viewBox="0 0 {_n(width)} {_n(height)}" width="{_n(width)}" height="{_n(height)}" '
        f'role="group" aria-labelledby="{_e(chart_id)}-t {_e(chart_id)}-d" '
        f'preserveAspectRatio="xMinYMin meet">'
        f'<title id="{_e(chart_id)}-t">{_e(title)}</title>'
        f'<desc id="{_e(chart_id)}-d">{_e(desc)}</desc>'
        f"{_patterns(chart_id)}{body}</svg>"
    )


def _patterns(chart_id: str) -> str:
    """Hatching, dots and cross-hatching, drawn over a colour so that a zone or a RAG reads
    without it."""
    p = _e(chart_id)
    return (
        "<defs>"
        f'<pattern id="{p}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" '
        'class="pat-line" stroke-width="2"/></pattern>'
        f'<pattern id="{p}-dots" width="6" height="6" patternUnits="userSpaceOnUse">'
        '<circle cx="3" cy="3" r="1.1" class="pat-dot"/></pattern>'
        f'<pattern id="{p}-cross" width="6" height="6" patternUnits="userSpaceOnUse">'
        '<path d="M0 0L6 6M6 0L0 6" class="pat-line" stroke-width="1"/></pattern>'
        "</defs>"
    )


# RAG marks: colour class plus a pattern and the letter.
RAG_PATTERN = {"Red": "hatch", "Amber": "dots", "Green": "", "Blue": "cross", "None": ""}


def _rag_rect(chart_id: str, x, y, w, h, rag: str, *, label: bool = True) -> str:
    rag = rag_key(rag)
    out = (
        f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" '
        f'class="rag-fill rag-fill-{rag.lower()}"/>'
    )
    pattern = RAG_PATTERN[rag]
    if pattern:
        out += (
            f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" '
            f'fill="url(#{_e(chart_id)}-{pattern})" class="pat-{pattern}"/>'
        )
    if label:
        out += (
            f'<text x="{_n(x + w / 2)}" y="{_n(y + h / 2)}" class="rag-letter rag-letter-'
            f'{rag.lower()}" text-anchor="middle" dominant-baseline="central">'
            f"{RAG_LETTERS[rag]}</text>"
        )
    return out


RAG_LEGEND = [
    (f"legend-rag legend-rag-{r.lower()}", f"{RAG_LETTERS[r]} {RAG_WORDS[r]}") for r in RAG_ORDER
]


# --- risk matrix ------------------------------------------------------------------------------


def risk_zone(score: int, amber_min: int, red_min: int) -> str:
    """high / medium / low for a cell's score against the risk RAG thresholds."""
    if score >= red_min:
        return "high"
    if score >= amber_min:
        return "medium"
    return "low"


ZONE_PATTERN = {"high": "hatch", "medium": "dots", "low": ""}
ZONE_WORDS = {"high": "high (hatched)", "medium": "medium (dotted)", "low": "low (plain)"}


def risk_matrix(
    counts: Mapping[tuple[int, int], int],
    *,
    chart_id: str,
    title: str,
    amber_min: int,
    red_min: int,
    link: Callable[[int, int], str] | None = None,
    noun: str = "risk",
) -> Chart:
    """A 5x5 matrix: likelihood 1-5 across, impact 1-5 up, the number of risks in each cell.
    `counts` maps (impact, likelihood) to a count; `link(impact, likelihood)` gives each cell's
    target (the register filtered to that cell)."""
    cell, left, top = 56, 62, 12
    width, height = left + 5 * cell + 8, top + 5 * cell + 44
    total = sum(counts.get((i, lk), 0) for i in range(1, 6) for lk in range(1, 6))
    parts = []
    for impact in range(5, 0, -1):
        y = top + (5 - impact) * cell
        parts.append(
            f'<text x="{left - 8}" y="{_n(y + cell / 2)}" class="axis-tick" text-anchor="end" '
            f'dominant-baseline="central">{impact}</text>'
        )
        for likelihood in range(1, 6):
            x = left + (likelihood - 1) * cell
            score = impact * likelihood
            zone = risk_zone(score, amber_min, red_min)
            n = counts.get((impact, likelihood), 0)
            shape = (
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" class="mx-cell '
                f'mx-{zone}{" mx-filled" if n else ""}"/>'
            )
            if ZONE_PATTERN[zone]:
                shape += (
                    f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" '
                    f'fill="url(#{_e(chart_id)}-{ZONE_PATTERN[zone]})" class="mx-pattern"/>'
                )
            # The link's name says it all in words; the digits drawn are hidden from it.
            shape += f'<text x="{x + 4}" y="{y + 12}" class="mx-score">{score}</text>'
            if n:
                shape += (
                    f'<circle cx="{_n(x + cell / 2)}" cy="{_n(y + cell / 2 + 3)}" r="14" '
                    'class="mx-badge"/>'
                    f'<text x="{_n(x + cell / 2)}" y="{_n(y + cell / 2 + 3)}" class="mx-count" '
                    f'text-anchor="middle" dominant-baseline="central">{n}</text>'
                )
            words = (
                f"{n} {noun}{'' if n == 1 else 's'} with impact {impact} and likelihood "
                f"{likelihood} (score {score}, {zone})"
            )
            if n and link:
                parts.append(
                    f'<a href="{_e(link(impact, likelihood))}" '
                    f'class="mx-link"><title>{_e(words)}</title>{shape}</a>'
                )
            else:
                parts.append(f"<g><title>{_e(words)}</title>{shape}</g>")
    for likelihood in range(1, 6):
        x = left + (likelihood - 0.5) * cell
        parts.append(
            f'<text x="{_n(x)}" y="{top + 5 * cell + 14}" class="axis-tick" '
            f'text-anchor="middle">{likelihood}</text>'
        )
    parts.append(
        f'<text x="{_n(left + 2.5 * cell)}" y="{top + 5 * cell + 34}" class="axis-label" '
        'text-anchor="middle">Likelihood →</text>'
        f'<text x="14" y="{_n(top + 2.5 * cell)}" class="axis-label" text-anchor="middle" '
        f'transform="rotate(-90 14 {_n(top + 2.5 * cell)})">Impact →</text>'
    )
    desc = (
        f"{total} {noun}{'' if total == 1 else 's'} placed by likelihood (across, 1 to 5) and "
        "impact (up, 1 to 5); each cell shows how many."
    )
    columns = ["Impact \\ likelihood", *[str(lk) for lk in range(1, 6)]]
    rows = []
    for impact in range(5, 0, -1):
        row = [Cell(str(impact))]
        for likelihood in range(1, 6):
            n = counts.get((impact, likelihood), 0)
            zone = risk_zone(impact * likelihood, amber_min, red_min)
            row.append(
                Cell(
                    str(n) if n else "0",
                    link(impact, likelihood) if (n and link) else "",
                    f"mx-td-{zone}",
                )
            )
        rows.append(row)
    return Chart(
        id=chart_id,
        title=title,
        svg=mark_safe(_svg(chart_id, width, height, title, desc, "".join(parts))),
        columns=columns,
        rows=rows,
        caption=f"{title}: number of {noun}s per impact (rows) and likelihood (columns)",
        legend=[
            ("legend-zone legend-zone-high", f"score {red_min} or more: {ZONE_WORDS['high']}"),
            (
                "legend-zone legend-zone-medium",
                f"score {amber_min} to {red_min - 1}: {ZONE_WORDS['medium']}",
            ),
            ("legend-zone legend-zone-low", f"below {amber_min}: {ZONE_WORDS['low']}"),
        ],
        empty="" if total else f"No {noun}s scored yet.",
        css="chart-matrix",
    )


# --- timeline ---------------------------------------------------------------------------------


@dataclass
class Span:
    start: dt.date | None
    end: dt.date | None

    @property
    def drawn(self) -> bool:
        return bool(self.start or self.end)

    def bounds(self) -> tuple[dt.date, dt.date] | None:
        if not self.drawn:
            return None
        start = self.start or self.end
        end = self.end or self.start
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


def _fmt(day: dt.date | None) -> str:
    return f"{day.day} {day:%b %Y}" if day else "—"


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
    bounds = [b for r in rows for s in (r.baseline, r.forecast, r.actual) if (b := s.bounds())]
    bounds += [b for r in rows if (b := r.actual_bounds(today))]
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
            Cell(_slip_text(r.slip_days), css="late" if (r.slip_days or 0) > 0 else ""),
        ]
        for r in rows
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
    if not bounds:
        return Chart(
            id=chart_id,
            title=title,
            svg=mark_safe(""),
            columns=columns,
            rows=table,
            caption=title,
            legend=legend,
            empty="No work package has dates yet.",
            css="chart-timeline",
        )
    first = min([b[0] for b in bounds] + [today])
    last = max([b[1] for b in bounds] + [today])
    first = first.replace(day=1)
    last = (last.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    span_days = max((last - first).days, 1)

    def x(day: dt.date) -> float:
        return label_w + (clamp_date(day) - first).days / span_days * plot_w

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
    for index, row in enumerate(rows):
        y = top + index * lane
        if index % 2:
            parts.append(
                f'<rect x="0" y="{y}" width="{_n(label_w + plot_w)}" height="{lane}" '
                'class="lane-alt"/>'
            )
        name = row.label if len(row.label) <= 28 else row.label[:27] + "…"
        text = (
            f'<text x="4" y="{y + lane / 2}" class="lane-label" dominant-baseline="central">'
            f"{_e(name)}</text>"
        )
        if row.href:
            text = f'<a href="{_e(row.href)}"><title>{_e(row.label)}</title>{text}</a>'
        parts.append(text)
        slip = row.slip_days
        if b := row.baseline.bounds():
            parts.append(
                f'<rect x="{_n(x(b[0]))}" y="{y + 4}" width="{_n(max(x(b[1]) - x(b[0]), 2))}" '
                'height="9" class="bar-baseline"/>'
            )
        if b := row.forecast.bounds():
            late = bool(
                row.baseline.end and row.forecast.end and row.forecast.end > row.baseline.end
            )
            css = "bar-forecast bar-slipped" if late else "bar-forecast"
            parts.append(
                f'<rect x="{_n(x(b[0]))}" y="{y + 14}" width="{_n(max(x(b[1]) - x(b[0]), 2))}" '
                f'height="9" class="{css}"/>'
            )
        if b := row.actual_bounds(today):
            w = max(x(b[1]) - x(b[0]), 2)
            parts.append(
                f'<rect x="{_n(x(b[0]))}" y="{y + 24}" width="{_n(w)}" height="7" '
                'class="bar-actual"/>'
                f'<rect x="{_n(x(b[0]))}" y="{y + 24}" width="{_n(w)}" height="7" '
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
        ends = [b[1] for b in (row.forecast.bounds(), row.actual_bounds(today)) if b]
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
    slipped = sum(1 for r in rows if (r.slip_days or 0) > 0)
    desc = (
        f"{len(rows)} work packages from {_fmt(first)} to {_fmt(last)}; "
        f"{slipped} forecast to end after the baseline. Today is {_fmt(today)}."
    )
    return Chart(
        id=chart_id,
        title=title,
        svg=mark_safe(_svg(chart_id, width, height, title, desc, "".join(parts))),
        columns=columns,
        rows=table,
        caption=title,
        legend=legend,
        css="chart-timeline",
    )


def _slip_text(days: int | None) -> str:
    if days is None:
        return "—"
    if days > 0:
        return f"{days} days late"
    if days < 0:
        return f"{-days} days early"
    return "on the baseline"


# --- line charts (budget curve, benefits) ----------------------------------------------------


@dataclass
class Series:
    name: str
    css: str  # series-baseline, series-forecast, series-actual, ...
    values: list[float | None]  # one per x label; None leaves a gap


MARKERS = ["circle", "square", "triangle", "diamond"]


def _marker(kind: str, cx: float, cy: float, css: str) -> str:
    if kind == "circle":
        return f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="3.5" class="marker {css}"/>'
    if kind == "square":
        return (
            f'<rect x="{_n(cx - 3.5)}" y="{_n(cy - 3.5)}" width="7" height="7" '
            f'class="marker {css}"/>'
        )
    if kind == "triangle":
        return (
            f'<path d="M{_n(cx)} {_n(cy - 4.5)}L{_n(cx + 4.5)} {_n(cy + 3.5)}L{_n(cx - 4.5)} '
            f'{_n(cy + 3.5)}Z" class="marker {css}"/>'
        )
    return (
        f'<path d="M{_n(cx)} {_n(cy - 5)}L{_n(cx + 5)} {_n(cy)}L{_n(cx)} {_n(cy + 5)}L{_n(cx - 5)} '
        f'{_n(cy)}Z" class="marker {css}"/>'
    )


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = 10 ** (len(str(int(value))) - 1)
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


def compact_money(value: float) -> str:
    """12,500 -> 12.5k; 1,200,000 -> 1.2M."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value >= 1_000_000:
        text, unit = f"{value / 1_000_000:.1f}", "M"
    elif value >= 1_000:
        text, unit = f"{value / 1_000:.1f}", "k"
    else:
        return f"{sign}{value:,.0f}"
    return f"{sign}{text.removesuffix('.0')}{unit}"


def full_money(value: float | Decimal | None) -> str:
    if value is None:
        return "—"
    return f"{float(value):,.0f}"


def line_chart(
    labels: Sequence[str],
    series: Sequence[Series],
    *,
    chart_id: str,
    title: str,
    unit: str = "",
    marker_line: tuple[int, str] | None = None,
    bars: bool = False,
    label_column: str = "Month",
) -> Chart:
    """Lines (or grouped bars) over labelled steps: each series with its own dash and marker
    and its name at its last point. `marker_line` = (index, words) draws a dashed vertical line
    (for example today's month)."""
    values = [v for s in series for v in s.values if v is not None]
    columns = [label_column, *[s.name + (f" ({unit})" if unit else "") for s in series]]
    table = [
        [Cell(label), *[Cell(full_money(s.values[i])) for s in series]]
        for i, label in enumerate(labels)
    ]
    legend = [
        (f"legend-line {s.css}", f"{s.name} ({MARKERS[i % len(MARKERS)]})")
        if not bars
        else (f"legend-fill {s.css}", f"{s.name} ({'hatched' if i % 2 else 'plain'} bar)")
        for i, s in enumerate(series)
    ]
    if not labels or not values:
        return Chart(
            id=chart_id,
            title=title,
            svg=mark_safe(""),
            columns=columns,
            rows=table,
            caption=title,
            legend=legend,
            empty="Nothing to draw yet.",
            css="chart-line",
        )
    left, top, plot_w, plot_h = 64, 14, 600, 200
    width, height = left + plot_w + 120, top + plot_h + 40
    top_value = _nice_max(max([*values, 0]))
    count = len(labels)
    slot = plot_w / count

    def x(i: int) -> float:
        return left + slot * (i + 0.5)

    def y(value: float) -> float:
        return top + plot_h - (value / top_value) * plot_h

    parts = []
    for tick in range(6):
        value = top_value * tick / 5
        ty = y(value)
        parts.append(
            f'<line x1="{left}" y1="{_n(ty)}" x2="{left + plot_w}" y2="{_n(ty)}" '
            'class="grid-line"/>'
            f'<text x="{left - 6}" y="{_n(ty)}" class="axis-tick" text-anchor="end" '
            f'dominant-baseline="central">{_e(compact_money(value))}</text>'
        )
    step = max(1, count // 12)
    for i, label in enumerate(labels):
        if i % step == 0:
            parts.append(
                f'<text x="{_n(x(i))}" y="{top + plot_h + 16}" class="axis-tick" '
                f'text-anchor="middle">{_e(label)}</text>'
            )
    if marker_line is not None:
        index, words = marker_line
        mx = x(index)
        parts.append(
            f'<line x1="{_n(mx)}" y1="{top}" x2="{_n(mx)}" y2="{top + plot_h}" class="today-line"/>'
            f'<text x="{_n(mx + 3)}" y="{top + 10}" class="today-label">{_e(words)}</text>'
        )
    if bars:
        bar_w = slot * 0.8 / max(len(series), 1)
        for si, s in enumerate(series):
            for i, value in enumerate(s.values):
                if value is None:
                    continue
                bx = left + slot * i + slot * 0.1 + si * bar_w
                by = y(max(value, 0))
                h = max(top + plot_h - by, 0.5)
                parts.append(
                    f'<rect x="{_n(bx)}" y="{_n(by)}" width="{_n(bar_w)}" height="{_n(h)}" '
                    f'class="bar {s.css}"><title>{_e(s.name)} {_e(labels[i])}: '
                    f"{_e(full_money(value))}</title></rect>"
                )
                if si % 2:
                    parts.append(
                        f'<rect x="{_n(bx)}" y="{_n(by)}" width="{_n(bar_w)}" height="{_n(h)}" '
                        f'fill="url(#{_e(chart_id)}-hatch)" class="pat-hatch"/>'
                    )
    else:
        for si, s in enumerate(series):
            marker = MARKERS[si % len(MARKERS)]
            points = [(x(i), y(v)) for i, v in enumerate(s.values) if v is not None]
            if not points:
                continue
            path = " ".join(
                f"{'M' if i == 0 else 'L'}{_n(px)} {_n(py)}" for i, (px, py) in enumerate(points)
            )
            parts.append(f'<path d="{path}" class="line {s.css}" fill="none"/>')
            every = max(1, len(points) // 16)
            for i, (px, py) in enumerate(points):
                if i % every == 0 or i == len(points) - 1:
                    parts.append(_marker(marker, px, py, s.css))
            lx, ly = points[-1]
            parts.append(
                f'<text x="{_n(lx + 8)}" y="{_n(ly + 4 + si * 0)}" class="series-label {s.css}">'
                f"{_e(s.name)}</text>"
            )
    parts.append(
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'class="axis-line"/>'
    )
    desc = "; ".join(
        f"{s.name}: {full_money(next((v for v in reversed(s.values) if v is not None), None))}"
        f" at the end"
        for s in series
    )
    return Chart(
        id=chart_id,
        title=title,
        svg=mark_safe(_svg(chart_id, width, height, title, desc, "".join(parts))),
        columns=columns,
        rows=table,
        caption=title,
        legend=legend,
        css="chart-line",
    )


# --- RAG trend --------------------------------------------------------------------------------


def rag_trend(
    labels: Sequence[str], lanes: Sequence[tuple[str, Sequence[str]]], *, chart_id: str, title: str
) -> Chart:
    """Reports across (oldest first), one lane per RAG (Overall, then the dimensions). The
    overall lane is a step line (Red high, Green low) through lettered marks; the others are
    lettered, patterned squares."""
    columns = ["RAG", *labels]
    table = [[Cell(name), *[Cell(RAG_WORDS[rag_key(v)]) for v in values]] for name, values in lanes]
    if not labels:
        return Chart(
            id=chart_id,
            title=title,
            svg=mark_safe(""),
            columns=columns,
            rows=table,
            caption=title,
            empty="No published report yet.",
            css="chart-trend",
        )
    left, col, top = 92, 78, 10
    levels = {"Red": 0, "Amber": 1, "Green": 2, "Blue": 3, "None": 4}
    step_h = 20
    line_h = step_h * 4 + 20
    width = left + col * len(labels) + 16
    height = top + line_h + 28 * (len(lanes) - 1) + 30
    parts = []

    def cx(i: int) -> float:
        return left + col * (i + 0.5)

    name, values = lanes[0]
    ly = {k: top + 10 + v * step_h for k, v in levels.items()}
    for rag, level_y in ly.items():
        parts.append(
            f'<line x1="{left}" y1="{_n(level_y)}" x2="{_n(width - 8)}" y2="{_n(level_y)}" '
            'class="grid-line"/>'
            f'<text x="{left - 6}" y="{_n(level_y)}" class="axis-tick" text-anchor="end" '
            f'dominant-baseline="central">{_e(RAG_WORDS[rag])}</text>'
        )
    parts.append(
        f'<text x="4" y="{_n(top + 10)}" class="lane-label" dominant-baseline="central">'
        f"{_e(name)}</text>"
    )
    points = [(cx(i), ly[rag_key(v)]) for i, v in enumerate(values)]
    if len(points) > 1:
        d = f"M{_n(points[0][0])} {_n(points[0][1])}"
        for (_, py), (qx, qy) in itertools.pairwise(points):
            d += f"L{_n(qx)} {_n(py)}L{_n(qx)} {_n(qy)}"
        parts.append(f'<path d="{d}" class="trend-line" fill="none"/>')
    for i, v in enumerate(values):
        rag = rag_key(v)
        parts.append(
            f"<g><title>{_e(name)} {_e(labels[i])}: {RAG_WORDS[rag]}</title>"
            f'<circle cx="{_n(cx(i))}" cy="{_n(ly[rag])}" r="9" class="rag-fill '
            f'rag-fill-{rag.lower()}"/>'
            f'<text x="{_n(cx(i))}" y="{_n(ly[rag])}" class="rag-letter rag-letter-{rag.lower()}" '
            f'text-anchor="middle" dominant-baseline="central">{RAG_LETTERS[rag]}</text></g>'
        )
    y = top + line_h + 4
    for name, values in lanes[1:]:
        parts.append(
            f'<text x="4" y="{y + 11}" class="lane-label" dominant-baseline="central">'
            f"{_e(name)}</text>"
        )
        for i, v in enumerate(values):
            parts.append(
                f"<g><title>{_e(name)} {_e(labels[i])}: {RAG_WORDS[rag_key(v)]}</title>"
                + _rag_rect(chart_id, cx(i) - 15, y, 30, 22, v)
                + "</g>"
            )
        y += 28
    for i, label in enumerate(labels):
        parts.append(
            f'<text x="{_n(cx(i))}" y="{y + 14}" class="axis-tick" text-anchor="middle">'
            f"{_e(label)}</text>"
        )
    first, last = rag_key(lanes[0][1][0]), rag_key(lanes[0][1][-1])
    desc = (
        f"{len(labels)} published reports; overall {RAG_WORDS[first]} in the first and "
        f"{RAG_WORDS[last]} in the latest."
    )
    return Chart(
        id=chart_id,
        title=title,
        svg=mark_safe(_svg(chart_id, width, height, title, desc, "".join(parts))),
        columns=columns,
        rows=table,
        caption=title,
        legend=RAG_LEGEND,
        css="chart-trend",
    )


# --- portfolio heat map and scatter ----------------------------------------------------------


@dataclass
class HeatRow:
    label: str
    href: str
    rags: list[str]
    note: str = ""


def heat_map(
    rows: Sequence[HeatRow], dimensions: Sequence[str], *, chart_id: str, title: str
) -> Chart:
    """Projects down, RAG dimensions across: each cell its colour, pattern and letter."""
    columns = ["Project", *dimensions]
    table = [
        [
            Cell(r.label, r.href),
            *[Cell(RAG_WORDS[rag_key(v)], css=f"rag-cell-{rag_key(v).lower()}") for v in r.rags],
        ]
        for r in rows
    ]
    if not rows:
        return Chart(
            id=chart_id,
            title=title,
            svg=mark_safe(""),
            columns=columns,
            rows=table,
            caption=title,
            empty="No project to show.",
            css="chart-heat",
        )
    left, cell_w, cell_h, top = 210, 64, 26, 26
    width = left + cell_w * len(dimensions) + 8
    height = top + cell_h * len(rows) + 6
    parts = []
    for j, name in enumerate(dimensions):
        parts.append(
            f'<text x="{_n(left + cell_w * (j + 0.5))}" y="{top - 9}" class="axis-tick" '
            f'text-anchor="middle">{_e(name)}</text>'
        )
    for i, row in enumerate(rows):
        y = top + i * cell_h
        label = row.label if len(row.label) <= 30 else row.label[:29] + "…"
        text = (
            f'<text x="4" y="{_n(y + cell_h / 2)}" class="lane-label" '
            f'dominant-baseline="central">{_e(label)}</text>'
        )
        if row.href:
            text = f'<a href="{_e(row.href)}"><title>{_e(row.label)}</title>{text}</a>'
        parts.append(text)
        for j, rag in enumerate(row.rags):
            x = left + j * cell_w
            parts.append(
                f"<g><title>{_e(row.label)}, {_e(dimensions[j])}: {RAG_WORDS[rag_key(rag)]}</title>"
                + _rag_rect(chart_id, x + 1, y + 1, cell_w - 2, cell_h - 2, rag)
                + "</g>"
            )
    counts = {r: sum(1 for row in rows if rag_key(row.rags[0]) == r) for r in RAG_ORDER}
    desc = f"{len(rows)} projects; overall " + ", ".join(
        f"{n} {RAG_WORDS[r]}" for r, n in counts.items() if n
    )
    return Chart(
        id=chart_id,
        title=title,
        svg=mark_safe(_svg(chart_id, width, height, title, desc, "".join(parts))),
        columns=columns,
        rows=table,
        caption=title,
        legend=RAG_LEGEND,
        css="chart-heat",
    )


@dataclass
class Point:
    label: str
    href: str
    x: float | None  # schedule slip, days
    y: float | None  # cost overrun, %
    size: float | None  # budget
    rag: str


LABELLED = 40


def _days_late(days: float) -> str:
    if days > 0:
        return f"{days:,.0f} days late"
    if days < 0:
        return f"{-days:,.0f} days early"
    return "on schedule"


def _pct_over(pct: float) -> str:
    text = f"{abs(pct):,.1f}".removesuffix(".0")
    if pct > 0:
        return f"{text} % over budget"
    if pct < 0:
        return f"{text} % under budget"
    return "on budget"


def scatter(points: Sequence[Point], *, chart_id: str, title: str) -> Chart:
    """Schedule slip (days, across) against cost overrun (%, up), one bubble per project, its
    area by budget, its colour, pattern and letter by overall RAG, its key beside it. Projects
    without both figures are listed in the table, not drawn."""
    columns = ["Project", "Schedule slip", "Cost overrun", "Budget", "Overall"]
    table = [
        [
            Cell(p.label, p.href),
            Cell("—" if p.x is None else f"{p.x:,.0f} days"),
            Cell("—" if p.y is None else f"{p.y:,.1f} %".replace(".0 %", " %")),
            Cell(full_money(p.size)),
            Cell(RAG_WORDS[rag_key(p.rag)]),
        ]
        for p in points
    ]
    drawn = [p for p in points if p.x is not None and p.y is not None]
    legend = [*RAG_LEGEND, ("legend-size", "Bubble area: budget")]
    if not drawn:
        return Chart(
            id=chart_id,
            title=title,
            svg=mark_safe(""),
            columns=columns,
            rows=table,
            caption=title,
            legend=legend,
            empty="No project has both a slip and an overrun figure yet.",
            css="chart-scatter",
        )
    left, top, plot_w, plot_h = 56, 16, 560, 300
    width, height = left + plot_w + 70, top + plot_h + 44
    xs = [p.x for p in drawn] + [0]
    ys = [p.y for p in drawn] + [0]
    x_lo, x_hi = min(xs), max(xs)
    y_lo, y_hi = min(ys), max(ys)
    x_pad = max((x_hi - x_lo) * 0.12, 5)
    y_pad = max((y_hi - y_lo) * 0.12, 2)
    x_lo, x_hi, y_lo, y_hi = x_lo - x_pad, x_hi + x_pad, y_lo - y_pad, y_hi + y_pad
    biggest = max([p.size or 0 for p in drawn] + [1])

    def px(value: float) -> float:
        return left + (value - x_lo) / (x_hi - x_lo) * plot_w

    def py(value: float) -> float:
        return top + plot_h - (value - y_lo) / (y_hi - y_lo) * plot_h

    parts = [
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" class="plot-area"/>',
        f'<line x1="{_n(px(0))}" y1="{top}" x2="{_n(px(0))}" y2="{top + plot_h}" '
        'class="zero-line"/>',
        f'<line x1="{left}" y1="{_n(py(0))}" x2="{left + plot_w}" y2="{_n(py(0))}" '
        'class="zero-line"/>',
        f'<text x="{_n(left + plot_w / 2)}" y="{height - 6}" class="axis-label" '
        'text-anchor="middle">Schedule slip (days) →</text>',
        f'<text x="14" y="{_n(top + plot_h / 2)}" class="axis-label" text-anchor="middle" '
        f'transform="rotate(-90 14 {_n(top + plot_h / 2)})">Cost overrun (%) →</text>',
    ]
    for xv in nice_ticks(x_lo, x_hi):
        parts.append(
            f'<line x1="{_n(px(xv))}" y1="{top}" x2="{_n(px(xv))}" y2="{top + plot_h}" '
            'class="grid-line"/>'
            f'<text x="{_n(px(xv))}" y="{top + plot_h + 16}" class="axis-tick" '
            f'text-anchor="middle">{xv:,.0f}</text>'
        )
    for yv in nice_ticks(y_lo, y_hi):
        parts.append(
            f'<line x1="{left}" y1="{_n(py(yv))}" x2="{left + plot_w}" y2="{_n(py(yv))}" '
            'class="grid-line"/>'
            f'<text x="{left - 6}" y="{_n(py(yv))}" class="axis-tick" text-anchor="end" '
            f'dominant-baseline="central">{yv:,.0f}</text>'
        )
    placed: list[tuple[float, float, float, float]] = []
    # Names beside the bubbles for the LABELLED biggest only: a crowded chart keeps them in the
    # bubbles' titles and in the table.
    labelled = {id(p) for p in sorted(drawn, key=lambda p: -(p.size or 0))[:LABELLED]}
    for p in sorted(drawn, key=lambda p: -(p.size or 0)):
        rag = rag_key(p.rag)
        r = 6 + 16 * ((p.size or 0) / biggest) ** 0.5
        cx, cy = px(p.x), py(p.y)
        words = (
            f"{p.label}: {_days_late(p.x)}, cost {_pct_over(p.y)}, budget "
            f"{full_money(p.size)}, overall {RAG_WORDS[rag]}"
        )
        bubble = (
            f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(r)}" class="bubble rag-fill '
            f'rag-fill-{rag.lower()}"/>'
        )
        if RAG_PATTERN[rag]:
            bubble += (
                f'<circle cx="{_n(cx)}" cy="{_n(cy)}" r="{_n(r)}" '
                f'fill="url(#{_e(chart_id)}-{RAG_PATTERN[rag]})" class="pat-{RAG_PATTERN[rag]}"/>'
            )
        label_y = _free_y(placed, cx + r + 3, cy, p.label) if id(p) in labelled else None
        bubble += (
            f'<text x="{_n(cx)}" y="{_n(cy)}" class="rag-letter rag-letter-{rag.lower()}" '
            f'text-anchor="middle" dominant-baseline="central">{RAG_LETTERS[rag]}</text>'
        )
        if label_y is not None and label_y != cy:
            bubble += (
                f'<line x1="{_n(cx)}" y1="{_n(cy)}" x2="{_n(cx + r + 2)}" y2="{_n(label_y)}" '
                'class="leader-line"/>'
            )
        if label_y is not None:
            bubble += (
                f'<text x="{_n(cx + r + 3)}" y="{_n(label_y)}" class="point-label" '
                f'dominant-baseline="central">{_e(p.label)}</text>'
            )
        if p.href:
            parts.append(f'<a href="{_e(p.href)}"><title>{_e(words)}</title>{bubble}</a>')
        else:
            parts.append(f"<g><title>{_e(words)}</title>{bubble}</g>")
    desc = f"{len(drawn)} of {len(points)} projects drawn by schedule slip and cost overrun."
    return Chart(
        id=chart_id,
        title=title,
        svg=mark_safe(_svg(chart_id, width, height, title, desc, "".join(parts))),
        columns=columns,
        rows=table,
        caption=title,
        legend=legend,
        css="chart-scatter",
    )


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values between low and high (about `count` of them), 0 among them when in
    range."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    ticks = []
    value = first
    while value <= high + 1e-9:
        ticks.append(round(value, 6) + 0.0)
        value += step
    return ticks


def _free_y(placed: list, x: float, y: float, text: str) -> float:
    """A label's y near `y` that does not overlap a label already placed (greedy)."""
    width, height = 7 * len(text), 13
    for shift in (0, 13, -13, 26, -26, 39, -39, 52, -52):
        top = y + shift - height / 2
        box = (x, top, x + width, top + height)
        if not any(
            box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed
        ):
            placed.append(box)
            return y + shift
    placed.append((x, y - height / 2, x + width, y + height / 2))
    return y


def collect(pairs: Iterable[tuple[Any, int]]) -> dict:
    """Sum counts by key (for matrix cells read from several rows)."""
    out: dict = {}
    for key, n in pairs:
        out[key] = out.get(key, 0) + n
    return out
