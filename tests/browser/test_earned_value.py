"""In a real browser: the Project Lead reads the project's earned value on the status page (the
figures, a formula reached by keyboard, the reading in words, the chart and its table); a PMO
member sorts the portfolio by CPI. The project is the fence of tests/status/test_earned_value.py
(Rita Mulcahy, PMP Exam Prep, 6th edition, "The Fence #1")."""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from portfolio.models import PortfolioColumns
from tests.conftest import PMO_GROUP, set_governance_group
from tests.status.test_earned_value_surfaces import build_fence

pytestmark = pytest.mark.browser


def test_the_status_page_and_the_portfolio_show_earned_value(
    cast, live_server, watched_page, sign_in
):
    build_fence(cast.project, timezone.localdate())
    page = watched_page
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/status/")
    section = page.get_by_role("region", name="Earned value")
    expect(section).to_be_visible()
    expect(section.locator("#ev-cpi")).to_contain_text("0.89")
    expect(section.locator("#ev-cpi")).to_contain_text(
        "For each 1.00 spent, 0.89 of planned work done."
    )
    expect(section.locator("#ev-spi")).to_contain_text("0.83")
    expect(section.locator("#ev-costPerformanceEstimate")).to_contain_text("4,480")
    expect(section.locator("#ev-tcpi")).to_contain_text("1.25")

    # The formula: on the abbreviation's title, reached by keyboard, and named to assistive
    # technology.
    cpi = section.locator("abbr.formula", has_text="CPI").first
    expect(cpi).to_have_attribute("title", "CPI = EV \u00f7 AC")
    cpi.focus()
    expect(cpi).to_be_focused()
    expect(cpi).to_have_accessible_description("CPI = EV \u00f7 AC")

    # The chart: drawn, with its text alternative and its table.
    chart = section.locator("figure#earned-value")
    expect(chart.locator("svg")).to_be_visible()
    expect(chart.locator("svg title")).to_have_text(
        "Planned value, earned value and actual cost (cumulative)"
    )
    chart.get_by_text("Show as a table").click()
    table = chart.get_by_role("table")
    expect(table).to_be_visible()
    expect(table).to_contain_text("Earned value")
    expect(table).to_contain_text("2,500")

    # A PMO member sorts the portfolio by CPI.
    set_governance_group(PMO_GROUP)
    PortfolioColumns.objects.create(user=cast.pmo, columns=["project", "cpi", "spi"])
    page.context.clear_cookies()
    sign_in(page, "pmo")
    page.goto(f"{live_server.url}/portfolio/")
    page.get_by_role("link", name="CPI", exact=True).click()
    expect(page).to_have_url(re.compile(r"[?&]sort=cpi(&|$)"))
    row = page.get_by_role("row").filter(has_text="ALPHA")
    expect(row.get_by_role("cell", name="0.89")).to_have_attribute(
        "title", "For each 1.00 spent, 0.89 of planned work done."
    )
    expect(row.get_by_role("cell", name="0.83")).to_be_visible()
    expect(page.locator("#portfolio-cpi")).to_contain_text("0.89")
