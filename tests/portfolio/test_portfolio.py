"""The portfolio: its gate, one row per viewable project with the derived status, filters,
sorting, grouping, summary, heat grid, exports, the lessons page, and constant query counts."""

import csv
import datetime as dt
import io
from decimal import Decimal

import openpyxl
import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from charter.models import BusinessCase
from governance import permissions, signals
from governance.tracker.local import scripting
from governance.tracker.local.models import LocalProject
from status import services
from status.models import ProjectStatus
from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import (
    BusinessCaseFactory,
    ChangeRequestFactory,
    DecisionFactory,
    ProjectFactory,
    RiskFactory,
    UserFactory,
    WorkPackageFactory,
)

SEAT = {"accountId": "acc-1", "displayName": "Owner", "avatarUrl": ""}


def make_project(
    key,
    *,
    browsers,
    lead=None,
    theme="",
    approval="Approved",
    cost_forecast=1000,
    risk_score=(2, 2),
    scope_age=None,
    overall="None",
    stale=False,
):
    # Its stored health derived once, when its last fact is in, instead of again after each
    # row (`deferred_project_changes`, as the demo's seeding does); no tolerances are set, so
    # no derivation on the way could open an exception: the same rows are stored.
    with transaction.atomic(), signals.deferred_project_changes():
        project = ProjectFactory(
            key=key, name=f"Project {key}", browsers=browsers, **({"lead": lead} if lead else {})
        )
        project.approval_status = approval
        project.save(update_fields=["approval_status"])
        BusinessCaseFactory(
            project=project,
            theme=theme,
            approval_status=approval,
            version=2 if approval == "Approved" else 1,
            adoption_affected="Staff",
            adoption_kpi="Usage",
            change_saturation="Low",
            adoption_owner=SEAT,
        )
        WorkPackageFactory(
            project=project,
            name="Build",
            budget=Decimal(1000),
            budget_baseline=Decimal(1000),
            budget_forecast=Decimal(cost_forecast),
        )
        RiskFactory(project=project, impact=risk_score[0], likelihood=risk_score[1])
        DecisionFactory(project=project)  # pending
        if scope_age is not None:
            change = ChangeRequestFactory(project=project, dimensions=["Scope"])
            change.created_at = timezone.now() - dt.timedelta(days=scope_age)
            change.save()
        status = ProjectStatus.objects.create(
            project=project,
            overall_rag=overall,
            last_updated_at=timezone.now() - dt.timedelta(days=40 if stale else 1),
        )
        assert status
    return project


@pytest.fixture
def admin_portfolio(cast):
    """Four projects the site admin browses (besides ALPHA), one of each colour of interest."""
    admin = cast.site_admin
    lead2 = UserFactory(username="lead2", display_name="Lee Second")
    make_project(
        "RED",
        browsers=[admin],
        theme="Cost Out",
        cost_forecast=1200,
        risk_score=(4, 4),
        scope_age=45,
        overall="Red",
        stale=True,
    )
    make_project(
        "AMB",
        browsers=[admin],
        theme="Cost Out",
        cost_forecast=1070,
        risk_score=(3, 3),
        scope_age=3,
        overall="Amber",
        lead=lead2,
    )
    make_project("GRN", browsers=[admin], theme="Strategic", cost_forecast=1000, overall="Green")
    make_project("BLU", browsers=[admin], theme="", approval="Closed", overall="Blue")
    return cast


def rows(client, query=""):
    """Every row of the API's answer, following its `next` links to the last page."""
    found, url = [], f"/api/v1/portfolio{query}"
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        found += response.json()["items"]
        url = response.json()["next"]
    return found


def keys(client, query=""):
    return [row["projectKey"] for row in rows(client, query)]


# --- the gate -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/portfolio/",
        "/portfolio/export/?format=csv",
        "/portfolio/lessons/",
        "/api/v1/portfolio",
        "/api/v1/portfolio/lessons",
    ],
)
def test_site_admins_until_a_group_is_set_then_its_members_only(cast, client_for, url):
    assert client_for(cast.site_admin).get(url).status_code == 200
    for role in ("pmo", "lead", "editor", "viewer", "sponsor", "outsider"):
        assert client_for(getattr(cast, role)).get(url).status_code == 403, role
    set_governance_group(PMO_GROUP)
    assert client_for(cast.pmo).get(url).status_code == 200
    for role in ("site_admin", "lead", "viewer"):
        assert client_for(getattr(cast, role)).get(url).status_code == 403, role
    assert client_for(None).get(url).status_code in (302, 401)


