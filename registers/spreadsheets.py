"""CSV and XLSX: exports of each register, and the reading of an import file into rows of
API field names for `registers.services.register_import`.

An export has two shapes. `people` (the default): one column per field under the label the
register pages use, people by display name, dates and amounts as typed cells (XLSX) or ISO
dates and plain numbers (CSV), the header row frozen and filtered. `api`: the API
representation, one column per field under its API name, derived fields included, people as
account ids with display names beside them, for round trips."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from governance.specs import Spec


import csv
import dataclasses
import datetime as dt
import functools
import hashlib
import io
import json
import re
import zipfile
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import IO, Any

from defusedxml import DefusedXmlException
from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils import timezone
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.reader.excel import ExcelReader
from openpyxl.styles import Font
from openpyxl.styles.numbers import BUILTIN_FORMATS_MAX_SIZE
from openpyxl.utils import get_column_letter
from openpyxl.utils.exceptions import InvalidFileException
from openpyxl.worksheet._read_only import ReadOnlyWorksheet
from openpyxl.worksheet._reader import CELL_TAG, ROW_TAG, WorkSheetParser
from openpyxl.xml.functions import iterparse

from governance import cleaning, formatting, specs, spreadsheet_values, streaming
from governance.errors import BadRequest, ValidationFailed
from governance.models import Project
from governance.people import Person, resolve
from governance.roster import PersonMatch, ProjectPeople
from governance.specs import Account, Boolean, IsoDate
from registers import listing, mspdi, vocabulary
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from registers.serializers import (
    change_to_dict,
    decision_to_dict,
    risk_to_dict,
    work_package_to_dict,
)
from registers.specs import SPECS
from registers.uploads import MAX_BYTES, MAX_ROWS, MONEY_COLUMNS, Reading

REGISTERS = ["work-packages", "risks", "decisions", "changes"]
TITLES = {
    "work-packages": "Work packages",
    "risks": "Risks",
    "decisions": "Decisions",
    "changes": "Changes",
}


def _name_column(field: str) -> str:
    """The display-name column next to a person column: ownerAccountId -> ownerName."""
    return field.removesuffix("AccountId") + "Name"


# Display-name columns written after each person column: {register: {field: column}}.
NAME_COLUMNS = {
    slug: {api: _name_column(api) for api in specs.with_marker(spec, Account)}
    for slug, spec in SPECS.items()
}
WRITABLE = {slug: set(specs.writable(spec)) for slug, spec in SPECS.items()}
# The person fields an import writes: a cell holds an accountId, an e-mail or a name.
PERSON_FIELDS_IN_ORDER = {
    slug: [api for api in NAME_COLUMNS[slug] if api in WRITABLE[slug]] for slug in SPECS
}
PERSON_FIELDS = {slug: set(fields) for slug, fields in PERSON_FIELDS_IN_ORDER.items()}
READ_ONLY = {slug: set(specs.read_only(spec)) for slug, spec in SPECS.items()}
_KINDS = {
    (api, specs.json_kind(spec, api)) for spec in SPECS.values() for api in specs.writable(spec)
}
MONEY_FIELDS = set().union(*MONEY_COLUMNS.values())
LIST_FIELDS = {api for api, kind in _KINDS if kind == "list"}
JSON_FIELDS = {api for api, kind in _KINDS if kind == "object"}
BOOLEAN_FIELDS = {api for spec in SPECS.values() for api in specs.with_rule(spec, Boolean)}
DATE_FIELDS = {api for spec in SPECS.values() for api in specs.with_rule(spec, IsoDate)}


def _field_kind(spec: type[Spec], api: str) -> str:
    """What a column takes, for reading a typed cell (a date, a true/false) into it."""
    if api in DATE_FIELDS:
        return "date"
    if api in BOOLEAN_FIELDS:
        return "boolean"
    if api in MONEY_FIELDS:
        return "number"
    if api in JSON_FIELDS:
        return "object"
    if api in LIST_FIELDS:
        return "list"
    rule = specs.fields(spec)[api].rule
    kinds = (rule.schema() if rule else {}).get("type", [])
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return "number" if {"integer", "number"} & set(kinds) else "text"


# {register: {column: "date" | "boolean" | "number" | "object" | "list" | "text"}}
FIELD_KINDS = {
    slug: {api: _field_kind(spec, api) for api in specs.writable(spec)}
    for slug, spec in SPECS.items()
}
EXPECTED = {
    "date": "Must be a date",
    "boolean": "Must be true or false",
    "number": "Must be a number",
    "object": "Must be JSON",
}
# A cell a spreadsheet would run as a formula is written with a leading apostrophe in CSV; so
# is a cell that starts with an apostrophe, so that the import, which takes one leading
# apostrophe off when one of these follows it, gives back exactly the text exported. The
# import takes it off in every format: a CSV export opened in LibreOffice and saved as XLSX
# or ODS keeps the apostrophe as text, and the XLSX export doubles a leading apostrophe
# before one of these for the same reason.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
CSV_GUARDED = (*FORMULA_START, "'")
# A line break in XLSX text: XML reads a literal carriage return as a line feed, so the
# export writes it as OOXML's escape and the import reads the escapes (as Excel does).
XLSX_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")
# Import limits, applied while reading (a file is never expanded whole into memory):
# MAX_BYTES and MAX_ROWS (`registers.uploads`, shared with the plan's reader), and these.
MAX_SCANNED_ROWS = 50_000  # rows read at all, blank ones included
MAX_COLUMNS = 200
MAX_UNCOMPRESSED_BYTES = 50 * 1024 * 1024  # a workbook's parts, inflated
MAX_ZIP_ENTRIES = 500
# The work, not only the bytes: a workbook's cells may all point at one shared string, so
# the characters are counted as each cell is read (a shared string once per cell using it).
MAX_CELL_CHARS = 32_767  # Excel's own limit for one cell; checked before any cleaning
MAX_TEXT_CHARS = 10_000_000  # all cells of the file together, header included
MAX_CELLS = (MAX_ROWS + 1) * MAX_COLUMNS  # a workbook's stored cells, blank ones included
SNIFF_CHARS = 64 * 1024  # the start of a CSV file that decides its delimiter
DELIMITERS = (",", ";", "\t")
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


# --- export ----------------------------------------------------------------------------------


# Rows read, written and sent at a time: an export holds this many, never the whole register.
EXPORT_CHUNK = 500


def records(project: Project, register: str) -> list[dict[str, Any]]:
    """The register as the API represents it, in the register's order."""
    return list(listing.each_dict(project, register, EXPORT_CHUNK))


