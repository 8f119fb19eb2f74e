"""The risk matrices on the risk register, the status page and the portfolio: drawn, their
tables one click away, their cells linking to the register filtered to the cell, and no query
per row."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from registers import pictures
from registers.models import Risk
from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import ProjectFactory, RiskFactory
from tests.html import inline_problems

REGISTER = "/projects/ALPHA/registers/risks/"


def queries(client, url) -> int:
    client.get(url)
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def add_risks(project, n, **fields):
    Risk.objects.bulk_create(
        Risk(project=project, title=f"R{i}", impact=1 + i % 5, likelihood=1 + (i * 2) % 5, **fields)
        for i in range(n)
    )


def test_register_draws_both_matrices_with_linked_cells_and_tables(cast, client_for):
    RiskFactory(project=cast.project, title="Vendor exit", impact=4, likelihood=3)
    RiskFactory(
        project=cast.project,
        title="Data loss",
        impact=5,
        likelihood=4,
        residual_impact=2,
        residual_likelihood=2,
    )
    RiskFactory(project=cast.project, title="Closed one", impact=5, likelihood=5, status="Closed")
    RiskFactory(
        project=cast.project, title="Upside", impact=5, likelihood=5, direction="Opportunity"
    )
    html = client_for(cast.viewer).get(REGISTER).content.decode()
    assert 'id="risk-matrix-inherent"' in html and 'id="risk-matrix-residual"' in html
    assert "<svg" in html and inline_problems(html) == []
    assert html.count("Show as a table") == 2
    cell = f"{REGISTER}?status=Open&amp;direction=Risk&amp;cell=inherent-4-3#register-table"
    assert f'href="{cell}"' in html
    assert "1 risk with impact 5 and likelihood 4 (inherent score 20, high)" in html
    # Residual: by the residual scores where assessed; closed risks and opportunities not drawn.
    assert "cell=residual-2-2" in html
    assert "cell=residual-5-4" not in html
    assert "cell=inherent-5-5" not in html


def test_a_cell_link_filters_the_register_to_that_cell(cast, client_for):
    RiskFactory(project=cast.project, title="Vendor exit", impact=4, likelihood=3)
    RiskFactory(
        project=cast.project,
        title="Data loss",
        impact=5,
        likelihood=4,
        residual_impact=4,
        residual_likelihood=3,
    )
    RiskFactory(project=cast.project, title="Elsewhere", impact=1, likelihood=1)
    client = client_for(cast.viewer)
    html = client.get(f"{REGISTER}?status=Open&direction=Risk&cell=inherent-4-3").content.decode()
    table = html.split('id="register-table"')[1]
    assert "Vendor exit" in table and "Data loss" not in table and "Elsewhere" not in table
    assert "Only the open risks in the matrix cell: inherent impact 4, likelihood 3." in html
    assert 'name="cell" value="inherent-4-3"' in html
    table = (
        client.get(f"{REGISTER}?cell=residual-4-3").content.decode().split('id="register-table"')[1]
    )
    assert "Vendor exit" in table and "Data loss" in table and "Elsewhere" not in table
    # A malformed cell is ignored, not an error.
    assert client.get(f"{REGISTER}?cell=residual-9-3").status_code == 200


def test_parse_cell():
    assert pictures.parse_cell("residual-4-3") == ("residual", 4, 3)
    for bad in ("", "inherent-0-3", "other-1-1", "inherent-1", "inherent-1-1-1", "inherent-a-1"):
        assert pictures.parse_cell(bad) is None


def test_register_matrix_costs_no_query_per_row(cast, client_for):
    client = client_for(cast.viewer)
    add_risks(cast.project, 2)
    few = queries(client, REGISTER)
    add_risks(cast.project, 60, residual_impact=2, residual_likelihood=3)
    assert queries(client, REGISTER) == few


def test_status_page_draws_the_matrices_linking_to_the_register(cast, client_for):
    RiskFactory(project=cast.project, title="Vendor exit", impact=4, likelihood=4)
    client = client_for(cast.viewer)
    html = client.get("/projects/ALPHA/status/").content.decode()
    assert 'id="status-risk-matrix-inherent"' in html
    assert 'id="status-risk-matrix-residual"' in html
    assert f"{REGISTER}?status=Open&amp;direction=Risk&amp;cell=inherent-4-4" in html
    assert inline_problems(html) == []
    few = queries(client, "/projects/ALPHA/status/")
    add_risks(cast.project, 40)
    assert queries(client, "/projects/ALPHA/status/") == few


@pytest.fixture
def portfolio_client(cast, client_for):
    set_governance_group(PMO_GROUP)
    return client_for(cast.pmo)


def test_portfolio_matrix_sums_projects_and_links_each_project_register(cast, portfolio_client):
    other = ProjectFactory(key="BETA", lead=cast.lead, browsers=[cast.pmo])
    RiskFactory(project=cast.project, impact=4, likelihood=3)
    RiskFactory(project=other, impact=4, likelihood=3)
    RiskFactory(project=other, impact=4, likelihood=3)
    html = portfolio_client.get("/portfolio/").content.decode()
    assert 'id="portfolio-matrix-inherent"' in html
    assert "3 risks with impact 4 and likelihood 3" in html
    assert 'href="#portfolio-matrix-inherent-cell-4-3"' in html
    assert 'id="portfolio-matrix-inherent-cell-4-3"' in html
    for key in ("ALPHA", "BETA"):
        link = (
            f"/projects/{key}/registers/risks/?status=Open&amp;direction=Risk&amp;cell=inherent-4-3"
        )
        assert link in html
    assert re.search(r">BETA</a></td><td>2</td>", html)
    assert inline_problems(html) == []


def test_portfolio_matrix_costs_one_query_whatever_the_projects(cast, portfolio_client):
    few = queries(portfolio_client, "/portfolio/")
    for n in range(8):
        project = ProjectFactory(key=f"P{n}", lead=cast.lead, browsers=[cast.pmo])
        add_risks(project, 5)
    assert queries(portfolio_client, "/portfolio/") == few


@pytest.mark.parametrize(("amber", "red"), [(7.5, 14.5), (8, 15), (4.2, 9.9)])
def test_a_matrix_cell_is_shaded_as_the_register_colours_its_score(monkeypatch, amber, red):
    from governance import charts
    from governance.charts.risk_matrix import ZONE_OF_RAG, cell_zone
    from governance.rag import risk_zone

    seen = []
    monkeypatch.setattr(charts, "risk_matrix", lambda *a, **k: seen.append(k) or None)
    thresholds = {"riskAmberMinScore": amber, "riskRedMinScore": red}
    pictures.risk_matrices({}, thresholds, REGISTER)
    assert seen
    for drawn in seen:
        for score in range(1, 26):
            shaded = cell_zone(score, drawn["amber_min"], drawn["red_min"])
            assert shaded == ZONE_OF_RAG[risk_zone(score, thresholds)], (score, drawn)


def test_the_register_counts_its_matrices_in_sql_as_the_rows_place_them(
    cast, django_assert_num_queries
):
    """The risk register's matrices are counted per cell in one query, never reading the
    rows: the same counts as placing every loaded risk (closed risks and opportunities left
    out, the residual matrix falling back to the inherent scores)."""
    add_risks(cast.project, 30)
    add_risks(cast.project, 7, residual_impact=2, residual_likelihood=1)
    add_risks(cast.project, 5, status="Closed")
    add_risks(cast.project, 4, direction="Opportunity")
    add_risks(cast.project, 3, residual_impact=4)
    with django_assert_num_queries(1):
        counted = pictures.open_risk_cells(cast.project.risks.all())
    placed = pictures.risk_cells(cast.project.risks.all())
    assert counted == placed
    assert sum(counted["inherent"].values()) == 40
