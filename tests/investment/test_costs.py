"""Each project's cost per year (`investment.selectors.money_rows` and `costs_of`): the
figures the reading computed before it loaded plain values and summed alike packages by
their months, for a varied board (phased, unphased, forecast and budget, packages sharing
their months, a year's turn, no dates, a zero phasing, a financial case only), and the
scenario's rows drawn by Python as the template drew them."""

import datetime as dt
from dataclasses import replace
from decimal import Decimal

import pytest
from django.template import Context, Template

from investment import selectors
from investment.models import Scenario
from investment.views.scenarios import _row_view, row_html
from tests.factories import WorkPackageFactory
from tests.investment.conftest import builtin, make_project, proposal

D = Decimal
pytestmark = pytest.mark.django_db


def _package(project, budget, first=None, last=None, forecast=None, phasing=None):
    return WorkPackageFactory(
        project=project,
        budget=None if budget is None else D(budget),
        budget_forecast=None if forecast is None else D(forecast),
        budget_phasing=phasing,
        planned_start_date=first,
        planned_end_date=last,
    )


def _board(governed):
    """Five proposals whose money falls every way `profile` knows."""
    day = dt.date
    spread = make_project("SPREAD", governed)
    proposal(spread)
    # Unphased, across the turn of a year, with and without a forecast, sharing their months
    # (the 3rd and the 28th of the same months), a third of a cent apart.
    _package(spread, "1000.01", day(2026, 11, 3), day(2027, 1, 28))
    _package(spread, "999.99", day(2026, 11, 28), day(2027, 1, 3), forecast="1200.05")
    _package(spread, "333.33", day(2026, 11, 1), day(2027, 1, 31), forecast="0.01")
    _package(spread, "70.00", day(2027, 2, 10), day(2026, 12, 5))  # dates reversed
    _package(spread, None, day(2026, 1, 1), day(2026, 6, 30))  # no money
    phased_ = make_project("PHASED", governed)
    proposal(phased_)
    _package(
        phased_,
        "100.00",
        day(2026, 1, 1),
        day(2028, 12, 31),
        forecast="100.01",
        phasing=[
            {"period": "2026-12", "amount": 1},
            {"period": "2027-01", "amount": 1},
            {"period": "2028-06", "amount": 1},
        ],
    )
    _package(
        phased_,
        "77.77",
        None,
        None,
        phasing=[{"period": "2029-03", "amount": "2.5"}, {"period": "2030-03", "amount": 7}],
    )
    # A phasing of zeros: spread over the planned months; without them, unphased.
    _package(
        phased_,
        "12.34",
        day(2027, 6, 1),
        day(2027, 8, 31),
        phasing=[{"period": "2027-01", "amount": 0}],
    )
    _package(phased_, "5.55", None, None, phasing=[{"period": "2027-01", "amount": 0}])
    loose = make_project("LOOSE", governed)
    proposal(loose)
    _package(loose, "250.00", None, None, forecast="260.00")  # no dates: unphased
    _package(loose, "10.00", day(2026, 5, 5), None)  # one date: unphased
    _package(loose, "0.03", day(2026, 1, 1), day(2026, 6, 30), forecast="0.07")
    _package(loose, "0.03", day(2026, 1, 15), day(2026, 6, 2))
    case_only = make_project("CASE", governed)
    proposal(case_only, financial_case=builtin((0, 300, 0), (1, 200, 900)))
    long_ = make_project("LONG", governed)
    proposal(long_)
    _package(long_, "1000000.00", day(2026, 3, 17), day(2031, 9, 2), forecast="1234567.89")
    _package(long_, "0.00", day(2026, 3, 1), day(2026, 4, 1))
    return [spread, phased_, loose, case_only, long_]


# What the reading computed before (by project: cost per year, unphased), on SQLite and on
# PostgreSQL alike; and the scenario's cost per year above the line (everything fits).
BEFORE = {
    "SPREAD": ({"2026": D("1490.05"), "2027": D("780.02")}, D("0.00")),
    "PHASED": (
        {
            "2026": D("33.34"),
            "2027": D("45.68"),
            "2028": D("33.34"),
            "2029": D("20.47"),
            "2030": D("57.30"),
        },
        D("5.55"),
    ),
    "LOOSE": ({"2026": D("0.10")}, D("270.00")),
    "CASE": ({}, D("500.00")),
    "LONG": (
        {
            "2026": D("184263.86"),
            "2027": D("221116.64"),
            "2028": D("221116.64"),
            "2029": D("221116.64"),
            "2030": D("221116.64"),
            "2031": D("165837.48"),
        },
        D("0.00"),
    ),
}
SCENARIO_BEFORE = {
    "costByYear": {
        "2026": 186562.9,
        "2027": 221942.34,
        "2028": 221149.98,
        "2029": 221137.11,
        "2030": 221173.94,
        "2031": 165837.48,
    },
    "cost": 1237803.75,
    "projects": 5,
}


