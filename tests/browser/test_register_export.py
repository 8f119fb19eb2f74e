"""Lena, the lead, downloads her work packages from the register page on a desktop and on a
phone: the XLSX is named for the project, the register and the day, its first row holds the
labels the page shows, frozen and filtered, the owner by name, the dates as dates and the
budget as a number; the CSV reads the same way."""

import csv
import datetime as dt
import io

import pytest
from django.utils import timezone
from openpyxl import load_workbook

from registers.models import WorkPackage

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": (1440, 1000), "phone": (390, 844)}


@pytest.mark.parametrize("screen", list(VIEWPORTS))
def test_the_lead_downloads_the_register_for_people(
    screen, cast, live_server, watched_page, sign_in
):
    WorkPackage.objects.create(
        project=cast.project,
        name="Build the portal",
        owner_account_id=cast.lead.account_id,
        status="In Progress",
        planned_start_date=dt.date(2026, 2, 2),
        planned_end_date=dt.date(2026, 6, 30),
        budget=18500,
    )
    page = watched_page
    width, height = VIEWPORTS[screen]
    page.set_viewport_size({"width": width, "height": height})
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/projects/ALPHA/registers/work-packages/")
    links = page.locator(".export-links")
    day = timezone.localdate().isoformat()

    with page.expect_download() as caught:
        links.get_by_role("link", name="XLSX").click()
    download = caught.value
    assert download.suggested_filename == f"ALPHA-work-packages-{day}.xlsx"
    sheet = load_workbook(io.BytesIO(download.path().read_bytes())).worksheets[0]
    header = [c.value for c in sheet[1]]
    assert header[:3] == ["ID", "Project key", "Name"]
    assert {"Owner", "Planned start", "Budget"} <= set(header)
    assert sheet.freeze_panes == "A2" and sheet.auto_filter.ref.startswith("A1:")
    row = {h: sheet.cell(2, i) for i, h in enumerate(header, 1)}
    assert row["Owner"].value == "Lena Lead"
    assert row["Planned start"].is_date and row["Budget"].value == 18500

    with page.expect_download() as caught:
        links.get_by_role("link", name="CSV").click()
    download = caught.value
    assert download.suggested_filename == f"ALPHA-work-packages-{day}.csv"
    with open(download.path(), encoding="utf-8-sig") as file:
        first, second = list(csv.reader(io.StringIO(file.read())))[:2]
    cells = dict(zip(first, second, strict=True))
    assert first[:3] == ["ID", "Project key", "Name"]
    assert cells["Owner"] == "Lena Lead" and cells["Planned start"] == "2026-02-02"
    assert cells["Budget"] == "18500"
