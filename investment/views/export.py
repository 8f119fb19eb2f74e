"""A scenario as a board reads it, as an XLSX workbook (`investment:scenario-export`): the
first sheet holds the scenario's name, the scoring model version in force and the day, the
ranked rows (rank, key, name, score, cost per budget year, total cost, benefit, above or below
the line, must-have, whether each fits each year), the cut-line as a row of its own, the
totals above the line and the budget per year; the second, each row's scores with their
reasons. The governance group and site administrators only (404 for anyone else). Written
with the portfolio export's cells (`portfolio.exports.xlsx_value`): no text is read as a
formula, no stored control character breaks the file."""

import datetime as dt
import uuid
from collections.abc import Sequence
from decimal import Decimal
from typing import IO, Any

from django.http import HttpRequest, StreamingHttpResponse
from django.urls import URLPattern, path
from django.utils import timezone
from django.utils.text import slugify
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font

from governance import streaming
from governance.http import page
from governance.people import Person, resolve
from investment import selectors, services
from investment.criteria import CATALOGUE
from investment.models import ModelVersion, Scenario
from investment.views import governor
from portfolio.exports import MONEY_FORMAT, xlsx_response, xlsx_value

BOLD = Font(bold=True)
CUT_LINE = "Cut-line: the budget runs out here; the rows below do not fit"
YES_NO = {True: "Yes", False: "No", None: ""}


def _cell(sheet: Any, value: Any, *, bold: bool = False, money: bool = False) -> Any:
    """A cell through the portfolio export's rule (`xlsx_value`), bold or in money format."""
    if isinstance(value, Decimal):
        value = float(value)
    cell = WriteOnlyCell(sheet, value=xlsx_value(value))
    if bold:
        cell.font = BOLD
    if money and isinstance(value, int | float):
        cell.number_format = MONEY_FORMAT
    return cell


def _row(sheet: Any, row: selectors.Row, years: Sequence[str]) -> list[Any]:
    p = row.proposal
    return [
        _cell(sheet, p.rank),
        _cell(sheet, row.key),
        _cell(sheet, p.project.name),
        _cell(sheet, p.total),
        *(_cell(sheet, row.cost_by_year.get(y), money=True) for y in years),
        _cell(sheet, row.unphased or None, money=True),
        _cell(sheet, row.cost, money=True),
        _cell(sheet, row.benefit, money=True),
        _cell(sheet, "Above" if row.above else "Below"),
        _cell(sheet, YES_NO[row.must_have]),
        *(_cell(sheet, YES_NO[row.fits_by_year.get(y)]) for y in years),
        _cell(sheet, YES_NO[row.fits_total]),
    ]


def _ranked_sheet(
    book: Workbook,
    scenario: Scenario,
    evaluation: selectors.Evaluation,
    version: ModelVersion | None,
) -> None:
    sheet = book.create_sheet("Scenario")
    years = evaluation.years()
    sheet.append([_cell(sheet, "Scenario", bold=True), _cell(sheet, scenario.name, bold=True)])
    sheet.append(
        [
            _cell(sheet, "Scoring model version"),
            _cell(sheet, version.number if version else "No scoring model yet"),
        ]
    )
    sheet.append([_cell(sheet, "Exported on"), _cell(sheet, timezone.localdate().isoformat())])
    sheet.append([_cell(sheet, "Scenario revision"), _cell(sheet, scenario.revision)])
    sheet.append([])
    header = [
        "Rank",
        "Project key",
        "Project",
        "Score",
        *(f"Cost {y}" for y in years),
        "Cost without phasing",
        "Cost",
        "Benefit",
        "Line",
        "Must-have",
        *(f"Fits {y}" for y in years),
        "Fits the total",
    ]
    sheet.append([_cell(sheet, h, bold=True) for h in header])
    for number, row in enumerate(evaluation.rows):
        if number == evaluation.cut_after:
            sheet.append([_cell(sheet, ""), _cell(sheet, CUT_LINE, bold=True)])
        sheet.append(_row(sheet, row, years))
    if evaluation.cut_after == len(evaluation.rows):
        sheet.append([_cell(sheet, ""), _cell(sheet, CUT_LINE, bold=True)])
    totals = evaluation.totals()
    spent = totals["costByYear"]
    sheet.append([])
    sheet.append(
        [
            _cell(sheet, ""),
            _cell(sheet, f"Total above the line ({totals['projects']})", bold=True),
            _cell(sheet, ""),
            _cell(sheet, totals["score"]),
            *(_cell(sheet, spent.get(y), money=True) for y in years),
            _cell(sheet, ""),
            _cell(sheet, totals["cost"], money=True),
            _cell(sheet, totals["benefit"], money=True),
        ]
    )
    budget = totals["budgetByYear"]
    sheet.append(
        [
            _cell(sheet, ""),
            _cell(sheet, "Budget", bold=True),
            _cell(sheet, ""),
            _cell(sheet, ""),
            *(_cell(sheet, budget.get(y), money=True) for y in years),
            _cell(sheet, ""),
            _cell(sheet, totals["budgetTotal"], money=True),
        ]
    )
    if totals["overBudgetYears"]:
        over = ", ".join(totals["overBudgetYears"])
        sheet.append([_cell(sheet, ""), _cell(sheet, f"Over budget in {over} (must-haves)")])


