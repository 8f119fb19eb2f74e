"""The portfolio fits 1,440 px: a default set of columns (not all 22), a column chooser saved
per person, the project column stays in view when the table scrolls sideways, and grouping
by theme ends each group on a subtotal line."""

from decimal import Decimal

import pytest
from playwright.sync_api import expect

from portfolio import extensions
from portfolio.models import PortfolioColumns
from portfolio.views import COLUMNS, DEFAULT_COLUMNS
from tests.browser.axe import assert_accessible
from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import BusinessCaseFactory, ProjectFactory, WorkPackageFactory

pytestmark = pytest.mark.browser


@pytest.fixture
def portfolio(cast):
    set_governance_group(PMO_GROUP)
    for key, theme, budget, forecast in (
        ("RETAIL", "Revenue Growth", 1000, 1300),
        ("LEDGER", "Cost Out", 1000, 1000),
        ("VAULT", "Cost Out", 3000, 3300),
    ):
        project = ProjectFactory(key=key, name=f"{key.title()} programme", browsers=[cast.pmo])
        BusinessCaseFactory(project=project, theme=theme)
        WorkPackageFactory(
            project=project, budget=Decimal(budget), budget_forecast=Decimal(forecast)
        )


def headers(page) -> list[str]:
    return [
        " ".join(t.split()).replace(" ▲", "").replace(" ▼", "")
        for t in page.locator("table.portfolio-table").first.locator("thead th").all_inner_texts()
    ]


def test_portfolio_fits_1440_with_chosen_columns(
    cast, portfolio, live_server, watched_page, sign_in
):
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, "pmo")
    page.goto(f"{live_server.url}/portfolio/")
    shown = headers(page)
    assert len(shown) < 22
    assert "Project" in shown and "Top risk" not in shown and "Theme" not in shown
    # Nothing scrolls sideways at 1,440 px: not the page, not the table.
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440
    scroller = page.locator(".table-scroll:has(table.portfolio-table)").first
    assert scroller.evaluate("e => e.scrollWidth <= e.clientWidth")
    assert_accessible(page, "the portfolio")
    page.screenshot(path="/tmp/uxc/13-portfolio-default.png", full_page=True)

    # Choose columns: add Top risk and Theme, drop Lead. Saved for this person.
    page.locator("details.column-chooser summary").click()
    chooser = page.get_by_role("group", name="Show these columns (saved for you)")
    expect(chooser.get_by_label("Project column")).to_be_disabled()
    chooser.get_by_label("Top risk column").check()
    chooser.get_by_label("Theme column").check()
    chooser.get_by_label("Lead column").uncheck()
    page.get_by_role("button", name="Save columns").click()
    expect(page.locator("#flash")).to_contain_text("Columns saved")
    shown = headers(page)
    assert "Top risk" in shown and "Theme" in shown and "Lead" not in shown
    assert "lead" not in PortfolioColumns.objects.get(user=cast.pmo).columns
    page.reload()
    assert "Top risk" in headers(page)

    # All of them: the table scrolls inside its box and the project column stays in view.
    page.locator("details.column-chooser summary").click()
    for box in chooser.get_by_role("checkbox").all():
        if box.is_enabled():
            box.check()
    page.get_by_role("button", name="Save columns").click()
    # The PMO is in the governance group: the columns other apps add are offered too.
    every = len(COLUMNS) + len(extensions.declared_columns())
    expect(page.locator("#flash")).to_contain_text(f"{every} of them")
    assert len(headers(page)) == every
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440
    scroller = page.locator(".table-scroll:has(table.portfolio-table)").first
    assert scroller.evaluate("e => e.scrollWidth > e.clientWidth")
    project_cell = page.locator("table.portfolio-table tbody th.col-project").first
    left_before = project_cell.bounding_box()["x"]
    scroller.evaluate("e => { e.scrollLeft = 400; }")
    page.wait_for_function(
        "() => document.querySelector('.table-scroll:has(table.portfolio-table)').scrollLeft > 0"
    )
    assert abs(project_cell.bounding_box()["x"] - left_before) < 1
    page.screenshot(path="/tmp/uxc/13-portfolio-sticky.png")

    # Default columns again.
    page.locator("details.column-chooser summary").click()
    page.get_by_role("button", name="Default columns").click()
    expect(page.locator("#flash")).to_contain_text("default columns")
    assert headers(page) == [c["label"] for c in COLUMNS if c["key"] in DEFAULT_COLUMNS]
    assert not PortfolioColumns.objects.filter(user=cast.pmo).exists()


def test_grouping_by_theme_shows_subtotals(portfolio, live_server, watched_page, sign_in):
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 900})
    sign_in(page, "pmo")
    page.goto(f"{live_server.url}/portfolio/?group=theme")
    group = page.locator("section.theme-group").filter(
        has=page.get_by_role("heading", name="Cost Out")
    )
    subtotal = group.locator("tfoot tr.subtotal")
    expect(subtotal).to_contain_text("Subtotal")
    expect(subtotal).to_contain_text("2 projects")
    expect(subtotal).to_contain_text("4,000")  # 1,000 + 3,000
    expect(subtotal).to_contain_text("4,300")
    expect(subtotal).to_contain_text("7.5 %")  # (4,300 - 4,000) / 4,000
    assert_accessible(page, "the grouped portfolio")
    page.screenshot(path="/tmp/uxc/13-portfolio-grouped-test.png", full_page=True)
