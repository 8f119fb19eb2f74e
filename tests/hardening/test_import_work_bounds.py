"""An import's work is bounded, not only its bytes: a workbook whose cells all point at one
huge shared string passes the byte limits but is refused at the character limits (a shared
string counts once per cell showing it), a cell over the cell limit never reaches the text
cleaner, and a cell pointing at a shared string the workbook does not have is a 422."""

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from governance import cleaning
from governance.errors import ValidationFailed
from registers import spreadsheets
from registers.models import Risk
from tests.hardening.test_spreadsheet_bombs import (
    CONTENT_TYPES,
    ROOT_RELS,
    SHEET_HEAD,
    WORKBOOK,
    _refused,
    lead_client,  # noqa: F401 (a fixture)
)

SHARED_TYPES = CONTENT_TYPES.replace(
    "</Types>",
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
    'officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
)
SHARED_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/worksheet" Target="worksheets/sheet1.xml"/>'
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/sharedStrings" Target="sharedStrings.xml"/>'
    "</Relationships>"
)
HEADER = (
    '<row r="1"><c r="A1" t="inlineStr"><is><t>title</t></is></c>'
    '<c r="B1" t="inlineStr"><is><t>description</t></is></c>'
    '<c r="C1" t="inlineStr"><is><t>mitigation</t></is></c></row>'
)


