"""Reads of the portfolio: one row per project the caller can view, with the derived status of
`status.derive` (the same values and drivers as the status page and the API),
filtered, sorted, grouped and summarised; and the lessons of every close-out and realisation.
A constant number of queries whatever the number of projects."""

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest

from charter.models import APPROVAL_STATUSES, BusinessCase
from governance import permissions, textsearch
from governance.errors import ValidationFailed
from governance.models import RAG_CHOICES, Project
from status import exceptions, health
from status.derive import DIMENSION_LABELS, rag_severity
from status.models import DIMENSIONS

NO_THEME = "-"
RAG_DIMENSIONS = ["overall", *DIMENSIONS]
DIMENSION_CHOICES = ["any", *RAG_DIMENSIONS]
HEAT_LABELS = {"overall": "Overall", **DIMENSION_LABELS}


def portfolio_row(project: Project, values: Mapping[str, Any]) -> dict[str, Any]:
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
        # In the stored row's own key order (a JSON column may keep its keys in another).
        **{key: values[key] for key in health.ROW_KEYS},
    }


def rows_and_cells(
    request: HttpRequest, *, now: dt.datetime | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, str]]:
    """Every viewable project's row, in project-key order, read from the stored health rows,
    the open risks per matrix cell stored beside each (by project key), and the stored text
    each row was read from (by project key, where known: none now, the stored rows are read
    as JSON and no process keeps their texts)."""
    projects = [project for project, _ in permissions.viewable_projects(request)]
    site = permissions.site_settings(request)
    values, cells = health.rows_and_cells_for(projects, site=site, now=now)
    rows = [portfolio_row(p, values[p.pk]) for p in projects]
    return rows, {p.key: cells[p.pk] for p in projects}, {}


def rows_for(request: HttpRequest, *, now: dt.datetime | None = None) -> list[dict[str, Any]]:
    """Every viewable project's row, in project-key order, read from the stored health rows."""
    projects = [project for project, _ in permissions.viewable_projects(request)]
    values = health.rows_for(projects, site=permissions.site_settings(request), now=now)
    return [portfolio_row(p, values[p.pk]) for p in projects]


# --- filters, sorting, grouping -------------------------------------------------------------


def _rag_of(row: Mapping[str, Any], dimension: str) -> str:
    rag: str = row["overallRag"] if dimension == "overall" else row["effective"][f"{dimension}Rag"]
    return rag


def _by_rag(dimension: str) -> Callable[[Mapping[str, Any]], int]:
    return lambda row: rag_severity(_rag_of(row, dimension))


def _approval_order(row: Mapping[str, Any]) -> int:
    status = row["approvalStatus"]
    return (
        APPROVAL_STATUSES.index(status) if status in APPROVAL_STATUSES else len(APPROVAL_STATUSES)
    )


# Sort keys by column; a key returning None puts the row last whatever the direction. RAGs sort
# worst first (Red, Amber, Green, Blue, None).
SORTS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "key": lambda r: r["projectKey"],
    "name": lambda r: r["name"].casefold(),
    "theme": lambda r: r["theme"].casefold() or None,
    "approvalStatus": _approval_order,
    "version": lambda r: r["version"],
    "phase": lambda r: (r["phase"] or "").casefold() or None,
    **{d: _by_rag(d) for d in RAG_DIMENSIONS},
    "approvedBudget": lambda r: r["approvedBudget"],
    "eac": lambda r: r["eac"],
    "overrun": lambda r: r["costOverrunPct"],
    "slip": lambda r: r["scheduleSlipDays"],
    "topRisk": lambda r: r["topRiskScore"],
    "decisions": lambda r: r["pendingDecisions"],
    "awaiting": lambda r: r["changesAwaitingApplication"],
    "adoptionGap": lambda r: not r["adoptionGap"],
    "stale": lambda r: not r["stale"],
    "exception": lambda r: r["exceptionAgeDays"],
    "reviewDue": lambda r: r["realisationReviewDueOn"],
    "updated": lambda r: r["lastUpdatedAt"],
    # Earned value (status.earned_value): a project without the figure sorts last.
    "cpi": lambda r: (r.get("earnedValue") or {}).get("cpi"),
    "spi": lambda r: (r.get("earnedValue") or {}).get("spi"),
}


@dataclass
class Params:
    theme: str = ""
    approval_status: str = ""
    rag: str = ""
    dimension: str = "any"
    lead: str = ""
    stale: bool = False
    exception: bool = False
    sort: str = "key"
    descending: bool = False
    group: str = ""

    def as_query(self) -> dict[str, str]:
        query = {
            "theme": self.theme,
            "approvalStatus": self.approval_status,
            "rag": self.rag,
            "dimension": "" if self.dimension == "any" else self.dimension,
            "lead": self.lead,
            "stale": "1" if self.stale else "",
            "exception": "1" if self.exception else "",
            "sort": ("-" if self.descending else "") + self.sort if self.sort != "key" else "",
            "group": self.group,
        }
        return {k: v for k, v in query.items() if v}


def clean_params(query: Mapping[str, Any], *, strict: bool) -> Params:
    """Filters and sorting from a query string. The API refuses unknown values (422); the page
    ignores them (a stale bookmark still opens)."""
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
    sort = (query.get("sort") or "").strip()
    descending = sort.startswith("-")
    sort = sort.lstrip("-")
    if sort and sort not in SORTS:
        if strict:
            errors["sort"] = [f"Must be one of: {', '.join(SORTS)} (prefix - to reverse)."]
        sort = ""
    params.sort, params.descending = (sort or "key"), (descending and bool(sort))
    params.group = pick("group", ["theme"])
    if errors:
        raise ValidationFailed(errors)
    return params


