"""The registers in a real browser: inline edit and save of a work package, an inline
validation error, a viewer without edit controls, keyboard and mouse reordering, adding and
deleting, and deciding a change."""

import re

import pytest
from playwright.sync_api import expect

from registers.models import ChangeRequest, WorkPackage
from tests.factories import ChangeRequestFactory, WorkPackageFactory

pytestmark = pytest.mark.browser


def open_register(page, live_server, register="work-packages"):
    page.goto(f"{live_server.url}/projects/ALPHA/registers/{register}/")


def expected_refusal(page, status: int) -> None:
    """The browser logs a refused request (4xx) as a console error: drop exactly that one."""
    page.problems[:] = [p for p in page.problems if f"status of {status}" not in p]


def test_inline_edit_and_save_of_a_work_package(cast, live_server, watched_page, sign_in):
    wp = WorkPackageFactory(project=cast.project, name="Build the portal")
    page = watched_page
    sign_in(page, "editor")
    open_register(page, live_server)
    row = page.locator(f"#wp-{wp.pk}")
    row.get_by_role("link", name="Edit Build the portal").click()
    editor = page.locator(f"#wp-{wp.pk}.editing")
    name = editor.get_by_label("Name")
    expect(name).to_be_focused()
    name.fill("Build the customer portal")
    editor.get_by_label("Status", exact=True).select_option("In Progress")
    editor.get_by_label("Progress").select_option("40")
    name.press("Enter")  # Enter saves
    row = page.locator(f"#wp-{wp.pk}")
    expect(row.get_by_role("link", name="Build the customer portal", exact=True)).to_be_visible()
    expect(row).to_contain_text("In Progress")
    expect(row).to_contain_text("40%")
    # The pictures drawn again with the saved row stay whole, outside the table (record 0310).
    expect(page.locator("#wp-rows table, #wp-rows svg")).to_have_count(0)
    expect(page.locator("#wp-rows > tr")).to_have_count(2)  # the row and the hidden empty row
    expect(page.locator("#register-pictures figure table")).to_have_count(2)
    wp.refresh_from_db()
    assert (wp.name, wp.status, wp.progress, wp.revision) == (
        "Build the customer portal",
        "In Progress",
        40,
        2,
    )


def test_inline_validation_error_stays_in_the_row(cast, live_server, watched_page, sign_in):
    wp = WorkPackageFactory(project=cast.project, name="Migrate data")
    page = watched_page
    sign_in(page, "lead")
    open_register(page, live_server)
    page.locator(f"#wp-{wp.pk}").get_by_role("link", name="Edit Migrate data").click()
    editor = page.locator(f"#wp-{wp.pk}.editing")
    editor.get_by_label("Status", exact=True).select_option("Complete")
    editor.get_by_label("Progress").select_option("50")
    editor.get_by_role("button", name="Save").click()
    row = page.locator(f"#wp-{wp.pk}")
    expect(row.get_by_role("alert")).to_contain_text("This was not saved")
    expect(row).to_contain_text("A Complete work package has progress 100.")
    progress = row.get_by_label("Progress")
    expect(progress).to_have_attribute("aria-invalid", "true")
    expect(progress).to_be_focused()
    expected_refusal(page, 422)
    progress.press("Escape")  # Escape cancels: the stored row comes back
    expect(
        page.locator(f"#wp-{wp.pk}").get_by_role("link", name="Migrate data", exact=True)
    ).to_be_visible()
    expect(page.locator(f"#wp-{wp.pk}")).to_contain_text("Not Started")
    wp.refresh_from_db()
    assert (wp.status, wp.revision) == ("Not Started", 1)


def test_viewer_sees_no_edit_controls_and_a_row_click_opens_the_detail(
    cast, live_server, watched_page, sign_in
):
    wp = WorkPackageFactory(project=cast.project, name="Train the users", commentary="Two waves")
    ChangeRequestFactory(project=cast.project, summary="Extra training day")
    page = watched_page
    sign_in(page, "viewer")
    for register in ("work-packages", "risks", "decisions", "changes"):
        open_register(page, live_server, register)
        expect(page.get_by_role("heading", level=2).first).to_be_visible()
        for name in ("Edit", "Delete", "Decide", "Withdraw", "Add note", "Record decision"):
            expect(page.get_by_role("button", name=re.compile(f"^{name}"))).to_have_count(0)
            expect(page.get_by_role("link", name=re.compile(f"^{name}"))).to_have_count(0)
        expect(page.get_by_role("link", name=re.compile("^Add "))).to_have_count(0)
        expect(page.get_by_role("link", name="CSV")).to_be_visible()
    open_register(page, live_server)
    page.locator(f"#wp-{wp.pk} td").nth(2).click()  # a plain cell, not the name link
    page.wait_for_url(f"{live_server.url}/projects/ALPHA/registers/work-packages/{wp.pk}/")
    expect(page.get_by_role("heading", name="Train the users")).to_be_visible()
    expect(page.get_by_text("Two waves")).to_be_visible()
    expect(page.get_by_role("link", name="Edit in the register")).to_have_count(0)


