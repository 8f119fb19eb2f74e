"""In a real browser, as a Project Lead: My projects says what waits for whom and keeps only
her projects on request; on a phone each project is a card, not a side-scrolling row; the
overview's cards read on a phone too."""

import pytest
from playwright.sync_api import expect

from tests.browser.axe import assert_accessible
from tests.factories import DecisionFactory, ProjectFactory

pytestmark = pytest.mark.browser


def test_lead_reads_her_week_and_keeps_only_her_projects(cast, live_server, watched_page, sign_in):
    DecisionFactory(project=cast.project)
    ProjectFactory(key="BETA", name="Beta read only", browsers=[cast.lead])
    page = watched_page
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/")
    table = page.get_by_role("table", name="Projects you can view")
    expect(table.get_by_role("link", name="Alpha programme")).to_be_visible()
    expect(table.get_by_role("link", name="Beta read only")).to_be_visible()
    expect(table.get_by_role("link", name="1 decision pending")).to_be_visible()
    assert_accessible(page, "My projects")

    page.get_by_label("Mine only").check()
    page.get_by_role("button", name="Find").click()
    expect(page).to_have_url(f"{live_server.url}/?q=&mine=1")
    expect(table.get_by_role("link", name="Alpha programme")).to_be_visible()
    expect(table.get_by_role("link", name="Beta read only")).to_have_count(0)

    table.get_by_role("link", name="1 decision pending").click()
    expect(page).to_have_url(f"{live_server.url}/projects/ALPHA/registers/decisions/?state=Pending")


def test_on_a_phone_each_project_is_a_card(cast, live_server, watched_page, sign_in):
    page = watched_page
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, "lead")
    for path in ("/", "/projects/ALPHA/"):
        page.goto(f"{live_server.url}{path}")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{path} is {width}px wide on a 390px phone"
    page.goto(f"{live_server.url}/")
    row = page.locator("table.week tbody tr").first
    assert row.evaluate("tr => getComputedStyle(tr).display") == "block"
    # The column headings stay for screen readers, out of sight (each cell names its own).
    assert page.locator("table.week thead").bounding_box()["height"] <= 1
    assert_accessible(page, "My projects on a phone")