def test_the_cost_per_year_is_what_it_was(governed):
    projects = _board(governed)
    board = selectors.load(projects)
    assert {p.key: board.costs.get(p.pk) for p in projects} == BEFORE
    scenario = Scenario(name="All", budget_by_year={"2026": 10_000_000, "2027": 10_000_000})
    totals = selectors.evaluate(board, scenario).totals()
    assert {key: totals[key] for key in SCENARIO_BEFORE} == SCENARIO_BEFORE


# The template's row, as the scenario page drew it before its rows were drawn in Python.
TEMPLATE_ROW = """{% load gov %}{% with r=item.row %}<tr class="{% if r.above %}above-line{% else %}below-line{% endif %}">
      <th scope="row"><span class="wrap">{{ r.key }} {{ r.proposal.project.name }}</span>{% if r.must_have %} <span class="badge">must-have</span>{% endif %}{% if r.proposal.state != "Exploring" and r.proposal.state != "Draft" %} <span class="badge">running</span>{% endif %}</th>
      <td class="num" data-label="Rank">{{ r.proposal.rank|default_if_none:"—" }}</td>
      <td class="num" data-label="Score">{{ r.proposal.total|default_if_none:"not scored" }}{% if r.proposal.total is not None and not r.proposal.complete %} <span class="muted">(incomplete)</span>{% endif %}{% if r.proposal.older %} <span class="muted">(older model)</span>{% endif %}</td>
      {% for c in item.years %}<td class="num" data-label="{{ c.year }}">{% if c.fit == "no cost" %}<span class="muted">—<span class="visually-hidden"> no cost</span></span>{% else %}{{ c.cost|money }}<br><span class="{% if c.fits %}muted{% else %}field-error{% endif %}">{{ c.fit }}</span>{% endif %}</td>{% endfor %}
      <td class="num" data-label="Not phased">{% if r.unphased %}{{ r.unphased|money }}{% else %}<span class="muted">—</span>{% endif %}</td>
      <td class="num" data-label="Cost">{{ r.cost|money }}{% if r.fits_total is False %}<br><span class="field-error">over the total</span>{% endif %}</td>
      <td class="num" data-label="Benefit">{{ r.benefit|money }}</td>
      <td data-label="Place">{% if r.above %}<span class="badge place place-above">Above<span class="visually-hidden"> the line</span></span>{% else %}<span class="badge place place-below">Below<span class="visually-hidden"> the line</span></span>{% endif %}</td>
      <td class="move" data-label="What if"><a class="button small secondary" href="?move={{ r.key|urlencode }}#move">{% if r.above %}Move below<span class="visually-hidden">: {{ r.key }}</span>{% else %}Move above<span class="visually-hidden">: {{ r.key }}</span>{% endif %}</a></td>
    </tr>{% endwith %}"""  # noqa: E501


def test_a_row_drawn_in_python_is_the_template_s_row(governed):
    projects = _board(governed)
    projects[0].name = 'A <b>"bold"</b> & name'
    projects[1].key = "K&1"
    board = selectors.load(projects)
    scenario = Scenario(
        name="Tight",
        budget_by_year={"2026": 1500, "2027": 100_000},
        budget_total=D(3000),
        must_haves=["LONG"],
    )
    evaluation = selectors.evaluate(board, scenario)
    years = sorted(
        {*evaluation.budget.by_year, *(y for r in evaluation.rows for y in r.cost_by_year)}
    )
    template = Template(TEMPLATE_ROW)
    drawn = [_row_view(r, years, evaluation.budget) for r in evaluation.rows]
    assert {r.above for r in evaluation.rows} == {True, False}
    assert any(r.fits_total is False for r in evaluation.rows)
    # And a proposal whose total is incomplete (a criterion without points) says so.
    first = evaluation.rows[0]
    incomplete = replace(first, proposal=replace(first.proposal, total=D(3), complete=False))
    drawn.append(_row_view(incomplete, years, evaluation.budget))
    assert "(incomplete)" in row_html(drawn[-1])
    for item in drawn:
        assert row_html(item) == template.render(Context({"item": item}))
