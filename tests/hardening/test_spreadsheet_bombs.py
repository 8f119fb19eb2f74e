"""Hostile import files: a workbook declaring a grid of 17 billion cells, a workbook that
inflates to hundreds of megabytes, a CSV field over the csv module's limit, and files past the
row and column limits. Each answers 422 naming the limit, quickly, never a 500."""

import csv
import io
import time
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from registers import spreadsheets
from registers.models import Risk

IMPORT = "/api/v1/projects/ALPHA/risks/import"

CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
    'relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.'
    'openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="xl/workbook.xml"/>'
    "</Relationships>"
)
WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Risks" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/worksheet" Target="worksheets/sheet1.xml"/>'
    "</Relationships>"
)
SHEET_HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
)


def _workbook(sheet_parts) -> bytes:
    """A minimal XLSX whose sheet XML is streamed from `sheet_parts` (str chunks)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("_rels/.rels", ROOT_RELS)
        archive.writestr("xl/workbook.xml", WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", WORKBOOK_RELS)
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            for part in sheet_parts:
                sheet.write(part.encode())
    return buffer.getvalue()


def _cell(ref: str, text: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'


def dimension_bomb() -> bytes:
    """About 1.5 KB declaring A1:XFD1048576, with one cell in the very last row."""
    return _workbook(
        [
            SHEET_HEAD,
            '<dimension ref="A1:XFD1048576"/><sheetData>',
            f'<row r="1">{_cell("A1", "title")}</row>',
            f'<row r="1048576">{_cell("XFD1048576", "boom")}</row>',
            "</sheetData></worksheet>",
        ]
    )


def inflation_bomb(megabytes: int = 600) -> bytes:
    """A small file whose sheet inflates to `megabytes` of XML (one long run of rows)."""
    row = '<row><c t="inlineStr"><is><t>x</t></is></c></row>'
    chunk = row * (1024 * 1024 // len(row))

    def parts():
        yield SHEET_HEAD + "<sheetData>"
        yield f'<row r="1">{_cell("A1", "title")}</row>'
        for _ in range(megabytes):
            yield chunk
        yield "</sheetData></worksheet>"

    return _workbook(parts())


@pytest.fixture
def lead_client(cast, bearer):
    client = Client()
    auth = bearer(cast.lead)

    def upload(name: str, content: bytes):
        return client.post(IMPORT, {"file": SimpleUploadedFile(name, content)}, **auth)

    return upload


def _refused(response, *words):
    assert response.status_code == 422, response.content[:500]
    body = response.json()["error"]
    assert body["code"] == "validation"
    message = " ".join(body["fields"]["file"])
    for word in words:
        assert word in message, message
    return message


def test_a_declared_dimension_never_builds_the_grid(lead_client):
    content = dimension_bomb()
    assert len(content) < 2000
    started = time.monotonic()
    _refused(lead_client("bomb.xlsx", content), f"{spreadsheets.MAX_SCANNED_ROWS:,} rows")
    assert time.monotonic() - started < 10
    assert not Risk.objects.exists()


def test_a_declared_dimension_is_ignored_for_an_honest_file(lead_client):
    content = _workbook(
        [
            SHEET_HEAD,
            '<dimension ref="A1:XFD1048576"/><sheetData>',
            f'<row r="1">{_cell("A1", "title")}{_cell("B1", "impact")}</row>',
            f'<row r="2">{_cell("A2", "Vendor")}<c r="B2"><v>4</v></c></row>',
            "</sheetData></worksheet>",
        ]
    )
    response = lead_client("honest.xlsx", content)
    assert response.status_code == 201, response.content
    assert Risk.objects.get().title == "Vendor"


def test_a_workbook_that_inflates_past_the_limit_is_refused_before_parsing(lead_client):
    content = inflation_bomb(600)
    assert len(content) < spreadsheets.MAX_BYTES
    started = time.monotonic()
    _refused(lead_client("inflated.xlsx", content), "MB uncompressed", "this one holds 5")
    assert time.monotonic() - started < 5


def test_a_workbook_with_too_many_parts_is_refused(lead_client):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for index in range(spreadsheets.MAX_ZIP_ENTRIES + 1):
            archive.writestr(f"x/{index}.xml", "")
    _refused(lead_client("parts.xlsx", buffer.getvalue()), "parts in a workbook")


def test_a_csv_field_over_the_csv_limit_is_a_422(lead_client):
    huge = "x" * (csv.field_size_limit() + 10)
    content = f'title,description\nVendor,"{huge}"\n'.encode()
    _refused(lead_client("wide.csv", content), "characters per cell")


def test_rows_past_the_limit_stop_the_reading(lead_client):
    lines = ["title"] + [f"Risk {n}" for n in range(spreadsheets.MAX_ROWS + 1)]
    content = "\n".join(lines).encode()
    _refused(lead_client("long.csv", content), f"{spreadsheets.MAX_ROWS:,} rows")
    assert not Risk.objects.exists()


def test_columns_past_the_limit_are_refused(lead_client):
    header = ",".join(["title"] + ["id"] * spreadsheets.MAX_COLUMNS)
    _refused(lead_client("cols.csv", f"{header}\nVendor\n".encode()), "columns per row")


def test_a_csv_that_is_not_csv_is_a_422(lead_client):
    # An unterminated quote at the end of the file is a csv.Error in strict dialects;
    # whatever the reader says, the answer is the error body.
    response = lead_client("odd.csv", b'title\n"Vendor\x00\n')
    assert response.status_code in (201, 422), response.content
