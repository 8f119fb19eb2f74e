"""Imports a person can check before they land: the preview (API `?dryRun=true` and the page),
the commit that changes nothing the preview did not show, money and dates read as
spreadsheets write them, and the downloadable template of each register."""

import io
import re
import time
import zipfile

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from openpyxl import Workbook, load_workbook

from governance import formatting
from governance.models import AuditEntry, SiteSettings
from governance.spreadsheet_values import date, money
from registers import import_templates, spreadsheets
from registers.models import ChangeRequest, Decision, WorkPackage

BASE = "/projects/ALPHA/registers"


def text_of(response) -> str:
    return response.content.decode()


@pytest.fixture
def api(cast, bearer):
    client, auth = Client(), bearer(cast.lead)

    def call(path, content=None, name="file.csv", **data):
        if content is not None:
            data["file"] = SimpleUploadedFile(name, content)
            return client.post(f"/api/v1/projects/ALPHA/{path}", data=data, **auth)
        return client.get(f"/api/v1/projects/ALPHA/{path}", **auth)

    return call


def _currency(code: str) -> None:
    site = SiteSettings.load()
    site.currency = code
    site.save()
    formatting.forget_currency()


# --- 1. preview, then commit -----------------------------------------------------------------


def test_a_dry_run_answers_what_the_import_would_do_and_stores_nothing(cast, api):
    content = (
        "id,name,budget,budgetActual,plannedStartDate,createdAt\n"
        'x,Survey,"€130,500.00",TBD,2027-01-04,2026-01-01\n'
        "x,,5,,2027-01-04,\n"
    ).encode()
    audits = AuditEntry.objects.count()
    response = api("work-packages/import?dryRun=true", content)
    assert response.status_code == 200, response.content
    preview = response.json()
    assert preview["register"] == "work-packages"
    assert (preview["create"], preview["rows"]) == (0, 2)
    assert [(e["row"], e["field"]) for e in preview["errors"]] == [(3, "name")]
    warnings = {(w["row"], w["field"]): w["message"] for w in preview["warnings"]}
    assert warnings[1, "id"].startswith("Ignored")
    assert warnings[1, "createdAt"].startswith("Read-only: ignored")
    assert warnings[2, "budget"] == "Read “€130,500.00” as 130500.00 (EUR)."
    assert "stored as null" in warnings[2, "budgetActual"]
    assert not WorkPackage.objects.exists()
    assert AuditEntry.objects.count() == audits
    assert re.fullmatch(r"[0-9a-f]{64}", preview["previewDigest"])


def test_the_commit_answers_the_warnings_and_nothing_is_null_silently(cast, api):
    content = b"name,budget\nSurvey,TBD\n"
    preview = api("work-packages/import?dryRun=true", content).json()
    assert preview["create"] == 1 and not preview["errors"]
    response = api("work-packages/import", content, previewDigest=preview["previewDigest"])
    assert response.status_code == 201, response.content
    assert response.json()["created"] == 1
    assert response.json()["warnings"] == preview["warnings"]
    assert WorkPackage.objects.get().budget is None
    entry = AuditEntry.objects.get(kind="work_package.created")
    assert entry.changes["received"] == {"budget": "TBD"}


def test_a_pending_decision_is_said_to_be_recorded_as_made_today(cast, api):
    content = b"decision,madeOn\nUse the old data centre,\nLease a new one,2026-03-01\n"
    preview = api("decisions/import?dryRun=true", content).json()
    [warning] = [w for w in preview["warnings"] if w["row"] > 1]
    assert warning["row"] == 2 and warning["field"] == "madeOn"
    assert "made today" in warning["message"]
    assert not Decision.objects.exists()


def test_the_commit_refuses_what_the_preview_did_not_show(cast, api):
    content = b"name\nSurvey\n"
    preview = api("work-packages/import?dryRun=true", content).json()
    other = api("work-packages/import?dryRun=true", b"name\nSurvey two\n").json()
    stale = api("work-packages/import", content, previewDigest=other["previewDigest"])
    assert stale.status_code == 409
    assert "differ from the preview" in stale.json()["error"]["message"]
    assert not WorkPackage.objects.exists()
    # The register changed since the preview: the row is refused, nothing is created.
    api("work-packages/import", b"name\nSURVEY\n")
    clash = api("work-packages/import", content, previewDigest=preview["previewDigest"])
    assert clash.status_code == 422
    assert WorkPackage.objects.count() == 1


