"""Files as spreadsheet programs and planning tools write them, at every import door (the API's
dry run and commit, the page; the assistant's plan import for plans): OpenDocument
spreadsheets (.ods, written here by odfpy, an independent writer) are read; the CSV export's
formula guard is taken off in every format (LibreOffice keeps it as text when it saves the
CSV as XLSX or ODS); typed date and true/false cells are read into date, boolean and text
columns and refused elsewhere saying what the cell holds; amounts in another currency than
the site's are refused by one rule in every importer (cells and plans), and the plan export
writes the site's currency; a baseline with only a start or a finish is warned."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from odf.element import Element
from odf.opendocument import OpenDocumentSpreadsheet
from odf.table import Table, TableCell, TableRow
from odf.text import LineBreak, P, S
from openpyxl import Workbook

from agent import catalogue
from governance import cleaning, formatting
from governance.errors import ValidationFailed
from governance.models import SiteSettings
from registers import mspdi, spreadsheets
from registers.models import Risk, WorkPackage
from tests.agent.conftest import EVERYONE, use_group

pytestmark = pytest.mark.django_db

BASE = "/projects/ALPHA/registers"


def site_currency(code: str) -> None:
    site = SiteSettings.load()
    site.currency = code
    site.save()
    formatting.forget_currency()


# --- writing the files -----------------------------------------------------------------------


def ods(rows: list[list]) -> bytes:
    """An ODS file: each cell a str (text), float, bool, a ("date", "2026-03-01"), a
    ("currency", "GBP", "1500"), a ("text", TableCell), or None (blank). Each row ends with
    LibreOffice's run of blank cells, and the sheet with its run of blank rows."""
    document = OpenDocumentSpreadsheet()
    table = Table(name="Sheet1")
    for values in rows:
        row = TableRow()
        for value in values:
            row.addElement(_ods_cell(value))
        row.addElement(TableCell(numbercolumnsrepeated=1000))
        table.addElement(row)
    table.addElement(TableRow(numberrowsrepeated=1_048_000))
    document.spreadsheet.addElement(table)
    buffer = io.BytesIO()
    document.write(buffer)
    return buffer.getvalue()


def _ods_cell(value) -> TableCell:
    if value is None:
        return TableCell()
    if isinstance(value, Element):
        return value
    if isinstance(value, bool):
        cell = TableCell(valuetype="boolean", booleanvalue="true" if value else "false")
        cell.addElement(P(text="TRUE" if value else "FALSE"))
        return cell
    if isinstance(value, int | float):
        cell = TableCell(valuetype="float", value=value)
        cell.addElement(P(text=str(value)))
        return cell
    if isinstance(value, tuple) and value[0] == "date":
        cell = TableCell(valuetype="date", datevalue=value[1])
        cell.addElement(P(text=value[1]))
        return cell
    if isinstance(value, tuple) and value[0] == "currency":
        cell = TableCell(valuetype="currency", currency=value[1], value=value[2])
        cell.addElement(P(text=f"{value[1]} {value[2]}"))
        return cell
    cell = TableCell(valuetype="string")
    for line in str(value).split("\n"):
        cell.addElement(P(text=line))
    return cell


def xlsx(rows: list[list]) -> bytes:
    book = Workbook()
    sheet = book.active
    for values in rows:
        sheet.append(
            [
                __import__("datetime").date.fromisoformat(v[1])
                if isinstance(v, tuple) and v[0] == "date"
                else v
                for v in values
            ]
        )
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def xlsx_priced(amount: float, number_format: str) -> bytes:
    """A workbook whose budget is a number cell shown in a currency by its number format."""
    book = Workbook()
    sheet = book.active
    sheet.append(["name", "budget"])
    sheet.append(["Survey", amount])
    sheet["B2"].number_format = number_format
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def csv(rows: list[list]) -> bytes:
    lines = [",".join(f'"{str(v).replace(chr(34), chr(34) * 2)}"' for v in row) for row in rows]
    return ("\n".join(lines) + "\n").encode()