def test_the_nav_offers_portfolio_and_lessons_only_behind_the_gate(cast, client_for):
    admin_page = client_for(cast.site_admin).get("/").content.decode()
    assert 'href="/portfolio/"' in admin_page and 'href="/portfolio/lessons/"' in admin_page
    lead_page = client_for(cast.lead).get("/").content.decode()
    assert "/portfolio/lessons/" not in lead_page


def test_one_row_per_viewable_project_only(cast, client_for):
    assert keys(client_for(cast.site_admin)) == ["ALPHA"]
    set_governance_group(PMO_GROUP)
    assert keys(client_for(cast.pmo)) == ["ALPHA"]  # OTHER is not browsable by pmo


# --- rows -------------------------------------------------------------------------------------


def test_a_row_carries_every_portfolio_figure(admin_portfolio, client_for):
    row = next(r for r in rows(client_for(admin_portfolio.site_admin)) if r["projectKey"] == "RED")
    assert row["approvalStatus"] == "Approved"
    assert row["version"] == 2
    assert row["theme"] == "Cost Out"
    assert row["phase"] == "Initiation"
    assert row["overallRag"] == "Red"
    assert row["effective"] == {
        "costRag": "Red",
        "scheduleRag": "Green",
        "scopeRag": "Red",
        "riskRag": "Red",
    }
    assert (row["approvedBudget"], row["eac"], row["costOverrunPct"]) == (1000, 1200, 20)
    assert row["scheduleSlipDays"] == 0
    assert row["topRiskScore"] == 16
    assert row["pendingDecisions"] == 1
    assert row["changesAwaitingApplication"] == 0
    assert row["adoptionGap"] is False
    assert row["stale"] is True
    assert row["realisationReviewDueOn"] is None


def test_rows_show_the_same_derived_values_and_drivers_as_the_status_api(cast, client_for):
    WorkPackageFactory(project=cast.project, budget=Decimal(500), budget_forecast=Decimal(540))
    RiskFactory(project=cast.project, impact=3, likelihood=5, materialised=True)
    client = client_for(cast.site_admin)
    row = rows(client)[0]
    status = client_for(cast.lead).get("/api/v1/projects/ALPHA/status").json()
    assert row["derived"] == status["derived"]
    assert row["effective"] == status["effective"]
    for key, dimension in row["drivers"].items():
        detail = status["drivers"][key]
        assert (dimension["rag"], dimension["summary"], dimension["figures"]) == (
            detail["rag"],
            detail["summary"],
            detail["figures"],
        )
    assert status["drivers"]["costRag"]["drivers"][0]["text"].endswith(
        "is forecast at EUR\u00a0540, EUR\u00a040 over its budget of EUR\u00a0500."
    )
    assert row["adoptionGap"] is True  # never-saved business case


def test_overrides_show_as_the_effective_value(cast, client_for):
    WorkPackageFactory(project=cast.project, budget=Decimal(500), budget_forecast=Decimal(900))
    caller = permissions.caller_for(cast.lead, cast.project)
    services.status_update(caller=caller, data={"costRagOverride": "Amber"})
    row = rows(client_for(cast.site_admin))[0]
    assert (row["derived"]["costRag"], row["effective"]["costRag"]) == ("Red", "Amber")
    html = client_for(cast.site_admin).get("/portfolio/").content.decode()
    assert "(override; derived Red)" in html


def test_review_due_shows_for_projects_in_realisation(cast, client_for):
    cast.project.approval_status = "InRealisation"
    cast.project.save()
    BusinessCaseFactory(
        project=cast.project,
        approval_status="InRealisation",
        last_realisation_review_at=timezone.now() - dt.timedelta(days=100),
    )
    row = rows(client_for(cast.site_admin))[0]
    assert row["realisationReviewOverdue"] is True
    assert row["realisationReviewDueOn"] is not None


# --- filters, sorting, grouping, summary, heat grid -------------------------------------------


def test_filters(admin_portfolio, client_for):
    client = client_for(admin_portfolio.site_admin)
    assert keys(client, "?theme=Cost%20Out") == ["AMB", "RED"]
    assert keys(client, "?theme=-") == ["ALPHA", "BLU"]
    assert keys(client, "?approvalStatus=Closed") == ["BLU"]
    assert keys(client, "?rag=Red") == ["RED"]
    assert keys(client, "?rag=Amber&dimension=scope") == ["AMB"]
    assert keys(client, "?rag=Amber&dimension=cost") == ["AMB"]
    assert keys(client, "?rag=Green&dimension=overall") == ["GRN"]
    assert keys(client, "?rag=Blue&dimension=risk") == ["BLU"]
    lead2 = UserFactory(username="lead2")
    assert keys(client, f"?lead={lead2.account_id}") == ["AMB"]
    assert keys(client, "?stale=true") == ["ALPHA", "RED"]


