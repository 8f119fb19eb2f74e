"""CSV and XLSX exports of the portfolio: the rows the page shows, with the same filters and
sorting, and the drivers' summaries. Text cells that a spreadsheet would run as a formula
are prefixed with an apostrophe."""

import csv
import datetime as dt
import io
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from django.http import StreamingHttpResponse
from django.utils import timezone
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from governance import cleaning, streaming
from governance.people import Person
from portfolio.extensions import Column
from status import earned_value

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _safe(value: Any) -> Any:
    if isinstance(value, str):
        value = cleaning.file_text(value)  # no noncharacter stored before the rule corrupts it
        if value.startswith(FORMULA_STARTS):
            return "'" + value
    return value


def xlsx_value(value: Any) -> Any:
    """A cell as the workbook takes it: an amount a float cannot hold as its digits, text;
    text never read as a formula, its control characters (which a workbook cannot hold, and
    a name stored before they were refused may) replaced by U+FFFD."""
    if isinstance(value, cleaning.Money):
        return value.text
    value = _safe(value)
    return ILLEGAL_CHARACTERS_RE.sub("\ufffd", value) if isinstance(value, str) else value


def xlsx_response(file: IO[bytes], filename: str) -> StreamingHttpResponse:
    """A workbook's file sent as an attachment named `filename`, in pieces, with its size."""
    size = file.seek(0, io.SEEK_END)
    file.seek(0)
    response = StreamingHttpResponse(streaming.chunks(file), content_type=XLSX_TYPE)
    response["Content-Length"] = str(size)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# The XLSX's typed columns: dates and times as date cells, amounts as numbers in a money format.
DATES = {"Benefit review due": "yyyy-mm-dd", "Status last updated": "yyyy-mm-dd hh:mm"}
MONEY = {"Approved budget", "Forecast: estimate at completion (EAC)"}
MONEY_FORMAT = "#,##0.00"


def _typed(sheet: Any, header: str, value: Any) -> Any:
    """A date, a time (local) or an amount as a typed cell; anything else as `xlsx_value`."""
    if header in DATES and isinstance(value, str) and value:
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            return xlsx_value(value)
        if timezone.is_aware(moment):
            moment = timezone.localtime(moment)
        cell = WriteOnlyCell(sheet, value=moment.replace(tzinfo=None, microsecond=0))
        cell.number_format = DATES[header]
        return cell
    if (
        header in MONEY
        and isinstance(value, int | float)
        and not isinstance(value, bool | cleaning.Money)
    ):
        cell = WriteOnlyCell(sheet, value=value)
        cell.number_format = MONEY_FORMAT
        return cell
    return xlsx_value(value)


