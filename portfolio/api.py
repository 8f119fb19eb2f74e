"""JSON API of the portfolio (mounted at /api/v1), behind the portfolio/agent gate."""

from ninja import Router

from governance import permissions
from governance.api import FREE_OBJECT, answers, component, list_of
from governance.errors import ValidationFailed
from portfolio import selectors

router = Router(tags=["portfolio"])

PORTFOLIO_ROW = component(
    "PortfolioRow",
    {**FREE_OBJECT, "description": "One viewable project's row, as the portfolio page shows it."},
)
LESSON = component(
    "Lesson",
    {**FREE_OBJECT, "description": "One close-out or realisation lesson of a viewable project."},
)


def _sort_values() -> list[str]:
    return ["", *selectors.SORTS, *(f"-{key}" for key in selectors.SORTS)]


@router.get(
    "/portfolio",
    openapi_extra={
        "x-enums": {
            "approvalStatus": ["", *selectors.APPROVAL_STATUSES],
            "rag": ["", *selectors.RAG_CHOICES],
            "dimension": ["", *selectors.DIMENSION_CHOICES],
            "sort": _sort_values(),
        }
    },
)
@answers(list_of(PORTFOLIO_ROW))
def portfolio(
    request,
    theme: str | None = None,
    approvalStatus: str | None = None,
    rag: str | None = None,
    dimension: str | None = None,
    lead: str | None = None,
    stale: bool | None = None,
    sort: str | None = None,
):
    """One row per viewable project: overall and effective dimension RAGs (with `derived` and
    the `drivers` behind each), approval status, version, phase, theme, approved budget and
    `eac`, the estimate at completion (the forecast the cost RAG judges), schedule slip in
    days, `topRiskScore` (the highest open residual score: residual where assessed, else
    inherent) with `topRiskZone` (its colour: Red, Amber, Green, or None without a score),
    pending decisions, changes awaiting application, adoption gap, stale status, the
    benefit review due date and `earnedValue` (its BAC / CPI is `costPerformanceEstimate`, with
    `estimatesCompared` saying how it differs from `eac`). Filters: theme
    (`-` for none), approvalStatus, rag with dimension (overall, cost, schedule, scope, risk;
    default any), lead (accountId), stale. sort: a column name, `-` to reverse."""
    permissions.require_portfolio_access(request)
    query = {
        "theme": theme,
        "approvalStatus": approvalStatus,
        "rag": rag,
        "dimension": dimension,
        "lead": lead,
        "stale": "1" if stale else "",
        "sort": sort,
    }
    return selectors.portfolio(request, query, strict=True).rows


@router.get(
    "/portfolio/lessons", openapi_extra={"x-enums": {"kind": ["", *selectors.LESSON_KINDS]}}
)
@answers(list_of(LESSON))
def lessons(request, q: str = "", kind: str = "", theme: str = ""):
    """Close-out lessons (closeOut.lessons: worked, differently, nextSponsor) and realisation
    lessons of the viewable projects, newest first. q matches every word; kind is one of
    worked, differently, nextSponsor, realisation."""
    permissions.require_portfolio_access(request)
    if kind and kind not in selectors.LESSON_KINDS:
        raise ValidationFailed({"kind": [f"Must be one of: {', '.join(selectors.LESSON_KINDS)}."]})
    return selectors.lessons(request, q=q, kind=kind, theme=theme).entries
