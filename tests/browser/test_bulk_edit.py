"""Bulk edit in a real browser, on a desktop and on a phone: the Project Lead ticks three work
packages, the bulk bar appears and says how many, she sets their status and sees the toast and
the rows changed; a refused edit names the row and the field and writes nothing; "tick every
package on this page" ticks them all; the totals sit under the table; a viewer sees no ticks
and no bar."""

import pytest
from playwright.sync_api import expect

from governance.formatting import money
from registers.models import WorkPackage
from tests.browser.axe import assert_accessible
from tests.factories import WorkPackageFactory

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844)}


def packages(cast):
    return [
        WorkPackageFactory(project=cast.project, name=f"Package {n}", progress=40) for n in range(4)
    ]


@pytest.mark.parametrize("screen", list(VIEWPORTS))
def test_the_lead_sets_the_status_of_three_packages(
    screen, cast, live_server, watched_page, sign_in
):
    wps = packages(cast)
    page = watched_page
    width, height = VIEWPORTS[screen]
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/accounts/login/", timeout=60_000)  # the server's first answer
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/")
    bar = page.locator("#wp-bulk-form")
    expect(bar).to_be_hidden()  # nothing ticked yet
    foot = page.locator("table.wp-register tfoot")
    expect(foot).to_contain_text("Total of all 4 work packages")
    expect(foot).to_contain_text(money(sum(wp.budget for wp in wps)))

    for wp in wps[:3]:
        page.get_by_label(f"Select {wp.name}", exact=True).check()
    expect(bar).to_be_visible()
    expect(bar).to_contain_text("3 work packages ticked")
    assert_accessible(page, f"Work packages with the bulk bar ({screen})")

    # By keyboard: the bar's Status, then Apply.
    status = bar.get_by_label("Status")
    status.focus()
    status.select_option("In Progress")
    page.keyboard.press("Tab")  # Owner
    page.keyboard.press("Tab")  # RAG
    page.keyboard.press("Tab")  # Apply
    expect(bar.get_by_role("button", name="Apply to ticked rows")).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.locator("#flash")).to_contain_text("Changed 3 work packages: Status In Progress.")
    for wp in wps[:3]:
        expect(page.locator(f"#wp-{wp.pk}")).to_contain_text("In Progress")
    expect(page.locator(f"#wp-{wps[3].pk}")).to_contain_text("Not Started")
    expect(page.locator("#wp-bulk-form")).to_be_hidden()  # the ticks are gone with the edit
    assert set(
        WorkPackage.objects.filter(pk__in=[w.pk for w in wps[:3]]).values_list("status", flat=True)
    ) == {"In Progress"}
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_a_refused_bulk_edit_names_the_row_and_writes_nothing(
    cast, live_server, watched_page, sign_in
):
    packages(cast)
    page = watched_page
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/")
    page.get_by_label("Tick every work package on this page").check()
    bar = page.locator("#wp-bulk-form")
    expect(bar).to_contain_text("4 work packages ticked")
    bar.get_by_label("Status").select_option("Complete")
    bar.get_by_role("button", name="Apply to ticked rows").click()
    alert = page.locator("#wp-bulk-form .bulk-refused")
    expect(alert).to_contain_text("Nothing was changed: 4 of the 4 selected work packages")
    expect(alert).to_contain_text("Package 0: Progress: A Complete work package has progress 100.")
    page.problems[:] = [p for p in page.problems if "status of 422" not in p]
    expect(page.get_by_label("Select Package 2", exact=True)).to_be_checked()  # still ticked
    assert not WorkPackage.objects.filter(status="Complete").exists()


def test_a_viewer_sees_no_ticks_and_no_bar(cast, live_server, watched_page, sign_in):
    packages(cast)
    page = watched_page
    sign_in(page, "viewer")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/")
    expect(page.locator("table.wp-register tbody tr[data-id]")).to_have_count(4)
    expect(page.get_by_role("checkbox")).to_have_count(0)
    expect(page.locator("#wp-bulk-form")).to_have_count(0)
    expect(page.locator("table.wp-register tfoot")).to_contain_text("Total of all 4 work packages")