def _people(
    project: Project, register: str, fields: Iterable[str] | None = None
) -> dict[str, Person]:
    """Everyone the register's rows name in `fields` (default: the account fields), resolved
    in one call: their distinct ids read in SQL (a query per person field), not from the
    rows."""
    stored = specs.attributes(SPECS[register], NAME_COLUMNS[register] if fields is None else fields)
    rows = listing.records(project, register)
    ids: set[str] = set()
    for attribute in stored.values():
        ids.update(rows.order_by().values_list(attribute, flat=True).distinct())
    return resolve(ids)


def table(project: Project, register: str) -> tuple[list[str], Iterator[list[Any]]]:
    """Header and rows, the rows read as they are iterated (`EXPORT_CHUNK` at a time). People
    appear as accountId and display name; an unnamed person (a decision without a maker) is
    blank in both. The people are resolved here, before any row is read."""
    names = NAME_COLUMNS[register]
    people = _people(project, register)
    fields = [f for f in _fields(project, register) if f != "revision"]
    header = []
    for field in fields:
        header.append(field)
        if field in names:
            header.append(names[field])

    def body() -> Iterator[list[Any]]:
        for record in listing.each_dict(project, register, EXPORT_CHUNK):
            line = []
            for field in fields:
                line.append(_cell(field, record.get(field)))
                if field in names:
                    person = people.get(record.get(field) or "")
                    line.append(person.display_name if person else "")
            yield line

    return header, body()


# --- the export for people ------------------------------------------------------------------

# The export's shapes: `people` (labels, names, typed cells) and `api` (API names, account ids).
SHAPES = ("people", "api")
SHAPE_MESSAGE = (
    "Must be people (the page labels, names, typed dates and amounts) "
    "or api (the API field names and account ids)."
)
# The formats people read in the XLSX export.
DATE_FORMAT = "yyyy-mm-dd"
DATETIME_FORMAT = "yyyy-mm-dd hh:mm"
MONEY_FORMAT = "#,##0.00"
# Column widths (characters) of the XLSX export, by what the column holds; the label's own
# length when it is longer. A text of more than LONG_TEXT characters gets the widest.
WIDTHS = {"date": 12, "datetime": 17, "money": 14, "number": 10, "person": 22, "text": 18}
LONG_TEXT, LONG_WIDTH, SHORT_WIDTH, MAX_WIDTH = 200, 48, 30, 60
ID_WIDTH = 38  # a uuid whole


def checked_shape(shape: str | None) -> str:
    """The export's shape (`people` when none is given); another value answers 400."""
    if shape in (None, ""):
        return "people"
    if shape not in SHAPES:
        raise BadRequest(
            f"Unknown export shape. {SHAPE_MESSAGE}", fields={"shape": [SHAPE_MESSAGE]}
        )
    return str(shape)


@dataclasses.dataclass(frozen=True)
class Column:
    """One column of the export for people: the API field, its label, and what it holds
    ("person", "date", "datetime", "money", "number", "text")."""

    field: str
    label: str
    kind: str
    width: int


def _person_fields(project: Project, register: str) -> list[str]:
    """The fields naming a person: the account fields, and who created, changed or decided."""
    names = NAME_COLUMNS[register]
    return [f for f in _fields(project, register) if f in names or f.endswith("AccountId")]


def _kind(register: str, field: str, persons: set[str]) -> str:
    if field in persons:
        return "person"
    if field in MONEY_FIELDS or field == "budgetBaseline":
        return "money"
    if field in DATE_FIELDS or field.endswith("Date"):
        return "date"
    if field.endswith("At"):
        return "datetime"
    kind = FIELD_KINDS[register].get(field, "text")
    return kind if kind == "number" else "text"


def _width(spec: type[Spec], field: str, label: str, kind: str) -> int:
    width = ID_WIDTH if field == "id" or field.endswith(("Id", "Ids")) else WIDTHS[kind]
    declared = specs.fields(spec).get(field)
    rule = declared.rule if declared else None
    longest = (rule.schema() if rule else {}).get("maxLength", 0)
    if kind == "text" and isinstance(longest, int) and longest:
        width = LONG_WIDTH if longest > LONG_TEXT else SHORT_WIDTH
    return min(MAX_WIDTH, max(width, len(label) + 3))


def people_columns(project: Project, register: str) -> list[Column]:
    """The export's columns for people, in the API's order: each field once under the label
    the register pages use (an alias of a field already there, such as `actualEnd`, and the
    revision left out); people by name."""
    spec = SPECS[register]
    declared = specs.labels(spec)
    persons = set(_person_fields(project, register))
    columns: list[Column] = []
    seen: set[str] = set()
    for field in _fields(project, register):
        label = vocabulary.export_header(field, declared.get(field))
        if field == "revision" or label.casefold() in seen:
            continue
        seen.add(label.casefold())
        kind = _kind(register, field, persons)
        columns.append(Column(field, label, kind, _width(spec, field, label, kind)))
    return columns


def people_table(project: Project, register: str) -> tuple[list[Column], Iterator[list[Any]]]:
    """The columns and rows of the export for people, the rows read as they are iterated
    (`EXPORT_CHUNK` at a time). A person is their display name (their account id when the
    directory does not know them); dates are dates, times local times, amounts numbers."""
    columns = people_columns(project, register)
    people = _people(project, register, [c.field for c in columns if c.kind == "person"])

    def body() -> Iterator[list[Any]]:
        for record in listing.each_dict(project, register, EXPORT_CHUNK):
            yield [_people_cell(column, record.get(column.field), people) for column in columns]

    return columns, body()


def _people_cell(column: Column, value: Any, people: dict[str, Person]) -> Any:
    if value is None or value == "":
        return ""
    if column.kind == "person":
        person = people.get(value)
        return person.display_name if person and person.known else value
    if column.kind == "date" and isinstance(value, str):
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            return value
    if column.kind == "datetime" and isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
        if timezone.is_aware(moment):
            moment = timezone.localtime(moment)
        return moment.replace(tzinfo=None, microsecond=0)
    return _cell(column.field, value)


def _fields(project: Project, register: str) -> list[str]:
    """The fields of the register's API representation, in its order. The `imported` column
    is always there (the sample is an imported row); it reads true on imported rows and is
    blank on the others, as the API leaves the key out of them."""
    blank = {
        "work-packages": lambda: work_package_to_dict(WorkPackage(project=project), None),
        "risks": lambda: risk_to_dict(Risk(project=project, imported=True), []),
        "decisions": lambda: decision_to_dict(Decision(project=project, imported=True)),
        "changes": lambda: change_to_dict(ChangeRequest(project=project, imported=True)),
    }[register]()
    return list(blank)


