"""A downloadable import file per register: the columns the import takes, in the export's
order. XLSX adds an example row and, for the fields with a fixed set of values, the cells'
drop-down lists (data validation); CSV holds the header row only."""

import datetime as dt
import io

from openpyxl import Workbook
from openpyxl.comments import Comment
from openpyxl.styles import Font
from openpyxl.worksheet.datavalidation import DataValidation

from governance import specs
from governance.errors import ValidationFailed
from governance.models import Project
from registers import spreadsheets, uploads
from registers.specs import SPECS

DATE_FORMAT = "yyyy-mm-dd"


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
    return _xlsx(register, header), spreadsheets.CONTENT_TYPES["xlsx"], name


def _xlsx(register: str, header: list[str]) -> bytes:
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
    sheet.freeze_panes = "A2"
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()
