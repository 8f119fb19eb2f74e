"""A Microsoft Project plan in a real browser: the Project Lead uploads a plan saved as XML
on the work packages' import page, chooses the outline level, reads the preview and
confirms, and the register shows the packages."""

import datetime as dt

import pytest
from playwright.sync_api import expect

from registers import sample_plan
from registers.models import WorkPackage
from tests.browser.axe import assert_accessible

pytestmark = pytest.mark.browser


def test_a_plan_is_previewed_then_imported_on_the_page(
    cast, live_server, watched_page, sign_in, tmp_path
):
    today = dt.date.today()
    plan = tmp_path / "delivery-plan.xml"
    plan.write_bytes(sample_plan.plan(200, start=today - dt.timedelta(weeks=20), today=today))
    page = watched_page
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/import/")
    assert_accessible(page, "the import page")
    label = "File (CSV, XLSX, ODS or a Microsoft Project plan saved as XML)"
    page.get_by_label(label).set_input_files(str(plan))
    page.get_by_label("Outline level of a Microsoft Project plan").select_option("1")
    page.get_by_role("button", name="Preview the import").click()
    preview = page.get_by_role("region", name="Preview of delivery-plan.xml")
    expect(preview).to_contain_text("The import would create 8 work packages")
    assert WorkPackage.objects.filter(project=cast.project).count() == 0
    assert_accessible(page, "the preview of a plan")
    preview.get_by_role("button", name="Import 8 work packages").click()
    expect(page.get_by_text("Imported 8 work packages")).to_be_visible()
    rows = page.locator("#wp-rows")
    for name in ("1. Discovery", "8. Early life support"):
        expect(rows.get_by_role("link", name=name, exact=True)).to_be_visible()
    assert WorkPackage.objects.filter(project=cast.project).count() == 8