def test_a_dry_run_keeps_the_check_order(cast, bearer):
    viewer = Client()
    response = viewer.post(
        "/api/v1/projects/ALPHA/risks/import?dryRun=true",
        data={"file": SimpleUploadedFile("r.csv", b"title\nx\n")},
        **bearer(cast.viewer),
    )
    assert response.status_code == 403


def test_the_page_previews_then_imports_the_file_it_showed(cast, client_for):
    client = client_for(cast.lead)
    page = text_of(client.get(f"{BASE}/decisions/import/"))
    assert "/registers/decisions/template/?format=xlsx" in page
    preview = client.post(
        f"{BASE}/decisions/import/",
        {"file": SimpleUploadedFile("d.csv", b"decision,status\nUse the old one,Proposed\n")},
    )
    assert preview.status_code == 200
    html = text_of(preview)
    assert "would create <strong>1 decision</strong>" in html
    assert "made today" in html and "Header" in html
    assert not Decision.objects.exists()
    token = re.search(r'name="token" value="([^"]+)"', preview.content.decode())[1]
    # The token is the person's: another editor of the project cannot import it.
    other = client_for(cast.editor).post(f"{BASE}/decisions/import/", {"token": token})
    assert other.status_code == 422 and "expired" in text_of(other)
    assert not Decision.objects.exists()
    done = client.post(f"{BASE}/decisions/import/", {"token": token})
    assert done.status_code == 302
    assert Decision.objects.get().imported
    again = client.post(f"{BASE}/decisions/import/", {"token": token})
    assert again.status_code == 422 and Decision.objects.count() == 1


def test_the_preview_lists_the_rows_it_would_create_as_the_register_would_store_them(
    cast, api, client_for
):
    _currency("EUR")
    content = (
        "name,budget,plannedStartDate,plannedEndDate,status,progress\n"
        'Survey,"€130,500.00",2027-01-04,2027-02-26,In Progress,40\n'
        "Build,,,,,\n"
    ).encode()
    answer = api("work-packages/import?dryRun=true", content).json()
    assert answer["createRows"] == [
        {
            "row": 2,
            "values": {
                "name": "Survey",
                "status": "In Progress",
                "progress": 40,
                "plannedStartDate": "2027-01-04",
                "plannedEndDate": "2027-02-26",
                "budget": 130500,
            },
        },
        {
            "row": 3,
            "values": {
                "name": "Build",
                "status": "Not Started",
                "progress": None,
                "plannedStartDate": None,
                "plannedEndDate": None,
                "budget": None,
            },
        },
    ]
    html = text_of(
        client_for(cast.lead).post(
            f"{BASE}/work-packages/import/", {"file": SimpleUploadedFile("w.csv", content)}
        )
    )
    table = html.split("The rows it would create", 1)[1].split("</table>", 1)[0]
    cells = re.findall(r"<td>([^<]*)</td>", table)
    assert cells[:7] == [
        "2",
        "Survey",
        "In Progress",
        "40",
        "4 Jan 2027",
        "26 Feb 2027",
        "EUR\xa0130,500",
    ]
    assert cells[7:] == ["3", "Build", "Not Started", "—", "—", "—", "—"]
    assert ">Planned start<" in table or "Planned start" in table
    # A file with a refused row lists no rows to create.
    refused = api("work-packages/import?dryRun=true", b"name,progress\nA,40\n,50\n").json()
    assert refused["createRows"] == [] and refused["errors"]
    assert not WorkPackage.objects.exists()


def test_the_page_lists_refused_rows_and_offers_no_confirmation(cast, client_for):
    client = client_for(cast.lead)
    response = client.post(
        f"{BASE}/changes/import/",
        {"file": SimpleUploadedFile("c.csv", b'summary,impactBudget\nGood,"$45,000"\n')},
    )
    assert response.status_code == 422
    html = text_of(response)
    assert "not this site&#x27;s currency" in html or "not this site's currency" in html
    assert 'name="token"' not in html
    assert not ChangeRequest.objects.exists()


def test_the_page_commit_is_refused_when_the_file_would_now_read_differently(cast, client_for):
    client = client_for(cast.lead)
    preview = client.post(
        f"{BASE}/decisions/import/",
        {"file": SimpleUploadedFile("d.csv", b"decision\nPending one\n")},
    )
    token = re.search(r'name="token" value="([^"]+)"', preview.content.decode())[1]
    key = f"registers:import-preview:{cast.lead.account_id}:{token.partition('-')[0]}"
    stored = cache.get(key)
    cache.set(key, {**stored, "digest": "0" * 64})  # as if checked yesterday
    response = client.post(f"{BASE}/decisions/import/", {"token": token})
    assert response.status_code == 409
    assert not Decision.objects.exists()


