"""Money at its documented maximum (9999999999999999.99, numeric(18, 2)) is written in
fixed-point notation everywhere: a float holds it as 1e16, so it went out as `1e+16` in JSON,
CSV and XLSX, and the app refused to import its own export. The JSON answers carry the exact
digits as a JSON number; CSV writes them; XLSX writes them as a text cell (a spreadsheet's
number is a float too). Each register exported imports back unchanged."""

import io
import json
import re
from decimal import Decimal

import openpyxl
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from mcp import Client as McpClient

from agent import catalogue
from agent.mcp_server import build_server
from governance import cleaning
from governance.tracker.local import scripting
from registers import spreadsheets
from registers.models import ChangeRequest, WorkPackage
from tests.agent.conftest import EVERYONE, use_group
from tests.conftest import run_async
from tests.factories import ProjectFactory, WorkPackageFactory

MAX = "9999999999999999.99"
# Past what a float holds exactly, either side of the limit, and the limit's neighbours.
AMOUNTS = [MAX, "9999999999999999.98", "1234567890123456.78", "100000000000000.01", "0.01", "12.5"]


@pytest.mark.parametrize("amount", [*AMOUNTS, "9999999999999999", "0"])
def test_every_amount_goes_out_in_fixed_point_with_its_exact_digits(amount):
    value = cleaning.decimal_to_json(Decimal(amount).quantize(Decimal("0.01")))
    negative = cleaning.decimal_to_json(-Decimal(amount).quantize(Decimal("0.01")))
    text = cleaning.json_text({"amount": value, "negative": [negative]})
    assert not re.search(r"[0-9][eE]", text)
    parsed = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    assert parsed["amount"] == Decimal(amount)
    assert parsed["negative"] == [-Decimal(amount)]
    assert "e" not in str(value) and Decimal(str(value)) == Decimal(amount)


def test_a_text_that_looks_like_the_marker_is_left_as_text():
    value = cleaning.decimal_to_json(Decimal(MAX))
    text = cleaning.json_text({"a": value, "b": '"money-0:1"', "c": "money-"})
    assert json.loads(text)["b"] == '"money-0:1"' and json.loads(text)["c"] == "money-"


@pytest.fixture
def lead(cast, bearer):
    client, auth = Client(), bearer(cast.lead)

    def send(method, path, body=None, **extra):
        return client.generic(
            method,
            f"/api/v1/projects/{path}",
            json.dumps(body) if body is not None else "",
            content_type="application/json",
            **auth,
            **extra,
        )

    return send


def test_the_json_api_answers_the_maximum_in_fixed_point(cast, lead):
    response = lead("POST", "ALPHA/work-packages", {"name": "Huge", "budget": MAX})
    assert response.status_code == 201, response.content
    assert f'"budget": {MAX}' in response.content.decode()
    wp_id = response.json()["id"]
    read = lead("GET", f"ALPHA/work-packages/{wp_id}").content.decode()
    assert f'"budget": {MAX}' in read and "e+16" not in read
    listed = lead("GET", "ALPHA/work-packages").content.decode()
    assert f'"budget": {MAX}' in listed
    change = lead("POST", "ALPHA/changes", {"summary": "Save", "impactBudget": f"-{MAX}"})
    assert change.status_code == 201, change.content
    assert f'"impactBudget": -{MAX}' in change.content.decode()
    assert WorkPackage.objects.get().budget == Decimal(MAX)


@pytest.fixture
def everyone(cast):
    scripting.ensure_group(EVERYONE, members=["lead", "editor", "viewer"])
    use_group(EVERYONE)


def test_the_assistant_answers_the_maximum_in_fixed_point(cast, bearer, everyone):
    ChangeRequest.objects.create(project=cast.project, summary="Huge", impact_budget=Decimal(MAX))
    response = Client().post(
        "/api/v1/agent/actions/list_register",
        json.dumps({"arguments": {"projectKey": "ALPHA", "register": "changes"}}),
        content_type="application/json",
        **bearer(cast.lead),
    )
    assert response.status_code == 200, response.content
    assert MAX in response.content.decode() and "e+16" not in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_mcp_tool_text_carries_the_maximum_in_fixed_point(cast, everyone):
    ChangeRequest.objects.create(project=cast.project, summary="Huge", impact_budget=Decimal(MAX))
    server = build_server(lambda: catalogue.request_for(cast.lead))

    async def go():
        async with McpClient(server) as session:
            return await session.call_tool(
                "list_register", {"projectKey": "ALPHA", "register": "changes"}
            )

    result = run_async(go)
    assert not result.is_error
    assert MAX in result.content[0].text and "e+16" not in result.content[0].text