def test_the_lead_filter_offers_the_leads_by_name(cast, client_for):
    """The leads are offered in the order of their names, not of their account ids: here the
    names run the other way from the ids."""
    admin = cast.site_admin
    leads = sorted((UserFactory() for _ in range(3)), key=lambda lead: lead.account_id)
    for lead, name in zip(leads, ("Zara", "Maud", "Adam"), strict=True):
        scripting.ensure_user(lead.username, display_name=name)
        make_project(f"LF{name.upper()}", browsers=[admin], lead=lead)
    page = client_for(admin).get("/portfolio/").content.decode()
    select = page[page.index('name="lead"') :]
    select = select[: select.index("</select>")]
    assert sorted(("Adam", "Maud", "Zara"), key=select.index) == ["Adam", "Maud", "Zara"]


def test_sorting(admin_portfolio, client_for):
    client = client_for(admin_portfolio.site_admin)
    assert keys(client, "?sort=overall") == ["RED", "AMB", "GRN", "BLU", "ALPHA"]
    by_overrun = keys(client, "?sort=-overrun")
    assert by_overrun[:2] == ["RED", "AMB"]
    assert by_overrun[-1] == "ALPHA"  # no figures: last in either direction
    assert keys(client, "?sort=overrun")[-1] == "ALPHA"
    assert keys(client, "?sort=-topRisk")[:2] == ["RED", "AMB"]
    assert keys(client, "?sort=-key") == ["RED", "GRN", "BLU", "AMB", "ALPHA"]


def test_the_api_refuses_unknown_filter_values(admin_portfolio, client_for):
    client = client_for(admin_portfolio.site_admin)
    for query in ("?sort=colour", "?rag=Purple", "?approvalStatus=Nope", "?dimension=mood"):
        response = client.get(f"/api/v1/portfolio{query}")
        assert response.status_code == 422, query
        assert response.json()["error"]["code"] == "validation"


def test_the_page_groups_by_theme_and_summarises(admin_portfolio, client_for):
    client = client_for(admin_portfolio.site_admin)
    html = client.get("/portfolio/?group=theme").content.decode()
    assert html.index('>Cost Out <span class="count">2</span>') < html.index(">Strategic ")
    assert html.index(">Strategic ") < html.index(">No theme ")
    summary = client.get("/portfolio/").content.decode()
    assert '<span class="stat">5</span> projects' in summary
    assert '<span class="stat">2</span> stale statuses' in summary
    assert '<span class="stat rag-text-red">1</span> Red overall' in summary


def test_the_heat_grid_counts_and_links_to_its_filter(admin_portfolio, client_for):
    html = client_for(admin_portfolio.site_admin).get("/portfolio/").content.decode()
    assert 'aria-label="2 with Risk Red"' not in html
    assert 'aria-label="1 with Risk Red"' in html
    assert "?dimension=risk&amp;rag=Red" in html
    assert 'aria-label="1 with Cost Green"' in html
    assert 'aria-label="1 with Cost No RAG"' not in html  # "None" cells are labelled None
    assert 'aria-label="1 with Cost None"' in html
    filtered = client_for(admin_portfolio.site_admin).get(
        "/portfolio/?dimension=risk&rag=Red", HTTP_HX_REQUEST="true"
    )
    body = filtered.content.decode()
    assert body.lstrip().startswith('<div id="results"')
    assert ">RED</a>" in body and ">AMB</a>" not in body


def test_an_empty_filter_result_says_what_to_do(admin_portfolio, client_for):
    html = client_for(admin_portfolio.site_admin).get("/portfolio/?theme=Nothing").content
    assert b"No project matches these filters" in html


# --- exports ------------------------------------------------------------------------------------


def test_csv_export_follows_the_filters_and_defuses_formulas(admin_portfolio, client_for):
    status = ProjectStatus.objects.get(project__key="RED")
    status.phase = "=HYPERLINK(evil)"
    status.save()
    response = client_for(admin_portfolio.site_admin).get(
        "/portfolio/export/?format=csv&theme=Cost%20Out&sort=-overrun"
    )
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    table = list(csv.reader(io.StringIO(response.getvalue().decode("utf-8-sig"))))
    header, *body = table
    assert header[:2] == ["Project key", "Project"]
    assert [r[0] for r in body] == ["RED", "AMB"]
    assert body[0][header.index("Phase")] == "'=HYPERLINK(evil)"
    assert body[0][header.index("Cost RAG")] == "Red"
    assert body[0][header.index("Cost: why")].endswith(
        "is 20% over the approved budget of EUR\u00a01,000, above the Amber line at 10%."
    )
    assert body[1][header.index("Lead")] == "Lee Second"


