"""A register's export is for people by default: the labels the register pages use in a bold,
frozen and filtered first row, people by display name, dates as date cells and amounts as
numbers in a money format (XLSX) or ISO dates and plain numbers (CSV), each column as wide as
what it holds. `?shape=api` keeps the API-shaped export (API names, account ids) for round
trips; another shape answers 400. An import template's people columns offer the project's
people as a drop-down."""

import csv
import datetime as dt
import io

import pytest
from django.http import StreamingHttpResponse
from django.test import Client
from openpyxl import load_workbook

from registers import spreadsheets
from registers.models import ChangeRequest, WorkPackage
from tests.registers.test_queries import REGISTERS, fill

PAGE = "/projects/ALPHA/registers"
API = "/api/v1/projects/ALPHA"


@pytest.fixture
def package(cast):
    return WorkPackage.objects.create(
        project=cast.project,
        name="Build the portal",
        owner_account_id=cast.lead.account_id,
        status="In Progress",
        planned_start_date=dt.date(2026, 2, 2),
        planned_end_date=dt.date(2026, 6, 30),
        budget=18500,
        budget_forecast=19250.5,
    )


def _sheet(content: bytes):
    return load_workbook(io.BytesIO(content)).worksheets[0]


def test_the_xlsx_export_has_labels_frozen_filtered_typed_and_named(cast, client_for, package):
    response = client_for(cast.viewer).get(f"{PAGE}/work-packages/export/?format=xlsx")
    assert response.status_code == 200 and isinstance(response, StreamingHttpResponse)
    sheet = _sheet(response.getvalue())
    header = [c.value for c in sheet[1]]
    assert header[:3] == ["ID", "Project key", "Name"]
    for label in ("Owner", "Planned start", "Planned end", "Budget", "Forecast spend"):
        assert label in header
    assert not [h for h in header if h and h[0].islower()]  # no API field name
    assert "ownerAccountId" not in header and "revision" not in header
    assert header.count("Actual end") == 1  # an alias is not a second column
    assert all(c.font.bold for c in sheet[1])
    assert sheet.freeze_panes == "A2"
    assert sheet.auto_filter.ref == f"A1:{sheet.cell(1, len(header)).column_letter}2"
    row = {h: sheet.cell(2, i) for i, h in enumerate(header, 1)}
    assert row["Name"].value == "Build the portal"
    assert row["Owner"].value == "Lena Lead"
    start = row["Planned start"]
    assert start.is_date and start.value.date() == dt.date(2026, 2, 2)
    assert start.number_format == spreadsheets.DATE_FORMAT
    assert row["Budget"].data_type == "n" and row["Budget"].value == 18500
    assert row["Forecast spend"].value == 19250.5
    assert row["Budget"].number_format == spreadsheets.MONEY_FORMAT
    updated = row["Updated at"]
    assert updated.is_date and updated.number_format == spreadsheets.DATETIME_FORMAT
    widths = {
        h: sheet.column_dimensions[sheet.cell(1, i).column_letter].width
        for i, h in enumerate(header, 1)
    }
    assert (
        widths["Commentary"] > widths["ID"] > widths["Name"] > widths["Budget"] > widths["Progress"]
    )


def test_the_csv_export_has_labels_names_iso_dates_and_plain_amounts(cast, client_for, package):
    response = client_for(cast.viewer).get(f"{PAGE}/work-packages/export/?format=csv")
    assert isinstance(response, StreamingHttpResponse)
    header, row = list(csv.reader(io.StringIO(response.getvalue().decode("utf-8-sig"))))[:2]
    cells = dict(zip(header, row, strict=True))
    assert header[:3] == ["ID", "Project key", "Name"]
    assert cells["Owner"] == "Lena Lead"
    assert cells["Planned start"] == "2026-02-02" and cells["Planned end"] == "2026-06-30"
    assert cells["Budget"] == "18500" and cells["Forecast spend"] == "19250.5"
    assert dt.datetime.fromisoformat(cells["Updated at"])  # a local time, to the minute
    assert len(cells["Updated at"]) == len("2026-11-28 10:15")


def test_a_change_names_every_person_and_its_budget_impact_is_a_number(cast, bearer):
    ChangeRequest.objects.create(
        project=cast.project,
        summary="Add a portal page",
        proposer_account_id=cast.editor.account_id,
        approver_account_id=cast.sponsor.account_id,
        created_by_account_id=cast.editor.account_id,
        dimensions=["Budget"],
        impact_budget=-1200,
    )
    content = Client().get(f"{API}/changes/export?format=xlsx", **bearer(cast.viewer)).getvalue()
    sheet = _sheet(content)
    header = [c.value for c in sheet[1]]
    row = {h: sheet.cell(2, i).value for i, h in enumerate(header, 1)}
    assert row["Proposer"] == "Eddie Editor" and row["Approver"] == "Sam Sponsor"
    assert row["Created by"] == "Eddie Editor"
    assert row["Budget impact"] == -1200
    assert "proposerName" not in header and "Proposer name" not in header


@pytest.mark.parametrize("register", REGISTERS)
def test_every_register_exports_for_people_with_one_label_per_column(cast, client_for, register):
    fill(cast, register, 3)
    client = client_for(cast.viewer)
    sheet = _sheet(client.get(f"{PAGE}/{register}/export/?format=xlsx").getvalue())
    header = [c.value for c in sheet[1]]
    assert len(header) == len(set(header))
    assert sheet.max_row == 4 and sheet.auto_filter.ref and sheet.freeze_panes == "A2"
    named = {"Lena Lead", "Eddie Editor", "Sam Sponsor"}
    values = {str(c.value) for r in sheet.iter_rows(min_row=2) for c in r}
    assert named & values
    assert not {cast.lead.account_id, cast.editor.account_id} & values


@pytest.mark.parametrize("file_format", ["csv", "xlsx"])
def test_shape_api_is_the_api_shaped_export(cast, client_for, package, file_format):
    client = client_for(cast.viewer)
    url = f"{PAGE}/work-packages/export/?format={file_format}&shape=api"
    content = client.get(url).getvalue()
    header, rows = spreadsheets.table(cast.project, "work-packages")
    expected = (
        spreadsheets.to_csv(header, rows)
        if file_format == "csv"
        else spreadsheets.to_xlsx("Work packages", header, rows)
    )
    if file_format == "csv":
        assert content == expected
        assert content.decode("utf-8-sig").startswith("id,projectKey,name,")
    else:
        got = [list(r) for r in _sheet(content).iter_rows(values_only=True)]
        assert got == [list(r) for r in _sheet(expected).iter_rows(values_only=True)]
        assert got[0][:3] == ["id", "projectKey", "name"]
        assert cast.lead.account_id in got[1] and "Lena Lead" in got[1]


def test_an_unknown_shape_answers_400_with_a_clear_message(cast, client_for, bearer):
    answer = Client().get(f"{API}/risks/export?format=csv&shape=excel", **bearer(cast.viewer))
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["message"].startswith("Unknown export shape. Must be people")
    assert "api" in error["fields"]["shape"][0]
    page = client_for(cast.viewer).get(f"{PAGE}/risks/export/?format=csv&shape=excel")
    assert page.status_code == 400