class Doors:
    """The API's dry run and commit and the page's preview, for one user."""

    def __init__(self, cast, bearer, client_for):
        self.cast, self.auth, self.page = cast, bearer(cast.lead), client_for(cast.lead)

    def dry_run(self, register, content, name):
        answer = Client().post(
            f"/api/v1/projects/ALPHA/{register}/import?dryRun=true",
            {"file": SimpleUploadedFile(name, content)},
            **self.auth,
        )
        return answer

    def commit(self, register, content, name):
        return Client().post(
            f"/api/v1/projects/ALPHA/{register}/import",
            {"file": SimpleUploadedFile(name, content)},
            **self.auth,
        )

    def preview_page(self, register, content, name):
        return self.page.post(
            f"{BASE}/{register}/import/", {"file": SimpleUploadedFile(name, content)}
        )


@pytest.fixture
def doors(cast, bearer, client_for):
    return Doors(cast, bearer, client_for)


# --- ODS --------------------------------------------------------------------------------------


def test_an_ods_file_imports_at_every_door(cast, doors):
    spaced = TableCell(valuetype="string")
    paragraph = P(text="two")
    paragraph.addElement(S(c=3))
    paragraph.addText("spaces")
    paragraph.addElement(LineBreak())
    paragraph.addText("and a line")
    spaced.addElement(paragraph)
    content = ods(
        [
            [
                "name",
                "plannedStartDate",
                "plannedEndDate",
                "budget",
                "progress",
                "commentary",
                "status",
            ],
            [
                "Survey",
                ("date", "2027-01-04"),
                ("date", "2027-02-05"),
                1500.5,
                40,
                spaced,
                "In Progress",
            ],
            [],
            [
                "Build",
                ("date", "2027-02-08"),
                ("date", "2027-03-26"),
                ("currency", "EUR", "90000"),
                None,
                "=1+1",
            ],
        ]
    )
    assert spreadsheets._is_ods(content)
    dry = doors.dry_run("work-packages", content, "plan.ods")
    assert dry.status_code == 200, dry.content
    body = dry.json()
    assert body["errors"] == [] and body["create"] == 2
    listed = {row["row"]: row["values"] for row in body["createRows"]}
    assert listed[2]["plannedStartDate"] == "2027-01-04" and float(listed[2]["budget"]) == 1500.5
    assert float(listed[4]["budget"]) == 90000 and listed[4]["plannedEndDate"] == "2027-03-26"
    page = doors.preview_page("work-packages", content, "plan.ods")
    assert (
        page.status_code == 200
        and "would create <strong>2 work packages</strong>" in page.content.decode()
    )
    done = doors.commit("work-packages", content, "plan.ods")
    assert done.status_code == 201, done.content
    survey = WorkPackage.objects.get(name="Survey")
    assert survey.commentary == "two   spaces\nand a line" and survey.progress == 40
    assert WorkPackage.objects.get(name="Build").commentary == "=1+1"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (
            b"PK\x03\x04"
            + b"\x00" * 26
            + b"mimetypeapplication/vnd.oasis.opendocument.spreadsheet",
            "not a readable",
        ),
    ],
)
def test_a_broken_ods_file_is_refused_naming_the_format(doors, content, words):
    answer = doors.dry_run("risks", content, "broken.ods")
    assert answer.status_code == 422
    assert words in json.dumps(answer.json())


def test_ods_limits_hold_against_repeats(doors):
    run = TableCell(valuetype="string", numbercolumnsrepeated=500)
    run.addElement(P(text="x"))
    wide = ods([["title"], ["A", *([None] * 5), run]])
    answer = doors.dry_run("risks", wide, "wide.ods")
    assert answer.status_code == 422, answer.content
    assert "At most 200 columns per row (row 2 has more)" in json.dumps(answer.json())
    repeated = TableRow(numberrowsrepeated=1_000_000)
    cell = TableCell(valuetype="string")
    cell.addElement(P(text="Same"))
    repeated.addElement(cell)
    document = OpenDocumentSpreadsheet()
    table = Table(name="S")
    header = TableRow()
    header.addElement(_ods_cell("title"))
    table.addElement(header)
    table.addElement(repeated)
    document.spreadsheet.addElement(table)
    buffer = io.BytesIO()
    document.write(buffer)
    answer = doors.dry_run("risks", buffer.getvalue(), "many.ods")
    assert answer.status_code == 422
    assert "At most 5,000 rows per import" in json.dumps(answer.json())