@pytest.mark.parametrize("file_format", ["csv", "xlsx"])
def test_money_at_the_maximum_exports_and_imports_back_unchanged(cast, bearer, lead, file_format):
    for index, amount in enumerate(AMOUNTS):
        body = {"name": f"Package {index}", "budget": amount, "budgetForecast": amount}
        assert lead("POST", "ALPHA/work-packages", body).status_code == 201
        change = {"summary": f"Change {index}", "impactBudget": f"-{amount}"}
        assert lead("POST", "ALPHA/changes", change).status_code == 201
    beta = ProjectFactory(key="BETA", lead=cast.lead)
    for register in ("work-packages", "changes"):
        exported = lead("GET", f"ALPHA/{register}/export?format={file_format}&shape=api").getvalue()
        if file_format == "csv":
            text = exported.decode("utf-8-sig")
            assert (f"-{MAX}" if register == "changes" else MAX) in text
            assert "e+16" not in text and "E+16" not in text
        else:
            sheet = openpyxl.load_workbook(io.BytesIO(exported)).active
            cells = [cell for row in sheet.values for cell in row]
            assert (f"-{MAX}" if register == "changes" else MAX) in cells
        response = Client().post(
            f"/api/v1/projects/BETA/{register}/import",
            {"file": SimpleUploadedFile(f"back.{file_format}", exported)},
            **bearer(cast.lead),
        )
        assert response.status_code == 201, response.content[:500]
    original = sorted(
        WorkPackage.objects.filter(project=cast.project).values_list(
            "name", "budget", "budget_forecast"
        )
    )
    imported = sorted(
        WorkPackage.objects.filter(project=beta).values_list("name", "budget", "budget_forecast")
    )
    assert imported == original
    assert sorted(
        ChangeRequest.objects.filter(project=beta).values_list("summary", "impact_budget")
    ) == sorted(
        ChangeRequest.objects.filter(project=cast.project).values_list("summary", "impact_budget")
    )
    assert (f"Package {0}", Decimal(MAX), Decimal(MAX)) in imported


def test_the_register_rows_carry_money_as_the_writers_take_it(cast):
    WorkPackageFactory(project=cast.project, name="Huge", budget=Decimal(MAX))
    header, rows = spreadsheets.table(cast.project, "work-packages")
    value = next(rows)[header.index("budget")]
    assert isinstance(value, cleaning.Money) and repr(value) == MAX


ROUND_TRIP = ["0.01", "9999999999999.99", "123456789012345.67", MAX]


@pytest.mark.parametrize("amount", ROUND_TRIP)
def test_an_amount_round_trips_exactly_through_the_api_on_this_database(cast, lead, amount):
    """On PostgreSQL (numeric) and SQLite (the digits as text) alike: written, stored, read
    back and listed with every cent, either sign."""
    response = lead("POST", "ALPHA/work-packages", {"name": "Exact", "budget": amount})
    assert response.status_code == 201, response.content
    wp_id = response.json()["id"]
    assert WorkPackage.objects.get(pk=wp_id).budget == Decimal(amount)
    read = lead("GET", f"ALPHA/work-packages/{wp_id}")
    assert read.status_code == 200, read.content
    assert json.loads(read.content, parse_float=Decimal)["budget"] == Decimal(amount)
    change = lead("POST", "ALPHA/changes", {"summary": "Save", "impactBudget": f"-{amount}"})
    assert change.status_code == 201, change.content
    stored = ChangeRequest.objects.values_list("impact_budget", flat=True).get()
    assert stored == -Decimal(amount)
    listed = lead("GET", "ALPHA/changes")
    items = json.loads(listed.content, parse_float=Decimal)["items"]
    assert items[0]["impactBudget"] == -Decimal(amount)


@pytest.mark.parametrize("amount", ROUND_TRIP)
def test_an_amount_round_trips_exactly_through_the_page_form(cast, client_for, amount):
    client = client_for(cast.lead)
    response = client.post(
        "/projects/ALPHA/registers/work-packages/",
        {"name": "Exact", "budget": amount, "status": "Not Started"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 201, response.content.decode()[:500]
    wp = WorkPackage.objects.get()
    assert wp.budget == Decimal(amount)
    page = client.get("/projects/ALPHA/registers/work-packages/").content.decode()
    assert page.count("Exact") and "e+1" not in page


def test_an_amount_stored_as_a_float_before_is_read_as_its_digits(cast):
    """A row an older SQLite schema stored as a float reads as the float's shortest digits."""
    from governance.models import MoneyField

    field = MoneyField()
    assert field.from_db_value(12.5, None, connection) == Decimal("12.50")
    assert field.from_db_value(1e16, None, connection) == Decimal("10000000000000000.00")
    assert field.from_db_value("9999999999999999.99", None, connection) == Decimal(MAX)
    assert field.from_db_value(None, None, connection) is None
