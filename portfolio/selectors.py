"""Reads of the portfolio: one row per project the caller can view, with the derived status of
`status.derive` (the same values and drivers as the status page and the API),
filtered, sorted, grouped and summarised; and the lessons of every close-out and realisation.
A constant number of queries whatever the number of projects."""

import datetime as dt
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    FloatField,
    IntegerField,
    Max,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Sum,
    TextField,
    Value,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce, Lower, NullIf
from django.db.models.lookups import Exact, IsNull
from django.http import HttpRequest
from django.utils import timezone

from charter.models import APPROVAL_STATUSES, BusinessCase
from gates import columns as gate_columns
from governance import gatefilter, gatelist, paging, permissions, summaries, textsearch
from governance.cleaning import decimal_to_json
from governance.errors import ValidationFailed
from governance.models import RAG_CHOICES, Project, SiteSettings
from governance.services import disabled_themes, enabled_themes
from governance.sql import AnyOf
from governance.tracker import get_tracker
from portfolio import extensions
from status import earned_value, exceptions, health
from status.derive import DIMENSION_LABELS, RAG_SEVERITY
from status.models import DIMENSIONS, ProjectHealth

NO_THEME = "-"
RAG_DIMENSIONS = ["overall", *DIMENSIONS]
DIMENSION_CHOICES = ["any", *RAG_DIMENSIONS]
HEAT_LABELS = {"overall": "Overall", **DIMENSION_LABELS}


