"""Ada, the site administrator, renames a theme in Portfolio settings; the business cases
with it take the new name, and the portfolio's theme filter offers the new name, not the old."""

import pytest
from playwright.sync_api import expect

from tests.browser.axe import assert_accessible
from tests.browser.test_issue11_words import sign_in_demo

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("screen", [(1440, 1000), (390, 844)], ids=["desktop", "phone"])
def test_ada_renames_a_theme_and_the_filter_follows(screen, demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size({"width": screen[0], "height": screen[1]})
    sign_in_demo(page, live_server, "ada")
    page.goto(f"{live_server.url}/portfolio/")
    select = page.get_by_label("Theme", exact=True)
    expect(select.locator("option", has_text="Cost Out")).to_have_count(1)

    page.goto(f"{live_server.url}/portfolio/settings/")
    name = page.locator("input[id$='-name'][value='Cost Out']")
    row = name.get_attribute("id")
    page.locator(f"#{row}").fill("Cost Efficiency")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#flash")).to_contain_text("Settings saved.")
    expect(page.locator(f"#{row}")).to_have_value("Cost Efficiency")
    assert_accessible(page, "Portfolio settings after a rename")

    page.goto(f"{live_server.url}/portfolio/")
    select = page.get_by_label("Theme", exact=True)
    expect(select.locator("option", has_text="Cost Efficiency")).to_have_count(1)
    expect(select.locator("option", has_text="Cost Out")).to_have_count(0)
    chosen = select.select_option("Cost Efficiency")
    page.get_by_role("button", name="Apply").click()
    # The filtered page has loaded (not the page the form was sent from) and keeps the choice.
    page.wait_for_url("**/portfolio/?*theme=*")
    expect(page.get_by_label("Theme", exact=True)).to_have_value(chosen[0])
    expect(page.locator("main")).to_contain_text("Cost Efficiency")
    assert page.evaluate("document.documentElement.scrollWidth") <= screen[0]
