"""Inline edit says what happened: a saved row shows "Saved", is highlighted and has the
keyboard; a delete is confirmed by name, says what was deleted and offers Undo where the
register can rebuild the record."""

import re

import pytest
from playwright.sync_api import expect

from registers.models import Risk, WorkPackage
from tests.browser.axe import assert_accessible
from tests.factories import RiskFactory, WorkPackageFactory

pytestmark = pytest.mark.browser


def test_saved_row_is_confirmed_highlighted_and_focused(cast, live_server, watched_page, sign_in):
    wp = WorkPackageFactory(project=cast.project, name="Build the portal")
    page = watched_page
    sign_in(page, "editor")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/")
    page.locator(f"#wp-{wp.pk}").get_by_role("link", name="Edit Build the portal").click()
    name = page.locator(f"#wp-{wp.pk}.editing").get_by_label("Name")
    name.fill("Build the customer portal")
    name.press("Enter")
    row = page.locator(f"#wp-{wp.pk}")
    expect(row.get_by_role("status")).to_have_text("Saved")
    expect(row).to_have_class(re.compile(r"\bsaved\b"))
    expect(row).to_be_focused()
    assert_accessible(page, "a saved row")
    page.screenshot(path="/tmp/uxc/15-saved-row.png")
    # The confirmation is brief: it goes, the row stays.
    expect(row.get_by_role("status")).to_have_count(0, timeout=8000)
    expect(row).not_to_have_class(re.compile(r"\bsaved\b"))
    # The keyboard carries on from the row: Tab reaches the row's own controls.
    page.keyboard.press("Tab")
    focused = page.evaluate("() => document.activeElement.closest('tr')?.id")
    assert focused == f"wp-{wp.pk}"


def test_delete_confirms_says_what_and_undoes(cast, live_server, watched_page, sign_in):
    risk = RiskFactory(
        project=cast.project,
        title="Vendor insolvency",
        description="The vendor may fold",
        impact=4,
        likelihood=3,
    )
    page = watched_page
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/risks/")
    asked = []

    def answer(dialog):
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", answer)
    page.get_by_role("button", name="Delete Vendor insolvency").click()
    expect(page.locator(f"#risk-{risk.pk}")).to_have_count(0)
    assert "Vendor insolvency" in asked[0]
    notice = page.locator("#flash .notice")
    expect(notice).to_contain_text("Deleted the risk “Vendor insolvency”.")
    expect(notice).to_be_focused()
    assert_accessible(page, "the deleted notice")
    page.screenshot(path="/tmp/uxc/15-deleted-undo.png")
    assert not Risk.objects.exists()

    notice.get_by_role("button", name="Undo").click()
    expect(page.locator("#flash")).to_contain_text("Restored the risk “Vendor insolvency”.")
    restored = Risk.objects.get()
    assert (restored.title, restored.description, restored.impact, restored.likelihood) == (
        "Vendor insolvency",
        "The vendor may fold",
        4,
        3,
    )
    expect(page.locator(f"#risk-{restored.pk}")).to_be_visible()
    assert page.url.endswith(f"#risk-{restored.pk}")

    # Work packages cannot be rebuilt (linked issues, baselines): no Undo is offered.
    wp = WorkPackageFactory(project=cast.project, name="Old stream")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete Old stream").click()
    expect(page.locator("#flash")).to_contain_text("Deleted the work package “Old stream”.")
    expect(page.locator("#flash").get_by_role("button", name="Undo")).to_have_count(0)
    assert not WorkPackage.objects.filter(pk=wp.pk).exists()


def test_print_hides_the_page_furniture(cast, live_server, watched_page, sign_in):
    """The browser's print of the business case reads as a board paper: no navigation,
    forms or buttons."""
    page = watched_page
    sign_in(page, "viewer")
    page.goto(f"{live_server.url}/projects/ALPHA/charter/")
    expect(page.get_by_role("link", name="Download the business case as PDF")).to_be_visible()
    page.emulate_media(media="print")
    expect(page.get_by_role("navigation", name="Main")).to_be_hidden()
    expect(page.get_by_role("navigation", name="Project sections")).to_be_hidden()
    expect(page.get_by_role("button", name="Print")).to_be_hidden()
    expect(page.get_by_role("heading", name="Alpha programme")).to_be_visible()
    page.screenshot(path="/tmp/uxc/20-print-media.png", full_page=True)


def test_a_date_field_is_one_tab_stop(cast, live_server, watched_page, sign_in):
    wp = WorkPackageFactory(project=cast.project, name="Build the portal")
    page = watched_page
    sign_in(page, "editor")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/")
    page.locator(f"#wp-{wp.pk}").get_by_role("link", name="Edit Build the portal").click()
    editor = page.locator(f"#wp-{wp.pk}.editing")
    start = editor.get_by_label("Planned start")
    start.focus()
    page.keyboard.press("Tab")
    expect(editor.get_by_label("Planned end")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(start).to_be_focused()


def test_budget_phasing_is_a_month_grid(cast, live_server, watched_page, sign_in):
    wp = WorkPackageFactory(project=cast.project, name="Build the portal", budget_phasing=None)
    page = watched_page
    sign_in(page, "editor")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/")
    page.locator(f"#wp-{wp.pk}").get_by_role("link", name="Edit Build the portal").click()
    grid = page.get_by_role("group", name="Budget phasing")
    grid.get_by_label("Month 1", exact=True).fill("2026-01")
    grid.get_by_label("Amount 1", exact=True).fill("12000")
    grid.get_by_label("Month 2", exact=True).fill("2026-02")
    grid.get_by_label("Amount 2", exact=True).fill("8000")
    grid.get_by_role("button", name="Add a month").click()
    expect(grid.get_by_label("Amount 3", exact=True)).to_be_focused()
    assert grid.get_by_label("Month 3", exact=True).input_value() == "2026-03"
    grid.get_by_label("Amount 3", exact=True).fill("5000")
    assert_accessible(page, "the phasing grid")
    page.screenshot(path="/tmp/uxc/17-phasing-grid.png")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(f"#wp-{wp.pk}").get_by_role("status")).to_have_text("Saved")
    wp.refresh_from_db()
    assert [(e["period"], float(e["amount"])) for e in wp.budget_phasing] == [
        ("2026-01", 12000),
        ("2026-02", 8000),
        ("2026-03", 5000),
    ]
