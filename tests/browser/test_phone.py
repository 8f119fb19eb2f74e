"""On a phone (390 px wide): no page scrolls sideways, a register is a column of cards, and the
top bar collapses to a Menu button."""

import pytest
from playwright.sync_api import expect

from tests.browser.axe import assert_accessible

pytestmark = pytest.mark.browser

PAGES = [
    "/",
    "/waiting/",
    "/profile/",
    "/projects/BRIDGE/",
    "/projects/BRIDGE/audit/",
    "/projects/BRIDGE/editors/",
    "/projects/BRIDGE/registers/work-packages/",
    "/projects/BRIDGE/registers/risks/",
    "/projects/BRIDGE/registers/decisions/",
    "/projects/BRIDGE/registers/changes/",
    "/projects/BRIDGE/charter/",
    "/projects/BRIDGE/charter/minutes/",
    "/projects/BRIDGE/status/",
    "/projects/CEDAR/charter/closeout/",
    "/projects/EMBER/charter/realisation/",
    "/portfolio/",
    "/portfolio/lessons/",
]


def test_phone_pages_do_not_scroll_sideways(demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("lena")
    page.get_by_label("Password").fill("governance-demo")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/")

    # The top bar is a Menu button; it opens and closes the navigation.
    menu = page.get_by_role("button", name="Menu")
    nav = page.get_by_role("navigation", name="Main")
    expect(menu).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(nav).to_be_hidden()
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(nav.get_by_role("link", name="Waiting for me")).to_be_visible()
    assert_accessible(page, "the open menu on a phone")
    page.screenshot(path="/tmp/uxc/14-phone-menu-open.png")
    page.keyboard.press("Tab")
    page.keyboard.press("Escape")
    expect(nav).to_be_hidden()
    expect(menu).to_be_focused()

    for path in PAGES:
        page.goto(f"{live_server.url}{path}")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{path} is {width}px wide on a 390px phone"
        assert_accessible(page, f"{path} on a phone")

    # A register is a column of cards on a phone: nothing in it scrolls sideways.
    page.goto(f"{live_server.url}/projects/BRIDGE/registers/work-packages/")
    box = page.locator(".register-table")
    assert box.evaluate("e => e.scrollWidth <= e.clientWidth")
    row = page.locator("table.register tbody tr[data-href]").first
    assert row.evaluate("e => getComputedStyle(e).display") == "grid"
    page.screenshot(path="/tmp/uxc/14-phone-register.png", full_page=True)
    page.goto(f"{live_server.url}/projects/BRIDGE/status/")
    page.screenshot(path="/tmp/uxc/14-phone-status.png", full_page=True)

    # A draft's yearly cash flows fit: every year's cost and benefit in view.
    page.goto(f"{live_server.url}/projects/ORCHID/charter/")
    flows = page.locator("table.cashflows")
    assert flows.evaluate("e => e.getBoundingClientRect().right") <= 390
    for cell in page.locator("table.cashflows input").all():
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    flows.screenshot(path="/tmp/uxc/14-phone-cashflows.png")


def test_wide_screen_keeps_the_full_top_bar(demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("lena")
    page.get_by_label("Password").fill("governance-demo")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.get_by_role("button", name="Menu")).to_be_hidden()
    expect(
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Portfolio")
    ).to_be_visible()


def test_the_sponsors_open_approval_panel_scrolls_its_plan_not_the_page(
    demo, live_server, watched_page
):
    page = watched_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("sofia")
    page.get_by_label("Password").fill("governance-demo")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/projects/APOLLO/charter/")
    page.locator("summary", has_text="Approve").first.click()
    plan = page.get_by_role("region", name="The plan you freeze (scrolls sideways)")
    expect(plan).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the open approval panel makes the page {width}px wide"
    assert_accessible(page, "the open approval panel on a phone")
