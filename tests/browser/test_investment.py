"""In a real browser, as a governor: the scenario page at 1280 and at 390 px (no sideways
scroll), the cut-line in words; by keyboard, a proposal moved across the line (the preview)
and the board's choice recorded with its minutes after the confirmation; the pages pass axe
(WCAG 2.2 AA) and log no console error."""

import pytest
from playwright.sync_api import expect

from investment import services
from investment.models import PortfolioDecision
from tests.browser.axe import assert_accessible
from tests.conftest import PMO_GROUP, set_governance_group
from tests.investment.conftest import criterion, three_proposals

pytestmark = pytest.mark.browser


@pytest.fixture
def scenario(cast):
    set_governance_group(PMO_GROUP)
    services.model_version_create(
        user=cast.site_admin,
        data={"why": "The first model", "criteria": [criterion("strategy", weight=3)]},
    )
    three_proposals(cast)
    made = services.scenario_create(
        user=cast.pmo, data={"name": "Plan", "budgetByYear": {"2027": 100, "2028": 40}}
    )
    services.scenario_create(user=cast.pmo, data={"name": "Wide", "budgetTotal": 1000})
    return made


def test_the_scenario_page_by_keyboard(cast, live_server, watched_page, sign_in, scenario):
    page = watched_page
    page.set_viewport_size({"width": 1280, "height": 900})
    sign_in(page, "pmo")
    url = f"{live_server.url}/investment/scenarios/{scenario.pk}/"
    page.goto(url)
    expect(page.get_by_role("heading", name="Scenario Plan")).to_be_visible()
    expect(page.locator("tr.cut-line")).to_contain_text("the budget runs out here")
    assert_accessible(page, "the scenario page")
    page.evaluate("document.querySelectorAll('main details').forEach(d => d.open = true)")
    assert_accessible(page, "the scenario page (every form opened)")
    page.goto(url)
    # Move CCC above the line, by keyboard.
    page.locator('a[href="?move=CCC#move"]').focus()
    page.keyboard.press("Enter")
    page.wait_for_load_state("load")
    expect(page.get_by_role("heading", name="If CCC moved above the line")).to_be_visible()
    assert_accessible(page, "the move preview")
    page.get_by_role("link", name="Back to the scenario").last.focus()
    page.keyboard.press("Enter")
    page.wait_for_load_state("load")
    expect(page.locator("#move")).to_have_count(0)
    # Choose, with the minutes, by keyboard.
    page.locator("#choose summary").focus()
    page.keyboard.press("Enter")
    page.get_by_label("Minutes of the board's meeting (title)").focus()
    page.keyboard.type("Board of 12 March")
    page.keyboard.press("Enter")
    page.wait_for_load_state("load")
    expect(page.locator("#confirm")).to_contain_text("Confirm the board's choice")
    page.get_by_role("button", name="Yes, record the choice").focus()
    page.keyboard.press("Enter")
    page.wait_for_load_state("load")
    expect(page.locator("#chosen")).to_contain_text("The board chose this scenario")
    assert PortfolioDecision.objects.get().minutes_ref == {"title": "Board of 12 March"}
    page.goto(f"{live_server.url}/investment/scenarios/")
    assert_accessible(page, "the scenarios")
    page.get_by_label("Compare Plan").check()
    page.get_by_label("Compare Wide").check()
    page.get_by_role("button", name="Compare the ticked scenarios").click()
    page.wait_for_load_state("load")
    expect(page.get_by_role("heading", name="Above the line in each")).to_be_visible()
    assert_accessible(page, "the comparison")
    assert page.problems == []


def test_the_scenario_page_on_a_phone(cast, live_server, watched_page, sign_in, scenario):
    page = watched_page
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, "pmo")
    for path in ("", "?move=CCC"):
        page.goto(f"{live_server.url}/investment/scenarios/{scenario.pk}/{path}")
        expect(page.locator("tr.cut-line")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
    assert_accessible(page, "the move preview on a phone")
    assert page.problems == []