def _scores(row: selectors.Row) -> list[Any]:
    return [points.score for points in row.proposal.points if points.score is not None]


def _name(people: dict[str, Person], account_id: str | None) -> str:
    person = people.get(account_id or "")
    return person.display_name if person else (account_id or "")


def _day(moment: str | None) -> dt.date | None:
    """When a score was given, as the day (a date cell), in the site's time zone."""
    return timezone.localdate(dt.datetime.fromisoformat(moment)) if moment else None


def _source(key: str) -> str:
    """A criterion's source in words: scored by a person, or the figure it reads."""
    found = CATALOGUE.get(key)
    return found.label if found else "Scored by a person"


def _scores_sheet(book: Workbook, rows: Sequence[selectors.Row]) -> None:
    sheet = book.create_sheet("Scores")
    header = [
        "Project key",
        "Project",
        "Model version",
        "Criterion",
        "Source",
        "Weight",
        "Points",
        "Figure",
        "Reason",
        "Scored by",
        "Scored at",
    ]
    sheet.append([_cell(sheet, h, bold=True) for h in header])
    scorers = [s.created_by_account_id for r in rows for s in _scores(r)]
    people = resolve(sorted(set(scorers)))
    for row in rows:
        p = row.proposal
        for points in p.points:
            item = points.as_dict()
            sheet.append(
                [
                    _cell(sheet, row.key),
                    _cell(sheet, p.project.name),
                    _cell(sheet, p.version.number if p.version else None),
                    _cell(sheet, item["name"]),
                    _cell(sheet, _source(item["source"])),
                    _cell(sheet, item["weight"]),
                    _cell(sheet, item["value"]),
                    _cell(sheet, item["figure"]),
                    _cell(sheet, item["reason"]),
                    _cell(sheet, _name(people, item["scoredByAccountId"])),
                    _cell(sheet, _day(item["scoredAt"])),
                ]
            )


def scenario_workbook(request: HttpRequest, scenario: Scenario) -> IO[bytes]:
    """The scenario's workbook, drawn over the projects the caller can view."""
    board = selectors.board_for(selectors.visible_projects(request), [scenario])
    evaluation = selectors.evaluate(board, scenario)
    book = Workbook(write_only=True)
    _ranked_sheet(book, scenario, evaluation, board.current)
    _scores_sheet(book, evaluation.rows)
    return streaming.saved(book)


@page("GET")
def scenario_export(request: HttpRequest, scenario_id: uuid.UUID) -> StreamingHttpResponse:
    """The scenario as an XLSX workbook: the governance group and site administrators; 404 for
    anyone else, as for a scenario that does not exist."""
    governor(request)
    scenario = services.scenario_get(scenario_id)
    stamp = timezone.localdate().isoformat()
    name = slugify(scenario.name)[:60] or "scenario"
    return xlsx_response(scenario_workbook(request, scenario), f"scenario-{name}-{stamp}.xlsx")


urlpatterns: list[URLPattern] = [
    path(
        "scenarios/<uuid:scenario_id>/export.xlsx",
        scenario_export,
        name="scenario-export",
    ),
]