def _cell(field: str, value: Any) -> Any:
    if value is None:
        return ""
    if field in LIST_FIELDS:
        return ", ".join(value)
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False) if value else ""
    if field in DATE_FIELDS and isinstance(value, str):
        return dt.date.fromisoformat(value)
    return value


def csv_chunks(header: list[str], rows: Iterable[list[Any]]) -> Iterator[bytes]:
    """The CSV file (UTF-8 with a byte order mark) in pieces of `EXPORT_CHUNK` rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    buffer.write("\ufeff")
    writer.writerow(header)
    for number, row in enumerate(rows, 1):
        writer.writerow([_csv_text(v) for v in row])
        if number % EXPORT_CHUNK == 0:
            yield buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue().encode("utf-8")


def to_csv(header: list[str], rows: Iterable[list[Any]]) -> bytes:
    return b"".join(csv_chunks(header, rows))


def _csv_text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):  # a local time, to the minute
        return value.isoformat(sep=" ", timespec="minutes")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        value = cleaning.file_text(value)  # a noncharacter stored before the rule
        if value.startswith(CSV_GUARDED):
            return "'" + value
    return value  # an amount a float cannot hold writes its digits (cleaning.Money)


def xlsx_file(title: str, header: list[str], rows: Iterable[list[Any]]) -> IO[bytes]:
    """The workbook written row by row (openpyxl's write-only mode keeps no cell in memory)
    into a temporary file, at its start. A workbook is a zip whose directory comes last, so it
    is whole only once every row is written: the file, not the memory, holds it."""
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(title)
    sheet.append(header)
    for row in rows:
        sheet.append([_xlsx_cell(sheet, v) for v in row])
    return streaming.saved(workbook)


def people_xlsx_file(title: str, columns: list[Column], rows: Iterable[list[Any]]) -> IO[bytes]:
    """The export for people, written as `xlsx_file` writes (row by row, nothing held): the
    labels in a bold first row, frozen and filtered; each column as wide as what it holds;
    dates and times as date cells, amounts as numbers in a money format."""
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(title)
    for index, column in enumerate(columns, 1):  # widths come before the rows
        sheet.column_dimensions[get_column_letter(index)].width = column.width
    sheet.freeze_panes = "A2"
    bold = Font(bold=True)
    header = []
    for column in columns:
        cell = WriteOnlyCell(sheet, value=column.label)
        cell.font = bold
        header.append(cell)
    sheet.append(header)
    formats = {"date": DATE_FORMAT, "datetime": DATETIME_FORMAT, "money": MONEY_FORMAT}
    count = 0
    for row in rows:
        line = []
        for column, value in zip(columns, row, strict=True):
            number_format = formats.get(column.kind)
            typed = isinstance(value, dt.date) or (
                isinstance(value, int | float) and not isinstance(value, bool | cleaning.Money)
            )
            if number_format and typed:
                cell = WriteOnlyCell(sheet, value=value)
                cell.number_format = number_format
                line.append(cell)
            else:
                line.append(_xlsx_cell(sheet, value))
        sheet.append(line)
        count += 1
    last = get_column_letter(max(len(columns), 1))
    sheet.auto_filter.ref = f"A1:{last}{count + 1}"
    return streaming.saved(workbook)


def to_xlsx(title: str, header: list[str], rows: Iterable[list[Any]]) -> bytes:
    with xlsx_file(title, header, rows) as file:
        return file.read()


def _xlsx_cell(sheet: Any, value: Any) -> Any:
    if isinstance(value, cleaning.Money):
        return value.text  # a number cell is a float: the exact digits as text
    if not isinstance(value, str):
        return value
    value = cleaning.file_text(value)  # no noncharacter corrupts the workbook
    if "_x" in value:  # text that reads as an escape keeps its underscore (_x005F_)
        value = XLSX_ESCAPE.sub(r"_x005F_x\1_", value)
    value = value.replace("\r", "_x000D_")
    if len(value) > 1 and value[0] == "'" and value[1] in CSV_GUARDED:
        value = "'" + value  # the import takes one off (see CSV_GUARDED)
    if value.startswith("="):
        cell = WriteOnlyCell(sheet, value=value)
        cell.data_type = "s"  # text, never a formula
        return cell
    return value


def export_stream(
    project: Project, register: str, file_format: str, shape: str | None = "people"
) -> tuple[Iterator[bytes], str, str, int | None]:
    """(content in pieces, content type, file name, size if known) of the register as CSV or
    XLSX in the given shape (`people` or `api`, see the module), or the work packages as a
    Microsoft Project plan (`mspdi`, `registers.mspdi`). The CSV is written as it is sent,
    `EXPORT_CHUNK` rows at a time; the XLSX is written to a temporary file first (a workbook
    is whole only at its end), then sent from it."""
    shape = checked_shape(shape)
    if file_format == "mspdi" and register == "work-packages":
        content, content_type, name = mspdi.export(project)
        return iter([content]), content_type, name, len(content)
    if file_format not in CONTENT_TYPES:
        message = "Must be csv or xlsx"
        if register == "work-packages":
            message += ", or mspdi (a Microsoft Project XML plan)"
        raise ValidationFailed({"format": [message + "."]})
    name = f"{project.key}-{register}-{timezone.localdate().isoformat()}.{file_format}"
    if shape == "people":
        columns, cells = people_table(project, register)
        if file_format == "csv":
            labels = [c.label for c in columns]
            return csv_chunks(labels, cells), CONTENT_TYPES["csv"], name, None
        file = people_xlsx_file(TITLES[register], columns, cells)
        size = file.seek(0, io.SEEK_END)
        file.seek(0)
        return streaming.chunks(file), CONTENT_TYPES[file_format], name, size
    header, rows = table(project, register)
    if file_format == "csv":
        return csv_chunks(header, rows), CONTENT_TYPES["csv"], name, None
    file = xlsx_file(TITLES[register], header, rows)
    size = file.seek(0, io.SEEK_END)
    file.seek(0)
    return streaming.chunks(file), CONTENT_TYPES[file_format], name, size


def export(
    project: Project, register: str, file_format: str, shape: str | None = "people"
) -> tuple[bytes, str, str]:
    """(content, content type, file name): `export_stream`, whole."""
    pieces, content_type, name, _ = export_stream(project, register, file_format, shape)
    return b"".join(pieces), content_type, name


def export_response(
    project: Project, register: str, file_format: str, shape: str | None = "people"
) -> HttpResponseBase:
    """The export as a download. CSV and XLSX are streamed: no answer holds the whole file
    in memory."""
    pieces, content_type, name, size = export_stream(project, register, file_format, shape)
    response: HttpResponseBase
    if file_format == "mspdi":  # a plan, written whole by registers.mspdi
        response = HttpResponse(b"".join(pieces), content_type=content_type)
    else:
        response = StreamingHttpResponse(pieces, content_type=content_type)
        if size is not None:
            response["Content-Length"] = str(size)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


# --- import ----------------------------------------------------------------------------------


def read_rows(register: str, upload: Any) -> list[tuple[int, dict[str, Any]]]:
    """The rows of an uploaded file (see `read_file`); any cell that cannot be read refuses
    the file (422, each cell listed)."""
    reading = read_file(register, upload)
    if reading.problems:
        raise unreadable(reading.problems)
    return reading.rows


def unreadable(problems: list[dict[str, Any]]) -> ValidationFailed:
    failed = len({p["row"] for p in problems})
    noun = "row has" if failed == 1 else "rows have"
    return ValidationFailed(
        {"file": [f"{failed} {noun} values that cannot be read; nothing was imported."]},
        rows=problems,
    )


def read_file(
    register: str, upload: Any, people: Callable[[], ProjectPeople] | None = None
) -> Reading:
    """The rows of an uploaded CSV or XLSX file as (row number, data in API field names).
    A column is named by the field's API name or by its label on the pages
    (`registers.vocabulary.field_for_column`); a person field also by a name, e-mail or
    accountId column of it (ownerName, "Owner e-mail"). Read-only and derived columns of an
    export are ignored (and noted), so an export imports back; an unknown column refuses the
    file. A person is written as an accountId, an e-mail address or a display name and read
    with `people` (the project's people, loaded once when a person cell is met: see
    `_people_of_rows`); without it the cell is taken as written. The file is read as a
    stream and reading stops at the limits (rows, columns, characters per cell and per file,
    a workbook's uncompressed size and entries), answering 422 with the limit named; a
    workbook's declared dimensions are ignored. CSV is read as RFC 4180; only its delimiter
    is guessed. Money and dates in text cells are read as spreadsheets write them
    (`governance.spreadsheet_values`)."""
    if upload is None:
        raise ValidationFailed({"file": ["Choose a CSV, XLSX or ODS file to import."]})
    if upload.size > MAX_BYTES:
        raise ValidationFailed({"file": [f"At most {MAX_BYTES // (1024 * 1024)} MB per file."]})
    content = upload.read()
    is_zip = content[:4] == b"PK\x03\x04"
    is_ods = is_zip and _is_ods(content)
    grid: Generator[Sequence[Any], None, None]
    if not is_zip:
        grid = _csv_grid(content)
    elif is_ods:
        grid = _ods_grid(content)
    else:
        grid = _xlsx_grid(content)
    try:
        rows, problems, notes = _rows(
            register, grid, csv_text=not is_zip, escapes=not is_ods, people=people
        )
    finally:
        grid.close()
    return Reading(rows, problems, notes, hashlib.sha256(content).hexdigest())


# A person cell as read: (column header, whether it is the accountId column, value).
_PersonCell = tuple[str, bool, Any]


def _header_fields(register: str, columns: list[str]) -> list[str | None]:
    """The field each column names (None for a blank header); an unknown column refuses
    the file, each one listed."""
    fields = [vocabulary.field_for_column(register, c) if c else None for c in columns]
    problems = [
        {"row": 1, "field": column, "message": f"Unknown column (column {index + 1})."}
        for index, (column, field) in enumerate(zip(columns, fields, strict=True))
        if column and field is None
    ]
    if problems:
        raise ValidationFailed(
            {"file": ["The header row has columns this register does not have."]}, rows=problems
        )
    return fields


def _rows(
    register: str,
    grid: Iterator[Sequence[Any]],
    *,
    csv_text: bool,
    escapes: bool = True,
    people: Callable[[], ProjectPeople] | None = None,
) -> tuple[list[tuple[int, dict[str, Any]]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of a grid; `csv_text`: every cell is text (CSV); `escapes`: text holds
    OOXML's escapes (XLSX, not ODS); `people`: see `read_file`."""
    read = _TextCount()
    header = _checked_row(next(grid, None), 1, read)
    if not header or all(_blank(h) for h in header):
        raise ValidationFailed({"file": ["The first row must name the columns."]})
    columns = [str(h).strip() if h is not None else "" for h in header]
    fields = _header_fields(register, columns)
    writable = WRITABLE[register]
    person_fields = PERSON_FIELDS[register]
    accounts = [
        field in person_fields and vocabulary.is_account_column(register, column, field)
        for column, field in zip(columns, fields, strict=True)
    ]
    problems: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for column, field in dict.fromkeys(zip(columns, fields, strict=True)):
        if field is not None and field not in writable:
            notes.append({"row": 1, "field": column, "message": _ignored_note(register, field)})
    currency = functools.cache(formatting.currency)  # read when a money cell is met
    rows: list[tuple[int, dict[str, Any]]] = []
    persons: dict[int, dict[str, list[_PersonCell]]] = {}
    for number, cells in enumerate(grid, start=2):
        _checked_row(cells, number, read)
        if number > MAX_SCANNED_ROWS:
            raise ValidationFailed(
                {"file": [f"At most {MAX_SCANNED_ROWS:,} rows per file, blank rows included."]}
            )
        data: dict[str, Any] = {}
        given: dict[str, str] = {}  # field -> the column that gave it
        named: dict[str, list[_PersonCell]] = {}
        for column, field, account, value in zip(columns, fields, accounts, cells, strict=False):
            if field not in writable or _blank(value):
                continue
            if isinstance(value, str) and not csv_text:
                value = _xlsx_text(value) if escapes else value
            elif not csv_text:
                value, problem, note = _typed(register, field, value)
                if problem:
                    problems.append({"row": number, "field": column, "message": problem})
                    continue
                if note:
                    notes.append({"row": number, "field": column, "message": note})
            refused = cleaning.control_error(value)  # or a surrogate or noncharacter
            if refused:
                problems.append({"row": number, "field": column, "message": refused})
                continue
            try:
                value = _value(field, value, csv_text=csv_text)
            except cleaning.JsonRefused as exc:
                problems.append({"row": number, "field": column, "message": str(exc)})
                continue
            value, problem, note = _read_as_written(register, field, value, currency)
            if problem:
                problems.append({"row": number, "field": column, "message": problem})
                continue
            if note:
                notes.append({"row": number, "field": column, "message": note})
            if field in person_fields:
                named.setdefault(field, []).append((column, account, value))
            elif field in given and data[field] != value:
                problems.append(
                    {
                        "row": number,
                        "field": column,
                        "message": _disagree(register, field, given[field], column),
                    }
                )
            else:
                data.setdefault(field, value)
                given.setdefault(field, column)
        if data or named:
            rows.append((number, data))
            if named:
                persons[number] = named
            if len(rows) > MAX_ROWS:
                raise ValidationFailed(
                    {"file": [f"At most {MAX_ROWS:,} rows per import (this file has more)."]}
                )
    if persons:
        _people_of_rows(register, rows, persons, people, problems, notes)
    return rows, problems, notes


def _disagree(register: str, field: str, first: str, second: str) -> str:
    label = vocabulary.column_label(register, field)
    return (
        f"The columns “{first}” and “{second}” both give {label} and disagree: keep one, or "
        "make them name the same value."
    )


def _people_of_rows(
    register: str,
    rows: list[tuple[int, dict[str, Any]]],
    persons: dict[int, dict[str, list[_PersonCell]]],
    people: Callable[[], ProjectPeople] | None,
    problems: list[dict[str, Any]],
    notes: list[dict[str, Any]],
) -> None:
    """Set each row's person fields to accountIds: every distinct value of the file matched
    at once (`ProjectPeople.match_all`: the project's people loaded once, at most one more
    tracker call). A person cell that matches no one, or more than one person, refuses its
    row, saying who the candidates are; so do two columns of one field naming different
    people. When the accountId column names the person, a name or e-mail column beside it
    that names no one is noted, not refused (a name changed since the file was written)."""
    directory = people() if people is not None else None
    answers: dict[Any, PersonMatch] = {}
    if directory is not None:
        values = (v for named in persons.values() for cells in named.values() for *_, v in cells)
        answers = directory.match_all(values)
    labels = {field: vocabulary.column_label(register, field) for field in PERSON_FIELDS[register]}
    for number, data in rows:
        for field, cells in persons.get(number, {}).items():
            label = labels[field]
            found: list[tuple[str, bool, PersonMatch]] = [
                (column, account, answers.get(value) or PersonMatch(str(value)))
                for column, account, value in cells
            ]
            if directory is None and any(account for _, account, _ in cells):
                found = [f for f in found if f[1]]  # as written: the accountId column's
            primary = [f for f in found if f[1] and f[2].account_id]
            chosen: tuple[str, bool, PersonMatch] | None = primary[0] if primary else None
            refused = False
            for column, account, match in found:
                if match.problem and (chosen is None or account):
                    problems.append(
                        {
                            "row": number,
                            "field": column,
                            "message": f"Row {number}, {label}: {match.problem}",
                        }
                    )
                    refused = True
                elif match.problem and chosen is not None:
                    notes.append(
                        {
                            "row": number,
                            "field": column,
                            "message": f"{match.problem} {label} is read from “{chosen[0]}”.",
                        }
                    )
                elif chosen is None:
                    chosen = (column, account, match)
                elif match.account_id != chosen[2].account_id:
                    problems.append(
                        {
                            "row": number,
                            "field": column,
                            "message": _disagree(register, field, chosen[0], column),
                        }
                    )
                    refused = True
            if not refused and chosen is not None:
                data[field] = chosen[2].account_id


def _typed(register: str, column: str, value: Any) -> tuple[Any, str | None, str | None]:
    """(value, problem, note) of a workbook's typed cell: a date or true/false cell is taken
    by a date or boolean column, read as the text it shows by a text column (noted), and
    refused by any other, saying what the cell holds."""
    kind = FIELD_KINDS[register].get(column, "text")
    if isinstance(value, _Priced):
        number = int(value) if value.is_integer() else float(value)
        site = formatting.currency()
        if column in MONEY_COLUMNS[register] and spreadsheet_values.is_other_currency(
            value.symbol, site
        ):  # refused by the money rule, saying what was read
            return _Text(f"{value.symbol} {number}"), None, None
        return number, None, None
    if isinstance(value, bool):
        shown, what = ("TRUE" if value else "FALSE"), "true/false value"
        if kind == "boolean":
            return value, None, None
    elif isinstance(value, dt.datetime | dt.date | dt.time):
        what, shown = _shown(value)
        if kind == "date" and what != "time":
            return value, None, None
    elif kind == "date" and isinstance(value, int | float):
        # A date saved without its date format is the spreadsheet's day number.
        number = int(value) if float(value).is_integer() else value
        return (
            value,
            f"{EXPECTED[kind]}; the cell holds the number {number} (format the cell as a "
            "date, or write YYYY-MM-DD).",
            None,
        )
    else:
        return value, None, None
    if kind in ("text", "list"):
        return shown, None, f"The cell's {what} is read as the text {shown}."
    return value, f"{EXPECTED[kind]}; the cell holds the {what} {shown}.", None


def _shown(value: dt.date | dt.time) -> tuple[str, str]:
    """(what, text) of a date, date-and-time or time cell, as ISO text."""
    if isinstance(value, dt.time):
        return "time", value.strftime("%H:%M:%S" if value.second else "%H:%M")
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return "date", value.date().isoformat()
        return "date and time", value.strftime("%Y-%m-%d %H:%M")
    return "date", value.isoformat()


def _ignored_note(register: str, column: str) -> str:
    """Why a column of a read-only field is ignored (`column`: the field's API name)."""
    if column == "id":
        return "Ignored: every row becomes a new record with an id of its own."
    if register == "changes" and column == "status":
        return "Read-only: ignored (an imported change starts Proposed, like any new change)."
    return "Read-only: ignored (the server sets it)."


def _read_as_written(
    register: str, column: str, value: Any, currency: Callable[[], str]
) -> tuple[Any, str | None, str | None]:
    """(value, problem, note): a money or date cell's text read as a spreadsheet writes it
    (`governance.spreadsheet_values`); a number cell is what it is. Amounts inside a work
    package's budget phasing are read the same way."""
    if column in MONEY_COLUMNS[register] and isinstance(value, _Text):
        return spreadsheet_values.money(str(value), currency())
    if column in DATE_FIELDS and isinstance(value, str):
        return spreadsheet_values.date(value)
    if column == "budgetPhasing" and isinstance(value, list):
        notes: list[str] = []
        for index, item in enumerate(value):
            if isinstance(item, dict) and isinstance(item.get("amount"), str):
                amount, problem, note = spreadsheet_values.money(item["amount"], currency())
                if problem:
                    return value, f"Entry {index + 1}, amount: {problem}", None
                if note:
                    notes.append(f"entry {index + 1}, amount: {note}")
                item["amount"] = amount
        return value, None, "; ".join(notes).capitalize() or None
    return (str(value) if isinstance(value, _Text) else value), None, None


class _Text(str):
    """A cell's text as the file holds it (a number cell's value is plain `str`): only text is
    read as a spreadsheet shows an amount."""


class _TextCount:
    """The characters of text read so far. A cell over MAX_CELL_CHARS, or a file past
    MAX_TEXT_CHARS, stops the reading; a shared string counts once per cell that shows it.
    Only lengths are taken here, so the count costs nothing per character."""

    def __init__(self) -> None:
        self.total = 0

    def add(self, cells: Sequence[Any], number: int) -> None:
        for index, value in enumerate(cells):
            if not isinstance(value, str):
                continue
            length = len(value)
            if length > MAX_CELL_CHARS:
                raise ValidationFailed(
                    {
                        "file": [
                            f"At most {MAX_CELL_CHARS:,} characters per cell (row {number}, "
                            f"column {index + 1} has {length:,})."
                        ]
                    }
                )
            self.total += length
            if self.total > MAX_TEXT_CHARS:
                raise ValidationFailed(
                    {
                        "file": [
                            f"At most {MAX_TEXT_CHARS:,} characters of text per file (row "
                            f"{number} goes past it). Split the file and import the parts."
                        ]
                    }
                )


def _checked_row(
    cells: Sequence[Any] | None, number: int, read: _TextCount
) -> Sequence[Any] | None:
    """A row within the column limit (blank cells past the last value do not count) and
    within the character limits."""
    if cells is None:
        return cells
    if len(cells) > MAX_COLUMNS:
        used = len(cells)
        while used > MAX_COLUMNS and _blank(cells[used - 1]):
            used -= 1
        if used > MAX_COLUMNS:
            raise ValidationFailed(
                {"file": [f"At most {MAX_COLUMNS} columns per row (row {number} has {used})."]}
            )
    read.add(cells, number)
    return cells


def _blank(value: Any) -> bool:
    # isspace() stops at the first character that is not a space; strip() would copy.
    return value is None or (isinstance(value, str) and (not value or value.isspace()))


def _csv_grid(content: bytes) -> Generator[list[str], None, None]:
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValidationFailed(
            {"file": ["The file is neither an XLSX or ODS workbook nor UTF-8 CSV."]}
        ) from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text))
    try:
        yield from reader
    except csv.Error as exc:
        limit = csv.field_size_limit()
        message = f"Line {reader.line_num} cannot be read as CSV ({exc})."
        if "field larger than field limit" in str(exc):
            message = f"At most {limit:,} characters per cell (line {reader.line_num})."
        raise ValidationFailed({"file": [message]}) from None


