"""The portfolio scatter: schedule slip against budget overrun, one point per project."""

from collections.abc import Sequence
from dataclasses import dataclass

from governance.charts.base import (
    RAG_LEGEND,
    RAG_LETTERS,
    RAG_PATTERN,
    RAG_WORDS,
    Cell,
    Chart,
    Frame,
    _e,
    _free_y,
    _n,
    full_money,
    nice_ticks,
    rag_key,
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
    # Each drawn point with its two figures, both known.
    drawn = [(p, p.x, p.y) for p in points if p.x is not None and p.y is not None]
    legend = [*RAG_LEGEND, ("legend-size", "Bubble area: budget")]
    frame = Frame(chart_id, title, columns, table)
    if not drawn:
        return frame.empty(
            "No project has both a slip and an overrun figure yet.",
            css="chart-scatter",
            legend=legend,
        )
    left, top, plot_w, plot_h = 56, 16, 560, 300
    width, height = left + plot_w + 70, top + plot_h + 44
    xs = [x for _, x, _ in drawn] + [0]
    ys = [y for _, _, y in drawn] + [0]
    x_lo, x_hi = min(xs), max(xs)
    y_lo, y_hi = min(ys), max(ys)
    x_pad = max((x_hi - x_lo) * 0.12, 5)
    y_pad = max((y_hi - y_lo) * 0.12, 2)
    x_lo, x_hi, y_lo, y_hi = x_lo - x_pad, x_hi + x_pad, y_lo - y_pad, y_hi + y_pad
    biggest = max([p.size or 0 for p, _, _ in drawn] + [1])

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
    by_size = sorted(drawn, key=lambda d: -(d[0].size or 0))
    labelled = {id(p) for p, _, _ in by_size[:LABELLED]}
    for p, x, y in by_size:
        rag = rag_key(p.rag)
        r = 6 + 16 * ((p.size or 0) / biggest) ** 0.5
        cx, cy = px(x), py(y)
        words = (
            f"{p.label}: {_days_late(x)}, cost {_pct_over(y)}, budget "
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
    return frame.drawn(width, height, desc, parts, legend=legend, css="chart-scatter")
