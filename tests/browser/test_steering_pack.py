"""In a real browser, as the Project Lead and as the sponsor: a published status report's page
is the steering pack, every section on it, on a desktop and on a phone, and it offers the
pack as a PDF."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from governance.permissions import caller_for
from status import services
from tests.browser.axe import assert_accessible
from tests.factories import ChangeRequestFactory, DecisionFactory, RiskFactory, WorkPackageFactory

pytestmark = pytest.mark.browser

SECTIONS = [
    "RAG and the reasons",
    "Key messages",
    "Finance",
    "Earned value",
    "Top five risks",
    "Next milestones",
    "Late packages",
    "Decisions required",
    "Changes since the last report",
]


@pytest.fixture
def published(cast):
    today = timezone.localdate()
    WorkPackageFactory(
        project=cast.project,
        name="Build",
        budget=Decimal(1000),
        budget_forecast=Decimal(1080),
        budget_actual=Decimal(400),
        planned_start_date=today - dt.timedelta(days=30),
        planned_end_date=today + dt.timedelta(days=20),
    )
    RiskFactory(project=cast.project, title="Supplier goes under", impact=4, likelihood=4)
    DecisionFactory(project=cast.project, decision="Choose the hosting partner")
    ChangeRequestFactory(project=cast.project, summary="Add a reporting module")
    caller = caller_for(cast.lead, cast.project)
    services.status_update(
        caller=caller, data={"pmKeyMessage": "Build runs 8 % over; the board decides hosting."}
    )
    report = services.status_report_create(caller=caller, data={"title": "Board pack May"})
    return services.status_report_publish(caller=caller, report_id=report.pk)


@pytest.mark.parametrize("who", ["lead", "sponsor"])
@pytest.mark.parametrize("width", [1280, 390])
def test_the_report_page_is_the_steering_pack(
    cast, published, live_server, watched_page, sign_in, who, width
):
    page = watched_page
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, who)
    page.goto(f"{live_server.url}/projects/ALPHA/status/")
    page.get_by_role("link", name="Board pack May").click()
    pack = page.get_by_role("article", name="Board pack May")
    for section in SECTIONS:
        expect(pack.get_by_role("heading", name=section, exact=True)).to_be_visible()
    expect(pack.get_by_role("rowheader", name="Supplier goes under")).to_be_visible()
    expect(pack.get_by_text("Choose the hosting partner")).to_be_visible()
    expect(pack.get_by_text("Add a reporting module")).to_be_visible()
    # The key messages once.
    expect(pack.get_by_text("Build runs 8 % over; the board decides hosting.")).to_have_count(1)
    expect(pack.get_by_role("row", name="Actual cost recorded")).to_contain_text("400")
    expect(pack.get_by_role("link", name="Download the steering pack as PDF")).to_have_attribute(
        "href", "?format=pdf"
    )
    width_now = page.evaluate("document.documentElement.scrollWidth")
    assert width_now <= width, f"the pack is {width_now}px wide on a {width}px screen"
    assert_accessible(page, f"Steering pack ({who}, {width}px)")