def test_reorder_with_the_keyboard_and_the_mouse(cast, live_server, watched_page, sign_in):
    for name in ("Alpha", "Bravo", "Charlie"):
        WorkPackageFactory(project=cast.project, name=name)
    page = watched_page
    sign_in(page, "lead")
    open_register(page, live_server)
    names = page.locator("#wp-rows th[scope=row] a")
    page.get_by_role("button", name="Move Charlie up").focus()
    page.keyboard.press("Enter")
    expect(names).to_have_text(["Alpha", "Charlie", "Bravo"])
    expect(page.get_by_role("button", name="Move Charlie up")).to_be_focused()
    page.keyboard.press("Enter")
    expect(names).to_have_text(["Charlie", "Alpha", "Bravo"])
    bravo = page.locator("#wp-rows tr", has_text="Bravo")
    charlie = page.locator("#wp-rows tr", has_text="Charlie")
    bravo.locator(".drag-handle").hover()
    page.mouse.down()
    box = charlie.bounding_box()
    page.mouse.move(box["x"] + 20, box["y"] + 5, steps=5)
    with page.expect_response(lambda r: r.url.endswith("/work-packages/reorder/")) as reorder:
        page.mouse.up()
    assert reorder.value.status == 200
    expect(names).to_have_text(["Bravo", "Charlie", "Alpha"])
    stored = list(
        WorkPackage.objects.filter(project=cast.project)
        .order_by("sort_order")
        .values_list("name", flat=True)
    )
    assert stored == ["Bravo", "Charlie", "Alpha"]


def test_add_a_row_and_delete_it_after_confirming(cast, live_server, watched_page, sign_in):
    page = watched_page
    sign_in(page, "lead")
    open_register(page, live_server, "risks")
    expect(page.get_by_text("No risks or opportunities yet.")).to_be_visible()
    page.get_by_role("link", name="Add risk").click()
    editor = page.locator("#risk-new")
    editor.get_by_label("Title").fill("Vendor insolvency")
    editor.get_by_label("Impact", exact=True).select_option("5")
    editor.get_by_label("Likelihood", exact=True).select_option("3")
    editor.get_by_label("Title").press("Enter")
    row = page.locator("#risk-rows tr", has_text="Vendor insolvency")
    # Inherent 15 and, no residual assessed, the residual score as inherent: both Red.
    expect(row.locator(".heat-red")).to_have_text(["15", "15"])
    expect(page.locator("#register-tabs")).to_contain_text(re.compile(r"Risks\s*1"))
    expect(page.get_by_text("No risks or opportunities yet.")).to_be_hidden()
    # The matrices drawn again with the new row stay whole, outside the table.
    expect(page.locator("#risk-rows table, #risk-rows svg")).to_have_count(0)
    expect(page.locator("#register-pictures svg")).to_have_count(2)
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Delete Vendor insolvency").click()
    expect(row).to_have_count(0)
    expect(page.locator("#register-tabs")).to_contain_text(re.compile(r"Risks\s*0"))


def test_an_approval_moves_the_approved_variations_above_the_table(
    cast, live_server, watched_page, sign_in
):
    change = ChangeRequestFactory(
        project=cast.project,
        summary="Two more weeks",
        impact_schedule_days=14,
        dimensions=["Schedule"],
    )
    page = watched_page
    sign_in(page, "sponsor")
    open_register(page, live_server, "changes")
    line = page.locator("#change-variations")
    expect(line).to_contain_text("leave the schedule as it is")
    page.get_by_role("link", name="Decide Two more weeks").click()
    page.get_by_role("button", name="Approve").click()
    expect(page.locator(f"#change-{change.pk}")).to_contain_text("Approved")
    expect(line).to_contain_text("add 14 days to the schedule")


def test_sponsor_rejects_a_change_only_with_a_reason(cast, live_server, watched_page, sign_in):
    change = ChangeRequestFactory(project=cast.project, summary="Gold plating")
    page = watched_page
    sign_in(page, "sponsor")
    open_register(page, live_server, "changes")
    page.get_by_role("link", name="Decide Gold plating").click()
    page.get_by_role("button", name="Reject").click()
    expect(page.get_by_text("A reason is required to reject a change.")).to_be_visible()
    expected_refusal(page, 422)
    page.get_by_label(re.compile("^Comment")).fill("No measurable benefit.")
    page.get_by_role("button", name="Reject").click()
    row = page.locator(f"#change-{change.pk}")
    expect(row).to_contain_text("Rejected")
    assert ChangeRequest.objects.get().decision_comment == "No measurable benefit."