def test_xlsx_export(admin_portfolio, client_for):
    response = client_for(admin_portfolio.site_admin).get("/portfolio/export/?format=xlsx")
    assert response.status_code == 200
    book = openpyxl.load_workbook(io.BytesIO(response.getvalue()))
    sheet = book["Portfolio"]
    values = list(sheet.values)
    assert values[0][0] == "Project key"
    assert [row[0] for row in values[1:]] == ["ALPHA", "AMB", "BLU", "GRN", "RED"]
    red = values[-1]
    assert red[values[0].index("Approved budget")] == 1000
    assert red[values[0].index("Top risk score (residual)")] == 16
    # For people: a bold, frozen and filtered header; amounts in a money format; dates typed.
    header = values[0]
    assert all(c.font.bold for c in sheet[1]) and sheet.freeze_panes == "C2"
    last = sheet.cell(1, len(header)).column_letter
    assert sheet.auto_filter.ref == f"A1:{last}{len(values)}"
    budget = sheet.cell(len(values), header.index("Approved budget") + 1)
    assert budget.data_type == "n" and budget.number_format == "#,##0.00"
    for row in sheet.iter_rows(min_row=2):
        updated = row[header.index("Status last updated")]
        assert updated.value is None or updated.is_date


def test_an_unknown_export_format_is_refused(cast, client_for):
    assert client_for(cast.site_admin).get("/portfolio/export/?format=pdf").status_code == 422


# --- lessons ------------------------------------------------------------------------------------


def test_lessons_are_searched_across_viewable_projects(cast, client_for):
    admin = cast.site_admin
    closed = ProjectFactory(key="CLOSED", name="Ledger", browsers=[admin])
    BusinessCase.objects.create(
        project=closed,
        theme="Productivity",
        close_out={
            "lessons": {
                "worked": "Parallel runs of the ledger.",
                "differently": "Book testers early.",
                "nextSponsor": "",
            }
        },
        closed_at=timezone.now(),
        realisation_lessons="Measure benefits per region.",
    )
    hidden = ProjectFactory(key="HIDDEN", name="Hidden")  # the admin cannot browse it
    BusinessCase.objects.create(
        project=hidden, close_out={"lessons": {"worked": "Secret ledger lesson."}}
    )
    client = client_for(admin)
    found = client.get("/api/v1/portfolio/lessons").json()
    assert sorted((e["kind"], e["text"]) for e in found) == [
        ("differently", "Book testers early."),
        ("realisation", "Measure benefits per region."),
        ("worked", "Parallel runs of the ledger."),
    ]
    assert [
        e["text"] for e in client.get("/api/v1/portfolio/lessons?q=LEDGER parallel").json()
    ] == ["Parallel runs of the ledger."]
    assert len(client.get("/api/v1/portfolio/lessons?q=closed").json()) == 3  # the key matches
    assert client.get("/api/v1/portfolio/lessons?kind=realisation").json()[0]["projectKey"] == (
        "CLOSED"
    )
    assert client.get("/api/v1/portfolio/lessons?kind=bogus").status_code == 422
    html = client.get("/portfolio/lessons/?q=testers").content.decode()
    assert "Book testers early." in html and "Parallel runs" not in html
    assert "1 of 3 lessons" in html
    assert "Secret" not in client.get("/portfolio/lessons/").content.decode()


def test_lessons_read_only_projects_holding_one_with_the_trackers_name(
    cast, client_for, callers_read
):
    """A realisation lesson alone is found, a case without lessons adds nothing, and a project
    the tracker renamed (the mirror not told yet) shows the tracker's name."""
    admin = cast.site_admin
    realised = ProjectFactory(key="REAL", name="Realised", browsers=[admin])
    BusinessCase.objects.create(project=realised, realisation_lessons="Count users monthly.")
    quiet = ProjectFactory(key="QUIET", name="Quiet", browsers=[admin])
    BusinessCase.objects.create(  # a close-out started: its lessons not written yet
        project=quiet,
        close_out={"lessons": {"worked": "", "differently": "", "nextSponsor": ""}},
        realisation_lessons="",
    )
    spoken = ProjectFactory(key="SPOKEN", name="Spoken", browsers=[admin])
    BusinessCase.objects.create(
        project=spoken, close_out={"lessons": {"worked": "", "nextSponsor": "Ask early."}}
    )
    LocalProject.objects.filter(key="REAL").update(name="Realised and renamed")
    found = client_for(admin).get("/api/v1/portfolio/lessons").json()
    assert sorted((e["projectKey"], e["projectName"], e["kind"]) for e in found) == [
        ("REAL", "Realised and renamed", "realisation"),
        ("SPOKEN", "Spoken", "nextSponsor"),
    ]
    assert sorted(callers_read) == ["REAL", "SPOKEN"]  # not QUIET
    LocalProject.objects.filter(key="REAL").delete()  # no longer browsable
    assert [e["projectKey"] for e in client_for(admin).get("/api/v1/portfolio/lessons").json()] == [
        "SPOKEN"
    ]