def _delimiter(text: str) -> str:
    """Comma, semicolon or tab: the one that splits the header into most columns and the
    most rows at the start of the file into as many (each read as RFC 4180, quoted cells
    with their commas, quotes and line breaks included). Comma when none splits the header."""
    sample = text[:SNIFF_CHARS]
    best, best_score = ",", (0, 0)
    for delimiter in DELIMITERS:
        try:
            records = list(csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter))
        except csv.Error:
            continue
        if len(text) > SNIFF_CHARS and len(records) > 1:
            records.pop()  # the sample may end inside the last record
        width = len(records[0]) if records else 0
        if width < 2:
            continue
        score = (sum(1 for record in records if len(record) == width), width)
        if score > best_score:
            best, best_score = delimiter, score
    return best


class _MissingSharedString(Exception):
    def __init__(self, index: int, count: int) -> None:
        super().__init__(index, count)
        self.index, self.count = index, count


class _SharedStrings:
    """A workbook's shared strings as its cells look them up: an index the table does not
    have (a negative one included, which a list would read from the end) is refused."""

    def __init__(self, strings: Sequence[Any]) -> None:
        self.strings = strings

    def __getitem__(self, index: int) -> Any:
        if not 0 <= index < len(self.strings):
            raise _MissingSharedString(index, len(self.strings))
        return self.strings[index]


