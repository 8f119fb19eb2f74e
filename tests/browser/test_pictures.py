"""In a real browser: every picture draws under the CSP, a click on it leads on (a matrix cell
to the filtered register), its table opens in one click. Screenshots go to /tmp/uxb/."""

import datetime as dt
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import ProjectFactory, RiskFactory, WorkPackageFactory

pytestmark = pytest.mark.browser

SHOTS = Path("/tmp/uxb")


def shot(locator, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    locator.screenshot(path=str(SHOTS / name))


def risks(project):
    RiskFactory(project=project, title="Vendor exit", impact=4, likelihood=3)
    RiskFactory(project=project, title="Key engineer leaves", impact=4, likelihood=3)
    RiskFactory(
        project=project,
        title="Data loss",
        impact=5,
        likelihood=4,
        residual_impact=3,
        residual_likelihood=2,
    )
    RiskFactory(project=project, title="Late hardware", impact=2, likelihood=2)


def test_risk_matrix_cell_filters_the_register(cast, live_server, watched_page, sign_in):
    risks(cast.project)
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, "viewer")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/risks/")
    matrix = page.locator("#risk-matrix-inherent")
    expect(matrix.locator("svg")).to_be_visible()
    shot(page.locator(".pictures"), "risk-matrix-register.png")
    matrix.get_by_role(
        "link", name="2 risks with impact 4 and likelihood 3 (inherent score 12, medium)"
    ).click()
    expect(page.get_by_text("Only the open risks in the matrix cell")).to_be_visible()
    rows = page.locator("#risk-rows > tr:not(.empty-row)")
    expect(rows).to_have_count(2)
    expect(page.locator("#risk-rows")).not_to_contain_text("Data loss")
    assert "cell=inherent-4-3" in page.url
    # The table behind the picture, one click away.
    page.get_by_text("Show as a table").first.click()
    table = page.locator("#risk-matrix-inherent-table table")
    expect(table).to_be_visible()
    expect(table.get_by_role("row").nth(2)).to_contain_text("2")
    shot(page.locator("#risk-matrix-inherent"), "risk-matrix-table.png")


def test_status_page_and_portfolio_matrices(cast, live_server, watched_page, sign_in):
    set_governance_group(PMO_GROUP)
    risks(cast.project)
    beta = ProjectFactory(key="BETA", name="Beta", browsers=[cast.pmo])
    RiskFactory(project=beta, title="Beta risk", impact=4, likelihood=3)
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, "pmo")
    page.goto(f"{live_server.url}/projects/ALPHA/status/")
    expect(page.locator("#status-risk-matrix-residual svg")).to_be_visible()
    shot(page.locator("#status-risk-matrix-inherent").locator(".."), "risk-matrix-status.png")

    page.goto(f"{live_server.url}/portfolio/")
    matrix = page.locator("#portfolio-matrix-inherent")
    expect(matrix.locator("svg")).to_be_visible()
    shot(matrix.locator(".."), "risk-matrix-portfolio.png")
    matrix.get_by_role(
        "link", name="3 risks with impact 4 and likelihood 3 (inherent score 12, medium)"
    ).click()
    row_head = page.locator("#portfolio-matrix-inherent-cell-4-3")
    expect(row_head).to_be_visible()  # the fragment opens the table at that cell
    page.locator("#portfolio-matrix-inherent-table").get_by_role("link", name="BETA").click()
    assert "/projects/BETA/registers/risks/" in page.url and "cell=inherent-4-3" in page.url
    expect(page.locator("#risk-rows")).to_contain_text("Beta risk")


