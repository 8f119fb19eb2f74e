"""Registers, the Waiting-for-me queue and the portfolio on a phone (390 px) are cards, not
side-scrolling tables: each cell names its column (its data-label), every control on a card is
at least 44 x 44 px, and no page scrolls sideways. At 1,280 px the work-package register and the
portfolio fit: Edit, Slip, Exception and Why are in view without scrolling. A register page's
first Tab offers "Skip to the register", and a few presses reach the first row's Edit."""

import pytest
from playwright.sync_api import expect

from tests.browser.axe import assert_accessible
from tests.browser.test_issue11_words import sign_in_demo

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
REGISTERS = ["work-packages", "risks", "decisions", "changes"]
TAP = 44


def no_sideways_scroll(page, where: str) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    inner = page.evaluate("window.innerWidth")
    assert width <= inner, f"{where} is {width}px wide in a {inner}px window"


def assert_cards(page, table: str, where: str) -> None:
    """Every body and footer row of the table is a card (not a table row), and every cell with
    a data-label shows that label before its value."""
    rows = page.locator(f"{table} tbody tr:not(.empty-row), {table} tfoot tr")
    assert rows.count() > 0, f"{where}: no rows"
    displays = rows.evaluate_all("rs => rs.map(r => getComputedStyle(r).display)")
    assert all(d in ("grid", "block") for d in displays), f"{where}: rows are {set(displays)}"
    labels = page.locator(f"{table} td[data-label]").evaluate_all(
        """cells => cells.filter(c => getComputedStyle(c).display !== 'none').map(c =>
            [c.dataset.label, getComputedStyle(c, '::before').content])"""
    )
    assert labels, f"{where}: no labelled cells"
    for label, content in labels:
        assert content == f'"{label}"', f"{where}: a {label} cell shows {content}"
    box = page.locator(table).first.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"] + 0.5


def assert_tappable(locator, where: str) -> None:
    count = locator.count()
    assert count > 0, f"{where}: nothing to tap"
    for i in range(count):
        control = locator.nth(i)
        if not control.is_visible():
            continue
        box = control.bounding_box()
        name = control.inner_text().strip() or control.get_attribute("aria-label")
        assert box["height"] >= TAP - 0.5, f"{where}: {name!r} is {box['height']}px tall"
        assert box["width"] >= TAP - 0.5, f"{where}: {name!r} is {box['width']}px wide"
        assert box["x"] + box["width"] <= PHONE["width"], f"{where}: {name!r} is off screen"


