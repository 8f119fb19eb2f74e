"""The portfolio in pages: a stable order (the sort, then the project key), every project on
exactly one page even when projects are added between page loads, the filters and the sort
kept across pages, a constant number of queries a page, the summaries from aggregate SQL
equal to the figures summed row by row, and the cursor declared in the API document."""

import json
import re
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.paging import CURSOR_MESSAGE
from status import earned_value
from tests.conftest import fresh
from tests.factories import UserFactory
from tests.portfolio.test_portfolio import _populate, make_project

RAGS = ["Red", "Amber", "Green", "Blue", "None"]


@pytest.fixture(scope="module")
def thirteen_projects(module_db):
    """Thirteen projects of every kind, built once for the module's tests."""
    user = UserFactory(username="pager", admin=True)
    lead = UserFactory(username="pager_lead")
    _populate(range(13), user, lead)
    return user, lead


@pytest.fixture
def paging(db, thirteen_projects, client_for):
    user, lead = fresh(thirteen_projects)
    return user, lead, client_for(user)


def walk(client, url):
    """Every page of the API's answer from `url`: the pages' keys and the links followed."""
    pages, links = [], []
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        body = response.json()
        pages.append([row["projectKey"] for row in body["items"]])
        url = body["next"]
        links.append(url)
    return pages, links


@pytest.mark.parametrize(
    "sort",
    [
        "",
        "-key",
        "name",
        "overall",
        "-overall",
        "overrun",
        "-overrun",
        "-topRisk",
        "theme",
        "-slip",
        "stale",
        "adoptionGap",
        "approvalStatus",
        "cpi",
    ],
)
def test_pages_hold_every_project_once_in_the_unpaged_order(paging, sort):
    _, _, client = paging
    whole = client.get(f"/api/v1/portfolio?sort={sort}&pageSize=500").json()
    assert whole["next"] is None
    everything = [row["projectKey"] for row in whole["items"]]
    assert len(everything) == 13
    pages, _ = walk(client, f"/api/v1/portfolio?sort={sort}&pageSize=4")
    assert [len(p) for p in pages] == [4, 4, 4, 1]
    assert [key for page in pages for key in page] == everything


def test_no_project_twice_or_missed_when_projects_are_added_between_pages(paging):
    user, lead, client = paging
    first = client.get("/api/v1/portfolio?pageSize=5").json()
    seen = [row["projectKey"] for row in first["items"]]
    # Added meanwhile: one before the cursor (not shown now), some after (shown later).
    make_project("A000", browsers=[user], lead=lead)
    make_project("Q0045", browsers=[user], lead=lead)
    make_project("Z999", browsers=[user], lead=lead)
    pages, _ = walk(client, first["next"])
    seen += [key for page in pages for key in page]
    assert len(seen) == len(set(seen))
    original = {f"Q{n:03d}" for n in range(13)}
    assert original <= set(seen)
    assert {"Q0045", "Z999"} <= set(seen) and "A000" not in seen
    assert seen == sorted(seen)


def test_the_filters_and_the_sort_go_with_every_page(paging):
    _, _, client = paging
    pages, links = walk(client, "/api/v1/portfolio?theme=Strategic&sort=-overrun&pageSize=2")
    keys = [key for page in pages for key in page]
    assert keys == [
        r["projectKey"]
        for r in client.get("/api/v1/portfolio?theme=Strategic&sort=-overrun").json()["items"]
    ]
    assert len(keys) == 4  # 1, 4, 7, 10
    for link in links[:-1]:
        query = parse_qs(urlsplit(link).query)
        assert query["theme"] == ["Strategic"] and query["sort"] == ["-overrun"]
        assert query["pageSize"] == ["2"] and query["cursor"]
    assert links[-1] is None


def test_a_cursor_of_another_sort_or_altered_is_refused_by_the_api_and_ignored_by_the_page(
    paging,
):
    _, _, client = paging
    cursor = client.get("/api/v1/portfolio?pageSize=2").json()["next"].split("cursor=")[1]
    for bad in (f"sort=-key&cursor={cursor}", "cursor=nonsense", f"cursor={cursor}x"):
        response = client.get(f"/api/v1/portfolio?{bad}")
        assert response.status_code == 400, bad
        error = response.json()["error"]
        assert error["code"] == "bad_request" and error["message"] == CURSOR_MESSAGE
        assert "first page" in error["message"] and "`next`" in error["message"]
    for bad in ("pageSize=0", "pageSize=501", "pageSize=ten"):
        response = client.get(f"/api/v1/portfolio?{bad}")
        assert response.status_code == 422, bad
        assert "pageSize" in response.json()["error"]["fields"]
    page = client.get(f"/portfolio/?sort=-key&cursor={cursor}")
    assert page.status_code == 200
    assert "Q012" in page.content.decode()  # the first page of that sort


