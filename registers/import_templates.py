"""A downloadable import file per register: the columns the import takes, in the export's
order. XLSX adds an example row and, for the fields with a fixed set of values, the cells'
drop-down lists (data validation); its people columns offer the project's people by name,
listed on a hidden second sheet the drop-down refers to. CSV holds the header row only."""

import datetime as dt
import io

from openpyxl import Workbook
from openpyxl.comments import Comment
from openpyxl.styles import Font
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.worksheet import Worksheet

from governance import specs
from governance.errors import ValidationFailed
from governance.models import Project
from registers import selectors, spreadsheets, uploads
from registers.specs import SPECS

DATE_FORMAT = "yyyy-mm-dd"
PEOPLE_SHEET = "People"


def columns(project: Project, register: str) -> list[str]:
    """The writable columns in the export's order (an alias, such as actualEnd, left out)."""
    writable = spreadsheets.WRITABLE[register]
    return [f for f in spreadsheets._fields(project, register) if f in writable]


def template(project: Project, register: str, file_format: str) -> tuple[bytes, str, str]:
    """(content, content type, file name) of the register's import template."""
    if file_format not in spreadsheets.CONTENT_TYPES:
        raise ValidationFailed({"format": ["Must be csv or xlsx."]})
    header = columns(project, register)
    name = f"{register}-import-template.{file_format}"
    if file_format == "csv":
        return spreadsheets.to_csv(header, []), spreadsheets.CONTENT_TYPES["csv"], name
    people = [name for _, name in selectors.people_choices(project)]
    return _xlsx(register, header, people), spreadsheets.CONTENT_TYPES["xlsx"], name


def _xlsx(register: str, header: list[str], people: list[str]) -> bytes:
    workbook = Workbook()
    sheet = workbook.active
    sheet.title = spreadsheets.TITLES[register]
    sheet.append(header)
    spec = SPECS[register]
    example = specs.examples(spec)
    hints = specs.hints(spec)
    row = []
    for field in header:
        value = example.get(field, "")
        if field in spreadsheets.DATE_FIELDS and value:
            value = dt.date.fromisoformat(value)
        row.append(value)
    sheet.append(row)
    for index, field in enumerate(header, start=1):
        cell = sheet.cell(row=1, column=index)
        cell.font = Font(bold=True)
        if field in hints:
            cell.comment = Comment(hints[field], "Governance")
        if field in spreadsheets.DATE_FIELDS:
            sheet.cell(row=2, column=index).number_format = DATE_FORMAT
        sheet.column_dimensions[cell.column_letter].width = max(12, len(field) + 2)
    last = uploads.MAX_ROWS + 1
    for field in header:
        values = specs.cell_values(spec, field)
        if not values:
            continue
        letter = sheet.cell(row=1, column=header.index(field) + 1).column_letter
        validation = DataValidation(
            type="list",
            formula1='"' + ",".join(values) + '"',
            allow_blank=True,
            showErrorMessage=True,
            errorTitle=field,
            error=f"Choose one of: {', '.join(values)}.",
        )
        validation.add(f"{letter}2:{letter}{last}")
        sheet.add_data_validation(validation)
    _people_lists(workbook.create_sheet(PEOPLE_SHEET), sheet, register, header, people)
    sheet.freeze_panes = "A2"
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _people_lists(
    listed: Worksheet, sheet: Worksheet, register: str, header: list[str], people: list[str]
) -> None:
    """The people columns' drop-downs: the project's people by name, one a row on a hidden
    sheet (a list written into the rule itself is limited to 255 characters). A name not
    listed is warned of, not refused: a person the directory has not offered yet, or an
    e-mail or account id, still imports."""
    listed.sheet_state = "hidden"
    listed.append(["Name"])
    for name in people:
        listed.append([name])
    columns = [f for f in header if f in spreadsheets.NAME_COLUMNS[register]]
    if not people or not columns:
        return
    source = f"{PEOPLE_SHEET}!$A$2:$A${len(people) + 1}"
    last = uploads.MAX_ROWS + 1
    for field in columns:
        letter = sheet.cell(row=1, column=header.index(field) + 1).column_letter
        validation = DataValidation(
            type="list",
            formula1=source,
            allow_blank=True,
            showErrorMessage=True,
            errorStyle="warning",
            errorTitle="Not one of the project's people",
            error="Choose one of the project's people, or type their e-mail or account id.",
        )
        validation.add(f"{letter}2:{letter}{last}")
        sheet.add_data_validation(validation)
