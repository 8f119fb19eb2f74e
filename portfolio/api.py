"""JSON API of the portfolio (mounted at /api/v1), behind the portfolio/agent gate."""

from typing import Any

from django.http import HttpRequest
from ninja import Router

from charter.models import APPROVAL_STATUSES
from governance import paging, permissions, specs
from governance.api import answers, component, list_of
from governance.errors import ValidationFailed
from governance.models import RAG_CHOICES
from portfolio import extensions, selectors
from status import specs as status_specs

router = Router(tags=["portfolio"])

_TEXT = {"type": "string"}
PORTFOLIO_ROW = component(
    "PortfolioRow",
    specs.object_answer(
        {
            "projectKey": _TEXT,
            "name": _TEXT,
            "leadAccountId": specs.ACCOUNT_SCHEMA,
            "theme": _TEXT,
            "approvalStatus": specs.enum_answer(APPROVAL_STATUSES),
            "inException": {"type": "boolean"},
            "exceptionAgeDays": specs.INTEGER_OR_NULL_SCHEMA,
            "currentStage": {
                "type": ["string", "null"],
                "description": "The stage under way (the stage plan's), or null.",
            },
            "daysAtGate": {
                **specs.INTEGER_OR_NULL_SCHEMA,
                "description": "Days the current stage's gate review has waited for the "
                "sponsor's decision, or null when none waits.",
            },
            "version": {"type": "integer"},
            "phase": _TEXT,
            "overallRag": specs.enum_answer(RAG_CHOICES),
            "overallReason": _TEXT,
            "derived": status_specs.RAGS_SCHEMA,
            "effective": status_specs.RAGS_SCHEMA,
            "overrides": {
                **status_specs.RAGS_SCHEMA,
                "properties": {
                    name: specs.enum_answer(RAG_CHOICES, nullable=True)
                    for name in status_specs.RAGS_SCHEMA["properties"]
                },
            },
            "drivers": status_specs.DRIVER_SUMMARIES_SCHEMA,
            "approvedBudget": specs.MONEY_ANSWER,
            "eac": {**specs.MONEY_ANSWER, "description": "The forecast at completion."},
            "costOverrunPct": specs.NUMBER_OR_NULL_SCHEMA,
            "scheduleSlipDays": specs.INTEGER_OR_NULL_SCHEMA,
            "topRiskScore": specs.INTEGER_OR_NULL_SCHEMA,
            "topRiskZone": {
                **specs.enum_answer(["Red", "Amber", "Green", "None"]),
                "description": "The top risk score's colour (governance.rag.risk_zone): None "
                "without a score.",
            },
            "pendingDecisions": {"type": "integer"},
            "changesAwaitingApplication": {"type": "integer"},
            "adoptionGap": {"type": "boolean"},
            "stale": {"type": "boolean"},
            "lastUpdatedAt": specs.MOMENT_SCHEMA,
            "nextUpdateDueAt": specs.MOMENT_SCHEMA,
            "realisationReviewDueOn": specs.DAY_SCHEMA,
            "realisationReviewOverdue": {"type": "boolean"},
            "earnedValue": status_specs.EARNED_VALUE_SCHEMA,
            # The columns the apps above add (`portfolio.extensions`), each only for the
            # viewers they admit: absent for the others.
            **{c.key: c.schema for c in extensions.declared_columns()},
        },
        optional=["eac", *(c.key for c in extensions.declared_columns())],
        description="One viewable project's row, as the portfolio page shows it.",
    ),
)
LESSON = component(
    "Lesson",
    specs.object_answer(
        {
            "projectKey": _TEXT,
            "projectName": _TEXT,
            "approvalStatus": specs.enum_answer(APPROVAL_STATUSES),
            "theme": _TEXT,
            "kind": specs.enum_answer(selectors.LESSON_KINDS),
            "kindLabel": _TEXT,
            "text": _TEXT,
            "recordedAt": specs.MOMENT_SCHEMA,
        },
        description="One close-out or realisation lesson of a viewable project.",
    ),
)


