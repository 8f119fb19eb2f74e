"""Sofia works her queue in a real browser, on a desktop and on a phone: the changes she can
decide have Approve and Reject on their row; rejecting without a reason is refused on the
row; approving (by keyboard) keeps her on the queue with a notice and the row gone; the
changes of frozen projects say why they cannot be decided; on a phone the rows are cards and
the page does not scroll sideways."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.axe import assert_accessible
from tests.browser.test_issue11_words import shot, sign_in_demo

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": (1440, 1000), "phone": (390, 844)}


@pytest.mark.parametrize("screen", list(VIEWPORTS))
def test_sofia_approves_from_the_row(screen, demo, live_server, watched_page):
    page = watched_page
    width, height = VIEWPORTS[screen]
    page.set_viewport_size({"width": width, "height": height})
    sign_in_demo(page, live_server, "sofia")
    page.goto(f"{live_server.url}/waiting/")
    rows = page.locator("#changes-h + ul.queue > li.queue-item")
    count = rows.count()
    assert count >= 2, "the demo has changes Sofia can decide"
    held = page.locator("ul.queue-held > li")
    assert held.count() >= 1
    expect(held.first).to_contain_text("frozen")
    expect(held.first).to_contain_text("Nothing is asked of you")
    expect(held.first.get_by_role("button")).to_have_count(0)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.locator("main table").count() == 0
    assert_accessible(page, f"Waiting for me ({screen})")

    # Reject without a reason: refused on the row, the reason field marked and focused.
    first = rows.first
    summary = first.locator("p").nth(1).inner_text()
    first.locator("summary", has_text="Reject").click()
    first.get_by_role("button", name="Reject", exact=True).click()
    expect(first.get_by_role("alert")).to_contain_text("A reason is required to reject")
    reason = first.get_by_label("Reason for rejecting (required)")
    expect(reason).to_have_attribute("aria-invalid", "true")
    expect(reason).to_be_focused()
    expect(rows).to_have_count(count)
    page.problems[:] = [p for p in page.problems if "status of 422" not in p]  # the refusal

    # Approve from the row with the keyboard: still on the queue, a notice, the row gone.
    approve = first.get_by_role("button", name=re.compile("^Approve"))
    approve.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#flash")).to_contain_text(f"“{summary}” approved.")
    expect(rows).to_have_count(count - 1)
    expect(page.locator("#queue-h")).to_be_focused()
    assert page.url == f"{live_server.url}/waiting/"
    expect(page.locator("#changes-h + ul.queue")).not_to_contain_text(summary)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    shot(page, f"waiting-queue-{screen}")  # last: a full-page screenshot leaves styles behind
