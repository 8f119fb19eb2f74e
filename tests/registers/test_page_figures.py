"""The register page's figures read in one statement (`selectors.page_figures`) are the
figures the page read in three: `register_counts`, the filtered `count()`, the money sums
`aggregate` answers and `plan_baseline_of`."""

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models import Sum
from django.http import QueryDict
from django.test.utils import CaptureQueriesContext

from charter.models import BusinessCase
from registers import paging, selectors
from registers.derive import plan_baseline_of
from registers.models import REGISTER_MODELS
from tests.factories import (
    ChangeRequestFactory,
    DecisionFactory,
    ProjectFactory,
    RiskFactory,
    WorkPackageFactory,
)

SUMS = {"budget": "budget", "forecast": "budget_forecast", "actual": "budget_actual"}
QUERIES = ["", "q=Package", "q=nothing-matches", "status=In+Progress", "q=1&status=Done"]


def old_figures(project, register, params):
    """The page's figures as read before: three statements and a count."""
    scope = REGISTER_MODELS[register].objects.filter(project=project)
    owners = paging.owner_ids(register, scope)
    matching = paging.filtered(register, scope, params, owners)
    counts = selectors.register_counts(project)
    sums = {}
    if register == "work-packages":
        sums = matching.order_by().aggregate(**{n: Sum(field) for n, field in SUMS.items()})
    filtered = matching is not scope  # paging.filtered keeps the queryset it was given
    return counts, (matching.count() if filtered else None), sums, plan_baseline_of(project)


def new_figures(project, register, params):
    scope = REGISTER_MODELS[register].objects.filter(project=project)
    owners = paging.owner_ids(register, scope)
    matching = paging.filtered(register, scope, params, owners)
    with CaptureQueriesContext(connection) as queries:
        figures = selectors.page_figures(
            project,
            scope,
            matching,
            sums=SUMS if register == "work-packages" else {},
            plan=True,
        )
    assert len(queries) == 1
    return figures


def fill(project, n):
    for i in range(n):
        WorkPackageFactory(
            project=project,
            name=f"Package {i}",
            status=["In Progress", "Done", "Not Started"][i % 3],
            budget=None if i % 4 == 0 else Decimal(f"{100 * i}.25"),
            budget_forecast=None if i % 2 else Decimal(f"{50 * i}.10"),
            budget_actual=Decimal("0") if i % 5 == 0 else None,
            planned_start_date=dt.date(2026, 1, 1) + dt.timedelta(days=i),
        )
    RiskFactory.create_batch(n % 4, project=project)
    DecisionFactory.create_batch(n % 3, project=project)
    ChangeRequestFactory.create_batch(n % 2, project=project)


@pytest.mark.parametrize("rows", [0, 1, 7])
@pytest.mark.parametrize(
    "plan",
    [
        "none",
        None,
        {},
        [1, 2],
        {"version": 2, "workPackages": {"x": {"budget": "1.50"}}, "totalBudget": "1.50"},
    ],
)
def test_one_statement_reads_the_figures_the_three_did(cast, rows, plan):
    project = cast.project
    other = ProjectFactory(key="OTHER")
    fill(project, rows)
    fill(other, 3)  # another project's rows count for neither
    BusinessCase.objects.filter(project=project).delete()
    if plan != "none":
        BusinessCase.objects.create(project=project, plan_baseline=plan)
    BusinessCase.objects.get_or_create(project=other, defaults={"plan_baseline": {"a": 1}})
    filtered_counts = set()
    for register in REGISTER_MODELS:
        for query in QUERIES:
            params = QueryDict(query)
            counts, matching, sums, baseline = old_figures(project, register, params)
            figures = new_figures(project, register, params)
            assert figures.counts == counts, (register, query)
            assert figures.matching == matching, (register, query)
            filtered_counts.add(matching)
            assert figures.sums == sums, (register, query)
            assert figures.plan == baseline, (register, query)
    # Unfiltered pages, and filtered ones keeping none and (with rows) some.
    assert {None, 0} <= filtered_counts and (rows < 7 or len(filtered_counts) > 3)


def test_without_sums_or_plan_only_the_counts(cast):
    fill(cast.project, 2)
    figures = selectors.page_figures(cast.project)
    assert figures.counts == selectors.register_counts(cast.project)
    assert figures.matching is None and figures.sums == {} and figures.plan is None