class _Sheet(ReadOnlyWorksheet):  # type: ignore[misc]  # openpyxl has no type stubs
    """A worksheet read as a stream whose declared <dimension> is never looked for: openpyxl
    looks for it by parsing up to the end of the sheet's data (the whole part, up to the
    50 MB limit), and the import ignores it anyway (padding rows to it could build a grid
    of 17 billion cells). Rows are read as they are stored, one at a time."""

    def _get_size(self) -> None:
        self._min_column = self._min_row = 1
        self._max_row = self._max_column = None

    def _get_row(
        self,
        row: list[dict[str, Any]],
        min_col: int = 1,
        max_col: int | None = None,
        values_only: bool = False,
    ) -> tuple[Any, ...]:
        """The row's values, a number shown with a currency (its number format) as `_Priced`,
        so a money column reads its currency by the importers' one rule."""
        values: tuple[Any, ...] = super()._get_row(row, min_col, max_col, values_only)
        if not any(cell["style_id"] and cell["data_type"] == "n" for cell in row):
            return values
        priced = list(values)
        for cell in row:
            value, index = cell["value"], cell["column"] - min_col
            if cell["data_type"] != "n" or not cell["style_id"] or index >= len(priced):
                continue
            if isinstance(value, int | float) and not isinstance(value, bool):
                symbol = self._currency_of(cell["style_id"])
                if symbol:
                    priced[index] = _Priced(value, symbol)
        return tuple(priced)

    def _currency_of(self, style_id: int | str) -> str | None:
        known: dict[int | str, str | None] = self.__dict__.setdefault("_currencies", {})
        if style_id not in known:
            # Only a workbook's own formats: the built-in currency formats (5-8) show the
            # currency of the reader's locale, which the file does not say.
            try:
                number = self.parent._cell_styles[int(style_id)].numFmtId
                fmt = (
                    self.parent._number_formats[number - BUILTIN_FORMATS_MAX_SIZE]
                    if number >= BUILTIN_FORMATS_MAX_SIZE
                    else ""
                )
            except (IndexError, ValueError, TypeError, AttributeError):
                fmt = ""
            known[style_id] = format_currency(str(fmt))
        return known[style_id]

    def _cells_by_row(
        self,
        min_col: int,
        min_row: int,
        max_col: int | None,
        max_row: int | None,
        values_only: bool = False,
    ) -> Iterator[tuple[Any, ...]]:
        """The rows from the first, a missing row as an empty one (openpyxl's, without the
        padding to declared dimensions), read by `_SheetParser`."""
        expected = 1
        with self._get_source() as source:
            parser = _SheetParser(
                source,
                self._shared_strings,
                data_only=self.parent.data_only,
                epoch=self.parent.epoch,
                date_formats=self.parent._date_formats,
                timedelta_formats=self.parent._timedelta_formats,
            )
            for number, row in parser.parse():
                while expected < number:
                    expected += 1
                    yield ()
                if expected == number:
                    expected += 1
                    yield self._get_row(row, min_col, max_col, values_only)


