"""In a real browser: a Project Lead updates the status and publishes a report; a PMO member
filters the portfolio."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from status.models import ProjectStatus, StatusReport
from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import (
    BusinessCaseFactory,
    ChangeRequestFactory,
    ProjectFactory,
    RiskFactory,
    WorkPackageFactory,
)

pytestmark = pytest.mark.browser
COST_SENTENCE = (
    "The forecast (EAC) EUR\u00a01,080 is 8% over the budget (not yet approved) of EUR\u00a01,000, "
    "above the Green line at 5%."
)


def test_lead_updates_status_and_publishes_a_report(cast, live_server, watched_page, sign_in):
    WorkPackageFactory(
        project=cast.project, name="Build", budget=Decimal(1000), budget_forecast=Decimal(1080)
    )
    page = watched_page
    page.on("dialog", lambda dialog: dialog.accept())
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/status/")
    cost = page.get_by_role("article").filter(has=page.get_by_role("heading", name="Cost"))
    expect(cost).to_contain_text(COST_SENTENCE)
    expect(cost).to_contain_text("Amber")

    # Escape closes the editor without saving.
    page.get_by_role("link", name="Update status").click()
    expect(page.get_by_label("Overall RAG")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_role("link", name="Update status")).to_be_visible()

    page.get_by_role("link", name="Update status").click()
    page.get_by_label("Overall RAG").select_option("Amber")
    page.get_by_label("Overall reason (one line, at most 120 characters)").fill(
        "Build costs running hot"
    )
    page.get_by_label("Cost override (derived: Amber)").select_option("Red")
    page.get_by_label("Cost commentary").fill("Integration invoices arrive early.")
    page.get_by_label("Key messages").fill("Build is 8 % over budget.")
    page.get_by_role("button", name="Save status").click()
    expect(page.get_by_role("status").filter(has_text="Status saved.")).to_be_visible()
    expect(cost).to_contain_text("Override")
    status = ProjectStatus.objects.get(project=cast.project)
    assert (status.overall_rag, status.cost_rag_override) == ("Amber", "Red")
    assert status.overall_reason == "Build costs running hot"

    page.get_by_label("New report title").fill("Week 12")
    page.get_by_role("button", name="Start a report").click()
    expect(page.get_by_role("heading", name="Draft: Week 12")).to_be_visible()
    expect(page.get_by_label("Key messages for this report")).to_have_value(
        "Build is 8 % over budget."
    )
    page.get_by_role("button", name="Publish report").click()
    expect(page.get_by_text("“Week 12” published.")).to_be_visible()
    expect(page.get_by_role("heading", name="RAG trend")).to_be_visible()
    report = StatusReport.objects.get()
    assert report.state == "Published"
    assert report.snapshot["status"]["effective"]["costRag"] == "Red"

    page.get_by_role("link", name="Week 12").click()
    expect(page.get_by_role("heading", name="Week 12")).to_be_visible()
    expect(page.get_by_text("This is the status as it was then")).to_be_visible()
    expect(page.get_by_text("Build is 8 % over budget.").first).to_be_visible()


def test_pmo_member_filters_the_portfolio(cast, live_server, watched_page, sign_in):
    set_governance_group(PMO_GROUP)
    now = timezone.now()
    for key, theme, forecast, scope_age in (
        ("RETAIL", "Revenue Growth", 1300, 40),
        ("LEDGER", "Cost Out", 1000, None),
        ("VAULT", "Cost Out", 1080, 2),
    ):
        project = ProjectFactory(key=key, name=f"{key.title()} programme", browsers=[cast.pmo])
        BusinessCaseFactory(project=project, theme=theme)
        WorkPackageFactory(project=project, budget=Decimal(1000), budget_forecast=Decimal(forecast))
        RiskFactory(project=project, impact=2, likelihood=2)
        if scope_age is not None:
            change = ChangeRequestFactory(project=project, dimensions=["Scope"])
            change.created_at = now - dt.timedelta(days=scope_age)
            change.save()

    page = watched_page
    sign_in(page, "pmo")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Portfolio").click()
    expect(page.get_by_role("heading", name="Portfolio", exact=True)).to_be_visible()
    table = page.locator("table.portfolio-table")
    expect(table.get_by_role("row")).to_have_count(5)  # header + ALPHA and three more

    page.get_by_label("Theme", exact=True).select_option("Cost Out")
    expect(table.get_by_role("row")).to_have_count(3)
    expect(table).to_contain_text("LEDGER")
    expect(table).to_contain_text("VAULT")
    expect(table).not_to_contain_text("RETAIL")
    assert "theme=Cost+Out" in page.url or "theme=Cost%20Out" in page.url

    page.get_by_label("Theme", exact=True).select_option("")
    expect(table.get_by_role("row")).to_have_count(5)
    page.get_by_label("RAG", exact=True).select_option("Red")
    page.get_by_label("RAG of").select_option("scope")
    expect(page.get_by_label("RAG of")).to_have_value("scope")
    expect(table.get_by_role("row")).to_have_count(2)
    expect(table).to_contain_text("RETAIL")

    page.get_by_role("link", name="Reset").click()
    expect(table.get_by_role("row")).to_have_count(5)
    expect(page.get_by_label("RAG", exact=True)).to_have_value("")
    page.get_by_role("link", name="Overrun").click()
    expect(page.get_by_role("columnheader", name="Overrun")).to_have_attribute(
        "aria-sort", "ascending"
    )
    page.get_by_role("link", name="Overrun").click()
    expect(page.get_by_role("columnheader", name="Overrun")).to_have_attribute(
        "aria-sort", "descending"
    )
    expect(table.get_by_role("row").nth(1)).to_contain_text("RETAIL")
    assert "sort=-overrun" in page.url
    page.get_by_role("link", name="1 with Cost Amber").click()
    expect(table.get_by_role("row")).to_have_count(2)
    expect(table).to_contain_text("VAULT")
    row = table.get_by_role("row").filter(has_text="VAULT")
    row.get_by_text("Why").click()
    expect(row).to_contain_text(COST_SENTENCE)