def portfolio_row(
    project: Project, values: Mapping[str, Any], stage: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One portfolio row (the API's shape; the page renders the same dict): the project's key,
    name, lead and approval status, then its stored health (`status.health.portfolio_values`):
    effective and derived RAGs, the summary and figures of each dimension's drivers, and the
    portfolio's figures."""
    return {
        "projectKey": project.key,
        "name": project.name,
        "leadAccountId": project.lead_account_id or None,
        "theme": values["theme"],
        "approvalStatus": project.approval_status,
        # The undecided exception (status.exceptions), mirrored on the project: no query.
        "inException": project.exception_opened_at is not None,
        "exceptionAgeDays": None
        if project.exception_opened_at is None
        else exceptions.age_days(project.exception_opened_at),
        # The stage under way and its gate review's wait (gates.columns, one query a page).
        "currentStage": (stage or {}).get("currentStage"),
        "daysAtGate": (stage or {}).get("daysAtGate"),
        # In the stored row's own key order (a JSON column may keep its keys in another).
        **{key: values[key] for key in health.ROW_KEYS},
    }


# --- the stored rows, filtered, sorted and paged in SQL ---------------------------------------

# Sortable columns, each an SQL expression over the stored health row (`ProjectHealth`, its
# JSON `row` and its RAG columns) and the project. A missing value sorts last whatever the
# direction; ties by project key. RAGs sort worst first (Red, Amber, Green, Blue, None).
NUMBER: FloatField[float, float] = FloatField()
TEXT: TextField[str, str] = TextField()


def _json(key: str, output: Any = None) -> Case:
    """A member of the stored row (`key`: a path, `earnedValue__cpi`) as an SQL value cast to
    `output` (text without one); NULL where it is missing or JSON null (SQLite reads a JSON
    null as the text "null")."""
    value = KT(f"row__{key}") if output is None else Cast(KT(f"row__{key}"), output)
    return Case(
        When(Q(**{f"row__{key}": None}), then=Value(None)),
        default=value,
        output_field=output or TEXT,
    )


def _text(key: str) -> Any:
    return _json(key)


def _number(key: str) -> Any:
    return _json(key, NUMBER)


def _severity(expression: Any) -> Case:
    return Case(
        *(When(Q(Exact(expression, rag)), then=Value(n)) for rag, n in RAG_SEVERITY.items()),
        default=Value(RAG_SEVERITY["None"]),
    )


def _rag_expression(dimension: str) -> Any:
    return _text("overallRag") if dimension == "overall" else F(f"{dimension}_rag")


def _flag(condition: Q) -> Case:
    """0 where `condition` holds, else 1 (a yes first)."""
    return Case(When(condition, then=Value(0)), default=Value(1))


def _rag_sort(dimension: str) -> Callable[[], Any]:
    return lambda: _severity(_rag_expression(dimension))


SORTS: dict[str, Callable[[], Any]] = {
    "key": lambda: F("project__key"),
    "name": lambda: Lower("project__name"),
    "theme": lambda: NullIf(Lower(_text("theme")), Value(""), output_field=TEXT),
    "approvalStatus": lambda: Case(
        *(
            When(project__approval_status=status, then=Value(n))
            for n, status in enumerate(APPROVAL_STATUSES)
        ),
        default=Value(len(APPROVAL_STATUSES)),
    ),
    "version": lambda: _number("version"),
    "phase": lambda: NullIf(Lower(_text("phase")), Value(""), output_field=TEXT),
    **{d: _rag_sort(d) for d in RAG_DIMENSIONS},
    "approvedBudget": lambda: _number("approvedBudget"),
    "eac": lambda: _number("eac"),
    "overrun": lambda: _number("costOverrunPct"),
    "slip": lambda: _number("scheduleSlipDays"),
    "topRisk": lambda: _number("topRiskScore"),
    "decisions": lambda: _number("pendingDecisions"),
    "awaiting": lambda: _number("changesAwaitingApplication"),
    "adoptionGap": lambda: _flag(Q(row__adoptionGap=True)),
    "stale": lambda: _flag(Q(stale=True)),
    # The youngest exception first (its age in days ascending); none last.
    "exception": lambda: F("project__exception_opened_at"),
    "reviewDue": lambda: NullIf(_text("realisationReviewDueOn"), Value(""), output_field=TEXT),
    "updated": lambda: NullIf(_text("lastUpdatedAt"), Value(""), output_field=TEXT),
    # Earned value (status.earned_value): a project without the figure sorts last.
    "cpi": lambda: _number("earnedValue__cpi"),
    "spi": lambda: _number("earnedValue__spi"),
}
# Sorts whose SQL order is the reverse of the column's natural reading.
_REVERSED = {"exception"}
# Sorts whose value is never missing (a project always has a key and a name).
_NEVER_MISSING = {"key", "name"}


@dataclass
class Params:
    theme: str = ""
    approval_status: str = ""
    rag: str = ""
    dimension: str = "any"
    lead: str = ""
    stale: bool = False
    exception: bool = False
    stage: str = ""
    sort: str = "key"
    descending: bool = False
    group: str = ""
    cursor: str = ""
    page_size: int = paging.DEFAULT_PAGE_SIZE

    def as_query(self) -> dict[str, str]:
        """The filters, sort and grouping as a query string's values (no cursor: a new
        filter or sort starts at the first page)."""
        query = {
            "theme": self.theme,
            "approvalStatus": self.approval_status,
            "rag": self.rag,
            "dimension": "" if self.dimension == "any" else self.dimension,
            "lead": self.lead,
            "stale": "1" if self.stale else "",
            "exception": "1" if self.exception else "",
            "stage": self.stage,
            "sort": ("-" if self.descending else "") + self.sort if self.sort != "key" else "",
            "group": self.group,
            "pageSize": "" if self.page_size == paging.DEFAULT_PAGE_SIZE else str(self.page_size),
        }
        return {k: v for k, v in query.items() if v}

    def signature(self) -> str:
        """What a cursor is made for: the list and its order (a cursor of another sort is
        refused)."""
        order = ("-" if self.descending else "") + self.sort + ("/theme" if self.group else "")
        return f"portfolio:{order}"


def clean_params(query: Mapping[str, Any], *, strict: bool) -> Params:
    """Filters, sorting and the page from a query string. The API refuses unknown values
    (422) and a cursor of another sort or altered (400, `paging.BadCursor`); the page ignores
    them (a stale bookmark still opens). `pageSize` out of bounds: the default (the API
    declares its bounds, and refuses another size before this)."""
    errors: dict[str, list[str]] = {}
    params = Params()

    def pick(name: str, allowed: list[str]) -> str:
        value = (query.get(name) or "").strip()
        if value and value not in allowed:
            if strict:
                errors[name] = [f"Must be one of: {', '.join(allowed)}."]
            return ""
        return value

    params.theme = (query.get("theme") or "").strip()
    params.approval_status = pick("approvalStatus", APPROVAL_STATUSES)
    params.rag = pick("rag", RAG_CHOICES)
    params.dimension = pick("dimension", DIMENSION_CHOICES) or "any"
    params.lead = (query.get("lead") or "").strip()
    params.stale = (query.get("stale") or "") in ("1", "true", "on")
    params.exception = (query.get("exception") or "") in ("1", "true", "on")
    params.stage = (query.get("stage") or "").strip()[:120]
    sort = (query.get("sort") or "").strip()
    descending = sort.startswith("-")
    sort = sort.lstrip("-")
    if sort and sort not in SORTS:
        if strict:
            errors["sort"] = [f"Must be one of: {', '.join(SORTS)} (prefix - to reverse)."]
        sort = ""
    params.sort, params.descending = (sort or "key"), (descending and bool(sort))
    params.group = pick("group", ["theme"])
    params.page_size = paging.page_size(query.get("pageSize"))
    if errors:
        raise ValidationFailed(errors)
    params.cursor = (query.get("cursor") or "").strip()
    if params.cursor:
        try:
            paging.read_cursor(params.cursor, salt=params.signature(), keys=len(_keys(params)))
        except paging.BadCursor:
            if strict:
                raise
            params.cursor = ""
    return params


def _where(params: Params) -> Q:
    """The filters, as SQL over the stored rows."""
    where = Q()
    if params.theme:
        where &= Q(theme="" if params.theme == NO_THEME else params.theme)
    if params.approval_status:
        where &= Q(project__approval_status=params.approval_status)
    if params.lead:
        where &= Q(project__lead_account_id=params.lead)
    if params.stale:
        where &= Q(stale=True)
    if params.exception:
        where &= Q(project__exception_opened_at__isnull=False)
    if params.stage:
        where &= gate_columns.stage_where(params.stage)
    if params.rag:
        dimensions = RAG_DIMENSIONS if params.dimension == "any" else [params.dimension]
        any_of = Q(pk__in=[])
        for dimension in dimensions:
            if dimension == "overall":
                any_of |= Q(overall_rag=params.rag)
            else:
                any_of |= Q(**{f"{dimension}_rag": params.rag})
        where &= any_of
    return where


def _keys(params: Params) -> list[paging.Key]:
    """The page's order: grouped by theme (named themes first, by name), then the sort
    column with its missing values last, then the project key (unique)."""
    descending = params.descending != (params.sort in _REVERSED)
    keys = [
        paging.Key("s_null"),
        paging.Key("s_value", descending=descending),
        paging.Key("project__key"),
    ]
    if params.group == "theme":
        group = [
            paging.Key("g_none"),
            paging.Key("g_lower", nullable=True),
            paging.Key("g_theme", nullable=True),
        ]
        keys = [*group, *keys]
    return keys


def _ordered(stored: QuerySet[ProjectHealth], params: Params) -> QuerySet[ProjectHealth]:
    value = SORTS[params.sort]()
    # A sort never missing (the key, the name) has no missing values to put last: a constant,
    # so the database may read the page in the key's index order. Cast, never a bare literal:
    # PostgreSQL reads `ORDER BY 0` as a column's position.
    null = Case(When(Q(IsNull(value, True)), then=Value(1)), default=Value(0))
    never = Cast(Value(0), IntegerField())
    ordered = stored.filter(_where(params)).annotate(
        s_value=value, s_null=never if params.sort in _NEVER_MISSING else null
    )
    if params.group == "theme":
        ordered = ordered.annotate(
            g_theme=KT("row__theme"),
            g_lower=Lower(KT("row__theme")),
            # Named themes first: the flag is 0 for a named theme.
            g_none=Case(When(row__theme="", then=Value(1)), default=Value(0)),
        )
    return ordered


def in_order(stored: QuerySet[ProjectHealth], params: Params) -> QuerySet[ProjectHealth]:
    """The stored rows matching the filters of `params`, in its order (unpaged)."""
    return paging.ordered(_ordered(stored, params), _keys(params))


def current_rows(request: HttpRequest) -> tuple[QuerySet[ProjectHealth], QuerySet[Project]]:
    """The current stored health rows (not yet filtered by the access gate) and the projects
    the caller can view (`gatelist.viewable`, SQL). Every viewable project has its current row:
    a row missing, expired or derived under other thresholds is derived and stored first (the
    periodic job keeps that rare). Whether one lacks is itself stored (`governance.summaries`,
    "current"): asked again only after a write or once the soonest row expires."""
    projects = gatelist.viewable(request)
    site = permissions.site_settings(request)
    basis = health.basis(site)

    def ensure() -> tuple[dict[str, Any], dt.datetime | None]:
        now = timezone.now()
        # Which projects lack a current row (none, mostly), then which of those the caller
        # views: the gate's filter runs over the few that lack one, not over every project.
        current = ProjectHealth.objects.filter(basis=basis, valid_until__gt=now)
        lacking = Project.objects.exclude(Exists(current.filter(project_id=OuterRef("pk"))))
        ids = list(lacking.values_list("pk", flat=True))
        missing = list(projects.filter(AnyOf(F("pk"), ids))) if ids else []
        if missing:
            health.rows_for(missing, site=site, now=now)
        # Every viewable row is current now: the soonest of the current rows to expire bounds
        # the answer (a row the reader cannot view, expired, does not shorten it).
        until = current.aggregate(until=Min("valid_until"))
        return {}, until["until"]

    # Read before asking: every row current when the answer is read is current at `now`. A
    # row stored after `now` (a write meanwhile) is newer still: it holds too.
    now = timezone.now()
    summaries.read(request, "current", ensure, depends=[basis])
    return ProjectHealth.objects.filter(basis=basis, valid_until__gt=now), projects


def stored_rows(request: HttpRequest) -> tuple[QuerySet[ProjectHealth], QuerySet[Project]]:
    """The stored health rows of every project the caller can view, each current
    (`current_rows`), and those projects: both SQL (the access gate as a filter over the
    rows, on the project each joins: `gatelist.condition`), for the page to filter, sort and
    cut there."""
    current, projects = current_rows(request)
    return current.filter(gatelist.condition(request, "project__")), projects


PAGE_VALUES = ["project_id", "row", "s_null", "s_value", "project__key"]
# What a row shows of its project (`portfolio_row`).
PROJECT_VALUES = [
    "project__name",
    "project__lead_account_id",
    "project__approval_status",
    "project__exception_opened_at",
]


# --- summaries: aggregate SQL over the stored rows --------------------------------------------
# Every figure is read from the stored row's own small columns (`status.health.SUMMARY_COLUMNS`,
# copied from its `row` when it is written), never from members of the JSON `row`: each member
# read unpacks the whole compressed row again (one sum of one member cost twenty times a
# count at 10,000 rows).

EV_KEYS = ("bac", "pv", "ev", "ac")
_EV_COMPLETE = Q(*(Q(**{f"ev_{key}__isnull": False}) for key in EV_KEYS))


def _aggregates() -> dict[str, Any]:
    """Counts, sums and maxima of the summary, the heat grid, a theme's subtotal line and the
    portfolio's earned value, over stored rows (their summary columns)."""

    def count(condition: Q) -> Count:
        return Count("pk", filter=condition)

    both = Q(approved_budget__isnull=False, estimate_at_completion__isnull=False) & ~Q(
        approved_budget=0
    )
    out: dict[str, Any] = {
        "projects": Count("pk"),
        "stale": count(Q(stale=True)),
        "inException": count(Q(project__exception_opened_at__isnull=False)),
        "adoptionGaps": count(Q(adoption_gap=True)),
        "pendingDecisions": Sum("pending_decisions"),
        "changesAwaitingApplication": Sum("changes_awaiting_application"),
        "reviewsDue": count(Q(realisation_review_due_on__isnull=False)),
        "reviewsOverdue": count(Q(realisation_review_overdue=True)),
        "approvedBudget": Sum("approved_budget"),
        "eac": Sum("estimate_at_completion"),
        "budgetBoth": Sum("approved_budget", filter=both),
        "eacBoth": Sum("estimate_at_completion", filter=both),
        "scheduleSlipDays": Max("schedule_slip_days"),
        "topRiskScore": Max("top_risk_score"),
        "evCounted": count(_EV_COMPLETE),
        **{f"sum_{key}": Sum(f"ev_{key}", filter=_EV_COMPLETE) for key in EV_KEYS},
    }
    for rag in RAG_CHOICES:
        if rag == "None":
            continue  # the rest: counted as the projects less the named colours
        for dimension in RAG_DIMENSIONS:
            condition = (
                Q(overall_rag=rag) if dimension == "overall" else Q(**{f"{dimension}_rag": rag})
            )
            out[f"rag_{dimension}_{rag}"] = count(condition)
    return out


def _rag_counts(totals: Mapping[str, Any], dimension: str) -> dict[str, int]:
    counts = {rag: totals[f"rag_{dimension}_{rag}"] for rag in RAG_CHOICES if rag != "None"}
    counts["None"] = totals["projects"] - sum(counts.values())
    return counts


def _project_counts(totals: Mapping[str, Any]) -> dict[str, int]:
    """The counts of projects and their open items that the portfolio's summary and each
    theme's line both give, from the same aggregate (`_aggregates`)."""
    return {
        "stale": totals["stale"],
        "inException": totals["inException"],
        "adoptionGaps": totals["adoptionGaps"],
        "pendingDecisions": totals["pendingDecisions"] or 0,
        "changesAwaitingApplication": totals["changesAwaitingApplication"] or 0,
        "reviewsOverdue": totals["reviewsOverdue"],
    }


def summary_of(totals: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "projects": totals["projects"],
        "overall": _rag_counts(totals, "overall"),
        **_project_counts(totals),
        "reviewsDue": totals["reviewsDue"],
    }


def heat_of(totals: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Counts of projects per RAG dimension (overall and the effective four) and colour."""
    grid = []
    for dimension in RAG_DIMENSIONS:
        counts = _rag_counts(totals, dimension)
        grid.append(
            {
                "dimension": dimension,
                "label": HEAT_LABELS[dimension],
                "cells": [{"rag": rag, "count": counts[rag]} for rag in RAG_CHOICES],
            }
        )
    return grid


def _json_number(value: Decimal | None) -> float | int | None:
    return None if value is None else decimal_to_json(value)


def subtotal_of(totals: Mapping[str, Any], earned: dict[str, Any]) -> dict[str, Any]:
    """A theme group's line: sums of money and counts, the worst slip and risk score, and
    the overrun of the summed forecast against the summed approved budget (projects with
    both)."""
    budget_both, eac_both = totals["budgetBoth"], totals["eacBoth"]
    overrun = round(float((eac_both - budget_both) / budget_both * 100), 1) if budget_both else None
    return {
        "projects": totals["projects"],
        "approvedBudget": _json_number(totals["approvedBudget"]),
        "eac": _json_number(totals["eac"]),
        "costOverrunPct": overrun,
        "scheduleSlipDays": totals["scheduleSlipDays"],
        "topRiskScore": totals["topRiskScore"],
        **_project_counts(totals),
        "earnedValue": earned,
    }


def _earned(totals: Mapping[str, Any], rows: QuerySet[ProjectHealth]) -> dict[str, Any]:
    """The earned value of `rows` (their totals given): the sums over the projects that give
    all of BAC, PV, EV and AC (`status.earned_value.portfolio_totals`), the others named."""
    lacking = totals["projects"] - totals["evCounted"]
    named: list[str] = []
    if lacking:
        named = list(
            rows.exclude(_EV_COMPLETE)
            .order_by("project__key")
            .values_list("project__key", flat=True)[: earned_value.MAX_NAMED]
        )
    sums = {key: totals[f"sum_{key}"] for key in EV_KEYS}
    return earned_value.portfolio_totals(sums, totals["evCounted"], lacking, named).as_dict()


@dataclass
class Portfolio:
    rows: list[dict[str, Any]]
    total: int
    params: Params
    summary: dict[str, Any]
    heat: list[dict[str, Any]]
    groups: list[dict[str, Any]] | None
    themes: list[dict[str, Any]] = field(default_factory=list)
    leads: list[str] = field(default_factory=list)
    # Each shown project's open risks per matrix cell, by key (for the risk matrices).
    risk_cells: dict[str, Any] = field(default_factory=dict)
    # The earned value of every matching project (not only the page's).
    earned: dict[str, Any] = field(default_factory=dict)
    # The biggest budgets among the matching projects, for the bubble chart.
    bubbles: list[dict[str, Any]] = field(default_factory=list)
    # The cursors of the next and the previous page (None at either end).
    next: str | None = None
    previous: str | None = None
    # The columns the apps above add (`portfolio.extensions`) that this viewer sees.
    extra_columns: list[extensions.Column] = field(default_factory=list)


BUBBLES_MAX = 150


def _bubbles(rows: QuerySet[ProjectHealth]) -> list[dict[str, Any]]:
    """The BUBBLES_MAX biggest budgets (the approved budget, else the forecast) among `rows`:
    each project's key, slip, overrun, budget and overall RAG, read from the stored row's
    summary columns."""
    size = Coalesce("approved_budget", "estimate_at_completion")
    found = (
        rows.annotate(b_size=size)
        .order_by(F("b_size").desc(nulls_last=True), "project__key")
        .values_list(
            "project__key",
            "schedule_slip_days",
            "cost_overrun_pct",
            "b_size",
            "overall_rag",
        )[:BUBBLES_MAX]
    )
    return [
        {
            "projectKey": key,
            "scheduleSlipDays": None if slip is None else float(slip),
            "costOverrunPct": overrun,
            "approvedBudget": None if budget is None else float(budget),
            "eac": None,
            "overallRag": rag,
        }
        for key, slip, overrun, budget, rag in found
    ]


def portfolio(
    request: HttpRequest,
    query: Mapping[str, Any],
    *,
    strict: bool = False,
    paged: bool = True,
    with_cells: bool = False,
    with_summary: bool = True,
    with_choices: bool = True,
    columns: Collection[str] | None = None,
) -> Portfolio:
    """The portfolio for `query`: the page of rows its cursor names (`paged`; else every
    matching row, in order), and the summary, heat grid and earned value of every matching
    project from aggregate SQL (`with_summary`). `with_cells` also reads the shown projects'
    stored risk-matrix cells; `with_choices` the filters' choices (themes, leads) and the number
    of projects the caller can view. A constant number of queries whatever the number of
    projects: the access gate is a filter in the page's SQL (`gatelist.condition`), and only
    the page's projects are read as such."""
    params = clean_params(query, strict=strict)
    current, projects = current_rows(request)
    stored = current.filter(gatelist.condition(request, "project__"))
    # A page in the key's order walks the key index and stops at its size: the gate's shape
    # for a page. Any other order reads every viewable row first, as the summary does.
    walks = paged and params.sort == "key" and not params.group
    shown = current.filter(gatelist.condition(request, "project__", page=True)) if walks else stored
    matching = _ordered(shown, params)
    # The page's projects as the access gate gives them (the tracker's name and lead of the
    # moment), read with the page's rows.
    matching = matching.annotate(
        **gatefilter.tracker_answers_of(
            permissions.request_user(request).account_id, get_tracker(), "project_id"
        )
    )
    values = [
        *PAGE_VALUES,
        *PROJECT_VALUES,
        *(gatefilter.TRACKER_NAMES if "gate_t_name" in matching.query.annotations else []),
        *(["g_none", "g_lower", "g_theme"] if params.group else []),
    ]
    if with_cells:
        values.append("risk_cells")
    next_cursor = previous = None
    if paged:
        page = paging.page(
            matching.values(*values),
            _keys(params),
            cursor=params.cursor,
            size=params.page_size,
            salt=params.signature(),
        )
        found, next_cursor, previous = page.rows, page.next_cursor, page.previous_cursor
    else:
        found = list(paging.ordered(matching, _keys(params)).values(*values))
    stages = gate_columns.stage_columns([v["project_id"] for v in found])
    rows = [portfolio_row(_project_of(v), v["row"], stages.get(v["project_id"])) for v in found]
    extra = extensions.fill(request, rows, [v["project_id"] for v in found], columns)
    cells = {v["project__key"]: v["risk_cells"] for v in found} if with_cells else {}
    where = _where(params)
    figures = stored.filter(where)
    whole: dict[str, Any] = {}
    if with_summary or with_choices:
        basis = health.basis(permissions.site_settings(request))
        whole = summaries.read(
            request, "portfolio", lambda: _whole(stored, projects), depends=[basis]
        )
    summary, heat, earned = whole.get("summary", {}), whole.get("heat", []), whole.get("earned", {})
    bubbles = whole.get("bubbles", []) if paged else []
    total = whole.get("total", 0)
    if with_summary and where:
        totals = figures.aggregate(**_aggregates())
        if not totals["projects"]:
            totals = _empty_totals()
        summary, heat = summary_of(totals), heat_of(totals)
        earned = _earned(totals, figures) if total else {}
        bubbles = _bubbles(figures) if total and paged else []
    groups = _groups(rows, figures) if params.group == "theme" else None
    return Portfolio(
        rows=rows,
        total=total,
        params=params,
        summary=summary if with_summary else {},
        heat=heat if with_summary else [],
        groups=groups,
        themes=whole.get("themes", []) if with_choices else [],
        leads=whole.get("leads", []) if with_choices else [],
        risk_cells=cells,
        earned=earned if with_summary else {},
        bubbles=bubbles if with_summary else [],
        next=next_cursor,
        previous=previous,
        extra_columns=extra,
    )


def _whole(
    stored: QuerySet[ProjectHealth], projects: QuerySet[Project]
) -> tuple[dict[str, Any], dt.datetime | None]:
    """The unfiltered summary of every viewable project (`stored`: their current rows), and
    the filters' choices, in JSON, with the time the soonest of those rows expires: what
    `governance.summaries` keeps for the reader ("portfolio"). Unfiltered, the summary counts
    every viewable project (each has its current row: `current_rows`)."""
    totals = stored.aggregate(**_aggregates(), until=Min("valid_until"))
    until = totals.pop("until")
    total = totals["projects"]
    if not total:
        totals = _empty_totals()
    return {
        "total": total,
        "summary": summary_of(totals),
        "heat": heat_of(totals),
        "earned": _earned(totals, stored) if total else {},
        "bubbles": _bubbles(stored) if total else [],
        "themes": _themes(stored),
        "leads": gatelist.leads_of(projects),
    }, until


def _project_of(values: Mapping[str, Any]) -> Project:
    """A page's project from its row's values (`PROJECT_VALUES`, and the tracker's answers
    when the tracker gives them), as the access gate gives it: nothing written."""
    name = values.get("gate_t_name")
    return Project(
        pk=values["project_id"],
        key=values["project__key"],
        name=values["project__name"] if name is None else name,
        lead_account_id=(
            values["project__lead_account_id"] if name is None else values["gate_t_lead"]
        )
        or "",
        approval_status=values["project__approval_status"],
        exception_opened_at=values["project__exception_opened_at"],
    )


def _empty_totals() -> dict[str, Any]:
    return {
        name: None if name.startswith(("ev_", "budget", "eac")) else 0 for name in _aggregates()
    }


def _themes(stored: QuerySet[ProjectHealth]) -> list[dict[str, Any]]:
    """The theme filter's choices: the site's enabled themes and every theme a project the
    person sees has (a disabled one marked), never a name no project has and the site no longer
    offers (a renamed theme's old name)."""
    site = SiteSettings.read()
    disabled = {name.casefold() for name in disabled_themes(site)}
    found = stored.values_list("theme", flat=True).distinct()
    names: dict[str, str] = {}
    for name in [*enabled_themes(site), *(t for t in found if t)]:
        names.setdefault(name, name)
    return [
        {"name": name, "disabled": name.casefold() in disabled}
        for name in sorted(names, key=str.casefold)
    ]


def _groups(rows: list[dict[str, Any]], figures: QuerySet[ProjectHealth]) -> list[dict[str, Any]]:
    """The page's rows by theme (in the page's order), each group with the subtotal line of
    every matching project of its theme (not only those on this page): one aggregate query,
    and one more for each theme whose earned value leaves projects out."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["theme"] or "", []).append(row)
    if not groups:
        return []
    by_theme = {
        totals.pop("g"): totals
        for totals in figures.filter(theme__in=list(groups))
        .values(g=F("theme"))
        .annotate(**_aggregates())
        .order_by()
    }
    out = []
    for theme, members in groups.items():
        totals = by_theme.get(theme) or _empty_totals()
        earned = _earned(totals, figures.filter(theme=theme)) if by_theme.get(theme) else {}
        out.append({"theme": theme, "rows": members, "subtotal": subtotal_of(totals, earned)})
    return out


# --- lessons ----------------------------------------------------------------------------------

LESSON_KINDS = {
    "worked": "What worked",
    "differently": "Do differently",
    "nextSponsor": "For the next sponsor",
    "realisation": "Realisation lesson",
}


# The close-out's lessons (closeOut.lessons), each a text.
CLOSE_OUT = ("worked", "differently", "nextSponsor")


@dataclass
class Lessons:
    entries: list[dict[str, Any]]
    total: int
    themes: list[str]


def lessons(request: HttpRequest, *, q: str = "", kind: str = "", theme: str = "") -> Lessons:
    """Every close-out lesson (closeOut.lessons worked / differently / nextSponsor) and
    realisation lesson (realisationLessons) of the viewable projects, newest first, matching
    every word of `q` (in the lesson, the project key or name), with the count before
    filtering and the themes present. Only the viewable projects with a lesson's text are read
    (a close-out starts with empty ones), not every viewable project: the access gate is a
    filter in their statement (`gatelist.viewable`), with the tracker's name of the moment."""
    # As text (a key's own lookups compare JSON values), NULL where the key is missing.
    texts = {f"l_{key}": Cast(KT(f"close_out__lessons__{key}"), TextField()) for key in CLOSE_OUT}
    holding = Q(realisation_lessons__gt="")
    for name in texts:
        holding |= Q(**{f"{name}__gt": ""})
    with_lessons = BusinessCase.objects.filter(project=OuterRef("pk")).alias(**texts)
    found = gatelist.viewable(request, shown=True).filter(Exists(with_lessons.filter(holding)))
    found = found.order_by("pk")
    projects = {p.pk: p for p, _ in gatelist.page_callers(request, list(found))}
    cases = (
        BusinessCase.objects.filter(AnyOf(F("project_id"), list(projects)))
        .only(
            "project",
            "theme",
            "close_out",
            "closed_at",
            "realisation_lessons",
            "realisation_decided_at",
        )
        .order_by("project_id")
    )
    entries = []
    for case in cases:
        project = projects[case.project_id]
        close_out_lessons = (case.close_out or {}).get("lessons") or {}
        for key in CLOSE_OUT:
            text = close_out_lessons.get(key)
            if isinstance(text, str) and text.strip():
                entries.append(_lesson(project, case, key, text.strip(), case.closed_at))
        if case.realisation_lessons and case.realisation_lessons.strip():
            entries.append(
                _lesson(
                    project,
                    case,
                    "realisation",
                    case.realisation_lessons.strip(),
                    case.realisation_decided_at,
                )
            )
    total = len(entries)
    words = textsearch.words(q)
    selected = [
        e
        for e in entries
        if (not kind or e["kind"] == kind)
        and (not theme or (e["theme"] or NO_THEME) == theme)
        and textsearch.matches(words, e["haystack"])
    ]
    for entry in selected:
        entry.pop("haystack")
    selected.sort(key=lambda e: (e["recordedAt"] or "", e["projectKey"]), reverse=True)
    themes = sorted({e["theme"] for e in entries if e["theme"]}, key=str.casefold)
    return Lessons(entries=selected, total=total, themes=themes)


def _lesson(
    project: Project, case: BusinessCase, kind: str, text: str, at: dt.datetime | None
) -> dict[str, Any]:
    return {
        "projectKey": project.key,
        "projectName": project.name,
        "approvalStatus": project.approval_status,
        "theme": case.theme or "",
        "kind": kind,
        "kindLabel": LESSON_KINDS[kind],
        "text": text,
        "recordedAt": at.isoformat() if at else None,
        "haystack": textsearch.haystack(text, project.key, project.name),
    }
