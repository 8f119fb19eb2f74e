"""The portfolio heat map: projects by dimension, each cell a RAG mark."""

from collections.abc import Sequence
from dataclasses import dataclass

from governance.charts.base import (
    RAG_LEGEND,
    RAG_ORDER,
    RAG_WORDS,
    Cell,
    Chart,
    Frame,
    _e,
    _lane_label,
    _n,
    _rag_rect,
    rag_key,
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
    frame = Frame(chart_id, title, columns, table)
    if not rows:
        return frame.empty("No project to show.", css="chart-heat")
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
        parts.append(_lane_label(row.label, row.href, y + cell_h / 2, 30))
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
    return frame.drawn(width, height, desc, parts, legend=RAG_LEGEND, css="chart-heat")
