"""The risk matrix: likelihood by impact, each cell zoned and counted."""

from collections.abc import Callable, Mapping

from governance.charts.base import (
    Cell,
    Chart,
    Frame,
    _e,
    _n,
)
from governance.rag import risk_zone

# --- risk matrix ------------------------------------------------------------------------------


# A cell's zone, named for its pattern, from the one colouring of a score (`rag.risk_zone`).
ZONE_OF_RAG = {"Red": "high", "Amber": "medium", "Green": "low"}


def cell_zone(score: int, amber_min: int, red_min: int) -> str:
    """high / medium / low for a cell's score: `rag.risk_zone` under these thresholds."""
    thresholds = {"riskAmberMinScore": amber_min, "riskRedMinScore": red_min}
    return ZONE_OF_RAG[risk_zone(score, thresholds)]


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
    score_name: str = "score",
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
            zone = cell_zone(score, amber_min, red_min)
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
                f"{likelihood} ({score_name} {score}, {zone})"
            )
            if n and link:
                parts.append(
                    f'<a href="{_e(link(impact, likelihood))}" '
                    f'class="mx-link"><title>{_e(words)}</title>{shape}</a>'
                )
            else:
                parts.append(f"<g><title>{_e(words)}</title>{shape}</g>")
    for likelihood in range(1, 6):
        tick_x = left + (likelihood - 0.5) * cell
        parts.append(
            f'<text x="{_n(tick_x)}" y="{top + 5 * cell + 14}" class="axis-tick" '
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
            zone = cell_zone(impact * likelihood, amber_min, red_min)
            row.append(
                Cell(
                    str(n) if n else "0",
                    link(impact, likelihood) if (n and link) else "",
                    f"mx-td-{zone}",
                )
            )
        rows.append(row)
    return Frame(chart_id, title, columns, rows).drawn(
        width,
        height,
        desc,
        parts,
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