def test_the_page_links_the_next_and_previous_pages_with_its_filters(paging):
    _, _, client = paging
    page = client.get("/portfolio/?theme=Strategic&pageSize=2&sort=name").content.decode()
    assert 'rel="next"' in page and 'rel="prev"' not in page
    nav = page[page.index('aria-label="Pages of the portfolio"') :]
    href = nav[nav.index('rel="next" href="') + 17 :].split('"')[0].replace("&amp;", "&")
    query = parse_qs(urlsplit(href).query)
    assert query["theme"] == ["Strategic"] and query["sort"] == ["name"]
    second = client.get("/portfolio/" + href).content.decode()
    assert 'rel="prev"' in second and 'rel="next"' not in second  # the last page

    def table_keys(html):
        return re.findall(r'class="col-project"><a href="/projects/([A-Z0-9]+)/', html)

    assert table_keys(page) == ["Q001", "Q004"] and table_keys(second) == ["Q007", "Q010"]
    # What a screen reader hears counts the matching projects, not every viewable one.
    assert "Showing 2 of 4 matching projects" in page


def _count(client, url):
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_a_page_runs_the_same_queries_wherever_it_is_and_whatever_its_size(paging):
    _, _, client = paging
    for base in ("/api/v1/portfolio?pageSize=3", "/portfolio/?pageSize=3&group=theme"):
        _count(client, base)  # warm
        first = _count(client, base)
        api = base.replace("/portfolio/", "/api/v1/portfolio")
        cursor = client.get(api).json()["next"].split("cursor=")[1]
        assert _count(client, f"{base}&cursor={cursor}") == first
        assert _count(client, base.replace("pageSize=3", "pageSize=10")) == first


# --- the summaries against the old way: every row read and summed in Python -----------------


def old_summary(rows):
    overall = {rag: 0 for rag in RAGS}
    for row in rows:
        overall[row["overallRag"] if row["overallRag"] in overall else "None"] += 1
    return {
        "projects": len(rows),
        "overall": overall,
        "stale": sum(1 for r in rows if r["stale"]),
        "inException": sum(1 for r in rows if r["inException"]),
        "adoptionGaps": sum(1 for r in rows if r["adoptionGap"]),
        "pendingDecisions": sum(r["pendingDecisions"] for r in rows),
        "changesAwaitingApplication": sum(r["changesAwaitingApplication"] for r in rows),
        "reviewsDue": sum(1 for r in rows if r["realisationReviewDueOn"]),
        "reviewsOverdue": sum(1 for r in rows if r["realisationReviewOverdue"]),
    }


def old_heat(rows):
    grid = {}
    for dimension in ["overall", "cost", "schedule", "scope", "risk"]:
        counts = {rag: 0 for rag in RAGS}
        for row in rows:
            value = (
                row["overallRag"] if dimension == "overall" else row["effective"][f"{dimension}Rag"]
            )
            counts[value if value in counts else "None"] += 1
        grid[dimension] = counts
    return grid


def old_subtotal(rows):
    both = [r for r in rows if r["approvedBudget"] and r["eac"] is not None]
    budget_both = sum(r["approvedBudget"] for r in both)
    slips = [r["scheduleSlipDays"] for r in rows if r["scheduleSlipDays"] is not None]
    scores = [r["topRiskScore"] for r in rows if r["topRiskScore"] is not None]
    budgets = [r["approvedBudget"] for r in rows if r["approvedBudget"] is not None]
    eacs = [r["eac"] for r in rows if r["eac"] is not None]
    return {
        "projects": len(rows),
        "approvedBudget": sum(budgets) if budgets else None,
        "eac": sum(eacs) if eacs else None,
        "costOverrunPct": round((sum(r["eac"] for r in both) - budget_both) / budget_both * 100, 1)
        if budget_both
        else None,
        "scheduleSlipDays": max(slips) if slips else None,
        "topRiskScore": max(scores) if scores else None,
        "pendingDecisions": sum(r["pendingDecisions"] for r in rows),
        "changesAwaitingApplication": sum(r["changesAwaitingApplication"] for r in rows),
        "adoptionGaps": sum(1 for r in rows if r["adoptionGap"]),
        "stale": sum(1 for r in rows if r["stale"]),
        "inException": sum(1 for r in rows if r["inException"]),
        "reviewsOverdue": sum(1 for r in rows if r["realisationReviewOverdue"]),
        "earnedValue": earned_value.portfolio_values(rows).as_dict(),
    }


