"""The RAG trend strip: a project's ratings over its reports."""

import itertools
from collections.abc import Sequence

from governance.charts.base import (
    RAG_LEGEND,
    RAG_LETTERS,
    RAG_WORDS,
    Cell,
    Chart,
    Frame,
    _e,
    _n,
    _rag_rect,
    rag_key,
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
    frame = Frame(chart_id, title, columns, table)
    if not labels:
        return frame.empty("No published report yet.", css="chart-trend")
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
    return frame.drawn(width, height, desc, parts, legend=RAG_LEGEND, css="chart-trend")
