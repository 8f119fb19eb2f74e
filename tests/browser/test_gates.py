"""In a real browser: the Project Lead opens the Stages tab, reads each criterion met or not
with the rows behind it and requests the gate review; the sponsor reads the end-stage report,
is refused a Go without naming the unmet criteria (what was typed is kept), names each with a
reason and goes through; the decision is listed. On a phone's width the page does not scroll
sideways; the decision form is reached with the keyboard."""

import pytest
from playwright.sync_api import expect

from gates.models import GateReview
from tests.gates_support import make_running, unmet_named

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def default_stages(db):
    """The site's default stages (a live server's flushed database loses the migration's)."""
    from gates.models import DefaultStage

    if not DefaultStage.objects.exists():
        for position, name in enumerate(["Initiation", "Design", "Build", "Transition"], 1):
            DefaultStage.objects.create(position=position, name=name)


def test_the_lead_requests_and_the_sponsor_decides(cast, live_server, watched_page, sign_in):
    make_running(cast)
    page = watched_page
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/")
    page.get_by_role("link", name="Stages").click()
    page.wait_for_load_state("load")
    expect(page.get_by_role("heading", name="Stage plan", exact=True)).to_be_visible()
    expect(page.locator(".criterion").first).to_be_visible()
    expect(page.locator("#frozen-because")).to_contain_text("approved change request")
    page.get_by_label("Lessons of the stage (in the report)").fill("Start the tests earlier.")
    page.get_by_role("button", name="Request the gate review").click()
    page.wait_for_load_state("load")
    expect(page.get_by_text("Gate review requested; the sponsor is notified")).to_be_visible()
    expect(page.get_by_role("button", name="Record the decision")).to_have_count(0)

    page.context.clear_cookies()
    sign_in(page, "sponsor")
    page.goto(f"{live_server.url}/projects/ALPHA/stages/")
    expect(page.get_by_text("Start the tests earlier.")).to_be_visible()
    page.get_by_label("Go: the next stage starts").check()
    page.get_by_label("Comment (the reason, when stopping the project)").fill("Onwards.")
    page.get_by_role("button", name="Record the decision").click()
    page.wait_for_load_state("load")
    expect(page.locator("#decision-errors")).to_contain_text("Not named")
    expect(page.get_by_label("Comment (the reason, when stopping the project)")).to_have_value(
        "Onwards."
    )
    # The refused decision answers 422, which the browser logs: expected here.
    page.problems[:] = [p for p in page.problems if "status of 422" not in p]
    boxes = page.locator(".unmet textarea")
    assert boxes.count() == len(unmet_named(cast))
    for index in range(boxes.count()):
        boxes.nth(index).fill("The board accepts it for now.")
    page.get_by_role("button", name="Record the decision").click()
    page.wait_for_load_state("load")
    expect(page.get_by_text("Decision recorded at the Initiation gate: Go.")).to_be_visible()
    expect(page.get_by_text("Initiation gate: Go", exact=True)).to_be_visible()
    assert GateReview.objects.get().outcome == "Go"


def test_the_gate_page_on_a_phone_and_with_the_keyboard(cast, live_server, watched_page, sign_in):
    from gates import services
    from tests.gates_support import caller

    make_running(cast)
    services.gate_review_request(caller=caller(cast, cast.lead), data={})
    page = watched_page
    page.set_viewport_size({"width": 390, "height": 844})
    sign_in(page, "sponsor")
    page.goto(f"{live_server.url}/projects/ALPHA/stages/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    page.get_by_label("Hold: come back on a date").focus()
    page.keyboard.press("Space")
    expect(page.get_by_label("Hold: come back on a date")).to_be_checked()