def columns(
    people: dict[str, Person], extra: Iterable[Column] = ()
) -> list[tuple[str, Callable[[dict[str, Any]], Any]]]:
    """The exports' columns: the portfolio's own, then those the apps above add for this
    viewer (`portfolio.extensions`), each as its heading and how a row gives its value."""

    def lead(row: dict[str, Any]) -> str:
        person = people.get(row["leadAccountId"] or "")
        return person.display_name if person else (row["leadAccountId"] or "")

    def rag(dimension: str) -> Callable[[dict[str, Any]], Any]:
        return lambda row: row["effective"][f"{dimension}Rag"]

    def earned(key: str) -> Callable[[dict[str, Any]], Any]:
        return lambda row: (row.get("earnedValue") or {}).get(key)

    def why(dimension: str) -> Callable[[dict[str, Any]], Any]:
        return lambda row: row["drivers"][f"{dimension}Rag"]["summary"]

    return [
        ("Project key", lambda r: r["projectKey"]),
        ("Project", lambda r: r["name"]),
        ("Lead", lead),
        ("Theme", lambda r: r["theme"]),
        ("Approval status", lambda r: r["approvalStatus"]),
        ("Version", lambda r: r["version"]),
        ("Phase", lambda r: r["phase"]),
        ("Current stage", lambda r: r["currentStage"] or ""),
        ("Days at gate", lambda r: r["daysAtGate"]),
        ("Overall RAG", lambda r: r["overallRag"]),
        ("Cost RAG", rag("cost")),
        ("Schedule RAG", rag("schedule")),
        ("Scope RAG", rag("scope")),
        ("Risk RAG", rag("risk")),
        ("Approved budget", lambda r: r["approvedBudget"]),
        ("Forecast: estimate at completion (EAC)", lambda r: r["eac"]),
        ("Cost overrun %", lambda r: r["costOverrunPct"]),
        ("Schedule slip (days)", lambda r: r["scheduleSlipDays"]),
        ("Top risk score (residual)", lambda r: r["topRiskScore"]),
        ("Pending decisions", lambda r: r["pendingDecisions"]),
        ("Changes awaiting application", lambda r: r["changesAwaitingApplication"]),
        ("Adoption gap", lambda r: "Yes" if r["adoptionGap"] else "No"),
        ("Status stale", lambda r: "Yes" if r["stale"] else "No"),
        ("In exception (days open)", lambda r: r["exceptionAgeDays"]),
        ("Status last updated", lambda r: r["lastUpdatedAt"] or ""),
        ("Benefit review due", lambda r: r["realisationReviewDueOn"] or ""),
        ("Cost: why", why("cost")),
        ("Schedule: why", why("schedule")),
        ("Scope: why", why("scope")),
        ("Risk: why", why("risk")),
        *[
            (f"Earned value: {earned_value.heading(key)}", earned(key))
            for key in earned_value.FIGURES
        ],
        ("Estimates compared", earned("estimatesCompared")),
        *[(column.header, _member(column.key)) for column in extra],
    ]


def _member(key: str) -> Callable[[dict[str, Any]], Any]:
    return lambda row: row.get(key)


# Rows written and sent at a time.
CHUNK = 500


def csv_chunks(
    rows: Iterable[dict[str, Any]], people: dict[str, Person], extra: Iterable[Column] = ()
) -> Iterator[bytes]:
    """The CSV file, with a byte-order mark so spreadsheet programs read UTF-8, in pieces of
    `CHUNK` rows, written as the rows come."""
    cols = columns(people, extra)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    buffer.write("\ufeff")
    writer.writerow([header for header, _ in cols])
    for number, row in enumerate(rows, 1):
        writer.writerow(["" if (v := get(row)) is None else _safe(v) for _, get in cols])
        if number % CHUNK == 0:
            yield buffer.getvalue().encode("utf-8")
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue().encode("utf-8")


def to_csv(rows: Iterable[dict[str, Any]], people: dict[str, Person]) -> bytes:
    return b"".join(csv_chunks(rows, people))


def xlsx_file(
    rows: Iterable[dict[str, Any]], people: dict[str, Person], extra: Iterable[Column] = ()
) -> IO[bytes]:
    """The workbook written row by row (openpyxl's write-only mode keeps no cell in memory)
    into a temporary file, at its start: a workbook is a zip whose directory comes last, so
    it is whole only once every row is written. The header row is bold, frozen with the
    project's key and name, and filtered; dates are date cells, amounts numbers."""
    cols = columns(people, extra)
    book = Workbook(write_only=True)
    sheet = book.create_sheet("Portfolio")
    sheet.freeze_panes = "C2"
    for index, (header, _) in enumerate(cols, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = max(12, min(40, len(header) + 4))
    bold = Font(bold=True)
    titles = []
    for header, _ in cols:
        cell = WriteOnlyCell(sheet, value=header)
        cell.font = bold
        titles.append(cell)
    sheet.append(titles)
    count = 0
    for row in rows:
        sheet.append([_typed(sheet, header, get(row)) for header, get in cols])
        count += 1
    sheet.auto_filter.ref = f"A1:{get_column_letter(len(cols))}{count + 1}"
    return streaming.saved(book)


def to_xlsx(rows: Iterable[dict[str, Any]], people: dict[str, Person]) -> bytes:
    with xlsx_file(rows, people) as file:
        return file.read()