def shared_string_workbook(strings: list[str], rows: int, index: int = 0) -> bytes:
    """A workbook of `rows` rows under a header, each of three cells showing shared string
    `index` (hand-written parts, as a hostile file would be)."""
    body = "".join(
        f'<row r="{n}">'
        + "".join(f'<c r="{col}{n}" t="s"><v>{index}</v></c>' for col in "ABC")
        + "</row>"
        for n in range(2, rows + 2)
    )
    table = "".join(f"<si><t>{text}</t></si>" for text in strings)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", SHARED_TYPES)
        archive.writestr("_rels/.rels", ROOT_RELS)
        archive.writestr("xl/workbook.xml", WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", SHARED_RELS)
        archive.writestr(
            "xl/sharedStrings.xml",
            '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/'
            f'spreadsheetml/2006/main" count="{len(strings)}" uniqueCount="{len(strings)}">'
            f"{table}</sst>",
        )
        archive.writestr(
            "xl/worksheets/sheet1.xml",
            f"{SHEET_HEAD}<sheetData>{HEADER}{body}</sheetData></worksheet>",
        )
    return buffer.getvalue()


def _inflated(content: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return sum(entry.file_size for entry in archive.infolist())


def _read(content: bytes, name: str = "file.xlsx"):
    return spreadsheets.read_rows("risks", SimpleUploadedFile(name, content))


def _message(exc) -> str:
    return " ".join(exc.value.fields["file"])


def test_the_issue_workbook_is_refused_at_the_cell_limit(lead_client):  # noqa: F811
    """The reported file: 4,000 rows x 3 cells, all pointing at one 1 MB shared string."""
    content = shared_string_workbook(["x" * 1024 * 1024], rows=4000)
    assert len(content) < 50 * 1024
    assert _inflated(content) < spreadsheets.MAX_UNCOMPRESSED_BYTES
    _refused(
        lead_client("amplified.xlsx", content),
        f"{spreadsheets.MAX_CELL_CHARS:,} characters per cell",
        "row 2, column 1",
    )
    assert not Risk.objects.exists()


def test_a_shared_string_counts_once_per_cell_that_shows_it(lead_client):  # noqa: F811
    """Cells at the cell limit, all one shared string: the file's text limit stops it."""
    content = shared_string_workbook(["x" * spreadsheets.MAX_CELL_CHARS], rows=4000)
    assert len(content) < 50 * 1024
    per_row = 3 * spreadsheets.MAX_CELL_CHARS
    past = spreadsheets.MAX_TEXT_CHARS // per_row + 2  # the header's characters count too
    message = _refused(
        lead_client("amplified.xlsx", content),
        f"At most {spreadsheets.MAX_TEXT_CHARS:,} characters of text per file",
    )
    assert f"row {past} goes past it" in message
    assert not Risk.objects.exists()


@pytest.mark.parametrize("kind", ["inline", "csv"])
def test_every_cell_counts_toward_the_text_limit(db, monkeypatch, kind):
    """Inline strings and CSV cells count alike, header and ignored columns included."""
    monkeypatch.setattr(spreadsheets, "MAX_TEXT_CHARS", 40)
    if kind == "csv":
        content = b"title,id\nFirst,0123456789\nSecond,0123456789\n"
        name = "file.csv"
    else:
        cells = [("title", "id"), ("First", "0123456789"), ("Second", "0123456789")]
        rows = "".join(
            f'<row r="{n}">'
            + "".join(f'<c t="inlineStr"><is><t>{text}</t></is></c>' for text in row)
            + "</row>"
            for n, row in enumerate(cells, start=1)
        )
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("[Content_Types].xml", CONTENT_TYPES)
            archive.writestr("_rels/.rels", ROOT_RELS)
            archive.writestr("xl/workbook.xml", WORKBOOK)
            archive.writestr("xl/_rels/workbook.xml.rels", SHARED_RELS)
            archive.writestr(
                "xl/worksheets/sheet1.xml", f"{SHEET_HEAD}<sheetData>{rows}</sheetData></worksheet>"
            )
        content, name = buffer.getvalue(), "file.xlsx"
    # 7 + 15 = 22 after row 2; row 3 brings 38; a fourth character more would pass it.
    assert len(_read(content, name)) == 2
    monkeypatch.setattr(spreadsheets, "MAX_TEXT_CHARS", 37)
    with pytest.raises(ValidationFailed) as refused:
        _read(content, name)
    assert "At most 37 characters of text per file (row 3 goes past it)" in _message(refused)


def test_a_cell_over_the_cell_limit_never_reaches_the_text_cleaner(db, monkeypatch):
    seen = []
    checked = cleaning.control_error
    monkeypatch.setattr(
        cleaning, "control_error", lambda value: seen.append(len(value)) or checked(value)
    )
    limit = spreadsheets.MAX_CELL_CHARS
    content = shared_string_workbook(["y" * (limit + 1)], rows=3)
    with pytest.raises(ValidationFailed) as refused:
        _read(content)
    assert f"At most {limit:,} characters per cell (row 2, column 1 has {limit + 1:,})" in (
        _message(refused)
    )
    assert seen == []
    csv_cell = f'title,description\nVendor,"{"z" * (limit + 1)}"\n'.encode()
    with pytest.raises(ValidationFailed) as refused:
        _read(csv_cell, "file.csv")
    assert f"(row 2, column 2 has {limit + 1:,})" in _message(refused)
    assert seen == []
    rows = _read(shared_string_workbook(["y" * limit], rows=3))  # at the limit: read
    assert [len(data["description"]) for _, data in rows] == [limit] * 3
    assert seen and max(seen) == limit


@pytest.mark.parametrize(
    ("strings", "index", "words"),
    [
        (["only one"], 1, "shared string 1, which the workbook does not have (it has 1)"),
        (["only one"], -1, "shared string -1, which the workbook does not have (it has 1)"),
        ([], 0, "shared string 0, which the workbook does not have (it has 0)"),
    ],
    ids=["past the end", "negative", "empty table"],
)
def test_a_cell_pointing_at_a_missing_shared_string_is_a_422(
    lead_client,  # noqa: F811
    strings,
    index,
    words,
):
    content = shared_string_workbook(strings, rows=2, index=index)
    _refused(lead_client("missing.xlsx", content), "Row 2 refers to", words)
    assert not Risk.objects.exists()


def test_a_cell_pointing_at_an_existing_shared_string_imports(lead_client):  # noqa: F811
    content = shared_string_workbook(["first", "Vendor late"], rows=1, index=1)
    response = lead_client("fine.xlsx", content)
    assert response.status_code == 201, response.content
    risk = Risk.objects.get()
    assert (risk.title, risk.description, risk.mitigation) == ("Vendor late",) * 3


def test_the_sheet_is_read_once_without_looking_for_its_dimension(db, monkeypatch):
    """openpyxl looks for a sheet's <dimension> by parsing to the end of its data: a sheet of
    50 MB was parsed whole before its first row was read. The import never looks."""
    from openpyxl.worksheet._reader import WorkSheetParser

    looked = []
    monkeypatch.setattr(WorkSheetParser, "parse_dimensions", lambda self: looked.append(1) or None)
    assert len(_read(shared_string_workbook(["Vendor"], rows=2))) == 2
    assert looked == []


def test_a_row_of_millions_of_empty_cells_is_stopped_while_parsed(lead_client):  # noqa: F811
    """12 million `<c/>` in one row: 48 KB compressed, 48 MB inflated (under the limit). The
    cells past the column limit are blank, so the row would pass; openpyxl built the whole
    row (gigabytes) before the import saw it. The cells are counted as the XML is parsed."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("_rels/.rels", ROOT_RELS)
        archive.writestr("xl/workbook.xml", WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", SHARED_RELS)
        with archive.open("xl/worksheets/sheet1.xml", "w") as sheet:
            sheet.write(f'{SHEET_HEAD}<sheetData>{HEADER}<row r="2">'.encode())
            for _ in range(12):
                sheet.write(b"<c/>" * 1_000_000)
            sheet.write(b"</row></sheetData></worksheet>")
    content = buffer.getvalue()
    assert len(content) < 100 * 1024
    assert _inflated(content) < spreadsheets.MAX_UNCOMPRESSED_BYTES
    _refused(
        lead_client("empty-cells.xlsx", content),
        f"At most {spreadsheets.MAX_CELLS:,} cells per workbook",
        "row 2 goes past it",
    )


def test_a_workbook_at_the_cell_limit_is_read(db, monkeypatch):
    monkeypatch.setattr(spreadsheets, "MAX_CELLS", 3 + 3 * 4)
    content = shared_string_workbook(["Vendor"], rows=4)  # 3 header cells, 4 rows of 3
    assert len(_read(content)) == 4
    monkeypatch.setattr(spreadsheets, "MAX_CELLS", 3 + 3 * 4 - 1)
    with pytest.raises(ValidationFailed) as refused:
        _read(content)
    assert "At most 14 cells per workbook, empty ones included (row 5 goes past it)" in (
        _message(refused)
    )