class _Priced(float):
    """A number cell whose number format shows a currency (`£#,##0.00`, `[$EUR] 0`)."""

    symbol: str

    def __new__(cls, value: float, symbol: str) -> _Priced:
        number = super().__new__(cls, value)
        number.symbol = symbol
        return number


_BRACKET_CURRENCY = re.compile(r"\[\$([^\]\-]+)(?:-[0-9A-Fa-f]+)?\]")
_QUOTED = re.compile(r'"([^"]*)"')


def format_currency(fmt: str) -> str | None:
    """The currency a number format shows (`[$£-809]#,##0.00`, `"€"#,##0`, `#,##0 [$EUR]`,
    `£#,##0.00`), or None: the symbol or code, for `spreadsheet_values`' rule."""
    if not fmt or fmt == "General":
        return None
    bracket = _BRACKET_CURRENCY.search(fmt)
    if bracket and bracket[1].strip():
        return bracket[1].strip()
    quoted: str
    for quoted in _QUOTED.findall(fmt):
        if quoted.strip() in spreadsheet_values.KNOWN_SYMBOLS or re.fullmatch(
            r"[A-Z]{3}", quoted.strip()
        ):
            return quoted.strip()
    bare = re.sub(r"\[[^\]]*\]", "", _QUOTED.sub("", fmt))  # no locale or colour tags
    for symbol in ("€", "£", "¥", "₹", "₩", "₪", "₽", "₴", "₺", "₦", "₱", "฿", "₫", "$"):
        if symbol in bare:
            return symbol
    return None


