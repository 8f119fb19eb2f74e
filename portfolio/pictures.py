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


def risk_matrices(keys: Sequence[str], thresholds: Mapping[str, Any]) -> list[charts.Chart]:
    """The inherent and residual matrices of every open risk across the projects. A cell links
    to its row in the chart's table, which lists the projects with risks in that cell, each
    linking to that project's register filtered to the cell."""
    grouped = risk_cell_counts(keys)
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
            for key, n in sorted(by_cell[cell].items()):
                register = reverse("registers:risks", args=[key])
                link = register_pictures.cell_link(register, view)(impact, likelihood)
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
        chart.caption = f"{chart.title}: open risks per cell and project"
        out.append(chart)
    return out