# --- 2. money and dates as spreadsheets write them -------------------------------------------


@pytest.mark.parametrize(
    ("text", "currency", "expected"),
    [
        ("€130,500.00", "EUR", "130500.00"),
        ("$45,000", "USD", "45000"),
        ("EUR\xa0130,500", "EUR", "130500"),
        ("130 500 EUR", "EUR", "130500"),
        ("1 250 000", "EUR", "1250000"),
        ("1\u00a0250\u00a0000,", "EUR", None),
        ("1\u202f250\u202f000.5", "EUR", "1250000.5"),
        ("1'250'000", "CHF", "1250000"),
        ("-€1,000", "EUR", "-1000"),
        ("€-1,000.25", "EUR", "-1000.25"),
        ("(1,000)", "EUR", "-1000"),
        ("£12", "GBP", "12"),
        ("130500.5", "EUR", "130500.5"),
    ],
)
def test_money_as_spreadsheets_write_it(text, currency, expected):
    value, problem, _ = money(text, currency)
    if expected is None:
        assert problem
    else:
        assert (value, problem) == (expected, None)


@pytest.mark.parametrize(
    ("text", "currency", "words"),
    [
        ("$45,000", "EUR", "not this site's currency (EUR)"),
        ("GBP 100", "EUR", "not this site's currency (EUR)"),
        ("100 USD", "EUR", "not this site's currency (EUR)"),
        ("12,50", "EUR", "decimal comma"),
        ("1.234", "EUR", "point here could group thousands"),
        ("1.234.567", "EUR", "point here could group thousands"),
        ("1.234,56", "EUR", "point here could group thousands"),
        ("1,23,456", "EUR", "not grouped in threes"),
        ("1,234 567", "EUR", "not grouped in threes"),
    ],
)
def test_money_refused_says_what_was_read(text, currency, words):
    _, problem, _ = money(text, currency)
    assert problem and f"Read “{text}”" in problem and words in problem


@pytest.mark.parametrize("text", ["TBD", "12 abc", "n/a", "€", "1e5", "€ 12 €"])
def test_text_that_is_not_an_amount_goes_to_the_fields_own_rule(text):
    assert money(text, "EUR") == (text, None, None)


def test_every_money_field_of_every_register_reads_the_same_way(cast, api):
    _currency("USD")
    wp = (
        b"name,budget,budgetForecast,budgetActual,budgetPhasing\n"
        b'A,"$130,500.00","USD 1,250,000",45 000,"[{""period"": ""2027-01"", '
        b'""amount"": ""$12,000""}]"\n'
    )
    assert api("work-packages/import", wp).status_code == 201
    package = WorkPackage.objects.get()
    assert (package.budget, package.budget_forecast, package.budget_actual) == (
        130500,
        1250000,
        45000,
    )
    assert package.budget_phasing == [{"period": "2027-01", "amount": 12000}]
    change = b'summary,impactBudget\nMore,"-$45,000"\n'
    assert api("changes/import", change).status_code == 201
    assert ChangeRequest.objects.get().impact_budget == -45000
    # The same refusal, in either register, for another currency.
    for path, column in (("work-packages", "budget"), ("changes", "impactBudget")):
        first = "name" if path == "work-packages" else "summary"
        response = api(f"{path}/import", f'{first},{column}\nB,"€45,000"\n'.encode())
        assert response.status_code == 422
        [row] = response.json()["error"]["rows"]
        assert row["field"] == column and "Read “€45,000”" in row["message"]


def test_xlsx_text_cells_read_like_csv_and_number_cells_as_they_are(cast, api):
    workbook = Workbook()
    sheet = workbook.active
    sheet.append(["name", "budget", "budgetForecast"])
    sheet.append(["A", "€130,500.00", 1.234])
    buffer = io.BytesIO()
    workbook.save(buffer)
    response = api("work-packages/import", buffer.getvalue(), name="w.xlsx")
    assert response.status_code == 201, response.content
    package = WorkPackage.objects.get()
    assert package.budget == 130500
    assert str(package.budget_forecast) == "1.23"  # a number cell, rounded half-even (warned)
    assert any(w["field"] == "budgetForecast" for w in response.json()["warnings"])