class _TooManyCells(Exception):
    pass


class _SheetParser(WorkSheetParser):  # type: ignore[misc]  # openpyxl has no type stubs
    """openpyxl's sheet parser, for the rows only, counting the cells as the XML parser
    meets them: a row of millions of empty cells (a few KB compressed) is stopped at
    MAX_CELLS before it is built, where openpyxl would build the whole row first."""

    def parse(self) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        cells = 0
        for _, element in iterparse(self.source):
            if element.tag == CELL_TAG:
                cells += 1
                if cells > MAX_CELLS:
                    raise _TooManyCells
            elif element.tag == ROW_TAG:
                row = self.parse_row(element)
                element.clear()
                yield row


class _Workbook(ExcelReader):  # type: ignore[misc]  # openpyxl has no type stubs
    """openpyxl's read-only workbook reader, with the worksheets as `_Sheet` and the shared
    strings as `_SharedStrings`."""

    def read_worksheets(self) -> None:
        strings = _SharedStrings(self.shared_strings)
        for sheet, rel in self.parser.find_sheets():
            if rel.target not in self.valid_files:
                continue
            if "chartsheet" in rel.Type:
                self.read_chartsheet(sheet, rel)
                continue
            worksheet = _Sheet(self.wb, sheet.name, rel.target, strings)
            worksheet.sheet_state = sheet.state
            self.wb._sheets.append(worksheet)


def _xlsx_grid(content: bytes) -> Generator[tuple[Any, ...], None, None]:
    _check_zip(content)
    try:
        reader = _Workbook(io.BytesIO(content), read_only=True, data_only=True)
        reader.read()
        workbook = reader.wb
        sheet = workbook.worksheets[0]
    except (InvalidFileException, zipfile.BadZipFile, KeyError, ValueError, OSError, IndexError):
        raise ValidationFailed({"file": ["The file is not a readable XLSX workbook."]}) from None
    number = 0  # rows read so far
    try:
        for row in sheet.iter_rows(values_only=True):
            number += 1
            yield row
    except ValidationFailed:
        raise
    except _TooManyCells:
        raise ValidationFailed(
            {
                "file": [
                    f"At most {MAX_CELLS:,} cells per workbook, empty ones included (row "
                    f"{number + 1} goes past it)."
                ]
            }
        ) from None
    except _MissingSharedString as missing:
        raise ValidationFailed(
            {
                "file": [
                    f"Row {number + 1} refers to shared string {missing.index}, which the "
                    f"workbook does not have (it has {missing.count}). Save the file again "
                    "from your spreadsheet program and import that."
                ]
            }
        ) from None
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, SyntaxError, TypeError, IndexError):
        # SyntaxError covers the XML parser's ParseError.
        raise ValidationFailed({"file": ["The file is not a readable XLSX workbook."]}) from None
    finally:
        workbook.close()


def _check_zip(content: bytes) -> None:
    """Refuse a workbook whose entries would inflate past the limits, before parsing it."""
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        raise ValidationFailed({"file": ["The file is not a readable XLSX workbook."]}) from None
    if len(entries) > MAX_ZIP_ENTRIES:
        raise ValidationFailed(
            {"file": [f"At most {MAX_ZIP_ENTRIES} parts in a workbook (this has {len(entries)})."]}
        )
    inflated = sum(entry.file_size for entry in entries)
    if inflated > MAX_UNCOMPRESSED_BYTES:
        raise ValidationFailed(
            {
                "file": [
                    f"At most {MAX_UNCOMPRESSED_BYTES // (1024 * 1024)} MB uncompressed per "
                    f"workbook (this one holds {inflated // (1024 * 1024)} MB)."
                ]
            }
        )


ODS_MIMETYPE = b"application/vnd.oasis.opendocument.spreadsheet"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
ODS_TABLE, ODS_ROW = f"{{{_TABLE}}}table", f"{{{_TABLE}}}table-row"
ODS_CELLS = {f"{{{_TABLE}}}table-cell", f"{{{_TABLE}}}covered-table-cell"}
ODS_PARAGRAPH = f"{{{_TEXT}}}p"


def _is_ods(content: bytes) -> bool:
    """An OpenDocument spreadsheet: its first entry is `mimetype`, stored, holding its type
    (the ODF rule, so the check reads 100 bytes rather than the archive)."""
    return content[30:38] == b"mimetype" and ODS_MIMETYPE in content[38:120]


def _ods_grid(content: bytes) -> Generator[tuple[Any, ...], None, None]:
    """The rows of an ODS file's first sheet, read as a stream from `content.xml` (defusedxml,
    no DTD): each cell as openpyxl gives an XLSX cell (a float, a datetime, a bool, or its
    text), a currency cell as its code and amount (`GBP 1500`, read by the money rule). The
    repeats ODS writes for runs of equal cells and rows are expanded only up to a value
    (the trailing blanks LibreOffice writes up to column 1,024 and row 1,048,576 never are),
    and a run past the limits stops the reading."""
    _check_zip(content)
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            part = archive.read("content.xml")
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, NotImplementedError):
        raise ValidationFailed({"file": [ODS_UNREADABLE]}) from None
    try:
        yield from _ods_rows(part)
    except ValidationFailed:
        raise
    except cleaning.XmlRefused as exc:
        raise ValidationFailed({"file": [str(exc)]}) from None
    except (DefusedXmlException, SyntaxError, ValueError):  # ParseError is a SyntaxError
        raise ValidationFailed({"file": [ODS_UNREADABLE]}) from None


