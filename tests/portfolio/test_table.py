"""The portfolio table's rows, built in Python (portfolio/table.py), print what the page's own
row partial (portfolio/portfolio.html#row) prints for them, for every column choice: the same
markup, values, labels, escaping and number formats."""

import re

import pytest
from django.template.loader import get_template

from governance.people import Person
from portfolio.table import render_rows
from portfolio.views import COLUMN_KEYS, DEFAULT_COLUMNS
from status.models import DIMENSIONS


def _row(**changes):
    row = {
        "projectKey": "ALPHA",
        "name": 'Alpha <programme> & "co"',
        "leadAccountId": "acc-1",
        "theme": "Cost Out",
        "approvalStatus": "ClosingSubmitted",
        "version": 2,
        "phase": "Delivery of the <second> wave, with its long tail of integrations & more",
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
        "realisationReviewDueOn": "2027-01-05",
        "realisationReviewOverdue": True,
        "inException": True,
        "exceptionAgeDays": 12,
        "currentStage": "Design <& build>",
        "daysAtGate": 3,
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
        approvalStatus="Approved",
        overallRag="None",
        overallReason="",
        overrides={"costRag": None, "scheduleRag": None, "scopeRag": None, "riskRag": None},
        drivers={
            f"{d}Rag": {"rag": "Green", "summary": "ok", "figures": {"baselined": True}}
            for d in ("cost", "schedule", "scope", "risk")
        },
        approvedBudget=None,
        eac=None,
        costOverrunPct=None,
        scheduleSlipDays=None,
        topRiskScore=None,
        adoptionGap=False,
        stale=False,
        realisationReviewDueOn=None,
        realisationReviewOverdue=False,
        inException=False,
        exceptionAgeDays=None,
        currentStage=None,
        daysAtGate=None,
    ),
    _row(
        projectKey="C0002",
        exceptionAgeDays=1,
        daysAtGate=0,
        leadAccountId="acc-unknown",
        costOverrunPct=12.0,
        version=None,
        topRiskZone="Red",
        earnedValue={"estimatesCompared": "At <the> cost & 'so far' \"x\" the work would cost"},
    ),
]
PEOPLE = {"acc-1": Person(account_id="acc-1", display_name="Lena <Lead>", avatar_url="")}


def _squash(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r">\s+", ">", re.sub(r"\s+<", "<", str(html)))).strip()


@pytest.mark.parametrize(
    "shown", [COLUMN_KEYS, DEFAULT_COLUMNS, ["project"], ["project", "phase", "why", "cost"]]
)
def test_python_rows_print_what_the_row_partial_prints(db, shown):
    partial = get_template("portfolio/portfolio.html#row")
    rows = [dict(row) for row in ROWS]
    render_rows(rows, PEOPLE, shown, DIMENSIONS)
    for row in rows:
        expected = partial.render(
            {"row": row, "people": PEOPLE, "shown": shown, "rag_dims": DIMENSIONS}
        )
        assert _squash(row["html"]) == _squash(expected)


def test_one_decimal_writes_what_floatformat_minus_one_writes():
    import random
    from decimal import Decimal

    from django.template.defaultfilters import floatformat

    from portfolio.table import one_decimal

    rng = random.Random(7)
    values = [0, 0.0, -0.0, 5, -5, 34.96, 34.05, 34.15, -0.04, -0.05, 0.05, 12.25, 1e6, 1234567.891]
    values += [Decimal("2.50"), Decimal("-12.35"), "7.45", 3, 3.0, 99.99]
    values += [round(rng.uniform(-500, 500), rng.randrange(0, 5)) for _ in range(500)]
    for value in values:
        assert one_decimal(value) == floatformat(value, "-1"), value