def test_the_json_api_keeps_its_rule_for_money(cast, bearer):
    response = Client().post(
        "/api/v1/projects/ALPHA/work-packages",
        data={"name": "A", "budget": "€130,500.00"},
        content_type="application/json",
        **bearer(cast.lead),
    )
    assert response.status_code == 201
    assert response.json()["budget"] is None
    assert response.json()["warnings"][0]["field"] == "budget"


def test_a_spreadsheets_date_is_refused_naming_the_form_expected(cast, api):
    response = api("work-packages/import", b"name,plannedStartDate\nA,01/04/2027\n")
    assert response.status_code == 422
    [row] = response.json()["error"]["rows"]
    assert row["field"] == "plannedStartDate"
    assert "Read “01/04/2027”" in row["message"] and "YYYY-MM-DD" in row["message"]
    assert "2027-04-01 or 2027-01-04" in row["message"]


@pytest.mark.parametrize(("order", "expected"), [("DMY", "2027-04-01"), ("MDY", "2027-01-04")])
def test_a_documented_setting_gives_the_day_order(cast, api, settings, order, expected):
    settings.IMPORT_DATE_ORDER = order
    response = api("work-packages/import", b"name,plannedStartDate\nA,01/04/2027\n")
    assert response.status_code == 201, response.content
    assert WorkPackage.objects.get().planned_start_date.isoformat() == expected
    [warning] = [w for w in response.json()["warnings"] if w["row"] == 2]
    assert expected in warning["message"]
    assert date("31/02/2027")[1] if order == "DMY" else date("02/31/2027")[1]


def test_dates_a_spreadsheet_writes_unambiguously_are_read():
    assert date("2027/04/01")[0] == "2027-04-01"
    assert date("2027-04-01 00:00:00")[0] == "2027-04-01"
    assert date("2027-04-01") == ("2027-04-01", None, None)
    assert date("next week") == ("next week", None, None)


@pytest.mark.parametrize(
    "text",
    [
        "1" * 32_000,
        "1," * 16_000 + "1",
        "€" + " " * 30_000 + "1",
        "1 " * 16_000,
        "(" * 16_000 + "1" + ")" * 16_000,
        "01/" * 10_000 + "2027",
    ],
)
def test_hostile_money_and_date_cells_are_read_in_linear_time(text):
    started = time.perf_counter()
    money(text, "EUR")
    date(text)
    assert time.perf_counter() - started < 0.5


def test_a_hostile_money_cell_in_a_file_is_refused_or_passed_on_not_stored_wrong(cast, api):
    content = b'name,budget\nA,"\x00130,500"\nB,' + b"9" * 400 + b"\n"
    response = api("work-packages/import?dryRun=true", content)
    assert response.status_code == 200
    fields = {(e["row"], e["field"]) for e in response.json()["errors"]}
    assert (2, "budget") in fields and (3, "budget") in fields
    assert not WorkPackage.objects.exists()


# --- 3. templates ----------------------------------------------------------------------------


# The cells with a closed, short set of values (read from the declarations: choices, yes/no,
# a short integer scale); a multi-valued cell (a change's dimensions) has none.
DROP_DOWNS = {
    "work-packages": {"status", "rag", "progress"},
    "risks": {
        "status",
        "direction",
        "materialised",
        "impact",
        "likelihood",
        "residualImpact",
        "residualLikelihood",
        "treatment",
    },
    "decisions": set(),
    "changes": set(),
}


@pytest.mark.parametrize("register", spreadsheets.REGISTERS)
def test_the_xlsx_template_has_the_columns_an_example_and_drop_down_lists(cast, api, register):
    response = api(f"{register}/template?format=xlsx")
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    workbook = load_workbook(io.BytesIO(response.content))
    sheet = workbook.active
    header = [c.value for c in sheet[1]]
    assert header == import_templates.columns(cast.project, register)
    assert set(header) <= spreadsheets.WRITABLE[register]
    assert any(c.value not in (None, "") for c in sheet[2])
    lists = {
        header[sheet[str(v.sqref).split(":")[0]].column - 1]: v.formula1
        for v in sheet.data_validations.dataValidation
    }
    # The person columns offer the project's people, listed on a hidden sheet.
    people = spreadsheets.PERSON_FIELDS[register] & set(header)
    assert set(lists) == DROP_DOWNS[register] | people
    assert all(lists[field].startswith("'People'!$A$1:$A$") for field in people)
    if register == "work-packages":
        assert lists["status"] == '"Not Started,In Progress,Blocked,Complete"'
    # The example row imports as it is, with nothing read unexpectedly.
    preview = api(f"{register}/import?dryRun=true", response.content, name="t.xlsx").json()
    assert (preview["create"], preview["errors"]) == (1, [])
    assert [w for w in preview["warnings"] if w["row"] > 1] == []