@pytest.mark.parametrize("query", [{}, {"theme": "Strategic"}, {"rag": "Red"}, {"stale": "1"}])
def test_the_summaries_from_sql_equal_the_rows_summed_one_by_one(paging, rf, query):
    from portfolio import selectors

    user, _, _ = paging
    request = rf.get("/portfolio/")
    request.user = user
    data = selectors.portfolio(request, {**query, "pageSize": "2"})
    rows = selectors.portfolio(request, query, paged=False, with_summary=False).rows
    assert len(data.rows) == min(2, len(rows))
    assert data.summary == old_summary(rows)
    assert {
        line["dimension"]: {c["rag"]: c["count"] for c in line["cells"]} for line in data.heat
    } == old_heat(rows)
    assert data.earned == earned_value.portfolio_values(rows).as_dict()
    grouped = selectors.portfolio(request, {**query, "group": "theme", "pageSize": "2"})
    for group in grouped.groups:
        members = [r for r in rows if (r["theme"] or "") == group["theme"]]
        expected = old_subtotal(members)
        got = group["subtotal"]
        for name in ("approvedBudget", "eac"):
            assert (got[name] is None) == (expected[name] is None)
            if got[name] is not None:
                assert Decimal(str(got[name])) == Decimal(str(expected[name]))
            got, expected = {**got, name: None}, {**expected, name: None}
        assert got == expected
    # The bubbles: the biggest budgets, their figures as the rows give them.
    by_key = {r["projectKey"]: r for r in rows}
    for bubble in data.bubbles:
        row = by_key[bubble["projectKey"]]
        budget = row["approvedBudget"] if row["approvedBudget"] is not None else row["eac"]
        assert bubble["approvedBudget"] == (None if budget is None else float(budget))
        assert bubble["scheduleSlipDays"] == row["scheduleSlipDays"]
        assert bubble["overallRag"] == row["overallRag"]
    assert len(data.bubbles) == len(rows)


def test_the_api_document_declares_the_cursor_the_page_size_and_the_next_link():
    from config.api import api

    document = json.loads(json.dumps(api.get_openapi_schema()))
    operation = document["paths"]["/api/v1/portfolio"]["get"]
    parameters = {p["name"]: p for p in operation["parameters"]}
    assert parameters["cursor"]["in"] == "query" and parameters["cursor"]["description"]
    size = parameters["pageSize"]["schema"]
    size = next((m for m in size.get("anyOf", [size]) if m.get("type") == "integer"), size)
    assert size["minimum"] == 1 and size["maximum"] == 500
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
    page = document["components"]["schemas"][answer["$ref"].rsplit("/", 1)[1]]
    assert page["required"] == ["items", "next"]
    assert page["properties"]["next"]["type"] == ["string", "null"]
    assert page["properties"]["items"]["items"] == {"$ref": "#/components/schemas/PortfolioRow"}


def test_the_bubbles_are_the_biggest_budgets_of_every_matching_project(paging, rf, monkeypatch):
    from portfolio import selectors

    user, _, _ = paging
    monkeypatch.setattr(selectors, "BUBBLES_MAX", 3)
    request = rf.get("/portfolio/")
    request.user = user
    data = selectors.portfolio(request, {"pageSize": "2"})
    rows = selectors.portfolio(request, {}, paged=False, with_summary=False).rows

    def size(row):
        return row["approvedBudget"] if row["approvedBudget"] is not None else row["eac"]

    biggest = sorted(rows, key=lambda r: (-(size(r) or 0), r["projectKey"]))[:3]
    assert [b["projectKey"] for b in data.bubbles] == [r["projectKey"] for r in biggest]


def test_the_count_of_viewable_projects_holds_with_and_without_filters(paging, rf):
    """Unfiltered, the count of the projects the person can view is the summary's own (one
    pass of the gate fewer); filtered, they are counted apart. A project whose stored row is
    missing is derived first and counted; one the person cannot view is neither."""
    from portfolio import selectors
    from status.models import ProjectHealth

    user, lead, _ = paging
    make_project("UNSEEN", browsers=[], lead=lead)
    ProjectHealth.objects.filter(project__key="Q005").delete()
    request = rf.get("/portfolio/")
    request.user = user
    whole = selectors.portfolio(request, {})
    assert whole.total == whole.summary["projects"] == 13
    red = selectors.portfolio(request, {"rag": "Red"})
    assert red.total == 13 and 0 < red.summary["projects"] < 13
    api = selectors.portfolio(request, {}, with_summary=False)
    assert api.total == 13 and api.summary == {}
