"""One figure, one function: the earned value of `status.earned_value` is the same on the status
page, the status API, a published report, the portfolio (page, API, CSV and XLSX exports) and
the assistant's read action; the portfolio sorts by CPI and SPI and reads them in a constant
number of queries whatever the number of projects.

The project is the worked example of tests/status/test_earned_value.py (Rita Mulcahy's
four-sided fence, PMP Exam Prep, 6th edition, "The Fence #1"), approved through the real acts:
CPI 0.89, SPI 0.83, EAC 4,480 at the end of day 3."""

import csv
import datetime as dt
import io
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from openpyxl import load_workbook

from governance.permissions import caller_for
from governance.tracker.local import scripting
from portfolio import selectors as portfolio_selectors
from registers.models import WorkPackage
from status import services
from status.models import DIMENSIONS, ProjectHealth
from tests.agent.conftest import EVERYONE
from tests.conftest import set_governance_group
from tests.factories import ProjectFactory, UserFactory, WorkPackageFactory
from tests.status.test_one_figure_everywhere import act, agent, submitted

# (name, status, progress, actual cost)
SIDES = [
    ("Side 1", "Complete", 100, Decimal(1000)),
    ("Side 2", "Complete", 100, Decimal(1200)),
    ("Side 3", "In Progress", 50, Decimal(600)),
    ("Side 4", "Not Started", None, None),
]


def build_fence(project, today: dt.date, *, approve=None):
    """Four sides of 1,000, one a day, today the end of day 3."""
    day1 = today - dt.timedelta(days=2)
    packages = [
        WorkPackageFactory(
            project=project,
            name=name,
            budget=Decimal(1000),
            planned_start_date=day1 + dt.timedelta(days=n),
            planned_end_date=day1 + dt.timedelta(days=n),
        )
        for n, (name, *_) in enumerate(SIDES)
    ]
    if approve is not None:
        approve()
    for wp, (_, status, progress, actual) in zip(packages, SIDES, strict=True):
        wp.refresh_from_db()
        if approve is None:
            wp.budget_baseline = wp.budget
        wp.status, wp.progress, wp.budget_actual = status, progress, actual
        wp.save()
    return packages


@pytest.fixture(autouse=True)
def governance_group(cast):
    """The cast in the governance group: the portfolio and the assistant open to them."""
    scripting.ensure_group(EVERYONE, members=["lead", "editor", "viewer", "sponsor", "pmo"])
    set_governance_group(EVERYONE)


@pytest.fixture
def fence(cast):
    def approve():
        submitted(cast)
        act(cast, cast.sponsor, "approve")

    return build_fence(cast.project, timezone.localdate(), approve=approve)


EXPECTED = {
    "cpi": 0.89,
    "spi": 0.83,
    "costPerformanceEstimate": 4480,
    "atypicalEstimate": 4300,
    "vac": -480,
    "tcpi": 1.25,
}


def test_the_same_earned_value_on_every_surface(cast, fence, client_for, client, bearer):
    lead = client_for(cast.lead)
    status = lead.get("/api/v1/projects/ALPHA/status").json()["earnedValue"]
    assert {k: status[k] for k in ("bac", "pv", "ev", "ac")} == {
        "bac": 4000,
        "pv": 3000,
        "ev": 2500,
        "ac": 2800,
    }
    assert {k: status[k] for k in EXPECTED} == EXPECTED
    assert status["missing"] == []
    assert status["readings"]["cpi"] == "For each 1.00 spent, 0.89 of planned work done."
    assert [p["name"] for p in status["workPackages"]] == [s[0] for s in SIDES]

    # The status page: each figure with its formula on an abbreviation, its reading, the chart.
    html = lead.get("/projects/ALPHA/status/").content.decode()
    assert 'id="ev-cpi" data-value="0.89"' in html
    assert 'id="ev-costPerformanceEstimate" data-value="4480"' in html
    assert 'title="CPI = EV \u00f7 AC" tabindex="0"' in html
    assert "For each 1.00 spent, 0.89 of planned work done." in html
    assert 'id="earned-value"' in html and "Planned value, earned value and actual cost" in html

    # A published report freezes the same figures.
    caller = caller_for(cast.lead, cast.project)
    report = services.status_report_create(caller=caller, data={"title": "Day 3"})
    report = services.status_report_publish(caller=caller, report_id=report.pk)
    assert report.snapshot["status"]["earnedValue"]["cpi"] == 0.89

    # The portfolio: API row, page cells (with the reading on hover), CSV and XLSX.
    pmo = client_for(cast.pmo)
    row = next(
        r for r in pmo.get("/api/v1/portfolio").json()["items"] if r["projectKey"] == "ALPHA"
    )
    assert {k: row["earnedValue"][k] for k in EXPECTED} == EXPECTED
    pmo.post("/portfolio/columns/", {"columns": ["cpi", "spi"]})
    page = pmo.get("/portfolio/?sort=cpi").content.decode()
    reading = "For each 1.00 spent, 0.89 of planned work done."
    assert f'title="{reading}" data-label="CPI">0.89</td>' in page
    assert ">0.83</td>" in page
    assert 'id="portfolio-cpi"' in page
    export = pmo.get("/portfolio/export/?format=csv").getvalue().decode("utf-8-sig")
    header, *body = list(csv.reader(io.StringIO(export)))
    line = next(dict(zip(header, r, strict=True)) for r in body if r[0] == "ALPHA")
    assert line["Earned value: CPI"] == "0.89" and (
        line["Earned value: Cost-performance estimate (BAC / CPI)"] == "4480"
    )
    workbook = load_workbook(io.BytesIO(pmo.get("/portfolio/export/?format=xlsx").getvalue()))
    sheet = workbook.active
    titles = [c.value for c in sheet[1]]
    values = {titles[i]: c.value for i, c in enumerate(sheet[2])}
    assert values["Earned value: CPI"] == 0.89 and values["Earned value: TCPI"] == 1.25

    # The assistant's read action.
    state = agent(client, bearer, cast.lead, "project_status", {"projectKey": "ALPHA"})
    assert {k: state["earnedValue"][k] for k in EXPECTED} == EXPECTED


