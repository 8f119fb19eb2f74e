"""The stored health row's summary columns (`status.health.SUMMARY_COLUMNS`): written with the
row from the same values as its JSON `row`, and read by the portfolio's summary, heat grid,
theme subtotals, earned value and bubble chart, whose figures stay what reading the JSON
members in SQL gave."""

import importlib
from decimal import Decimal
from typing import Any

import pytest
from django.apps import apps
from django.db import connection
from django.db.models import Count, DecimalField, F, IntegerField, Max, Q, Sum, Value
from django.db.models.functions import Coalesce, NullIf
from django.db.models.lookups import Exact, IsNull
from django.test import RequestFactory

from governance import permissions
from governance.models import RAG_CHOICES, User
from portfolio import selectors
from status import health
from status.models import ProjectHealth

MONEY: DecimalField[Decimal, Decimal] = DecimalField(max_digits=30, decimal_places=6)
EV_KEYS = selectors.EV_KEYS


def _present(expression: Any) -> Q:
    return Q(IsNull(expression, False))


def _json_aggregates() -> dict[str, Any]:
    """The summary's aggregates as they read the JSON `row`'s members, before the columns."""
    json, text = selectors._json, selectors._text
    ev = {key: json(f"earnedValue__{key}", MONEY) for key in EV_KEYS}
    budget, eac = json("approvedBudget", MONEY), json("eac", MONEY)
    due = NullIf(text("realisationReviewDueOn"), Value(""), output_field=selectors.TEXT)
    complete = Q(*(_present(value) for value in ev.values()))
    both = _present(budget) & _present(eac) & ~Q(Exact(budget, Value(0)))

    def count(condition: Q) -> Count:
        return Count("pk", filter=condition)

    out: dict[str, Any] = {
        "projects": Count("pk"),
        "stale": count(Q(stale=True)),
        "inException": count(Q(project__exception_opened_at__isnull=False)),
        "adoptionGaps": count(Q(row__adoptionGap=True)),
        "pendingDecisions": Sum(json("pendingDecisions", IntegerField())),
        "changesAwaitingApplication": Sum(json("changesAwaitingApplication", IntegerField())),
        "reviewsDue": count(_present(due)),
        "reviewsOverdue": count(Q(row__realisationReviewOverdue=True)),
        "approvedBudget": Sum(budget),
        "eac": Sum(eac),
        "budgetBoth": Sum(budget, filter=both),
        "eacBoth": Sum(eac, filter=both),
        "scheduleSlipDays": Max(json("scheduleSlipDays", IntegerField())),
        "topRiskScore": Max(json("topRiskScore", IntegerField())),
        "evCounted": count(complete),
        **{f"sum_{key}": Sum(ev[key], filter=complete) for key in EV_KEYS},
    }
    for rag in RAG_CHOICES:
        if rag == "None":
            continue
        for dimension in selectors.RAG_DIMENSIONS:
            condition = (
                Q(row__overallRag=rag) if dimension == "overall" else Q(**{f"{dimension}_rag": rag})
            )
            out[f"rag_{dimension}_{rag}"] = count(condition)
    return out


def _json_bubbles(rows: Any) -> list[tuple[Any, ...]]:
    """The bubble chart's query as it read the JSON `row`'s members, before the columns."""
    json, number = selectors._json, selectors._number
    size = Coalesce(json("approvedBudget", MONEY), json("eac", MONEY))
    return list(
        rows.annotate(b_size=size)
        .order_by(F("b_size").desc(nulls_last=True), "project__key")
        .values_list(
            "project__key",
            number("scheduleSlipDays"),
            number("costOverrunPct"),
            "b_size",
            selectors._text("overallRag"),
        )[: selectors.BUBBLES_MAX]
    )


def _stored() -> Any:
    """Every project's row, stored now."""
    health.refresh_all()
    rows = ProjectHealth.objects.all()
    assert rows.count() >= 5
    return rows


def _columns(stored: ProjectHealth) -> dict[str, Any]:
    return {name: getattr(stored, name) for name in health.SUMMARY_COLUMNS}


def test_the_columns_equal_the_rows_members_after_a_refresh(demo):
    stored = _stored()
    members_read = 0
    for row in stored:
        columns = _columns(row)
        # The row as read back from its JSON column: each member, its column.
        assert columns == health.summary_columns(row.row), row.project_id
        for name, (path, kind) in health.SUMMARY_COLUMNS.items():
            member: Any = row.row
            for key in path:
                member = (member or {}).get(key)
            column = columns[name]
            if kind == "money":
                assert column == (None if member is None else Decimal(str(member))), name
            elif kind == "date":
                assert (column.isoformat() if column else member) == member, name
            else:
                assert column == member, (name, column, member)
            members_read += member is not None
    assert members_read > 50
    # And as SQL reads them: each column equals its member cast as the summary cast it.
    kinds = {"money": MONEY, "int": IntegerField(), "float": selectors.NUMBER}
    for name, (path, kind) in health.SUMMARY_COLUMNS.items():
        if kind not in kinds:
            continue
        pairs = stored.values_list(name, selectors._json("__".join(path), kinds[kind]))
        for column, member in pairs:
            assert column == member, (name, column, member)