def packages(project):
    today = dt.date.today()
    day = lambda weeks: today + dt.timedelta(weeks=weeks)  # noqa: E731
    WorkPackageFactory(
        project=project,
        name="Discovery",
        status="Complete",
        planned_start_date=day(-20),
        planned_end_date=day(-14),
        forecast_start_date=day(-20),
        forecast_end_date=day(-14),
        actual_start_date=day(-20),
        actual_end_date=day(-14),
    )
    WorkPackageFactory(
        project=project,
        name="Build",
        status="In Progress",
        planned_start_date=day(-14),
        planned_end_date=day(4),
        forecast_start_date=day(-14),
        forecast_end_date=day(8),
        actual_start_date=day(-13),
    )
    WorkPackageFactory(
        project=project,
        name="Go-live",
        type="Milestone",
        planned_start_date=day(10),
        planned_end_date=day(10),
        forecast_start_date=day(12),
        forecast_end_date=day(12),
    )


def test_timeline_on_the_register_and_the_status_page(cast, live_server, watched_page, sign_in):
    packages(cast.project)
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, "viewer")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/")
    timeline = page.locator("#wp-timeline")
    expect(timeline.locator("svg")).to_be_visible()
    # The slip drawn is each package's schedule variance (its actual, else forecast, end
    # against its plan, registers.derive.package_schedule), as the register shows it:
    # Discovery ended on plan.
    expect(timeline.locator("text.slip-label")).to_have_text(["+28 d", "+14 d"])
    expect(timeline.locator("path.milestone")).to_have_count(1)
    expect(timeline.locator("line.today-line")).to_have_count(1)
    shot(timeline, "timeline-register.png")
    timeline.get_by_text("Show as a table").click()
    expect(timeline.get_by_role("table")).to_contain_text("28 days late")
    timeline.locator("svg").get_by_role("link").filter(has_text="Build").click()
    expect(page.get_by_role("heading", name="Build")).to_be_visible()

    page.goto(f"{live_server.url}/projects/ALPHA/status/")
    timeline = page.locator("#status-timeline")
    expect(timeline.locator("svg")).to_be_visible()
    shot(timeline, "timeline-status.png")


def test_rag_trend_and_budget_curve_on_the_status_page(cast, live_server, watched_page, sign_in):
    from decimal import Decimal

    from governance import permissions
    from status import services

    packages(cast.project)
    first = cast.project.work_packages.get(name="Build")
    first.budget, first.budget_forecast, first.budget_actual = 9000, 10500, 4000
    first.budget_baseline = Decimal(9000)
    first.save()
    caller = permissions.caller_for(cast.lead, cast.project)
    for title, rag in (("Week 1", "Green"), ("Week 2", "Amber"), ("Week 3", "Red")):
        services.status_update(caller=caller, data={"overallRag": rag})
        report = services.status_report_create(caller=caller, data={"title": title})
        services.status_report_publish(
            caller=caller, report_id=report.pk, expected_revision=report.revision
        )
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, "viewer")
    page.goto(f"{live_server.url}/projects/ALPHA/status/")
    trend = page.locator("#rag-trend")
    expect(trend.locator("svg")).to_be_visible()
    expect(trend.locator("circle.rag-fill")).to_have_count(3)
    shot(trend, "rag-trend.png")
    trend.get_by_role("link", name="Show as a table").click()
    assert page.url.endswith("#trend-table")
    budget = page.locator("#status-budget")
    expect(budget.locator("path.line")).to_have_count(3)
    shot(budget, "budget-curve.png")
    budget.get_by_text("Show as a table").click()
    expect(budget.get_by_role("table")).to_contain_text("12,500")  # with the other two


