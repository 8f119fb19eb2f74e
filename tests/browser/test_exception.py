"""In a real browser: the Project Lead of a project beyond its tolerances follows the banner to
the exception page and writes the exception report; the sponsor reads it and accepts the
exception plan; the banner is gone and the decided exception is listed."""

import datetime as dt
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from charter.services import charter_approve
from governance.permissions import caller_for
from registers.services import work_package_update
from status.models import ProjectException
from tests.charter.conftest import complete_inputs
from tests.factories import WorkPackageFactory

pytestmark = pytest.mark.browser


def _in_exception(cast):
    from charter.models import BusinessCase
    from charter.services import sync_mirror

    end = dt.date(2026, 6, 30)
    wp = WorkPackageFactory(
        project=cast.project,
        name="Build",
        budget=Decimal("1000"),
        planned_start_date=dt.date(2026, 1, 1),
        planned_end_date=end,
    )
    case, _ = BusinessCase.objects.update_or_create(
        project=cast.project,
        defaults={**complete_inputs(cast), "approval_status": "Submitted"},
    )
    sync_mirror(cast.project, case)
    cast.project.refresh_from_db()
    charter_approve(caller=caller_for(cast.sponsor, cast.project), data={"toleranceDays": 10})
    cast.project.refresh_from_db()
    work_package_update(
        caller=caller_for(cast.lead, cast.project),
        wp_id=wp.pk,
        data={"forecastEndDate": (end + dt.timedelta(days=30)).isoformat()},
    )


def test_the_lead_reports_and_the_sponsor_accepts_the_plan(
    cast, live_server, watched_page, sign_in
):
    _in_exception(cast)
    page = watched_page
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/status/")
    banner = page.locator(".exception-banner")
    expect(banner).to_contain_text("In exception since")
    banner.get_by_role("link", name="See the exception").click()
    crossed = page.get_by_text("30 days late, beyond the time tolerance of 10 days.")
    expect(crossed.first).to_be_visible()
    page.get_by_label("Cause").fill("The supplier delivered late.")
    page.get_by_label("Consequences").fill("Go-live moves by a month.")
    page.get_by_label("Options (one a line, at least one)").fill(
        "Accept the delay\nAdd a second team"
    )
    page.get_by_label("Recommendation").fill("Accept the delay.")
    page.get_by_label("Exception plan: days added").fill("30")
    page.get_by_role("button", name="Save the report").click()
    expect(page.get_by_text("Exception report saved; the sponsor decides.")).to_be_visible()

    page.context.clear_cookies()
    sign_in(page, "sponsor")
    page.goto(f"{live_server.url}/projects/ALPHA/status/exception/")
    expect(page.get_by_text("Add a second team")).to_be_visible()
    page.get_by_role("button", name="Accept the exception plan").click()
    expect(page.get_by_text("Decision recorded; the exception is closed.")).to_be_visible()
    expect(page.locator(".exception-banner")).to_have_count(0)
    expect(page.get_by_role("heading", name="Decided and settled exceptions")).to_be_visible()
    assert ProjectException.objects.get().decision == "AcceptPlan"