# --- the formula guard -----------------------------------------------------------------------


@pytest.mark.parametrize("maker,name", [(csv, "r.csv"), (xlsx, "r.xlsx"), (ods, "r.ods")])
def test_the_exports_formula_guard_is_taken_off_in_every_format(doors, maker, name):
    rows = [["title", "description"], ["'=1+1", "'+cmd"], ["'-5", "''quoted"], ["'plain", "x"]]
    content = maker(rows)
    dry = doors.dry_run("risks", content, name)
    assert dry.status_code == 200 and dry.json()["errors"] == [], dry.content
    assert doors.preview_page("risks", content, name).status_code == 200
    assert doors.commit("risks", content, name).status_code == 201
    stored = dict(Risk.objects.values_list("title", "description"))
    assert stored == {"=1+1": "+cmd", "-5": "'quoted", "'plain": "x"}


def test_an_xlsx_export_of_text_starting_with_the_guard_imports_back_unchanged(cast, doors):
    from governance.permissions import caller_for
    from registers.services import risk_create

    caller = caller_for(cast.lead, cast.project)
    for title in ("'=x", "''y", "'plain", "=z"):
        risk_create(caller=caller, data={"title": title})
    for file_format in ("xlsx", "csv"):
        content, _, name = spreadsheets.export(cast.project, "risks", file_format, "api")
        reading = spreadsheets.read_file("risks", SimpleUploadedFile(name, content))
        assert sorted(d["title"] for _, d in reading.rows) == sorted(["'=x", "''y", "'plain", "=z"])


# --- typed cells -----------------------------------------------------------------------------

TYPED = [
    # (register, header, cell, stored field or None, the value stored / the words of the refusal)
    (
        "risks",
        "title",
        ("date", "2026-03-01"),
        "2026-03-01",
        "The cell's date is read as the text 2026-03-01.",
    ),
    ("risks", "description", True, "TRUE", "The cell's true/false value is read as the text TRUE."),
    ("risks", "materialised", True, True, None),
    ("work-packages", "plannedStartDate", ("date", "2027-01-04"), "2027-01-04", None),
]
REFUSED = [
    (
        "risks",
        "impact",
        ("date", "2026-03-01"),
        "Must be a number; the cell holds the date 2026-03-01.",
    ),
    (
        "risks",
        "materialised",
        ("date", "2026-03-01"),
        "Must be true or false; the cell holds the date 2026-03-01.",
    ),
    (
        "work-packages",
        "plannedStartDate",
        True,
        "Must be a date; the cell holds the true/false value TRUE.",
    ),
    (
        "work-packages",
        "budget",
        False,
        "Must be a number; the cell holds the true/false value FALSE.",
    ),
    (
        "work-packages",
        "plannedStartDate",
        46082,
        "Must be a date; the cell holds the number 46082 (format the cell as a date, or write "
        "YYYY-MM-DD).",
    ),
]
FIRST = {"risks": "title", "work-packages": "name"}


def _typed_file(maker, register, header, cell):
    first = FIRST[register]
    if header == first:
        return maker([[header], [cell]])
    return maker([[first, header], ["Typed", cell]])


@pytest.mark.parametrize("maker,name", [(xlsx, "t.xlsx"), (ods, "t.ods")])
@pytest.mark.parametrize(("register", "header", "cell", "stored", "note"), TYPED)
def test_a_typed_cell_is_read_where_the_column_takes_it(
    doors, maker, name, register, header, cell, stored, note
):
    content = _typed_file(maker, register, header, cell)
    dry = doors.dry_run(register, content, name)
    assert dry.status_code == 200 and dry.json()["errors"] == [], dry.content
    warnings = [w["message"] for w in dry.json()["warnings"] if w["field"] == header]
    assert (note in warnings) if note else not warnings, warnings
    assert doors.preview_page(register, content, name).status_code == 200
    assert doors.commit(register, content, name).status_code == 201
    model = Risk if register == "risks" else WorkPackage
    field = {"plannedStartDate": "planned_start_date"}.get(header, header)
    value = model.objects.values_list(field, flat=True).get()
    assert str(value) == str(stored)