def test_lena_reads_and_edits_registers_as_cards_on_a_phone(demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size(PHONE)
    sign_in_demo(page, live_server, "lena")
    for register in REGISTERS:
        path = f"/projects/BRIDGE/registers/{register}/"
        page.goto(f"{live_server.url}{path}")
        no_sideways_scroll(page, path)
        assert_cards(page, "table.register", path)
        # With rows listed, the "none match" row stays hidden, as on a desktop.
        expect(page.locator("table.register tbody tr.empty-row")).to_be_hidden()
        # The header row is a bar of sort links, not a hidden table header.
        expect(page.locator("table.register thead th a.sort").first).to_be_visible()
        first = page.locator("table.register tbody tr[data-href]").first
        assert_tappable(first.locator("td.actions a, td.actions button"), path)
        assert_accessible(page, f"the {register} register as cards on a phone")

    # The work packages: the first card's Edit opens the row's form inside the card.
    page.goto(f"{live_server.url}/projects/BRIDGE/registers/work-packages/")
    first = page.locator("table.register tbody tr[data-href]").first
    expect(first.locator("td[data-label='Owner']")).to_be_visible()
    assert_tappable(first.locator("td.order button, td.links button"), "move and link buttons")
    name = first.locator("th[scope='row'] a").inner_text()
    first.get_by_role("link", name=f"Edit {name}").click()
    form = page.get_by_role("form", name="Edit work package")
    expect(form).to_be_visible()
    expect(form.get_by_label("Name")).to_be_focused()
    no_sideways_scroll(page, "the work-package editor on a phone")
    box = form.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    page.keyboard.press("Escape")
    expect(form).to_have_count(0)
    # A filter that keeps no row shows the "none match" card.
    page.goto(f"{live_server.url}/projects/BRIDGE/registers/work-packages/?q=zzzz-no-such")
    expect(page.locator("table.register tbody tr.empty-row")).to_be_visible()
    expect(page.locator("table.register tbody tr.empty-row")).to_contain_text(
        "No work packages match these filters."
    )


def test_sofias_queue_is_cards_with_large_buttons_on_a_phone(demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size(PHONE)
    sign_in_demo(page, live_server, "sofia")
    page.goto(f"{live_server.url}/waiting/")
    no_sideways_scroll(page, "Waiting for me")
    assert page.locator("main table").count() == 0
    items = page.locator("li.queue-item")
    assert items.count() >= 2
    assert_tappable(
        page.locator(".queue-actions button, .queue-actions .button, .queue-actions summary"),
        "the queue's actions",
    )
    # Each item's facts are labelled (Impact, Raised by, Waiting) on the card.
    card = page.locator("#changes-h + ul.queue > li.queue-item").first
    expect(card.locator("dt", has_text="Impact")).to_be_visible()
    expect(card.locator("dt", has_text="Waiting")).to_be_visible()
    # Opening Reject keeps the card inside the phone.
    card.locator("summary", has_text="Reject").click()
    expect(card.get_by_label("Reason for rejecting (required)")).to_be_visible()
    no_sideways_scroll(page, "Waiting for me with Reject open")
    assert_accessible(page, "Waiting for me on a phone")


def test_the_portfolio_is_cards_on_a_phone(demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size(PHONE)
    sign_in_demo(page, live_server, "priya")
    page.goto(f"{live_server.url}/portfolio/")
    no_sideways_scroll(page, "the portfolio")
    assert_cards(page, "table.portfolio-table", "the portfolio")
    first = page.locator("table.portfolio-table tbody tr").first
    for label in ("Slip (days)", "Exception", "Approved budget"):
        expect(first.locator(f"td[data-label='{label}']")).to_be_visible()
    why = first.locator("details.why summary")
    assert_tappable(why, "Why")
    why.click()
    expect(first.locator("dl.why-list")).to_be_visible()
    no_sideways_scroll(page, "the portfolio with Why open")
    assert_accessible(page, "the portfolio as cards on a phone")

    # Grouped by theme: the subtotal line (tfoot) is a card too.
    page.goto(f"{live_server.url}/portfolio/?group=theme")
    no_sideways_scroll(page, "the grouped portfolio")
    assert_cards(page, "table.portfolio-table", "the grouped portfolio")
    subtotal = page.locator("table.portfolio-table tfoot tr.subtotal").first
    expect(subtotal).to_contain_text("Subtotal")
    expect(subtotal.locator("td[data-label='Approved budget']")).to_be_visible()
    assert_accessible(page, "the grouped portfolio on a phone")


def in_view(locator, where: str) -> None:
    assert locator.is_visible(), f"{where} is hidden"
    box = locator.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= DESKTOP["width"], f"{where} is at {box}"


def test_the_work_package_register_fits_1280(demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size(DESKTOP)
    sign_in_demo(page, live_server, "lena")
    page.goto(f"{live_server.url}/projects/BRIDGE/registers/work-packages/")
    no_sideways_scroll(page, "the work-package register at 1280")
    box = page.locator("#register-table")
    widths = box.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert widths[0] <= widths[1], f"the register is {widths[0]} px wide in {widths[1]} px"
    rows = page.locator("table.register tbody tr[data-href]")
    assert rows.count() >= 6
    for i in range(rows.count()):
        actions = rows.nth(i).locator("td.actions")
        in_view(actions.locator("a", has_text="Edit"), f"row {i + 1}'s Edit")
        in_view(actions.locator("button", has_text="Delete"), f"row {i + 1}'s Delete")
    # The table still reads as a table: one row per work package.
    assert rows.first.evaluate("r => getComputedStyle(r).display") == "table-row"


def test_the_portfolio_fits_1280(demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size(DESKTOP)
    sign_in_demo(page, live_server, "priya")
    page.goto(f"{live_server.url}/portfolio/")
    no_sideways_scroll(page, "the portfolio at 1280")
    scroller = page.locator(".table-scroll:has(table.portfolio-table)").first
    assert scroller.evaluate("e => e.scrollWidth <= e.clientWidth")
    head = page.locator("table.portfolio-table thead")
    for label in ("Slip (days)", "Exception", "Why"):
        in_view(head.locator("th", has_text=label), f"the {label} column")
    first = page.locator("table.portfolio-table tbody tr").first
    in_view(first.locator("td[data-label='Slip (days)']"), "the first row's slip")
    in_view(first.locator("td[data-label='Exception']"), "the first row's exception")
    in_view(first.locator("details.why summary"), "the first row's Why")
    assert_accessible(page, "the portfolio at 1280")


def test_the_keyboard_skips_to_the_register(demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size(DESKTOP)
    sign_in_demo(page, live_server, "lena")
    for register in REGISTERS:
        page.goto(f"{live_server.url}/projects/BRIDGE/registers/{register}/")
        page.keyboard.press("Tab")
        skip = page.get_by_role("link", name="Skip to the register")
        expect(skip).to_be_focused()
        box = skip.bounding_box()
        assert box["x"] >= 0 and box["y"] >= 0, f"the skip link is off screen on {register}"

    page.goto(f"{live_server.url}/projects/BRIDGE/registers/work-packages/")
    edit = page.locator("table.register tbody tr[data-href]").first.locator("td.actions a")
    edit = edit.filter(has_text="Edit")
    presses = 1
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to the register")).to_be_focused()
    page.keyboard.press("Enter")
    while presses < 12 and not edit.evaluate("e => e === document.activeElement"):
        page.keyboard.press("Tab")
        presses += 1
    assert edit.evaluate("e => e === document.activeElement"), "Tab never reached Edit"
    # The skip link, then the row's move buttons, its tick, its name, Link and Edit (86 before).
    assert presses <= 7, f"{presses} Tab presses reach the first row's Edit"
    # The register is in view, not left below the timeline.
    row_box = page.locator("table.register tbody tr[data-href]").first.bounding_box()
    assert 0 <= row_box["y"] < DESKTOP["height"]
