"""The portfolio's heat map (projects by dimension) and slip / overrun scatter: drawn from
the rows the page shows, following its filters, with their tables, at a constant number of
queries."""

from decimal import Decimal

import pytest

from charter.models import BusinessCase
from status.models import ProjectStatus
from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import ProjectFactory, WorkPackageFactory
from tests.html import inline_problems
from tests.pictures.test_risk_matrix_pages import queries


@pytest.fixture
def client(cast, client_for):
    set_governance_group(PMO_GROUP)
    return client_for(cast.pmo)


def project(cast, key, overall, forecast):
    p = ProjectFactory(key=key, name=f"{key} programme", lead=cast.lead, browsers=[cast.pmo])
    WorkPackageFactory(project=p, budget=Decimal(1000), budget_forecast=Decimal(forecast))
    ProjectStatus.objects.create(project=p, overall_rag=overall)
    BusinessCase.objects.create(project=p)
    return p


def test_heat_map_and_scatter_draw_every_shown_project(cast, client):
    project(cast, "RED", "Red", 1300)
    project(cast, "CALM", "Green", 1000)
    html = client.get("/portfolio/").content.decode()
    assert 'id="portfolio-heat"' in html and 'id="portfolio-scatter"' in html
    heat = html.split('id="portfolio-heat"')[1].split("</figure>")[0]
    assert 'href="/projects/RED/status/"' in heat and 'href="/projects/CALM/status/"' in heat
    assert "RED RED programme, Overall: Red" in heat
    scatter = html.split('id="portfolio-scatter"')[1].split("</figure>")[0]
    assert "Show as a table" in scatter and "30 %" in scatter
    assert inline_problems(html) == []
    # The pictures follow the filters (the HTMX results partial too).
    html = client.get("/portfolio/?rag=Green&dimension=overall", HTTP_HX_REQUEST="true")
    heat = html.content.decode().split('id="portfolio-heat"')[1].split("</figure>")[0]
    assert "/projects/CALM/status/" in heat and "/projects/RED/status/" not in heat


def test_portfolio_pictures_cost_no_query_per_project(cast, client):
    project(cast, "P0", "Red", 1300)
    few = queries(client, "/portfolio/")
    for n in range(1, 15):
        project(cast, f"P{n}", ["Red", "Amber", "Green"][n % 3], 900 + 50 * n)
    assert queries(client, "/portfolio/") == few


def test_a_paged_portfolio_draws_the_page_and_the_biggest_budgets_of_all(monkeypatch):
    from portfolio import pictures

    monkeypatch.setattr(pictures, "risk_matrices", lambda keys, thresholds, cells: [])
    rows = [
        {
            "projectKey": f"P{n}",
            "name": f"P{n}",
            "overallRag": "Green",
            "effective": {f"{d}Rag": "Green" for d in ("cost", "schedule", "scope", "risk")},
            "scheduleSlipDays": n,
            "costOverrunPct": n,
            "approvedBudget": None if n == 2 else n * 100,
            "eac": 1000,
        }
        for n in range(4)
    ]
    heat, bubbles = pictures.portfolio_pictures(
        rows[:2], {}, {}, bubbles=rows[2:], matching=4, whole="?cursor=x"
    )
    assert [r[0].text for r in heat.rows] == ["P0 P0", "P1 P1"]
    assert (
        heat.note
        == "The 2 projects of this page, of 4 matching. The next page draws the next ones."
    )
    assert [r[0].text for r in bubbles.rows] == ["P2", "P3"]
    assert bubbles.note == "The 2 biggest budgets of 4 projects."
    heat, bubbles = pictures.portfolio_pictures(rows, {}, {}, bubbles=rows, matching=4)
    assert heat.note == "" and bubbles.note == ""


def test_grouped_risks_are_placed_as_the_register_matrix_places_a_risk():
    """The health rows count open risks per cell from grouped scores; each group lands in the
    cell that registers.pictures.risk_cell gives a risk with those scores, in both views."""
    import itertools
    from types import SimpleNamespace

    from registers import pictures as register_pictures

    scores = [None, 1, 3, 5]
    groups = [(*combo, n + 1) for n, combo in enumerate(itertools.product(scores, repeat=4))]
    got = register_pictures.place_groups(groups)
    for view in register_pictures.MATRIX_VIEWS:
        expected: dict = {}
        for impact, likelihood, residual_impact, residual_likelihood, n in groups:
            risk = SimpleNamespace(
                impact=impact,
                likelihood=likelihood,
                residual_impact=residual_impact,
                residual_likelihood=residual_likelihood,
            )
            cell = register_pictures.risk_cell(risk, view)
            if cell is not None:
                expected[cell] = expected.get(cell, 0) + n
        assert got[view] == expected


def test_the_portfolio_matrices_add_up_the_stored_cells_of_the_projects_shown(cast, client):
    """Each project's health row keeps its open risks per cell; the portfolio's matrices add
    them up for the projects shown, and their tables name each project with its count."""
    from tests.factories import RiskFactory

    a = project(cast, "AAA", "Red", 1000)
    b = project(cast, "BBB", "Green", 1000)
    for p, impact, likelihood in [(a, 4, 3), (a, 4, 3), (b, 4, 3), (b, 2, 2)]:
        RiskFactory(project=p, impact=impact, likelihood=likelihood, status="Open")
    RiskFactory(project=b, impact=5, likelihood=5, status="Closed")
    RiskFactory(project=a, impact=4, likelihood=3, residual_impact=1, residual_likelihood=2)
    page = client.get("/portfolio/").content.decode()
    inherent = page.split('id="portfolio-matrix-inherent"')[1].split("</figure>")[0]
    residual = page.split('id="portfolio-matrix-residual"')[1].split("</figure>")[0]
    assert "Impact 4 \u00d7 likelihood 3 (inherent score 12)" in inherent
    cell = inherent.split("Impact 4 \u00d7 likelihood 3")[1].split("Impact 2")[0]
    assert ">AAA</a></td><td>3</td>" in cell and ">BBB</a></td><td>1</td>" in cell
    assert "score 25" not in inherent.split("<details")[1]  # a closed risk is not counted
    assert ">AAA</a></td><td>2</td>" in residual.split("Impact 1")[0]
    assert "Impact 1 \u00d7 likelihood 2" in residual
    filtered = client.get("/portfolio/?rag=Red&dimension=overall").content.decode()
    inherent = filtered.split('id="portfolio-matrix-inherent"')[1].split("</figure>")[0]
    assert "BBB" not in inherent and ">AAA</a></td><td>3</td>" in inherent
