"""The drivers of the derived RAG read as plain sentences: dates as dates, amounts with the
currency, "raised today" rather than "waited 0 days", and no bare signed numbers."""

import datetime as dt
import re
from decimal import Decimal

from tests.status.test_derive import (
    NOW,
    change,
    dimension,
    package,
    project,  # noqa: F401 (fixture)
)

SIGNED = re.compile(r"(?<![\w])[+-]\d")


def test_schedule_says_how_much_later_than_the_baseline(project):  # noqa: F811
    package(
        project,
        name="Go-live",
        planned_end_date=dt.date(2027, 2, 18),
        forecast_end_date=dt.date(2027, 3, 14),
    )
    result = dimension(project, "schedule")
    assert result.summary == (
        "The forecast end 14 Mar 2027 is 24 days later than the end of the current plan (no "
        "approved baseline yet), 18 Feb 2027, and Go-live is 24 days late."
    )
    assert result.drivers[0].text == (
        "Go-live is 24 days late: forecast to end on 14 Mar 2027, against its planned end "
        "18 Feb 2027."
    )


def test_scope_says_raised_today_not_waited_zero_days(project):  # noqa: F811
    package(project)
    change(project, summary="Add reporting", dimensions=["Scope"], age_days=0.1)
    result = dimension(project, "scope", now=NOW)
    assert "waited 0 days" not in result.summary and "0 days ago" not in result.drivers[0].text
    assert "the oldest was raised today" in result.summary
    assert result.drivers[0].text == "Add reporting awaits a decision; raised today."


def test_no_driver_carries_a_bare_signed_number(project):  # noqa: F811
    package(
        project,
        name="Build",
        budget=Decimal(600),
        budget_forecast=Decimal(900),
        planned_end_date=dt.date(2026, 9, 30),
        forecast_end_date=dt.date(2026, 10, 20),
    )
    change(project, status="Approved", dimensions=["Budget"], impact_budget=Decimal(-100))
    change(project, status="Approved", dimensions=["Schedule"], impact_schedule_days=-5)
    for key in ("cost", "schedule", "scope", "risk"):
        result = dimension(project, key)
        for text in (result.summary, *(d.text for d in result.drivers)):
            assert not SIGNED.search(text), text
    cost = dimension(project, "cost")
    assert "less EUR\u00a0100 of approved changes" in cost.summary
    assert "take" in cost.drivers[-1].text and "off the budget" in cost.drivers[-1].text
