"""A downloadable import file per register: the columns the import takes, in the export's
order. XLSX adds an example row and, for the fields with a fixed set of values, the cells'
drop-down lists (data validation); CSV holds the header row only."""

import datetime as dt
import io
from typing import Any

from openpyxl import Workbook
from openpyxl.comments import Comment
from openpyxl.styles import Font
from openpyxl.worksheet.datavalidation import DataValidation

from governance.errors import ValidationFailed
from governance.models import RAG_CHOICES, Project
from registers import spreadsheets
from registers.models import RISK_DIRECTIONS, RISK_STATUSES, RISK_TREATMENTS, WP_STATUSES

SCORES = ["1", "2", "3", "4", "5"]
# The values a cell may take, where the set is fixed: {register: {field: values}}.
ALLOWED: dict[str, dict[str, list[str]]] = {
    "work-packages": {
        "status": WP_STATUSES,
        "rag": RAG_CHOICES,
        "progress": [str(p) for p in range(0, 101, 10)],
    },
    "risks": {
        "status": RISK_STATUSES,
        "direction": RISK_DIRECTIONS,
        "materialised": ["true", "false"],
        "impact": SCORES,
        "likelihood": SCORES,
        "residualImpact": SCORES,
        "residualLikelihood": SCORES,
        "treatment": list(dict.fromkeys(t for ts in RISK_TREATMENTS.values() for t in ts)),
    },
    "decisions": {},
    "changes": {},
}
# One example row per register (the header's other columns stay empty).
EXAMPLES: dict[str, dict[str, Any]] = {
    "work-packages": {
        "name": "Site survey",
        "type": "Discovery",
        "plannedStartDate": "2027-01-04",
        "plannedEndDate": "2027-02-26",
        "status": "Not Started",
        "rag": "Green",
        "progress": 0,
        "budget": 130500,
        "commentary": "Replace this row with your own.",
    },
    "risks": {
        "title": "Supplier delivers late",
        "description": "The main supplier has missed two dates this year.",
        "status": "Open",
        "direction": "Risk",
        "impact": 4,
        "likelihood": 3,
        "treatment": "Mitigate",
        "mitigation": "Order the long-lead items in the first month.",
    },
    "decisions": {
        "decision": "Use the existing data centre",
        "decisionNotes": "Replace this row with your own.",
        "madeOn": "2026-01-15",
        "rationale": "Cheaper than a new lease and ready now.",
    },
    "changes": {
        "summary": "Add the second loading bay",
        "reason": "Deliveries doubled after the merger.",
        "dimensions": "Scope, Budget",
        "impactScheduleDays": 10,
        "impactBudget": 45000,
        "impactScope": "One more bay in phase two.",
    },
}
HINTS = {
    "dimensions": "Several, separated by commas.",
    "linkedIssueKeys": "Issue keys separated by commas.",
    "budgetPhasing": 'JSON, as the export writes it: [{"period": "2027-01", "amount": 12000}]',
    "evidenceLinks": "JSON, as the export writes it, or links separated by spaces.",
}
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
    example = EXAMPLES[register]
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
        if field in HINTS:
            cell.comment = Comment(HINTS[field], "Governance")
        if field in spreadsheets.DATE_FIELDS:
            sheet.cell(row=2, column=index).number_format = DATE_FORMAT
        sheet.column_dimensions[cell.column_letter].width = max(12, len(field) + 2)
    last = spreadsheets.MAX_ROWS + 1
    for field, values in ALLOWED[register].items():
        if field not in header:
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
