"""The budget curve (from the phasing, else the planned months) on the work-package register
and the status page; the RAG trend picture over published reports."""

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import pytest

from governance import permissions
from registers import pictures
from status import services
from tests.factories import WorkPackageFactory
from tests.html import inline_problems
from tests.pictures.test_risk_matrix_pages import queries
from tests.pictures.test_timeline_pages import add_packages


def wp(**fields):
    base = {
        "budget_phasing": None,
        "planned_start_date": None,
        "planned_end_date": None,
        "budget": None,
        "budget_baseline": None,
        "budget_forecast": None,
        "budget_actual": None,
    }
    return SimpleNamespace(**{**base, **fields})


def test_budget_series_spreads_by_the_phasing_else_evenly_over_the_planned_months():
    phased = wp(
        budget_phasing=[
            {"period": "2026-01", "amount": 100},
            {"period": "2026-03", "amount": 300},
        ],
        budget=Decimal(400),
        budget_baseline=Decimal(400),
        budget_forecast=Decimal(800),
        budget_actual=Decimal(50),
    )
    even = wp(
        planned_start_date=dt.date(2026, 2, 10),
        planned_end_date=dt.date(2026, 3, 5),
        budget=Decimal(200),
    )
    labels, series = pictures.budget_series([phased, even], dt.date(2026, 2, 15))
    assert labels == ["2026-01", "2026-02", "2026-03"]
    assert series["baseline"] == [100.0, 100.0, 400.0]  # the even package has no baseline
    assert series["forecast"] == [200.0, 300.0, 1000.0]  # forecast, else budget
    # Actual falls on the phased months up to this month, and stops at this month.
    assert series["actual"] == [50.0, 50.0, None]


def test_budget_series_without_money_or_dates_is_empty():
    assert pictures.budget_series([wp(budget=Decimal(5))], dt.date(2026, 1, 1)) == ([], {})


def test_the_register_reads_the_curve_summed_by_shared_months_and_draws_the_same(
    cast, django_assert_num_queries
):
    """Packages alike in their planned months and in having a forecast are summed in SQL;
    the curve is the one every package drawn on its own gives (phasings, forecasts or
    budgets, missing baselines, zero actuals), in one query whatever the register's size."""
    months = [
        (dt.date(2026, 1, 5), dt.date(2026, 3, 20)),
        (dt.date(2026, 2, 1), dt.date(2026, 2, 28)),
        (dt.date(2026, 4, 1), dt.date(2026, 9, 30)),
        (None, dt.date(2026, 5, 1)),
    ]
    for n in range(48):
        start, end = months[n % len(months)]
        WorkPackageFactory(
            project=cast.project,
            planned_start_date=start,
            planned_end_date=end,
            budget=Decimal(1000 + n * 37) if n % 5 else None,
            budget_baseline=Decimal(900 + n) if n % 3 else None,
            budget_forecast=Decimal(1100 + n * 13) if n % 2 else None,
            budget_actual=[None, Decimal(0), Decimal(n * 11)][n % 3],
            budget_phasing=(
                [{"period": "2026-01", "amount": 1}, {"period": "2026-06", "amount": 3}]
                if n % 7 == 0
                else ([] if n % 7 == 1 else None)
            ),
        )
    every = list(cast.project.work_packages.all())
    today = dt.date(2026, 3, 10)
    with django_assert_num_queries(1):
        rows = pictures.budget_rows(cast.project.work_packages.all())
    assert len(rows) < len(every)
    labels, series = pictures.budget_series(every, today)
    assert pictures.budget_series(rows, today)[0] == labels
    summed = pictures.budget_series(rows, today)[1]
    assert summed.keys() == series.keys() == {"baseline", "forecast", "actual"}
    for name, values in series.items():
        assert summed[name] == [None if v is None else pytest.approx(v) for v in values]
    # The picture drawn from the summed rows is the one every package drawn on its own draws.
    drawn = pictures.budget_curve(rows, today)
    assert drawn.svg and drawn.svg == pictures.budget_curve(every, today).svg
    assert drawn.body_html() == pictures.budget_curve(every, today).body_html()


def test_packages_on_other_days_of_the_same_months_are_summed_into_one_row(cast):
    """A profile depends on the planned months alone, so packages starting and ending on
    other days of the same months are one summed row, drawn as each on its own draws."""
    spans = [
        (dt.date(2026, 1, 5), dt.date(2026, 3, 20)),
        (dt.date(2026, 1, 31), dt.date(2026, 3, 1)),
        (dt.date(2026, 1, 1), dt.date(2026, 3, 31)),
    ]
    for n, (start, end) in enumerate(spans):
        WorkPackageFactory(
            project=cast.project,
            planned_start_date=start,
            planned_end_date=end,
            budget=Decimal(1000 + n),
            budget_baseline=Decimal(900 + n),
            budget_forecast=Decimal(1200 + n),
            budget_actual=Decimal(10 * n),
            budget_phasing=None,
        )
    rows = pictures.budget_rows(cast.project.work_packages.all())
    assert len(rows) == 1
    assert (rows[0].planned_start_date, rows[0].planned_end_date) == (
        dt.date(2026, 1, 1),
        dt.date(2026, 3, 1),
    )
    today = dt.date(2026, 2, 10)
    every = list(cast.project.work_packages.all())
    assert pictures.budget_series(rows, today) == pictures.budget_series(every, today)


def test_register_and_status_page_draw_the_budget_curve(cast, client_for):
    WorkPackageFactory(
        project=cast.project,
        budget=Decimal(1000),
        budget_forecast=Decimal(1200),
        budget_phasing=[{"period": "2026-01", "amount": 500}, {"period": "2026-02", "amount": 500}],
    )
    client = client_for(cast.viewer)
    html = client.get("/projects/ALPHA/registers/work-packages/").content.decode()
    assert 'id="budget-curve"' in html and "line series-forecast" in html
    assert "1,200" in html.split('id="budget-curve"')[1]  # the table's cumulative forecast
    html = client.get("/projects/ALPHA/status/").content.decode()
    assert 'id="status-budget"' in html
    assert inline_problems(html) == []
    few = queries(client, "/projects/ALPHA/status/")
    add_packages(cast.project, 30)
    assert queries(client, "/projects/ALPHA/status/") == few


def test_status_page_draws_the_rag_trend_linked_to_its_table(cast, client_for):
    caller = permissions.caller_for(cast.lead, cast.project)
    html = client_for(cast.viewer).get("/projects/ALPHA/status/").content.decode()
    assert 'id="rag-trend"' not in html  # nothing published yet
    for title in ("Week 1", "Week 2"):
        report = services.status_report_create(caller=caller, data={"title": title})
        services.status_report_publish(
            caller=caller, report_id=report.pk, expected_revision=report.revision
        )
    client = client_for(cast.viewer)
    html = client.get("/projects/ALPHA/status/").content.decode()
    assert 'id="rag-trend"' in html and 'class="trend-line"' in html
    assert 'href="#trend-table"' in html and 'id="trend-table"' in html
    assert inline_problems(html) == []
