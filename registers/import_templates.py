"""A downloadable import file per register: the columns the import takes, in the export's
order. XLSX adds an example row and, for the fields with a fixed set of values, the cells'
drop-down lists (data validation); CSV holds the header row only."""

import datetime as dt
import io
from typing import Any

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.comments import Comment
from openpyxl.styles import Font
from openpyxl.worksheet.datavalidation import DataValidation

from governance import cleaning, specs
from governance.errors import ValidationFailed
from governance.models import Project
from governance.roster import ProjectPeople, project_people
from registers import spreadsheets, uploads, vocabulary
from registers.specs import SPECS

DATE_FORMAT = "yyyy-mm-dd"
PEOPLE_SHEET = "People"


def columns(project: Project, register: str) -> list[str]:
    """The writable columns in the export's order, each label once: an alias (a field under
    the label of one already listed, such as actualEnd beside actualEndDate) is left out. The
    import still reads an alias's column."""
    writable = spreadsheets.WRITABLE[register]
    labelled: dict[str, str] = {}
    for field in spreadsheets._fields(project, register):
        if field in writable:
            labelled.setdefault(vocabulary.column_label(register, field).casefold(), field)
    return list(labelled.values())


def template(project: Project, register: str, file_format: str) -> tuple[bytes, str, str]:
    """(content, content type, file name) of the register's import template."""
    if file_format not in spreadsheets.CONTENT_TYPES:
        raise ValidationFailed({"format": ["Must be csv or xlsx."]})
    header = columns(project, register)
    name = f"{register}-import-template.{file_format}"
    if file_format == "csv":
        return spreadsheets.to_csv(header, []), spreadsheets.CONTENT_TYPES["csv"], name
    choices = people_choices(project_people(project))
    return _xlsx(register, header, choices), spreadsheets.CONTENT_TYPES["xlsx"], name


def people_choices(people: ProjectPeople) -> list[str]:
    """How the template's drop-down writes each of the project's people, as the import reads
    them back (`governance.roster.ProjectPeople.written`): the display name, or what tells
    two of one name apart (their e-mail, else their accountId); in the order of the names."""
    return people.written()


def _xlsx(register: str, header: list[str], people: list[str] | None = None) -> bytes:
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
    _people_lists(workbook, sheet, register, header, people or [], last)
    sheet.freeze_panes = "A2"
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _people_lists(
    workbook: Workbook, sheet: Any, register: str, header: list[str], people: list[str], last: int
) -> None:
    """The person columns offer the project's people as a drop-down, listed on a hidden sheet
    (a list written into the rule itself stops at 255 characters). Anything else may still
    be typed (an e-mail, an accountId): the spreadsheet warns, the import decides."""
    fields = [f for f in header if f in spreadsheets.PERSON_FIELDS[register]]
    if not fields or not people:
        return
    listed = workbook.create_sheet(PEOPLE_SHEET)
    for row, name in enumerate(people, start=1):
        # A name as the tracker has it is text, never a formula (a name beginning with "="),
        # without what a workbook cannot hold (control characters, noncharacters).
        text = ILLEGAL_CHARACTERS_RE.sub("", cleaning.file_text(name))
        listed.cell(row=row, column=1, value=text).data_type = "s"
    listed.sheet_state = "hidden"
    for field in fields:
        letter = sheet.cell(row=1, column=header.index(field) + 1).column_letter
        validation = DataValidation(
            type="list",
            formula1=f"'{PEOPLE_SHEET}'!$A$1:$A${len(people)}",
            allow_blank=True,
            showErrorMessage=True,
            errorStyle="warning",
            errorTitle=vocabulary.column_label(register, field),
            error="Not one of the project's people: the import reads an e-mail or accountId too.",
        )
        validation.add(f"{letter}2:{letter}{last}")
        sheet.add_data_validation(validation)