@pytest.mark.parametrize("maker,name", [(xlsx, "t.xlsx"), (ods, "t.ods")])
@pytest.mark.parametrize(("register", "header", "cell", "words"), REFUSED)
def test_a_typed_cell_is_refused_saying_what_it_holds(
    doors, maker, name, register, header, cell, words
):
    content = _typed_file(maker, register, header, cell)
    dry = doors.dry_run(register, content, name)
    assert dry.status_code == 200, dry.content
    assert dry.json()["errors"] == [{"row": 2, "field": header, "message": words}]
    page = doors.preview_page(register, content, name)
    assert page.status_code == 422 and words in page.content.decode()
    commit = doors.commit(register, content, name)
    assert commit.status_code == 422 and words in json.dumps(commit.json())
    assert not Risk.objects.exists() and not WorkPackage.objects.exists()


# --- one currency rule -----------------------------------------------------------------------

NS = "http://schemas.microsoft.com/project"


def plan(code: str | None, cost: int = 352625, baseline: str = "") -> str:
    currency = (
        f"<CurrencySymbol>£</CurrencySymbol><CurrencyCode>{code}</CurrencyCode>" if code else ""
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><Project xmlns="{NS}">{currency}<Tasks>'
        "<Task><UID>0</UID><ID>0</ID><Name>P</Name><OutlineLevel>0</OutlineLevel></Task>"
        "<Task><UID>1</UID><ID>1</ID><Name>Survey</Name><OutlineLevel>1</OutlineLevel>"
        "<Start>2027-01-04T08:00:00</Start><Finish>2027-01-15T17:00:00</Finish>"
        f"<Cost>{cost}</Cost>{baseline}</Task></Tasks></Project>"
    )


def _assistant(cast, xml: str, **extra):
    from governance.tracker.local import scripting

    scripting.ensure_group(EVERYONE, members=["lead"])
    use_group(EVERYONE)
    ctx = catalogue.Context(request=catalogue.request_for(cast.lead), client="test")
    return catalogue.run(ctx, "import_project_plan", {"projectKey": "ALPHA", "xml": xml, **extra})


@pytest.mark.parametrize(
    ("content", "name", "words"),
    [
        (csv([["name", "budget"], ["Survey", "£1,500.00"]]), "w.csv", "an amount in £"),
        (xlsx([["name", "budget"], ["Survey", "GBP 1500"]]), "w.xlsx", "an amount in GBP"),
        (
            ods([["name", "budget"], ["Survey", ("currency", "GBP", "1500")]]),
            "w.ods",
            "an amount in GBP",
        ),
        (xlsx_priced(1500, "[$£-809]#,##0.00"), "w.xlsx", "an amount in £"),
        (xlsx_priced(1500.5, '"GBP" #,##0.00'), "w.xlsx", "an amount in GBP"),
        (plan("GBP").encode(), "p.xml", "Read the plan's CurrencyCode “GBP”"),
    ],
)
def test_another_currency_is_refused_in_every_importer(cast, doors, content, name, words):
    site_currency("EUR")
    dry = doors.dry_run("work-packages", content, name)
    said = json.dumps(dry.json(), ensure_ascii=False)
    assert words in said and "(EUR)" in said, said
    commit = doors.commit("work-packages", content, name)
    assert commit.status_code == 422 and words in json.dumps(commit.json(), ensure_ascii=False)
    page = doors.preview_page("work-packages", content, name)
    assert page.status_code == 422
    if name == "p.xml":
        with pytest.raises(ValidationFailed) as refused:
            _assistant(cast, content.decode())
        assert words in " ".join(refused.value.fields["xml"])
    assert not WorkPackage.objects.exists()


@pytest.mark.parametrize("number_format", ["[$€-407]#,##0.00", "#,##0.00", "0", "[$-409]0.00"])
def test_a_number_shown_in_the_sites_currency_or_none_imports_without_a_word(doors, number_format):
    site_currency("EUR")
    answer = doors.commit("work-packages", xlsx_priced(1500.5, number_format), "w.xlsx")
    assert answer.status_code == 201, answer.content
    assert answer.json()["warnings"] == []
    assert str(WorkPackage.objects.get().budget) == "1500.50"


