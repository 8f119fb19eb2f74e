"""Earned value (`status.earned_value`) against a published worked example, and its rules for
phasing, progress, actuals and missing inputs.

The worked example is the four-sided fence of Rita Mulcahy, *PMP Exam Prep*, 6th edition
(RMC Publications, 2009), chapter 7 "Cost Management", exercise "The Fence #1" (p. 244): each
side takes one day and is budgeted 1,000; the sides are built one after the other; at the end
of day 3 side 1 is complete (spent 1,000), side 2 complete (spent 1,200), side 3 half done
(spent 600) and side 4 not started. The book's answers: PV 3,000, EV 2,500, AC 2,800, BAC
4,000, CV -300, CPI 0.89, SV -500, SPI 0.83, and an estimate at completion of BAC / CPI. The
exact EAC is 4,000 x 2,800 / 2,500 = 4,480 (the book divides by the rounded CPI); VAC follows
as BAC - EAC = -480, the PMBOK Guide's atypical estimate AC + (BAC - EV) is 4,300, and the
to-complete index (BAC - EV) / (BAC - AC) is 1,500 / 1,200 = 1.25 (PMBOK Guide, 6th edition,
Table 7-1, for the formulas)."""

import datetime as dt
from decimal import Decimal

from status import earned_value as evm
from status.earned_value import PackageInputs

DAY1 = dt.date(2026, 3, 2)


def side(number, progress, spent, status="In Progress"):
    day = DAY1 + dt.timedelta(days=number - 1)
    return PackageInputs(
        id=number,
        name=f"Side {number}",
        status=status,
        progress=progress,
        bac=Decimal(1000),
        actual=spent,
        start=day,
        end=day,
    )


FENCE = [
    side(1, 100, Decimal(1000), "Complete"),
    side(2, 100, Decimal(1200), "Complete"),
    side(3, 50, Decimal(600)),
    side(4, None, None, "Not Started"),
]
END_OF_DAY_3 = DAY1 + dt.timedelta(days=2)


def test_the_fence_worked_example_from_the_formulas():
    figures = evm.indices(Decimal(4000), Decimal(3000), Decimal(2500), Decimal(2800))
    shown = {key: evm.shown(key, value) for key, value in figures.items()}
    assert shown["cv"] == -300
    assert shown["sv"] == -500
    assert shown["cpi"] == 0.89
    assert shown["spi"] == 0.83
    assert shown["costPerformanceEstimate"] == 4480
    assert shown["atypicalEstimate"] == 4300
    assert "eac" not in shown and "eacAtypical" not in shown
    assert shown["vac"] == -480
    assert shown["tcpi"] == 1.25


def test_the_fence_worked_example_from_its_work_packages(db):
    values = evm.project_values(FENCE, END_OF_DAY_3).as_dict(packages=True)
    assert (values["bac"], values["pv"], values["ev"], values["ac"]) == (4000, 3000, 2500, 2800)
    assert (values["cpi"], values["spi"], values["costPerformanceEstimate"], values["tcpi"]) == (
        0.89,
        0.83,
        4480,
        1.25,
    )
    assert values["missing"] == []
    by_name = {p["name"]: p for p in values["workPackages"]}
    assert by_name["Side 3"]["pv"] == 1000 and by_name["Side 3"]["ev"] == 500
    assert by_name["Side 4"]["pv"] == 0 and by_name["Side 4"]["ac"] == 0  # Not Started: 0
    words = evm.readings(values)
    assert words["cpi"] == "For each 1.00 spent, 0.89 of planned work done."
    assert words["spi"] == "For each 1.00 of work planned by today, 0.83 done."
    assert "over budget" in words["vac"]


def test_monthly_phasing_is_spread_over_each_months_days():
    package = PackageInputs(
        id=1,
        name="Build",
        status="In Progress",
        progress=40,
        bac=Decimal(3000),
        actual=Decimal(1000),
        phasing=[
            {"period": "2026-01", "amount": 1000},
            {"period": "2026-02", "amount": 2000},
        ],
    )
    assert evm.planned_share(package, dt.date(2025, 12, 31)) == 0
    assert evm.planned_share(package, dt.date(2026, 1, 31)) == Decimal(1) / 3
    # 14 of February's 28 days: 1,000 + 1,000 of 3,000.
    assert evm.planned_share(package, dt.date(2026, 2, 14)) == Decimal(2) / 3
    assert evm.planned_share(package, dt.date(2026, 6, 1)) == 1


def test_missing_inputs_are_named_instead_of_a_figure(db):
    packages = [
        PackageInputs(1, "Design", "Complete", None, Decimal(100), Decimal(90)),
        PackageInputs(2, "Build", "In Progress", None, Decimal(200), None),
        PackageInputs(3, "Added later", "In Progress", 10, None, Decimal(5)),
    ]
    values = evm.project_values(packages, dt.date(2026, 1, 1)).as_dict()
    assert values["bac"] == 300 and values["counted"] == 2
    assert values["notCounted"] == ["Added later"]
    assert values["pv"] is None and values["ev"] is None and values["ac"] is None
    assert values["cpi"] is None and values["spi"] is None
    inputs = {m["input"]: m for m in values["missing"]}
    assert set(inputs) == {"phasing", "progress", "actuals"}
    assert inputs["progress"]["packages"] == ["Build"]
    assert inputs["phasing"]["text"] == (
        "Planned value is not given: 2 work packages have no budget phasing and no baselined "
        "dates (“Design” and “Build”)."
    )
    words = evm.readings(values)
    assert words["cpi"] == "Not given: no progress and no actuals."
    assert words["spi"] == "Not given: no progress and no phasing."


def test_no_baseline_budget_says_so():
    values = evm.project_values([], dt.date(2026, 1, 1)).as_dict()
    assert values["cpi"] is None
    assert values["missing"][0]["input"] == "baseline"
    assert evm.reading("cpi", values) == "Not given: no approved baseline budget."


def test_division_by_zero_reads_in_words():
    values = evm.indices(Decimal(100), Decimal(0), Decimal(0), Decimal(0))
    shown = {k: evm.shown(k, v) for k, v in values.items()} | {"missing": []}
    assert shown["cpi"] is None and shown["spi"] is None
    assert evm.reading("cpi", shown) == "Not given: nothing spent yet."
    assert evm.reading("spi", shown) == "Not given: no work was planned by today."
    spent = evm.indices(Decimal(100), Decimal(50), Decimal(40), Decimal(120))
    assert spent["tcpi"] is None


def test_the_portfolio_sums_the_projects_that_give_every_input():
    rows = [
        {"projectKey": "A", "earnedValue": {"bac": 100, "pv": 50, "ev": 40, "ac": 50}},
        {"projectKey": "B", "earnedValue": {"bac": 100, "pv": 50, "ev": 60, "ac": 50}},
        {"projectKey": "C", "earnedValue": {"bac": 100, "pv": None, "ev": 60, "ac": 50}},
        {"projectKey": "D", "earnedValue": None},
    ]
    values = evm.portfolio_values(rows).as_dict()
    assert (values["bac"], values["ev"], values["cpi"], values["spi"]) == (200, 100, 1, 1)
    assert values["counted"] == 2
    assert "2 projects are not counted" in values["missing"][0]["text"]


def test_a_portfolio_without_figures_says_so():
    values = evm.portfolio_values([{"projectKey": "A", "earnedValue": None}]).as_dict()
    assert evm.reading("cpi", values) == "Not given: no project gives all of its figures yet."
