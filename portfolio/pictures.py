"""The portfolio's pictures: the risk matrices across the projects shown (one aggregate query),
the RAG heat map (projects by dimension) and the slip / overrun scatter, both from the rows the
page already has."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.db.models import Count
from django.urls import reverse

from governance import charts
from registers import pictures as register_pictures
from registers.models import Risk

MATRIX_FIELDS = ("project__key", "impact", "likelihood", "residual_impact", "residual_likelihood")


def risk_cell_counts(keys: Sequence[str]) -> list[dict[str, Any]]:
    """Open risks of these projects grouped by project and scores: one query (also when no
    project is shown, so that the page's count of queries never varies)."""
    return list(
        Risk.objects.filter(project__key__in=list(keys) or [""], status="Open", direction="Risk")
        .values(*MATRIX_FIELDS)
        .annotate(n=Count("id"))
        .order_by(*MATRIX_FIELDS)
    )


class _Row:
    """One grouped row read like a risk by `registers.pictures.risk_cell`."""

    def __init__(self, row: Mapping[str, Any]):
        self.impact = row["impact"]
        self.likelihood = row["likelihood"]
        self.residual_impact = row["residual_impact"]
        self.residual_likelihood = row["residual_likelihood"]


# Projects listed per cell in a portfolio matrix's table before "N more projects".
CELL_PROJECTS = 10


def risk_matrices(keys: Sequence[str], thresholds: Mapping[str, Any]) -> list[charts.Chart]:
    """The inherent and residual matrices of every open risk across the projects. A cell links
    to its row in the chart's table, which lists the projects with risks in that cell, each
    linking to that project's register filtered to the cell."""
    grouped = risk_cell_counts(keys)
    registers: dict[str, str] = {}
    amber, red = int(thresholds["riskAmberMinScore"]), int(thresholds["riskRedMinScore"])
    out = []
    for view, label in register_pictures.MATRIX_VIEWS.items():
        chart_id = f"portfolio-matrix-{view}"
        by_cell: dict[tuple[int, int], dict[str, int]] = {}
        for row in grouped:
            cell = register_pictures.risk_cell(_Row(row), view)
            if cell is None:
                continue
            projects = by_cell.setdefault(cell, {})
            projects[row["project__key"]] = projects.get(row["project__key"], 0) + row["n"]
        counts = {cell: sum(p.values()) for cell, p in by_cell.items()}
        chart = charts.risk_matrix(
            counts,
            chart_id=chart_id,
            title=f"{label} risk matrix, all projects shown",
            amber_min=amber,
            red_min=red,
            link=lambda i, lk, chart_id=chart_id: f"#{chart_id}-cell-{i}-{lk}",
        )
        chart.columns = ["Cell", "Project", "Open risks"]
        chart.rows = []
        for cell in sorted(by_cell, key=lambda c: (-c[0] * c[1], -c[0])):
            impact, likelihood = cell
            first = True
            # The projects with most risks in the cell first; a busy cell lists the first
            # CELL_PROJECTS and says how many more (a thousand projects stay readable).
            ranked = sorted(by_cell[cell].items(), key=lambda item: (-item[1], item[0]))
            for key, n in ranked[:CELL_PROJECTS]:
                if key not in registers:
                    registers[key] = reverse("registers:risks", args=[key])
                link = register_pictures.cell_link(registers[key], view)(impact, likelihood)
                chart.rows.append(
                    [
                        charts.Cell(
                            f"Impact {impact} \u00d7 likelihood {likelihood} (score "
                            f"{impact * likelihood})"
                            if first
                            else "″",
                            anchor=f"{chart_id}-cell-{impact}-{likelihood}" if first else "",
                        ),
                        charts.Cell(key, link),
                        charts.Cell(str(n)),
                    ]
                )
                first = False
            if len(ranked) > CELL_PROJECTS:
                more = ranked[CELL_PROJECTS:]
                chart.rows.append(
                    [
                        charts.Cell("″"),
                        charts.Cell(f"{len(more)} more projects"),
                        charts.Cell(str(sum(n for _, n in more))),
                    ]
                )
        chart.caption = f"{chart.title}: open risks per cell and project"
        out.append(chart)
    return out


HEAT_DIMENSIONS = [("overall", "Overall"), ("cost", "Cost"), ("schedule", "Schedule")]
HEAT_DIMENSIONS += [("scope", "Scope"), ("risk", "Risk")]


def _rag(row: Mapping[str, Any], dimension: str) -> str:
    return row["overallRag"] if dimension == "overall" else row["effective"][f"{dimension}Rag"]


def heat_map(rows: Sequence[Mapping[str, Any]]) -> charts.Chart:
    """Projects down (in the page's order), overall and the four effective RAGs across."""
    return charts.heat_map(
        [
            charts.HeatRow(
                label=f"{row['projectKey']} {row['name']}",
                href=reverse("status:index", args=[row["projectKey"]]),
                rags=[_rag(row, key) for key, _ in HEAT_DIMENSIONS],
            )
            for row in rows
        ],
        [label for _, label in HEAT_DIMENSIONS],
        chart_id="portfolio-heat",
        title="RAG heat map: projects by dimension",
    )


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _budget(row: Mapping[str, Any]) -> float | None:
    return _number(row["approvedBudget"] if row["approvedBudget"] is not None else row["eac"])


def scatter(rows: Sequence[Mapping[str, Any]]) -> charts.Chart:
    """Schedule slip against cost overrun, a bubble per project sized by its approved budget
    (else its forecast), coloured and lettered by its overall RAG."""
    return charts.scatter(
        [
            charts.Point(
                label=row["projectKey"],
                href=reverse("status:index", args=[row["projectKey"]]),
                x=_number(row["scheduleSlipDays"]),
                y=_number(row["costOverrunPct"]),
                size=_budget(row),
                rag=row["overallRag"],
            )
            for row in rows
        ],
        chart_id="portfolio-scatter",
        title="Schedule slip against cost overrun, sized by budget",
    )


# A picture of a thousand projects is a wall: the heat map draws the first HEAT_MAX rows in
# the page's order (sort or filter to choose them), the scatter the SCATTER_MAX biggest budgets.
HEAT_MAX = 50
SCATTER_MAX = 150


def portfolio_pictures(rows: Sequence[Mapping[str, Any]], thresholds) -> list[charts.Chart]:
    """Every picture of the portfolio page, for the rows it shows."""
    keys = [row["projectKey"] for row in rows]
    heat = heat_map(rows[:HEAT_MAX])
    if len(rows) > HEAT_MAX:
        heat.note = (
            f"The first {HEAT_MAX} of {len(rows)} projects in the table's order: sort or filter "
            "the table to choose them."
        )
    shown = rows
    if len(rows) > SCATTER_MAX:
        biggest = {id(r) for r in sorted(rows, key=lambda r: -(_budget(r) or 0))[:SCATTER_MAX]}
        shown = [r for r in rows if id(r) in biggest]
    bubbles = scatter(shown)
    if len(rows) > SCATTER_MAX:
        bubbles.note = f"The {SCATTER_MAX} biggest budgets of {len(rows)} projects."
    return [heat, bubbles, *risk_matrices(keys, thresholds)]