def test_a_plan_in_the_sites_currency_or_without_costs_imports(cast, doors):
    site_currency("GBP")
    assert doors.commit("work-packages", plan("GBP").encode(), "p.xml").status_code == 201
    site_currency("EUR")
    WorkPackage.objects.all().delete()
    assert doors.commit("work-packages", plan("GBP", cost=0).encode(), "p.xml").status_code == 201
    WorkPackage.objects.all().delete()
    assert doors.commit("work-packages", plan(None).encode(), "p.xml").status_code == 201
    WorkPackage.objects.all().delete()
    assert doors.commit("work-packages", plan("EUR").encode(), "p.xml").status_code == 201


@pytest.mark.parametrize(("code", "symbol"), [("EUR", "€"), ("GBP", "£"), ("CHF", "Fr.")])
def test_the_plan_export_writes_the_sites_currency_and_imports_back(cast, doors, code, symbol):
    site_currency(code)
    assert doors.commit("work-packages", plan(code).encode(), "p.xml").status_code == 201
    content, _, _ = mspdi.export(cast.project)
    text = content.decode()
    assert f"<CurrencyCode>{code}</CurrencyCode>" in text
    assert f"<CurrencySymbol>{symbol}</CurrencySymbol>" in text
    assert (
        text.index("<CurrencyDigits>")
        < text.index("<CurrencySymbol>")
        < text.index("<CurrencyCode>")
    )
    rows = mspdi.read_file(SimpleUploadedFile("p.xml", content)).rows
    assert rows[0][1]["budget"] == "3526.25"
    site_currency("USD" if code != "USD" else "EUR")
    with pytest.raises(ValidationFailed) as refused:
        mspdi.read_file(SimpleUploadedFile("p.xml", content))
    assert "another currency" in refused.value.fields["file"][0]


# --- a baseline with one date ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("baseline", "words"),
    [
        ("<Start>2026-12-01T08:00:00</Start>", "gives only its start (2026-12-01), no finish"),
        ("<Finish>2027-01-29T17:00:00</Finish>", "gives only its finish (2027-01-29), no start"),
    ],
)
def test_a_baseline_with_one_date_is_warned_at_every_door(cast, doors, baseline, words):
    xml = plan(None, baseline=f"<Baseline><Number>0</Number>{baseline}</Baseline>")
    dry = doors.dry_run("work-packages", xml.encode(), "p.xml").json()
    said = [w["message"] for w in dry["warnings"]]
    assert any(words in m and "task 1 'Survey'" in m for m in said), said
    assert dry["createRows"][0]["values"]["plannedStartDate"] == "2027-01-04"
    page = doors.preview_page("work-packages", xml.encode(), "p.xml")
    assert words in page.content.decode()
    preview = _assistant(cast, xml)
    assert preview["warnings"] == dry["warnings"]
    done = doors.commit("work-packages", xml.encode(), "p.xml").json()
    assert any(words in w["message"] for w in done["warnings"])


def _deep_ods(depth: int) -> bytes:
    """A spreadsheet whose content.xml nests `depth` elements inside one another."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(
            zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.spreadsheet"
        )
        archive.writestr("content.xml", "<a>" * depth + "</a>" * depth)
    return out.getvalue()


@pytest.mark.parametrize("depth", [33, 1_000, 100_000])
def test_an_ods_file_nesting_too_deep_is_refused_by_the_one_xml_bound(doors, depth):
    content = _deep_ods(depth)
    for answer in (
        doors.dry_run("risks", content, "deep.ods"),
        doors.commit("risks", content, "deep.ods"),
        doors.preview_page("risks", content, "deep.ods"),
    ):
        assert answer.status_code == 422, answer.content
        text = answer.content.decode()
        assert f"more than {cleaning.MAX_XML_DEPTH} levels deep" in text
    assert not Risk.objects.exists()


def test_an_ods_file_at_the_xml_bound_is_read():
    content = _deep_ods(cleaning.MAX_XML_DEPTH)
    assert list(spreadsheets._ods_grid(content)) == []