def test_portfolio_heat_map_and_scatter(cast, live_server, watched_page, sign_in):
    from charter.models import BusinessCase
    from status.models import ProjectStatus

    set_governance_group(PMO_GROUP)
    for key, overall, forecast, budget in (
        ("RETAIL", "Red", 1300, 1000),
        ("LEDGER", "Green", 980, 4000),
        ("VAULT", "Amber", 1080, 2500),
    ):
        project = ProjectFactory(key=key, name=f"{key.title()} programme", browsers=[cast.pmo])
        WorkPackageFactory(
            project=project,
            budget=budget,
            budget_forecast=forecast * budget / 1000,
            forecast_end_date=dt.date(2026, 7, 15),
        )
        ProjectStatus.objects.create(project=project, overall_rag=overall)
        BusinessCase.objects.create(project=project)
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, "pmo")
    page.goto(f"{live_server.url}/portfolio/")
    heat = page.locator("#portfolio-heat")
    expect(heat.locator("svg")).to_be_visible()
    shot(heat, "portfolio-heat-map.png")
    scatter = page.locator("#portfolio-scatter")
    expect(scatter.locator("svg")).to_be_visible()
    shot(scatter, "portfolio-scatter.png")
    shot(page.locator(".pictures"), "portfolio-pictures.png")
    # Filtering swaps the pictures with the rows.
    page.get_by_label("RAG", exact=True).select_option("Red")
    page.get_by_label("RAG of").select_option("overall")
    expect(heat.locator("svg a")).to_have_count(1)
    heat.get_by_text("Show as a table").click()
    expect(heat.get_by_role("table")).to_contain_text("RETAIL")
    heat.locator("svg a").first.click()
    expect(page).to_have_url(f"{live_server.url}/projects/RETAIL/status/")


def test_benefits_planned_against_realised(cast, live_server, watched_page, sign_in):
    from django.utils import timezone

    from charter.models import BusinessCase
    from charter.services import sync_mirror
    from tests.charter.conftest import complete_inputs

    lines = [
        {"year": 0, "cost": 250000, "benefit": 0},
        {"year": 1, "cost": 80000, "benefit": 150000},
        {"year": 2, "cost": 80000, "benefit": 600000},
        {"year": 3, "cost": 80000, "benefit": 700000},
    ]
    case, _ = BusinessCase.objects.update_or_create(
        project=cast.project,
        defaults={
            **complete_inputs(cast),
            "approval_status": "InRealisation",
            "financial_case": {"mode": "builtin", "builtin": {"lines": lines}},
            "approved_at": timezone.now() - dt.timedelta(days=400),
            "realisation_started_at": timezone.now() - dt.timedelta(days=30),
        },
    )
    sync_mirror(cast.project, case)
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/charter/realisation/")
    page.locator("summary", has_text="Record review").click()
    page.get_by_label("What you found").fill("Savings started in the second quarter.")
    page.get_by_label("Benefit realised so far").fill("120000")
    page.get_by_role("button", name="Record review").click()
    expect(page.get_by_text("Review recorded.")).to_be_visible()
    chart = page.locator("#benefits")
    expect(chart.locator("rect.series-realised")).to_have_count(1)
    shot(chart, "benefits.png")
    chart.get_by_text("Show as a table").click()
    expect(chart.get_by_role("table")).to_contain_text("120,000")


def test_the_timeline_follows_the_table_through_a_filter_and_a_delete(
    cast, live_server, watched_page, sign_in
):
    dates = {"planned_start_date": dt.date(2026, 1, 5), "planned_end_date": dt.date(2026, 3, 5)}
    WorkPackageFactory(project=cast.project, name="Redwood", rag="Red", **dates)
    WorkPackageFactory(project=cast.project, name="Greenfield", rag="Green", **dates)
    WorkPackageFactory(project=cast.project, name="Greenhouse", rag="Green", **dates)
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/")
    timeline = page.locator("#register-pictures #wp-timeline")
    expect(timeline).to_contain_text("Redwood")
    page.locator("#wp-filters").get_by_label("RAG").select_option("Green")
    expect(page.locator("#wp-rows")).not_to_contain_text("Redwood")
    expect(timeline).not_to_contain_text("Redwood")
    expect(timeline).to_contain_text("Greenhouse")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete Greenhouse").click()
    expect(page.locator("#wp-rows")).not_to_contain_text("Greenhouse")
    expect(timeline).not_to_contain_text("Greenhouse")
    expect(timeline).to_contain_text("Greenfield")
    expect(page.locator("#register-tabs")).to_contain_text("Work packages 2")
    # The totals under the table follow too.
    expect(page.locator("#wp-totals")).to_contain_text(
        "Total of the 1 work package shown by this filter"
    )
    shot(page.locator("#register-pictures"), "timeline-after-delete.png")
