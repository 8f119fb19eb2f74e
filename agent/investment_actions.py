"""The assistant's investment actions (docs/product.md, "Investment decisions"): read the
ranked proposals, one proposal's scores with their reasons, the scenarios and one scenario
with its cut-line; and score a proposal with a reason (a write: on the Assistant page it
comes back as a proposal the person confirms), through `investment.services.score_set`.

The gates are the investment API's own: the ranked proposals and the scenarios for those who
may govern investment (`permissions.may_govern_investment`: site admins, the governance
group); a proposal's scores also for its lead and sponsor, hidden (404) from anyone else;
scoring by the PMO and the sponsor (`investment.services.may_score`).

The board's choice of a scenario stays with people in the pages: no action here makes it."""

from typing import Any

from django.http import HttpResponse

from agent.actions import PAGING, PROJECT_KEY, _creating, _data, _project_link, _url, _written
from agent.catalogue import READ, WRITE, Context, action, page, project
from governance import permissions
from governance.errors import NotFound
from governance.models import Project
from investment import selectors, services
from investment.api import chosen_ids, proposal_view, scenario_dict, scenario_view
from investment.models import Scenario
from investment.specs import ScoreSpec

SCORES_MESSAGE = "Only the PMO (the governance group) and the sponsor score a proposal."
SCENARIO_ID = {"type": "string", "maxLength": 64, "description": "The id from a list answer."}


def _governor(ctx: Context) -> None:
    services.require_governor(ctx.user, ctx.request)


def _proposal(ctx: Context, key: Any) -> tuple[Project, permissions.Caller]:
    """The project, when the caller may read its scores: 404 otherwise, as for a project they
    cannot view."""
    found, caller = project(ctx, key)
    if not permissions.may_govern_investment(ctx.user, ctx.request, caller):
        raise NotFound(f"No project {found.key} that you can see.")
    return found, caller


def _scored(ctx: Context, found: Project) -> dict[str, Any]:
    return {**proposal_view(ctx.request, found), "link": _project_link(ctx, found.key)}


@action(
    "ranked_proposals",
    title="Ranked proposals",
    kind=READ,
    description=(
        "The proposals you can see (business cases Exploring or Draft), highest total score "
        "first: each one's total, rank, completeness and the scoring model version it was "
        "scored under (and whether that is older than the one in force). The governance group "
        "and site administrators."
    ),
    schema={"properties": {**PAGING}},
)
def ranked_proposals(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _governor(ctx)
    board = selectors.viewer_board(ctx.request)
    items = [
        {
            **{k: v for k, v in p.as_dict().items() if k != "criteria"},
            "link": _project_link(ctx, p.project.key),
        }
        for p in selectors.ranked(board)
    ]
    return page(items, args)


@action(
    "proposal_scores",
    title="A proposal's scores",
    kind=READ,
    description=(
        "One proposal's scores against each criterion of its model version, with the points, "
        "the reason, who scored and when, its total and rank, every earlier score (history) "
        "and whether the board prioritised it in a scenario. The governance group, site "
        "administrators, and the project's lead and sponsor."
    ),
    schema={"properties": {"projectKey": PROJECT_KEY}, "required": ["projectKey"]},
)
def proposal_scores(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    return _scored(ctx, _proposal(ctx, args["projectKey"])[0])


@action(
    "investment_scenarios",
    title="Scenarios and their cut-line",
    kind=READ,
    description=(
        "Without scenarioId: every scenario (name, budget per year or total, selection, "
        "must-haves, whether the board chose it). With scenarioId: that scenario's ranked rows "
        "(must-haves first), the cut-line (cutAfter: how many rows stand above it), each row's "
        "cost per year and whether it fits each year, and the totals above the line against "
        "the budget, with a link to its workbook. The governance group and site administrators."
    ),
    schema={"properties": {"scenarioId": SCENARIO_ID, **PAGING}},
)
def investment_scenarios(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _governor(ctx)
    wanted = args.get("scenarioId")
    if not wanted:
        chosen = chosen_ids()
        return page([scenario_dict(s, chosen) for s in Scenario.objects.all()], args)
    scenario = services.scenario_get(wanted)
    view = scenario_view(ctx.request, scenario, HttpResponse())
    rows = view.pop("rows")
    view.pop("move")
    return {
        **view,
        "rows": page(rows, args),
        "link": ctx.link(_url("investment:scenario-export", scenario.pk)),
    }


def _score_gate(ctx: Context, args: dict[str, Any]) -> None:
    """The score's checks before its body, in the house order: the project (404), hidden from
    anyone who may not read its scores (404), the right to score (403)."""
    key = args.get("projectKey")
    if not isinstance(key, str) or not key.strip():
        return  # the schema's own refusal names the missing key
    _, caller = _proposal(ctx, key)
    permissions.require(services.may_score(caller, ctx.request), SCORES_MESSAGE)


@action(
    "score_proposal",
    title="Score a proposal",
    kind=WRITE,
    description=(
        "Score a proposal (a business case Exploring or Draft) against one criterion a person "
        "scores in the scoring model in force: points 1 to 5 and the reason (required). A "
        "rescore supersedes the current score, which is kept in the history. The PMO (the "
        "governance group, site administrators) or the project's sponsor. Read the criteria "
        "with proposal_scores first."
    ),
    schema=_creating(ScoreSpec),
    gate=_score_gate,
    offered_to=services.may_score,
)
def score_proposal(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, caller = _proposal(ctx, args["projectKey"])
    services.score_set(caller=caller, data=_data(args), request=ctx.request)
    return _written(ctx, "investment.scored", _scored(ctx, found))