@pytest.mark.parametrize("register", spreadsheets.REGISTERS)
def test_the_csv_template_has_the_header_only(cast, api, register):
    response = api(f"{register}/template?format=csv")
    assert response.status_code == 200
    lines = response.content.decode("utf-8-sig").splitlines()
    assert lines == [",".join(import_templates.columns(cast.project, register))]


def test_templates_are_in_the_api_document_and_refuse_an_unknown_format(cast, api, client_for):
    document = Client().get("/api/v1/openapi.json").json()
    assert "/api/v1/projects/{key}/{register}/template" in document["paths"]
    assert api("risks/template?format=ods").status_code == 422
    assert api("ledger/template").status_code == 404
    page = client_for(cast.viewer).get(f"{BASE}/risks/template/?format=csv")
    assert page.status_code == 200
    assert client_for(cast.outsider).get(f"{BASE}/risks/template/").status_code == 404


def test_the_template_is_a_workbook_and_not_a_bomb(cast, api):
    content = api("changes/template").content
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert sum(i.file_size for i in archive.infolist()) < 200_000


@pytest.mark.parametrize("bom", [b"\xff\xfe", b"\xfe\xff"])
@pytest.mark.parametrize("text", ["name\nSurvey\n", '<?xml version="1.0"?><Project/>'])
def test_a_utf16_file_is_refused_saying_how_to_save_it(cast, api, bom, text):
    encoding = "utf-16-le" if bom == b"\xff\xfe" else "utf-16-be"
    response = api("work-packages/import?dryRun=true", bom + text.encode(encoding))
    assert response.status_code == 422
    assert "saved as UTF-16 text" in response.json()["error"]["fields"]["file"][0]
    assert not WorkPackage.objects.exists()


def test_the_page_names_refused_and_coerced_fields_in_words(cast, client_for):
    client = client_for(cast.lead)
    refused = text_of(
        client.post(
            f"{BASE}/work-packages/import/",
            {
                "file": SimpleUploadedFile(
                    "w.csv",
                    b"name,status,plannedStartDate,plannedEndDate\nA,Bogus,2027-06-01,2027-05-01\n",
                )
            },
        )
    )
    # Named as the page's list of columns names it (the register's label, "Planned end").
    assert "<td>Planned end (<code>plannedEndDate</code>)</td>" in refused
    assert "Planned end (<code>plannedEndDate</code>)," in refused
    assert "Must not be before planned start date (2027-06-01)." in refused
    assert "<td>Status (<code>status</code>)</td>" in refused
    coerced = text_of(
        client.post(
            f"{BASE}/work-packages/import/",
            {"file": SimpleUploadedFile("w.csv", b"name,budget\nA,-20\nB,lots\n")},
        )
    )
    assert "<td>Budget (<code>budget</code>)</td>" in coerced
    assert "the spec" not in coerced
    assert "Negative: stored as null (the field takes a number of 0 or more, or nothing)." in (
        coerced
    )


def test_the_import_page_and_templates_name_each_column_once(cast, api, client_for):
    """actualEnd is an alias of actualEndDate under the same label: the page's list of columns
    and the templates name the field once; a file with the alias's column still imports it."""
    page = client_for(cast.lead).get(f"{BASE}/work-packages/import/").content.decode()
    listed = page.split("Columns this register takes")[1].split("</p>")[0]
    assert listed.count("Actual end (") == 1
    assert "(<code>actualEndDate</code>)" in listed
    header = import_templates.columns(cast.project, "work-packages")
    assert "actualEndDate" in header and "actualEnd" not in header
    csv = "name,plannedStartDate,plannedEndDate,actualEnd\nAlias,2026-01-05,2026-02-05,2026-02-01\n"
    preview = api("work-packages/import?dryRun=true", csv.encode(), name="t.csv").json()
    assert (preview["create"], preview["errors"]) == (1, [])
    assert [w for w in preview["warnings"] if w.get("field") == "actualEnd"] == []