def test_missing_inputs_are_named_on_the_page_and_in_the_api(cast, client_for):
    WorkPackageFactory(
        project=cast.project,
        name="Build",
        budget=Decimal(1000),
        budget_baseline=Decimal(1000),
        status="In Progress",
        progress=None,
        planned_start_date=None,
        planned_end_date=None,
    )
    lead = client_for(cast.lead)
    values = lead.get("/api/v1/projects/ALPHA/status").json()["earnedValue"]
    assert values["cpi"] is None and values["spi"] is None
    assert {m["input"] for m in values["missing"]} == {"phasing", "progress", "actuals"}
    html = lead.get("/projects/ALPHA/status/").content.decode()
    assert "1 work package has no progress (“Build”)" in html
    assert "Not given: no progress and no actuals." in html


def test_the_portfolio_sorts_by_cpi_and_spi_with_missing_figures_last(cast, client_for):
    now = timezone.now()
    for key, cpi, spi in (("A", 1.1, 0.7), ("B", None, None), ("C", 0.8, 0.9)):
        ProjectHealth.objects.create(
            project=ProjectFactory(key=key),
            as_of=now.date(),
            computed_at=now,
            valid_until=now,
            basis="",
            **{f"{p}{d}_rag": "None" for p in ("", "derived_") for d in DIMENSIONS},
            stale=False,
            row={"theme": "", "earnedValue": {"cpi": cpi, "spi": spi}},
        )
    stored = ProjectHealth.objects.filter(project__key__in=["A", "B", "C"])

    def keys(**params):
        ordered = portfolio_selectors.in_order(stored, portfolio_selectors.Params(**params))
        return list(ordered.values_list("project__key", flat=True))

    assert keys(sort="cpi") == ["C", "A", "B"]
    assert keys(sort="cpi", descending=True) == ["A", "C", "B"]
    assert keys(sort="spi", descending=True) == ["C", "A", "B"]
    pmo = client_for(cast.pmo)
    assert pmo.get("/api/v1/portfolio?sort=-cpi").status_code == 200
    assert pmo.get("/api/v1/portfolio?sort=spi").status_code == 200


def _count(client, url) -> int:
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(queries)


@pytest.mark.parametrize("stored", [True, False])
def test_the_portfolio_reads_earned_value_in_the_same_queries_at_2_and_7_projects(
    cast, client_for, stored
):
    pmo = client_for(cast.pmo)
    lead = UserFactory(username="ev_lead")
    today = timezone.localdate()

    def add(numbers):
        for n in numbers:
            project = ProjectFactory(key=f"EV{n}", lead=lead, browsers=[cast.pmo])
            build_fence(project, today)

    def counts():
        assert pmo.get("/api/v1/portfolio").status_code == 200  # as the portfolio's own test
        found = {}
        for url in ("/portfolio/?sort=cpi", "/api/v1/portfolio?sort=spi"):
            if not stored:
                ProjectHealth.objects.all().delete()
            found[url] = _count(pmo, url)
        return found

    add(range(2))
    few = counts()
    add(range(2, 7))
    many = counts()
    assert many == few
    listed = pmo.get("/api/v1/portfolio").json()["items"]
    row = next(r for r in listed if r["projectKey"] == "EV6")
    assert row["earnedValue"]["cpi"] == 0.89
    assert WorkPackage.objects.filter(project__key="EV6").count() == 4


def test_a_package_without_a_baseline_budget_gives_the_true_reason(cast, client_for):
    """Before any approval no package has a baseline budget because nothing is approved yet,
    not because it was added after approval."""
    counted = WorkPackageFactory(
        project=cast.project, name="Build", budget=Decimal(1000), budget_baseline=Decimal(1000)
    )
    WorkPackageFactory(project=cast.project, name="Added later", budget=Decimal(500))
    lead = client_for(cast.lead)
    html = lead.get("/projects/ALPHA/status/").content.decode()
    assert "Not counted (no baseline budget: the business case is not approved yet)" in html
    assert "added after approval" not in html
    counted.delete()
    assert "added after approval" not in lead.get("/projects/ALPHA/status/").content.decode()
