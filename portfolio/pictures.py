"""The portfolio's pictures: the RAG heat map (projects by dimension) and the risk matrices of
the page's rows, and the slip / overrun scatter of the biggest budgets among every matching
project (read by an aggregate query)."""

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from governance import charts
from registers import pictures as register_pictures

KEY_MARK = "PORTFOLIOKEY"


def _cell_link(chart_id: str) -> Callable[[int, int], str]:
    """A risk-matrix cell's link within the page."""

    def link(i: int, lk: int) -> str:
        return f"#{chart_id}-cell-{i}-{lk}"

    return link


def project_urls(name: str) -> Callable[[str], str]:
    """key -> the URL of a project's page `name`, reversed once (a portfolio of a thousand
    projects links each several times)."""
    pattern = reverse(name, args=[KEY_MARK])
    return lambda key: pattern.replace(KEY_MARK, quote(key, safe=""))


def _cells_by_view(
    keys: Sequence[str], stored: Mapping[str, Mapping[str, Any] | None]
) -> dict[str, dict[tuple[int, int], dict[str, int]]]:
    """{view: {(impact, likelihood): {project key: open risks}}} from each project's stored
    matrix cells (`status.health.risk_cells`, kept in its health row)."""
    out: dict[str, dict[tuple[int, int], dict[str, int]]] = {
        view: {} for view in register_pictures.MATRIX_VIEWS
    }
    for key in keys:
        cells = stored.get(key) or {}
        for view, by_cell in out.items():
            flat = cells.get(view, ())
            for at in range(0, len(flat), 3):
                by_cell.setdefault((flat[at], flat[at + 1]), {})[key] = flat[at + 2]
    return out


# Projects listed per cell in a portfolio matrix's table before "N more projects".
CELL_PROJECTS = 10


def risk_matrices(
    keys: Sequence[str],
    thresholds: Mapping[str, Any],
    stored: Mapping[str, Mapping[str, Any] | None],
) -> list[charts.Chart]:
    """The inherent and residual matrices of every open risk across the projects (`stored`:
    each project's matrix cells by key, from its health row; no query). A cell links to its
    row in the chart's table, which lists the projects with risks in that cell, each linking
    to that project's register filtered to the cell."""
    register_url = project_urls("registers:risks")
    # Whole scores: a fractional line (7.5) starts its zone at the next whole score, as
    # `risk_zone` reads it, so a cell is shaded as the register colours its score.
    amber = math.ceil(thresholds["riskAmberMinScore"])
    red = math.ceil(thresholds["riskRedMinScore"])
    out = []
    cells_by_view = _cells_by_view(keys, stored)
    for view, label in register_pictures.MATRIX_VIEWS.items():
        chart_id = f"portfolio-matrix-{view}"
        by_cell = cells_by_view[view]
        counts = {cell: sum(p.values()) for cell, p in by_cell.items()}
        chart = charts.risk_matrix(
            counts,
            chart_id=chart_id,
            title=f"{label} risk matrix, all projects shown",
            score_name=f"{label.lower()} score",
            amber_min=amber,
            red_min=red,
            link=_cell_link(chart_id),
        )
        chart.columns = ["Cell", "Project", "Open risks"]
        chart.rows = []
        for cell in sorted(by_cell, key=lambda c: (-c[0] * c[1], -c[0])):
            impact, likelihood = cell
            first = True
            # The projects with most risks in the cell first; a busy cell lists the first
            # CELL_PROJECTS and says how many more (a thousand projects stay readable).
            ranked = sorted(by_cell[cell].items(), key=lambda item: (-item[1], item[0]))
            query = register_pictures.cell_link("", view)(impact, likelihood)
            for key, n in ranked[:CELL_PROJECTS]:
                link = register_url(key) + query
                chart.rows.append(
                    [
                        charts.Cell(
                            f"Impact {impact} \u00d7 likelihood {likelihood} "
                            f"({label.lower()} score {impact * likelihood})"
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
    rag: str = row["overallRag"] if dimension == "overall" else row["effective"][f"{dimension}Rag"]
    return rag


def heat_map(rows: Sequence[Mapping[str, Any]]) -> charts.Chart:
    """Projects down (in the page's order), overall and the four effective RAGs across."""
    status_url = project_urls("status:index")
    return charts.heat_map(
        [
            charts.HeatRow(
                label=f"{row['projectKey']} {row['name']}",
                href=status_url(row["projectKey"]),
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
    status_url = project_urls("status:index")
    return charts.scatter(
        [
            charts.Point(
                label=row["projectKey"],
                href=status_url(row["projectKey"]),
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


def portfolio_pictures(
    rows: Sequence[Mapping[str, Any]],
    thresholds: Mapping[str, Any],
    risk_cells: Mapping[str, Mapping[str, Any] | None],
    *,
    bubbles: Sequence[Mapping[str, Any]],
    matching: int,
    whole: str = "",
) -> list[charts.Chart]:
    """Every picture of the portfolio page. The heat map and the risk matrices draw the
    page's rows (`risk_cells`: the stored matrix cells of each, by key); the scatter the
    biggest budgets of all `matching` projects (`bubbles`, read by an aggregate query).
    `whole`: the link to the next page, where the pictures of the page's rows go on."""
    keys = [row["projectKey"] for row in rows]
    heat = heat_map(rows)
    pictures_of_page = [heat, *risk_matrices(keys, thresholds, risk_cells)]
    if len(rows) < matching:
        for chart in pictures_of_page:
            chart.note = f"The {len(rows)} projects of this page, of {matching} matching."
            if whole:
                chart.note += " The next page draws the next ones."
    bubbles_chart = scatter(bubbles)
    if len(bubbles) < matching:
        bubbles_chart.note = f"The {len(bubbles)} biggest budgets of {matching} projects."
    return [pictures_of_page[0], bubbles_chart, *pictures_of_page[1:]]


def pictures_html(drawn: Sequence[charts.Chart]) -> SafeString:
    """The portfolio's pictures (`portfolio_pictures`), rendered (`charts/_pictures.html`)."""
    return mark_safe(render_to_string("charts/_pictures.html", {"pictures": drawn}))
