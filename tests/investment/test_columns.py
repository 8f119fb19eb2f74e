"""The portfolio's investment columns (`investment.columns` through `portfolio.extensions`):
score, rank and the scenario a proposal was prioritised in, on the page (and its column
picker), in the API's rows and in the CSV and XLSX exports; for the viewers who may govern
investment only (the others: the columns absent, not empty); a dash for a project that is
not a proposal; a constant number of queries for a page."""

import csv
import io
import json

import pytest
from django.core.cache import cache
from django.template.loader import get_template
from openpyxl import load_workbook

from governance import permissions
from investment import services
from portfolio import extensions
from portfolio.models import PortfolioColumns
from portfolio.table import render_rows
from status.models import DIMENSIONS
from tests.investment.conftest import caller, make_project, phased, proposal
from tests.investment.test_services import _scenario, builtin, three  # noqa: F401
from tests.portfolio.test_portfolio import _count

pytestmark = pytest.mark.django_db
MINUTES = {"title": "Investment board", "url": "https://wiki.example/board"}
INVESTMENT = ["score", "rank", "scenario"]


def _choose(governed, projects):
    scenario = _scenario(governed, mustHaves=["CCC"])
    services.scenario_choose(
        user=governed.pmo,
        scenario_id=str(scenario.pk),
        data={"minutesRef": MINUTES},
        projects=list(projects),
    )


def _api_rows(client):
    response = client.get("/api/v1/portfolio")
    assert response.status_code == 200, response.content
    return {row["projectKey"]: row for row in response.json()["items"]}


@pytest.fixture
def chosen(three, governed):  # noqa: F811
    _choose(governed, three.values())
    return three


def test_the_api_rows_carry_score_rank_and_scenario_for_governors(chosen, governed, client_for):
    rows = _api_rows(client_for(governed.pmo))
    assert [(rows[k]["rank"], rows[k]["scenario"]) for k in chosen] == [
        (1, "Plan"),
        (2, None),
        (3, "Plan"),
    ]
    # The total the investment API answers (the data criterion counts too).
    ranked = client_for(governed.pmo).get("/api/v1/investment/proposals").json()["items"]
    assert {p["projectKey"]: p["total"] for p in ranked} == {k: rows[k]["score"] for k in chosen}
    # The rank the ranked list gives (its board with the money; the columns' without).
    assert {p["projectKey"]: p["rank"] for p in ranked} == {k: rows[k]["rank"] for k in chosen}
    assert rows["AAA"]["score"] > rows["BBB"]["score"] > rows["CCC"]["score"]
    # ALPHA has no business case that is a proposal: the three are null, never a guess.
    assert (rows["ALPHA"]["score"], rows["ALPHA"]["rank"], rows["ALPHA"]["scenario"]) == (
        None,
        None,
        None,
    )


def test_the_columns_follow_the_document(chosen, governed, client_for):
    from config.api import api
    from tests.governance.test_api_document import conforms

    document = json.loads(json.dumps(api.get_openapi_schema()))
    row = document["components"]["schemas"]["PortfolioRow"]
    assert set(INVESTMENT) <= set(row["properties"]) and not set(INVESTMENT) & set(row["required"])
    conforms(document, client_for(governed.pmo).get("/api/v1/portfolio"), "get", "/portfolio")


def test_for_a_viewer_who_may_not_govern_investment_the_columns_are_absent(
    chosen, governed, client_for, monkeypatch
):
    monkeypatch.setattr(permissions, "may_govern_investment", lambda *a, **k: False)
    client = client_for(governed.pmo)
    rows = _api_rows(client)
    assert not set(INVESTMENT) & set(rows["AAA"])
    PortfolioColumns.objects.create(user=governed.pmo, columns=["project", *INVESTMENT])
    page = client.get("/portfolio/").content.decode()
    assert 'value="score"' not in page and "col-rank" not in page
    exported = b"".join(client.get("/portfolio/export/?format=csv").streaming_content)
    assert "Investment score" not in exported.decode("utf-8-sig").splitlines()[0]
    # A choice saved while they could see the columns is not offered back.
    client.post("/portfolio/columns/", {"columns": ["score", "lead"]})
    assert PortfolioColumns.objects.get(user=governed.pmo).columns == ["project", "lead"]


def test_the_picker_offers_them_and_the_page_shows_them_with_a_dash(chosen, governed, client_for):
    client = client_for(governed.pmo)
    page = client.get("/portfolio/").content.decode()
    assert 'value="score"' in page and 'value="scenario"' in page
    assert "col-score" not in page  # offered, not shown by default
    response = client.post("/portfolio/columns/", {"columns": ["lead", *INVESTMENT]})
    assert response.status_code == 302
    assert PortfolioColumns.objects.get(user=governed.pmo).columns == [
        "project",
        "lead",
        *INVESTMENT,
    ]
    page = client.get("/portfolio/").content.decode()
    score = _api_rows(client)["AAA"]["score"]
    assert 'class="col-score num"' in page and 'class="col-scenario"' in page
    assert f'<td class="num" data-label="Score">{score:.2f}</td>' in page  # as its own page
    assert '<td data-label="Scenario">Plan</td>' in page
    assert '<td class="num" data-label="Rank"><span class="muted">—</span></td>' in page


