"""The portfolio table's rows, built in Python (portfolio/table.py), print exactly what the
page template printed for them: the same markup, values, escaping and number formats."""

import re
from pathlib import Path

import pytest
from django.template import engines
from django.template.defaultfilters import floatformat

from governance.people import Person
from portfolio.table import one_decimal, render_rows
from status.models import DIMENSIONS

# The row markup the page template had before the rows moved to Python.
TEMPLATE = "{% load gov status_tags %}" + (Path(__file__).parent / "row_template.html").read_text()


def _row(**changes):
    row = {
        "projectKey": "ALPHA",
        "name": 'Alpha <programme> & "co"',
        "leadAccountId": "acc-1",
        "theme": "Cost Out",
        "approvalStatus": "Approved",
        "version": 2,
        "phase": "Delivery",
        "overallRag": "Amber",
        "overallReason": "Supplier <late>",
        "derived": {
            "costRag": "Red",
            "scheduleRag": "Green",
            "scopeRag": "None",
            "riskRag": "Blue",
        },
        "effective": {
            "costRag": "Amber",
            "scheduleRag": "Green",
            "scopeRag": "None",
            "riskRag": "Blue",
        },
        "overrides": {"costRag": "Amber", "scheduleRag": None, "scopeRag": None, "riskRag": None},
        "drivers": {
            f"{d}Rag": {"rag": "Green", "summary": f"{d} summary <b>&</b>", "figures": {}}
            for d in ("cost", "schedule", "scope", "risk")
        },
        "approvedBudget": 1234567.5,
        "eac": 1300000,
        "costOverrunPct": 5.35,
        "scheduleSlipDays": -3,
        "topRiskScore": 16,
        "pendingDecisions": 1,
        "changesAwaitingApplication": 0,
        "adoptionGap": True,
        "stale": True,
        "lastUpdatedAt": "2026-11-01T10:00:00+00:00",
        "nextUpdateDueAt": "2026-12-02T10:00:00+00:00",
        "realisationReviewDueOn": "2027-01-05",
        "realisationReviewOverdue": True,
    }
    row.update(changes)
    return row


ROWS = [
    _row(),
    _row(
        projectKey="B0001",
        leadAccountId=None,
        theme="",
        phase="",
        overallRag="None",
        overallReason="",
        overrides={"costRag": None, "scheduleRag": None, "scopeRag": None, "riskRag": None},
        approvedBudget=None,
        eac=None,
        costOverrunPct=None,
        scheduleSlipDays=None,
        topRiskScore=None,
        adoptionGap=False,
        stale=False,
        realisationReviewDueOn=None,
        realisationReviewOverdue=False,
    ),
    _row(
        projectKey="C2", leadAccountId="unknown", costOverrunPct=20, realisationReviewOverdue=False
    ),
    _row(projectKey="D3", costOverrunPct=-0.05, approvedBudget=0, eac=10.25, version=1),
    _row(projectKey="E4", costOverrunPct=1000000.04, realisationReviewDueOn="2026-12-31"),
]


def _normal(html: str) -> str:
    return re.sub(r">\s+<", "><", re.sub(r"\s+", " ", str(html))).strip()


def test_rows_print_what_the_template_printed(db):
    people = {"acc-1": Person(account_id="acc-1", display_name="Lena <Lead>", known=True)}
    expected = (
        engines["django"]
        .from_string(TEMPLATE)
        .render({"rows": ROWS, "people": people, "rag_dims": DIMENSIONS})
    )
    rows = [dict(row) for row in ROWS]
    render_rows(rows, people)
    assert _normal("".join(row["html"] for row in rows)) == _normal(expected)


@pytest.mark.parametrize(
    "value", [0, 20, -3, 5.35, 5.25, 5.05, -0.05, 0.04, 12.0, 1000000.04, 99.95, -12.45]
)
def test_overrun_percent_as_floatformat_prints_it(value):
    assert one_decimal(value) == floatformat(value, "-1")