def test_the_summary_heat_grid_earned_value_and_bubbles_are_the_figures_the_json_gave(demo, cast):
    stored = _stored()
    assert (
        stored.exclude(ev_bac=None).exists()
        and stored.exclude(estimate_at_completion=None).exists()
    )
    themes = set(stored.values_list("theme", flat=True))
    filters = [
        selectors.Params(),
        *(selectors.Params(rag=rag) for rag in RAG_CHOICES),
        *(selectors.Params(rag="Red", dimension=d) for d in selectors.RAG_DIMENSIONS),
        *(selectors.Params(theme=theme or selectors.NO_THEME) for theme in themes),
    ]
    for params in filters:
        matching = stored.filter(selectors._where(params))
        totals = matching.aggregate(**selectors._aggregates())
        assert totals == matching.aggregate(**_json_aggregates()), params
        assert selectors.summary_of(totals) and selectors.heat_of(totals)
        bubbles = selectors._bubbles(matching)
        before = _json_bubbles(matching)
        assert [tuple(b.values()) for b in bubbles] == [
            (key, slip, overrun, None if size is None else float(size), None, rag)
            for key, slip, overrun, size, rag in before
        ], params
    # The theme subtotals: grouped by the column as they were by the member.
    by_column = {
        t.pop("g"): t
        for t in stored.values(g=F("theme")).annotate(**selectors._aggregates()).order_by()
    }
    by_member = {
        t.pop("g"): t
        for t in stored.values(g=selectors._text("theme")).annotate(**_json_aggregates()).order_by()
    }
    assert by_column == by_member and len(by_column) > 1
    # The whole page's summary, heat grid and earned value through the selector, as the
    # demo's portfolio office sees them, against the JSON's figures of the same projects.
    request = RequestFactory().get("/portfolio/")
    request.user = User.objects.get(username="priya")
    found = selectors.portfolio(request, {})
    seen = [project.pk for project, _ in permissions.viewable_projects(request)]
    viewable = stored.filter(project_id__in=seen)
    totals = viewable.aggregate(**_json_aggregates())
    assert found.summary == selectors.summary_of(totals) and found.summary["projects"] > 5
    assert found.heat == selectors.heat_of(totals)
    assert found.earned == selectors._earned(totals, viewable) and found.earned["counted"]
    assert found.bubbles and len(found.bubbles) == found.summary["projects"]


def test_the_migration_fills_the_columns_of_the_rows_stored_before_it(demo):
    stored = _stored()
    before = {row.project_id: _columns(row) for row in stored}
    blank = {
        name: ("" if name == "theme" else "None" if name == "overall_rag" else None)
        for name in health.SUMMARY_COLUMNS
    }
    stored.update(**blank)
    migration = importlib.import_module("status.migrations.0008_health_summary_columns")
    migration.fill_summary_columns(apps, connection.schema_editor())
    assert {row.project_id: _columns(row) for row in ProjectHealth.objects.all()} == before


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (
            {},
            {
                "theme": "",
                "overall_rag": "None",
                "estimate_at_completion": None,
                "adoption_gap": None,
            },
        ),
        (
            {"eac": 1234.5, "approvedBudget": 10, "adoptionGap": False, "topRiskScore": 16},
            {
                "estimate_at_completion": Decimal("1234.5"),
                "approved_budget": Decimal(10),
                "adoption_gap": False,
            },
        ),
        # A float JSON writes by its shortest form: the column holds the same digits.
        (
            {"costOverrunPct": 7.1, "eac": 0.1},
            {"cost_overrun_pct": 7.1, "estimate_at_completion": Decimal("0.1")},
        ),
        ({"realisationReviewDueOn": "2026-12-01"}, {"realisation_review_due_on": "2026-12-01"}),
        ({"earnedValue": None}, {"ev_bac": None, "ev_ac": None}),
        ({"earnedValue": {"bac": 100, "ac": 12.25}}, {"ev_bac": 100, "ev_ac": Decimal("12.25")}),
    ],
)
def test_summary_columns_of_a_row(row, expected):
    columns = health.summary_columns(row)
    assert set(columns) == set(health.SUMMARY_COLUMNS)
    for name, value in expected.items():
        found = columns[name]
        assert (found.isoformat() if hasattr(found, "isoformat") else found) == value, name