def _sort_values() -> list[str]:
    return ["", *selectors.SORTS, *(f"-{key}" for key in selectors.SORTS)]


@router.get(
    "/portfolio",
    openapi_extra={
        "x-enums": {
            "approvalStatus": ["", *APPROVAL_STATUSES],
            "rag": ["", *RAG_CHOICES],
            "dimension": ["", *selectors.DIMENSION_CHOICES],
            "sort": _sort_values(),
        }
    },
)
@answers(
    component(
        "PortfolioPage",
        paging.schema_of(PORTFOLIO_ROW, "the portfolio's rows"),
    )
)
def portfolio(
    request: HttpRequest,
    theme: str | None = None,
    approvalStatus: str | None = None,
    rag: str | None = None,
    dimension: str | None = None,
    lead: str | None = None,
    stale: bool | None = None,
    exception: bool | None = None,
    stage: str | None = None,
    sort: str | None = None,
    cursor: str | None = paging.cursor_parameter(),
    pageSize: int = paging.page_size_parameter(),
) -> dict[str, Any]:
    """One row per viewable project: overall and effective dimension RAGs (with `derived` and
    the `drivers` behind each), approval status, version, phase, theme, approved budget and
    `eac`, the estimate at completion (the forecast the cost RAG judges), schedule slip in
    days, `topRiskScore` (the highest open residual score: residual where assessed, else
    inherent) with `topRiskZone` (its colour: Red, Amber, Green, or None without a score),
    pending decisions, changes awaiting application, adoption gap, stale status, the
    benefit review due date and `earnedValue` (its BAC / CPI is `costPerformanceEstimate`, with
    `estimatesCompared` saying how it differs from `eac`). Filters: theme
    (`-` for none), approvalStatus, rag with dimension (overall, cost, schedule, scope, risk;
    default any), lead (accountId), stale, exception (the projects in exception: beyond a
    tolerance with the exception undecided), stage (the current stage's name, or `atGate`: a gate
    review awaits the sponsor). sort: a column name, `-` to reverse.
    For the viewers who may govern investment (site administrators, the governance group), each
    row also holds `score` (the proposal's total under its model version), `rank` (among the
    proposals the viewer can see) and `scenario` (the scenario the board prioritised it in),
    null for a project that is not a proposal; for anyone else the three are absent.
    Paged: `pageSize` rows (default 100) in a stable order (the sort, then the project key);
    follow `next` (null on the last page) for the rest, with the same filters and sort."""
    permissions.require_portfolio_access(request)
    query = {
        "theme": theme,
        "approvalStatus": approvalStatus,
        "rag": rag,
        "dimension": dimension,
        "lead": lead,
        "stale": "1" if stale else "",
        "exception": "1" if exception else "",
        "stage": stage,
        "sort": sort,
        "cursor": cursor,
        "pageSize": pageSize,
    }
    found = selectors.portfolio(request, query, strict=True, with_summary=False, with_choices=False)
    return paging.answer(request, found.rows, found.next)


@router.get(
    "/portfolio/lessons", openapi_extra={"x-enums": {"kind": ["", *selectors.LESSON_KINDS]}}
)
@answers(list_of(LESSON))
def lessons(
    request: HttpRequest, q: str = "", kind: str = "", theme: str = ""
) -> list[dict[str, Any]]:
    """Close-out lessons (closeOut.lessons: worked, differently, nextSponsor) and realisation
    lessons of the viewable projects, newest first. q matches every word; kind is one of
    worked, differently, nextSponsor, realisation."""
    permissions.require_portfolio_access(request)
    if kind and kind not in selectors.LESSON_KINDS:
        raise ValidationFailed({"kind": [f"Must be one of: {', '.join(selectors.LESSON_KINDS)}."]})
    return selectors.lessons(request, q=q, kind=kind, theme=theme).entries
