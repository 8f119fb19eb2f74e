"""A register page's rows in SQL: the register's filters, its text search and its sort as one
queryset, read a page of `PAGE_SIZE` rows at a time by keyset (the page after or before a
row), in a stable order that ends with the primary key. A page costs the same few queries
whatever the number of rows, and a row added or deleted between two page loads neither
repeats nor skips a row on the next page.

Each register declares its filters (a query-string name to a `Q` per chosen value), the
fields its text search looks in, and its sorts (a query-string name to an SQL expression);
nulls sort last in either direction, as the page always showed them. A sort by a person's
name sorts by the names the people directory gives for the accountIds the register holds
(a `CASE` over them)."""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import (
    Case,
    CharField,
    F,
    FloatField,
    IntegerField,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.expressions import Combinable, Expression, OrderBy
from django.db.models.functions import Cast, Lower
from django.http import QueryDict

from governance import textsearch
from governance.models import RAG_CHOICES
from registers import pictures
from registers.derive import VARIATION_DIMENSIONS
from registers.listing import ORDERS
from registers.models import (
    APPLICATION_STATES,
    CHANGE_DIMENSIONS,
    CHANGE_STATUSES,
    DECISION_STATES,
    RISK_DIRECTIONS,
    RISK_STATUSES,
    WP_STATUSES,
)

PAGE_SIZE = 100

Names = Mapping[str, str]  # accountId -> display name
SortExpr = Expression | Combinable | str
Sort = Callable[[Names], SortExpr]
OrderKey = tuple[SortExpr, bool, bool]  # (expression, descending, nullable)
NamedKey = tuple[str, bool, bool]  # (annotation name, descending, nullable)


def _index(field_name: str, values: list[str], *, none: str | None = None) -> Case:
    """The position of the field's value in `values` (NULL for `none`)."""
    whens = [When(**{field_name: v}, then=Value(n)) for n, v in enumerate(values) if v != none]
    return Case(*whens, default=None, output_field=IntegerField())


def by_name(field_name: str) -> Sort:
    def expression(names: Names) -> Case:
        whens = [When(**{field_name: a}, then=Value(n.casefold())) for a, n in names.items()]
        return Case(*whens, default=None, output_field=CharField())

    return expression


def _plain(expression: SortExpr) -> Sort:
    return lambda names: expression


def _amount(field_name: str) -> Sort:
    """An amount as an SQL number to sort by. On SQLite a `MoneyField` column is text (its
    exact digits), which sorts as text ("100" before "20"); read as a float it sorts by value
    (to 15 significant digits; rows equal there are ordered by id, as every tie is)."""
    return _plain(Cast(field_name, FloatField()))


def _equals(field_name: str) -> Callable[[str], Q]:
    return lambda value: Q(**{field_name: value})


def _decision_state(value: str) -> Q:
    return Q(made_on__isnull=value == "Pending")


def _has(field_name: str, value: str) -> Q:
    """A JSON list of words holds `value` (matched in its JSON text, on every database)."""
    return Q(**{f"{field_name}__icontains": f'"{value}"'})


def _application_state(value: str) -> Q:
    """registers.derive.application_state, in SQL."""
    if value in ("Proposed", "Rejected", "Withdrawn"):
        return Q(status=value)
    decided = ~Q(status__in=["Proposed", "Rejected", "Withdrawn"])
    recorded = Q(application_record__icontains='"')  # a non-empty object
    others = [d for d in CHANGE_DIMENSIONS if d not in VARIATION_DIMENSIONS]
    only_variations = Q(dimensions__icontains='"')
    for other in others:
        only_variations &= ~_has("dimensions", other)
    applied = recorded | only_variations
    return decided & (applied if value == "Applied" else ~applied)


def _cell(value: str) -> Q | None:
    """A risk-matrix cell (`residual-4-3`): the open risks it places there."""
    cell = pictures.parse_cell(value)
    if cell is None:
        return None
    view, impact, likelihood = cell
    inherent = Q(impact=impact, likelihood=likelihood)
    if view == "residual":
        unassessed = Q(residual_impact__isnull=True) | Q(residual_likelihood__isnull=True)
        placed = Q(residual_impact=impact, residual_likelihood=likelihood) | (unassessed & inherent)
    else:
        placed = inherent
    return Q(**pictures.ON_MATRIX) & placed


@dataclass
class Spec:
    """How one register's page filters, searches and sorts, in SQL."""

    owner_field: str
    owner_label: str
    filters: list[tuple[str, str, list[str], Callable[[str], Q]]]
    search: tuple[str, ...]
    sorts: dict[str, Sort]


SPECS = {
    "work-packages": Spec(
        owner_field="owner_account_id",
        owner_label="Owner",
        filters=[
            ("status", "Status", WP_STATUSES, _equals("status")),
            ("rag", "RAG", RAG_CHOICES, _equals("rag")),
        ],
        search=("name", "type", "commentary", "linked_issue_keys"),
        sorts={
            "name": _plain(Lower("name")),
            "owner": by_name("owner_account_id"),
            "status": _plain(_index("status", WP_STATUSES)),
            "rag": _plain(_index("rag", RAG_CHOICES, none="None")),
            "progress": _plain("progress"),
            "planned": _plain("planned_start_date"),
            "plannedEnd": _plain("planned_end_date"),
            "forecastEnd": _plain("forecast_end_date"),
            "budget": _amount("budget"),
            "budgetForecast": _amount("budget_forecast"),
            "budgetActual": _amount("budget_actual"),
        },
    ),
    "risks": Spec(
        owner_field="owner_account_id",
        owner_label="Owner",
        filters=[
            ("status", "Status", RISK_STATUSES, _equals("status")),
            ("direction", "Direction", RISK_DIRECTIONS, _equals("direction")),
        ],
        search=("title", "description", "mitigation", "treatment"),
        sorts={
            "title": _plain(Lower("title")),
            "owner": by_name("owner_account_id"),
            "status": _plain("status"),
            "direction": _plain("direction"),
            "inherent": _plain("inherent_score"),
            "score": _plain("score"),
            "treatment": _plain("treatment"),
        },
        # Open before Closed, then the newest first.
    ),
    "decisions": Spec(
        owner_field="made_by_account_id",
        owner_label="Made by",
        filters=[("state", "State", DECISION_STATES, _decision_state)],
        search=("decision", "decision_notes", "rationale"),
        sorts={
            "decision": _plain(Lower("decision")),
            "madeOn": _plain("made_on"),
            "madeBy": by_name("made_by_account_id"),
            "state": _plain(
                Case(
                    When(made_on__isnull=True, then=Value("Pending")),
                    default=Value("Made"),
                    output_field=CharField(),
                )
            ),
            "created": _plain("created_at"),
        },
    ),
    "changes": Spec(
        owner_field="proposer_account_id",
        owner_label="Proposer",
        filters=[
            ("status", "Status", CHANGE_STATUSES, _equals("status")),
            ("state", "Application state", APPLICATION_STATES, _application_state),
            ("dimension", "Dimension", CHANGE_DIMENSIONS, lambda v: _has("dimensions", v)),
        ],
        search=("summary", "reason", "impact_scope", "impact_quality_other"),
        sorts={
            "summary": _plain(Lower("summary")),
            "status": _plain(_index("status", CHANGE_STATUSES)),
            "budget": _amount("impact_budget"),
            "days": _plain("impact_schedule_days"),
            "proposer": by_name("proposer_account_id"),
            "created": _plain("created_at"),
        },
    ),
}


def choice(params: QueryDict, name: str, values: Iterable[str]) -> str:
    value = params.get(name, "")
    return value if value in values else ""


def _owned(register: str, queryset: QuerySet[Any]) -> QuerySet[Any]:
    """The register's rows of `queryset` that name an owner."""
    name = SPECS[register].owner_field
    return queryset.exclude(**{f"{name}__isnull": True}).exclude(**{name: ""}).order_by()


def owner_ids(register: str, queryset: QuerySet[Any]) -> list[str]:
    """The accountIds the register's owner column holds (one query)."""
    name = SPECS[register].owner_field
    return list(_owned(register, queryset).values_list(name, flat=True).distinct())


def owners_by_register(querysets: Mapping[str, QuerySet[Any]]) -> dict[str, list[str]]:
    """`owner_ids` of several registers ({register: its rows}) in one query."""
    found: dict[str, list[str]] = {register: [] for register in querysets}
    first, *rest = [
        _owned(register, queryset)
        .annotate(owners_of=Value(register))
        .values_list(SPECS[register].owner_field, "owners_of")
        .distinct()
        for register, queryset in querysets.items()
    ]
    for account_id, register in first.union(*rest, all=True):
        found[register].append(account_id)
    return found


def filtered(
    register: str, queryset: QuerySet[Any], params: QueryDict, owners: Iterable[str]
) -> QuerySet[Any]:
    """The register's rows the query string's filters, cell and words keep."""
    spec = SPECS[register]
    for name, _, values, where in spec.filters:
        value = choice(params, name, values)
        if value:
            queryset = queryset.filter(where(value))
    owner = choice(params, "owner", owners)
    if owner:
        queryset = queryset.filter(**{spec.owner_field: owner})
    if register == "risks":
        cell = _cell(params.get("cell", ""))
        if cell is not None:
            queryset = queryset.filter(cell)
    for word in textsearch.words(params.get("q", "").strip()):
        anywhere = Q()
        for name in spec.search:
            anywhere |= Q(**{f"{name}__icontains": word})
        queryset = queryset.filter(anywhere)
    return queryset


def order_keys(register: str, sort: str, descending: bool, names: Names) -> list[OrderKey]:
    """(expression, descending, nullable) of the page's order, the primary key last: the
    chosen sort (whose values may be missing), else the register's own order, the API's
    (`registers.listing.ORDERS`)."""
    *own, unique = ORDERS[register]
    keys: list[OrderKey] = (
        [(SPECS[register].sorts[sort](names), descending, True)]
        if sort
        else [(key.expression, key.descending, key.nullable) for key in own]
    )
    return [*keys, ("pk", unique.descending, False)]


@dataclass
class Page:
    rows: list[Any]
    # Whether there are rows before this page and after it; the next page starts after
    # `next` (a row's primary key), the previous one ends before `previous`.
    has_previous: bool = False
    has_next: bool = False
    previous: str = ""
    next: str = ""


def _annotated(
    queryset: QuerySet[Any], keys: list[OrderKey]
) -> tuple[QuerySet[Any], list[NamedKey]]:
    """The queryset with each key as an annotation; (name, descending, nullable) of each."""
    named: list[NamedKey] = []
    annotations: dict[str, Any] = {}
    for n, (expression, descending, nullable) in enumerate(keys[:-1]):
        name = f"page_key_{n}"
        annotations[name] = F(expression) if isinstance(expression, str) else expression
        named.append((name, descending, nullable))
    named.append(("pk", keys[-1][1], False))
    return queryset.annotate(**annotations), named


def _ordering(named: list[NamedKey], reverse: bool) -> list[OrderBy]:
    """Nulls last in either direction; the whole order reversed for the page before a row. A
    key that is never NULL says nothing of nulls, so the register's index on its order
    (`registers.models`) serves it on every database."""
    order: list[OrderBy] = []
    for name, descending, nullable in named:
        key = F(name).asc if descending == reverse else F(name).desc
        if not nullable:
            order.append(key())
        elif reverse:
            order.append(key(nulls_first=True))
        else:
            order.append(key(nulls_last=True))
    return order


def _beyond(named: list[NamedKey], values: dict[str, Any], after: bool) -> Q:
    """The rows after (or before) the row with these key values, in the page's order."""
    beyond = Q(pk__in=[])
    same = Q()
    for name, descending, nullable in named:
        value = values[name]
        greater = after != descending  # the rows beyond hold greater values of this key
        if value is None:  # nulls are last: only non-null values come before
            step = Q(**{f"{name}__isnull": False}) if not after else Q(pk__in=[])
            equal = Q(**{f"{name}__isnull": True})
        else:
            step = Q(**{f"{name}__{'gt' if greater else 'lt'}": value})
            if nullable and after:
                step |= Q(**{f"{name}__isnull": True})
            equal = Q(**{name: value})
        beyond |= same & step
        same &= equal
    return beyond


def _cursor_values(scope: QuerySet[Any], keys: list[OrderKey], pk: str) -> dict[str, Any] | None:
    """The order's values of the row `pk` of `scope`, or None (no such row, or no key)."""
    try:
        queryset, named = _annotated(scope.filter(pk=pk), keys)
        return queryset.values(*(n for n, _, _ in named)).first()
    except (ValueError, ValidationError):  # not a primary key at all
        return None


def read_page(
    scope: QuerySet[Any],
    queryset: QuerySet[Any],
    keys: list[OrderKey],
    *,
    after: str = "",
    before: str = "",
    size: int = PAGE_SIZE,
) -> Page:
    """A page of `size` rows of `queryset` (`scope` filtered): the first, the one after the
    row `after` or the one before the row `before` (a row of `scope` by its primary key,
    filtered out or not). A cursor row since deleted starts again at the first page."""
    cursor = before or after
    values = _cursor_values(scope, keys, cursor) if cursor else None
    queryset, named = _annotated(queryset, keys)
    if values is None:
        rows = list(queryset.order_by(*_ordering(named, False))[: size + 1])
        more = len(rows) > size
        rows = rows[:size]
        return Page(rows=rows, has_next=more, next=str(rows[-1].pk) if more else "")
    going_back = bool(before)
    window = queryset.filter(_beyond(named, values, not going_back))
    rows = list(window.order_by(*_ordering(named, going_back))[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    if going_back:
        rows.reverse()
        return Page(
            rows=rows,
            has_previous=more,
            previous=str(rows[0].pk) if more else "",
            has_next=True,
            next=str(rows[-1].pk) if rows else "",
        )
    return Page(
        rows=rows,
        has_previous=True,
        previous=str(rows[0].pk) if rows else "",
        has_next=more,
        next=str(rows[-1].pk) if more else "",
    )
