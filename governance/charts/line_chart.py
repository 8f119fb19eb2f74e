"""Line charts (the budget curve, the benefits): series with markers."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from governance.charts.base import (
    Cell,
    Chart,
    Frame,
    _e,
    _n,
    compact_money,
    full_money,
)

# --- line charts (budget curve, benefits) ----------------------------------------------------


@dataclass
class Series:
    name: str
    css: str  # series-baseline, series-forecast, series-actual, ...
    values: list[float | None]  # one per x label; None leaves a gap


MARKERS = ["circle", "square", "triangle", "diamond"]
LABEL_GAP = 14  # the least distance between two lines' end names (a line of label text)


TICK_CHAR_WIDTH = 6.5
TICK_GAP = 8


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
    magnitude: int = 10 ** (len(str(int(value))) - 1)
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


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
    frame = Frame(chart_id, title, columns, table)
    if not labels or not values:
        return frame.empty("Nothing to draw yet.", css="chart-line", legend=legend)
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
    # Every step-th label, so that no two overlap: an 11px label is at most about 6.5px a
    # character wide, and neighbours keep 8px apart.
    widest = max(len(label) for label in labels) * TICK_CHAR_WIDTH + TICK_GAP
    step = max(1, math.ceil(widest / slot))
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
            for i, bar in enumerate(s.values):
                if bar is None:
                    continue
                bx = left + slot * i + slot * 0.1 + si * bar_w
                by = y(max(bar, 0))
                h = max(top + plot_h - by, 0.5)
                parts.append(
                    f'<rect x="{_n(bx)}" y="{_n(by)}" width="{_n(bar_w)}" height="{_n(h)}" '
                    f'class="bar {s.css}"><title>{_e(s.name)} {_e(labels[i])}: '
                    f"{_e(full_money(bar))}</title></rect>"
                )
                if si % 2:
                    parts.append(
                        f'<rect x="{_n(bx)}" y="{_n(by)}" width="{_n(bar_w)}" height="{_n(h)}" '
                        f'fill="url(#{_e(chart_id)}-hatch)" class="pat-hatch"/>'
                    )
    else:
        end_labels: list[tuple[float, float, Series]] = []
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
            end_labels.append((points[-1][1], points[-1][0], s))
        # Each line is named at its end; names that would overlap are moved apart.
        placed: list[float] = []
        for ly, lx, s in sorted(end_labels, key=lambda label: label[0]):
            ly = max(ly, placed[-1] + LABEL_GAP) if placed else ly
            placed.append(ly)
            parts.append(
                f'<text x="{_n(lx + 8)}" y="{_n(ly + 4)}" class="series-label {s.css}">'
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
    return frame.drawn(width, height, desc, parts, legend=legend, css="chart-line")