# --- query counts -------------------------------------------------------------------------------


def _populate(numbers, user, lead):
    with transaction.atomic(), signals.deferred_project_changes():  # derived once, at the end
        _make_projects(numbers, user, lead)


def _make_projects(numbers, user, lead):
    for n in numbers:
        project = make_project(
            f"Q{n:03d}",
            browsers=[user],
            lead=lead,
            theme=["Cost Out", "Strategic", ""][n % 3],
            cost_forecast=1000 + n * 10,
            risk_score=(n % 5 + 1, 3),
            scope_age=n % 40,
            overall=["Red", "Amber", "Green"][n % 3],
            stale=n % 4 == 0,
        )
        BusinessCase.objects.filter(project=project).update(
            close_out={"lessons": {"worked": f"Lesson {n}", "differently": "Plan earlier."}},
            realisation_lessons=f"Realised lesson {n}",
        )


def _count(client, url):
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(queries)


URLS = [
    "/portfolio/",
    "/portfolio/?group=theme&sort=-cost",
    "/portfolio/?rag=Red&dimension=scope",
    "/portfolio/export/?format=csv",
    "/portfolio/export/?format=xlsx",
    "/api/v1/portfolio",
    "/portfolio/lessons/?q=lesson",
    "/api/v1/portfolio/lessons",
]


@pytest.mark.parametrize("governance_group", [False, True])
def test_the_portfolio_runs_the_same_queries_at_3_and_60_projects(
    cast, client_for, governance_group
):
    if governance_group:
        user = UserFactory(username="pmo2")
        scripting.ensure_group(PMO_GROUP, members=["pmo2"])
        set_governance_group(PMO_GROUP)
    else:
        user = UserFactory(username="admin2", admin=True)
    lead = UserFactory(username="portfolio_lead")
    client = client_for(user)
    _populate(range(3), user, lead)
    assert len(rows(client)) == 3
    small = {url: _count(client, url) for url in URLS}
    _populate(range(3, 60), user, lead)
    assert len(rows(client)) == 60
    large = {url: _count(client, url) for url in URLS}
    assert large == small


def test_an_override_is_marked_even_when_it_equals_the_derived_value(admin_portfolio, client_for):
    client = client_for(admin_portfolio.site_admin)
    red = next(r for r in rows(client) if r["projectKey"] == "RED")
    assert red["overrides"]["costRag"] is None
    status = ProjectStatus.objects.get(project__key="RED")
    status.cost_rag_override = red["derived"]["costRag"]
    status.save()
    red = next(r for r in rows(client) if r["projectKey"] == "RED")
    assert red["overrides"]["costRag"] == red["derived"]["costRag"] == red["effective"]["costRag"]
    page = client.get("/portfolio/").content.decode()
    assert f"(override; derived {red['derived']['costRag']})" in page


def test_the_api_keeps_the_projects_in_exception_as_the_page_does(admin_portfolio, client_for):
    from governance.models import Project

    Project.objects.filter(key__in=["AMB", "RED"]).update(
        exception_opened_at=timezone.now() - dt.timedelta(days=3)
    )
    client = client_for(admin_portfolio.site_admin)
    everyone = ["ALPHA", "AMB", "BLU", "GRN", "RED"]
    assert keys(client) == everyone
    for query in ("?exception=1", "?exception=true", "?exception=1&sort=-key"):
        found = keys(client, query)
        assert sorted(found) == ["AMB", "RED"], query
        assert all(row["inException"] for row in rows(client, query)), query
    assert keys(client, "?exception=0") == everyone
    assert keys(client, "?exception=1&theme=Strategic") == []
    # The page's in-exception filter keeps the same projects.
    page = client.get("/portfolio/?exception=1").content.decode()
    assert "/projects/AMB/" in page and "/projects/RED/" in page
    assert "/projects/GRN/" not in page and "/projects/ALPHA/" not in page