ODS_UNREADABLE = (
    "The file is not a readable OpenDocument spreadsheet (.ods). Save it again from "
    "LibreOffice Calc, or as XLSX or CSV UTF-8, and import that."
)


def _ods_rows(part: bytes) -> Iterator[tuple[Any, ...]]:
    cells_met = blank_rows = number = 0
    sheet = "before"  # the first sheet is read; the others are not
    for event, element in cleaning.xml_events(part):
        if event == "start":
            if element.tag == ODS_TABLE:
                if sheet == "after":
                    return
                sheet = "in"
            elif element.tag in ODS_CELLS:
                cells_met += 1
                if cells_met > MAX_CELLS:
                    raise ValidationFailed(
                        {
                            "file": [
                                f"At most {MAX_CELLS:,} cells per workbook, empty ones included."
                            ]
                        }
                    )
            continue
        if element.tag == ODS_TABLE:
            sheet = "after"
            element.clear()
        elif element.tag == ODS_ROW and sheet == "in":
            cells = _ods_cells(element, number + blank_rows + 1)
            repeat = _repeat(element, "number-rows-repeated")
            element.clear()
            if not cells:
                blank_rows += repeat
                continue
            for _ in range(min(blank_rows, MAX_SCANNED_ROWS + 1)):  # a gap between rows
                number += 1
                yield ()
            blank_rows = 0
            for _ in range(min(repeat, MAX_SCANNED_ROWS + 1)):
                number += 1
                yield cells


def _repeat(element: Element, name: str) -> int:
    text = element.get(f"{{{_TABLE}}}{name}") or "1"
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else 1


def _ods_cells(row: Element, number: int) -> tuple[Any, ...]:
    """One row's cells, trailing blanks left out (an empty tuple for a blank row)."""
    cells: list[Any] = []
    blanks = 0
    for cell in row:
        if cell.tag not in ODS_CELLS:
            continue
        repeat = _repeat(cell, "number-columns-repeated")
        value = _ods_value(cell)
        if value is None:
            blanks += repeat
            continue
        if len(cells) + blanks + min(repeat, MAX_COLUMNS + 1) > MAX_COLUMNS:
            raise ValidationFailed(
                {"file": [f"At most {MAX_COLUMNS} columns per row (row {number} has more)."]}
            )
        cells.extend([None] * blanks)
        blanks = 0
        cells.extend([value] * repeat)
    return tuple(cells)


def _ods_value(cell: Element) -> Any:
    """A cell as openpyxl reads XLSX: the value its type gives, else its text (None when
    blank)."""
    kind = cell.get(f"{{{_OFFICE}}}value-type")
    value = cell.get(f"{{{_OFFICE}}}value")
    if kind in ("float", "percentage") and value is not None:
        return float(value)
    if kind == "currency" and value is not None:
        code = cell.get(f"{{{_OFFICE}}}currency")
        return f"{code} {value}" if code else float(value)
    if kind == "date":
        text = cell.get(f"{{{_OFFICE}}}date-value") or ""
        try:
            return dt.datetime.fromisoformat(text[:40])
        except ValueError:
            return text or None
    if kind == "boolean":
        return (cell.get(f"{{{_OFFICE}}}boolean-value") or "").lower() == "true"
    paragraphs = [_ods_text(p) for p in cell if p.tag == ODS_PARAGRAPH]
    if kind == "string" and cell.get(f"{{{_OFFICE}}}string-value") is not None:
        return cell.get(f"{{{_OFFICE}}}string-value")
    text = "\n".join(paragraphs)
    return text if text else None


_SPACE, _TAB, _BREAK = f"{{{_TEXT}}}s", f"{{{_TEXT}}}tab", f"{{{_TEXT}}}line-break"


def _ods_text(paragraph: Element) -> str:
    """A paragraph's text, its spans and links included: `text:s` is that many spaces,
    `text:tab` a tab, `text:line-break` a line break (iterative; stops past a cell's limit)."""
    parts: list[str] = []
    length = 0
    pending: list[tuple[Element, bool]] = [(paragraph, False)]
    while pending and length <= MAX_CELL_CHARS:
        node, tail = pending.pop()
        if tail:
            piece = node.tail or ""
        elif node.tag == _SPACE:
            piece = " " * min(_repeat_text(node), MAX_CELL_CHARS + 1)
        elif node.tag == _TAB:
            piece = "\t"
        elif node.tag == _BREAK:
            piece = "\n"
        else:
            piece = node.text or ""
            for child in reversed(node):
                pending.append((child, True))
                pending.append((child, False))
        parts.append(piece)
        length += len(piece)
    return "".join(parts)


def _repeat_text(node: Element) -> int:
    text = node.get(f"{{{_TEXT}}}c") or "1"
    return int(text) if text.isascii() and text.isdigit() and len(text) < 10 else 1


def _xlsx_text(value: str) -> str:
    """An XLSX cell's text with OOXML's escapes read (_x000D_ is a carriage return,
    _x005F_ an underscore), as Excel reads them."""
    if "_x" not in value:
        return value
    return XLSX_ESCAPE.sub(lambda match: chr(int(match[1], 16)), value)


def _value(column: str, value: Any, *, csv_text: bool) -> Any:
    if isinstance(value, str):
        value = value.strip()
        if len(value) > 1 and value[0] == "'" and value[1] in CSV_GUARDED:
            value = value[1:]  # the export's guard, in every format (see CSV_GUARDED)
        if column in MONEY_FIELDS:
            return _Text(value)
    if column in LIST_FIELDS and isinstance(value, str):
        return [part.strip() for part in re.split(r"[,;\n]", value) if part.strip()]
    if column in BOOLEAN_FIELDS and isinstance(value, str):
        return value.lower()
    if column in JSON_FIELDS and isinstance(value, str):
        try:
            return cleaning.json_loads(value, what="The cell's JSON")
        except cleaning.JsonRefused:
            raise
        except ValueError:
            if column == "evidenceLinks":
                return value.split()
            return value  # minutesRef by id; others are refused by the service, naming them
    if isinstance(value, dt.datetime) and column in DATE_FIELDS:
        return value.date()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        # A number cell reads as the text a CSV would hold; each field's cleaner takes it.
        return str(value)
    return value