def _matches(row: Mapping[str, Any], params: Params) -> bool:
    if params.theme:
        if params.theme == NO_THEME:
            if row["theme"]:
                return False
        elif row["theme"] != params.theme:
            return False
    if params.approval_status and row["approvalStatus"] != params.approval_status:
        return False
    if params.lead and row["leadAccountId"] != params.lead:
        return False
    if params.stale and not row["stale"]:
        return False
    if params.exception and not row["inException"]:
        return False
    if params.rag:
        dimensions = RAG_DIMENSIONS if params.dimension == "any" else [params.dimension]
        if not any(_rag_of(row, d) == params.rag for d in dimensions):
            return False
    return True


def apply(rows: list[dict[str, Any]], params: Params) -> list[dict[str, Any]]:
    """The rows matching the filters, sorted (ties by project key; missing values last)."""
    key = SORTS[params.sort]
    selected = sorted((r for r in rows if _matches(r, params)), key=lambda r: r["projectKey"])
    present = [r for r in selected if key(r) is not None]
    missing = [r for r in selected if key(r) is None]
    present.sort(key=key, reverse=params.descending)
    return present + missing


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    overall = {rag: 0 for rag in RAG_CHOICES}
    for row in rows:
        overall[row["overallRag"] if row["overallRag"] in overall else "None"] += 1
    return {
        "projects": len(rows),
        "overall": overall,
        "stale": sum(1 for r in rows if r["stale"]),
        "inException": sum(1 for r in rows if r["inException"]),
        "adoptionGaps": sum(1 for r in rows if r["adoptionGap"]),
        "pendingDecisions": sum(r["pendingDecisions"] for r in rows),
        "changesAwaitingApplication": sum(r["changesAwaitingApplication"] for r in rows),
        "reviewsDue": sum(1 for r in rows if r["realisationReviewDueOn"]),
        "reviewsOverdue": sum(1 for r in rows if r["realisationReviewOverdue"]),
    }


def heat_grid(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Counts of projects per RAG dimension (overall and the effective four) and colour."""
    grid = []
    for dimension in RAG_DIMENSIONS:
        counts = {rag: 0 for rag in RAG_CHOICES}
        for row in rows:
            value = _rag_of(row, dimension)
            counts[value if value in counts else "None"] += 1
        grid.append(
            {
                "dimension": dimension,
                "label": HEAT_LABELS[dimension],
                "cells": [{"rag": rag, "count": counts[rag]} for rag in RAG_CHOICES],
            }
        )
    return grid


def group_by_theme(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["theme"] or "", []).append(row)
    ordered = sorted(groups, key=lambda theme: (theme == "", theme.casefold()))
    return [{"theme": theme, "rows": groups[theme]} for theme in ordered]


@dataclass
class Portfolio:
    rows: list[dict[str, Any]]
    total: int
    params: Params
    summary: dict[str, Any]
    heat: list[dict[str, Any]]
    groups: list[dict[str, Any]] | None
    themes: list[str] = field(default_factory=list)
    leads: list[str] = field(default_factory=list)
    # Each project's open risks per matrix cell, by key (for the portfolio's risk matrices).
    risk_cells: dict[str, Any] = field(default_factory=dict)
    # The stored text each row was read from, by key (the page's row HTML memo).
    row_texts: dict[str, str] = field(default_factory=dict)


def portfolio(
    request: HttpRequest,
    query: Mapping[str, Any],
    *,
    strict: bool = False,
    with_cells: bool = False,
) -> Portfolio:
    """The portfolio for `query`; `with_cells` also reads each project's stored risk-matrix
    cells (for the page's matrices; the API and the exports do not show them)."""
    params = clean_params(query, strict=strict)
    if with_cells:
        every, risk_cells, row_texts = rows_and_cells(request)
    else:
        every, risk_cells, row_texts = rows_for(request), {}, {}
    rows = apply(every, params)
    return Portfolio(
        rows=rows,
        total=len(every),
        params=params,
        summary=summary(rows),
        heat=heat_grid(rows),
        groups=group_by_theme(rows) if params.group == "theme" else None,
        themes=sorted({r["theme"] for r in every if r["theme"]}, key=str.casefold),
        leads=sorted({r["leadAccountId"] for r in every if r["leadAccountId"]}),
        risk_cells=risk_cells,
        row_texts=row_texts,
    )


# --- lessons ----------------------------------------------------------------------------------

LESSON_KINDS = {
    "worked": "What worked",
    "differently": "Do differently",
    "nextSponsor": "For the next sponsor",
    "realisation": "Realisation lesson",
}


@dataclass
class Lessons:
    entries: list[dict[str, Any]]
    total: int
    themes: list[str]


def lessons(request: HttpRequest, *, q: str = "", kind: str = "", theme: str = "") -> Lessons:
    """Every close-out lesson (closeOut.lessons worked / differently / nextSponsor) and
    realisation lesson (realisationLessons) of the viewable projects, newest first, matching
    every word of `q` (in the lesson, the project key or name), with the count before
    filtering and the themes present."""
    projects = {p.pk: p for p, _ in permissions.viewable_projects(request)}
    cases = (
        BusinessCase.objects.filter(project_id__in=list(projects))
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
        for key in ("worked", "differently", "nextSponsor"):
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