def test_the_exports_carry_the_columns(chosen, governed, client_for):
    client = client_for(governed.pmo)
    text = b"".join(client.get("/portfolio/export/?format=csv").streaming_content)
    rows = {r["Project key"]: r for r in csv.DictReader(io.StringIO(text.decode("utf-8-sig")))}
    assert rows["AAA"]["Investment rank"] == "1" and float(rows["AAA"]["Investment score"]) > 3
    assert rows["AAA"]["Prioritised in scenario"] == "Plan"
    assert rows["ALPHA"]["Investment rank"] == "" and rows["BBB"]["Prioritised in scenario"] == ""
    data = b"".join(client.get("/portfolio/export/?format=xlsx").streaming_content)
    sheet = load_workbook(io.BytesIO(data)).active
    header = [c.value for c in sheet[1]]
    at = {
        name: header.index(name) for name in ("Project key", "Investment rank", "Investment score")
    }
    found = {r[at["Project key"]]: r for r in sheet.iter_rows(min_row=2, values_only=True)}
    assert found["BBB"][at["Investment rank"]] == 2 and found["BBB"][at["Investment score"]] > 2
    assert found["ALPHA"][at["Investment rank"]] is None


def test_a_hostile_scenario_name_is_escaped_and_written_safely(three, governed, client_for):  # noqa: F811
    scenario = services.scenario_create(
        user=governed.pmo,
        data={"name": '=HYPERLINK("x")<script>', "budgetByYear": {"2027": 100, "2028": 40}},
    )
    services.scenario_choose(
        user=governed.pmo,
        scenario_id=str(scenario.pk),
        data={"minutesRef": MINUTES},
        projects=list(three.values()),
    )
    client = client_for(governed.pmo)
    PortfolioColumns.objects.create(user=governed.pmo, columns=["project", "scenario"])
    page = client.get("/portfolio/").content.decode()
    assert "<script>" not in page and "&lt;script&gt;" in page
    text = b"".join(client.get("/portfolio/export/?format=csv").streaming_content).decode()
    assert "'=HYPERLINK" in text


def test_python_rows_print_what_the_row_partial_prints_with_the_added_columns():
    partial = get_template("portfolio/portfolio.html#row")
    from tests.portfolio.test_table import PEOPLE, ROWS

    extra = [c for c in extensions.declared_columns() if c.key in INVESTMENT]
    values = [{"score": 3.2, "rank": 2, "scenario": "A <b>&"}, {}]
    for shown in (["project", *INVESTMENT, "why"], ["project", "rank"]):
        rows = [{**row, **more} for row, more in zip(ROWS, values, strict=False)]
        render_rows(rows, PEOPLE, shown, DIMENSIONS, extra)
        for row in rows:
            expected = partial.render(
                {
                    "row": row,
                    "people": PEOPLE,
                    "shown": shown,
                    "rag_dims": DIMENSIONS,
                    "extra_columns": extra,
                }
            )
            squash = __import__("tests.portfolio.test_table", fromlist=["_squash"])._squash
            assert squash(row["html"]) == squash(expected)
        if "score" in shown:  # two decimals, as on the proposals' own page
            assert '<td class="num" data-label="Score">3.20</td>' in rows[0]["html"]


def _proposals(governed, first, count):
    for n in range(first, first + count):
        project = make_project(f"P{n:03d}", governed, sponsor=governed.sponsor)
        proposal(project, financial_case=builtin((0, 1, 0), (1, 0, 10)))
        phased(project, {"2027-03": 10 + n})
        services.score_set(
            caller=caller(governed.pmo, project),
            data={"criterion": "strategy", "value": 1 + n % 5, "reason": "r"},
        )


@pytest.mark.parametrize(
    "url", ["/portfolio/", "/api/v1/portfolio", "/portfolio/export/?format=csv"]
)
def test_a_page_reads_a_constant_number_of_queries(
    model, governed, client_for, django_assert_num_queries, url
):
    PortfolioColumns.objects.create(user=governed.pmo, columns=["project", *INVESTMENT])
    client = client_for(governed.pmo)
    _proposals(governed, 0, 3)
    client.get(url)  # the health rows stored once
    small = _count(client, url)
    _proposals(governed, 3, 9)
    client.get(url)
    cache.clear()
    with django_assert_num_queries(small):
        assert client.get(url).status_code == 200


def test_the_viewable_proposals_from_the_gate_in_sql_are_those_of_every_viewable_project(
    three,  # noqa: F811
    governed,
    rf,
):
    from investment import selectors

    for user in (
        governed.pmo,
        governed.site_admin,
        governed.lead,
        governed.sponsor,
        governed.viewer,
    ):
        request = rf.get("/")
        request.user = user
        expected = selectors.proposal_projects(selectors.visible_projects(request))
        request = rf.get("/")
        request.user = user
        found = selectors.visible_proposals(request)
        assert [(p.pk, p.key, p.name, p.lead_account_id) for p in found] == sorted(
            ((p.pk, p.key, p.name, p.lead_account_id) for p in expected), key=lambda t: t[1]
        ), user.username
        if user == governed.pmo:
            assert [p.key for p in found] == ["AAA", "BBB", "CCC"]
        # The rank column reads the same projects, in the same order, with their revision.
        request = rf.get("/")
        request.user = user
        assert selectors.visible_proposal_revisions(request) == [
            (p.pk, p.key, p.registers_revision) for p in found
        ]
