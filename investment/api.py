"""JSON API of investment decisions (mounted at /api/v1, under /investment/...). Every write
goes through `investment.services`; every read through `investment.selectors`. The scoring
model, the ranked proposals, the scenarios and the portfolio decision log are for the
governance group and site admins (`permissions.may_govern_investment`, 403 with words for
others); a proposal's scores are also its lead's and sponsor's, and hidden (404) from
everyone else."""

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router

from governance import permissions, specs
from governance.api import answers, body_schema, component, json_object, list_of, with_etag
from governance.cleaning import decimal_to_json
from governance.concurrency import honours_if_match, read_if_match
from governance.errors import NotFound, ValidationFailed
from governance.models import Project, User
from investment import selectors, services
from investment.criteria import CATALOGUE
from investment.models import PortfolioDecision, Prioritised, Scenario, Score
from investment.specs import (
    COMPARISON_ANSWER,
    DATA_SOURCE_ANSWER,
    DECISION_ANSWER,
    EVALUATION_PROPERTIES,
    MOVE_ANSWER,
    PRIORITISED_ANSWER,
    PROPOSAL_ANSWER,
    SCENARIO_ANSWER,
    SCORE_ANSWER,
    VERSION_ANSWER,
    ChoiceSpec,
    ModelVersionSpec,
    ScenarioSpec,
    ScoreSpec,
)

router = Router(tags=["investment"])

VERSION = component("ScoringModelVersion", VERSION_ANSWER)
PROPOSAL = component("ProposalScores", PROPOSAL_ANSWER)
SCORE = component("ProposalScore", SCORE_ANSWER)
SCENARIO = component("Scenario", SCENARIO_ANSWER)
DECISION = component("PortfolioDecision", DECISION_ANSWER)
SCENARIO_VIEW = component(
    "ScenarioView",
    {
        "type": "object",
        "properties": {
            "scenario": SCENARIO,
            **EVALUATION_PROPERTIES,
            "move": {"anyOf": [MOVE_ANSWER, {"type": "null"}]},
        },
        "required": ["scenario", *EVALUATION_PROPERTIES, "move"],
    },
)
MODEL_VIEW = component(
    "ScoringModel",
    {
        "type": "object",
        "properties": {
            "current": {"anyOf": [VERSION, {"type": "null"}]},
            "dataSources": list_of(DATA_SOURCE_ANSWER),
        },
        "required": ["current", "dataSources"],
    },
)
PROPOSAL_VIEW = component(
    "ProposalScoresView",
    {
        "type": "object",
        "properties": {
            "proposal": PROPOSAL,
            "history": list_of(SCORE),
            "prioritised": {"anyOf": [PRIORITISED_ANSWER, {"type": "null"}]},
        },
        "required": ["proposal", "history", "prioritised"],
    },
)

VERSION_BODY = body_schema(*specs.body(ModelVersionSpec, creating=True))
SCORE_BODY = body_schema(*specs.body(ScoreSpec, creating=True))
SCENARIO_BODY = body_schema(*specs.body(ScenarioSpec, creating=True))
SCENARIO_PATCH = body_schema(*specs.body(ScenarioSpec, creating=False))
CHOICE_BODY = body_schema(*specs.body(ChoiceSpec, creating=True))


def _governor(request: HttpRequest) -> User:
    user = permissions.request_user(request)
    services.require_governor(user, request)
    return user


# --- the scoring model -----------------------------------------------------------------------


def _version_dict(number: int | None = None) -> dict[str, Any] | None:
    versions, criteria = selectors.versions_with_criteria()
    chosen = [v for v in versions.values() if number is None or v.number == number]
    if not chosen:
        return None
    version = max(chosen, key=lambda v: v.number)
    return services.version_to_dict(version, criteria.get(version.pk, []))


@router.get("/investment/model")
@answers(MODEL_VIEW)
def model_get(request: HttpRequest) -> dict[str, Any]:
    """The scoring model in force (null before the first version) and the catalogue of data
    sources a criterion may read."""
    _governor(request)
    return {
        "current": _version_dict(),
        "dataSources": [source.as_dict() for source in CATALOGUE.values()],
    }


@router.get("/investment/model/versions")
@answers({"type": "object", "properties": {"items": list_of(VERSION)}, "required": ["items"]})
def model_versions(request: HttpRequest) -> dict[str, Any]:
    """Every version of the scoring model, newest first, each with its criteria, who made it
    and why."""
    _governor(request)
    versions, criteria = selectors.versions_with_criteria()
    ordered = sorted(versions.values(), key=lambda v: -v.number)
    return {"items": [services.version_to_dict(v, criteria.get(v.pk, [])) for v in ordered]}


@router.post("/investment/model/versions", response={201: dict}, openapi_extra=VERSION_BODY)
@answers(VERSION)
def model_version_create(request: HttpRequest) -> dict[str, Any]:
    """A new version of the model: `why` and the whole list of criteria (copy the current
    ones and change what changes). Scores given under older versions are never rewritten."""
    user = _governor(request)
    version = services.model_version_create(user=user, data=json_object(request), request=request)
    return _version_dict(version.number) or {}


# --- proposals and their scores --------------------------------------------------------------


@router.get("/investment/proposals")
@answers({"type": "object", "properties": {"items": list_of(PROPOSAL)}, "required": ["items"]})
def proposals(request: HttpRequest) -> dict[str, Any]:
    """Every proposal (a business case Exploring or Draft) the caller can view, ranked: the
    total and the rank with the model version they came from."""
    _governor(request)
    board = selectors.viewer_board(request)
    return {"items": [p.as_dict() for p in selectors.ranked(board)]}


def _score_dict(score: Score) -> dict[str, Any]:
    return {
        "id": score.pk,
        "criterion": score.criterion.key,
        "modelVersion": score.version.number,
        "value": score.value,
        "reason": score.reason,
        "scoredByAccountId": score.created_by_account_id,
        "scoredAt": score.created_at.isoformat(),
        "supersededBy": score.superseded_by_id,
    }


def proposal_view(request: HttpRequest, project: Project) -> dict[str, Any]:
    board = selectors.viewer_board(request, also=project)
    scored = selectors.all_scored(board)[project.key]
    history = (
        Score.objects.filter(project=project)
        .select_related("criterion", "version")
        .order_by("-created_at", "-pk")
    )
    marker = Prioritised.objects.filter(business_case_id=project.pk).first()
    return {
        "proposal": scored.as_dict(),
        "history": [_score_dict(s) for s in history],
        "prioritised": {
            "scenarioName": marker.scenario_name,
            "decisionId": str(marker.decision_id),
            "at": marker.at.isoformat(),
        }
        if marker
        else None,
    }


def _proposal_for(request: HttpRequest, key: str) -> tuple[Project, permissions.Caller]:
    """The project, when the caller may see its scores (404 otherwise)."""
    project, caller = permissions.project_for(request, key)
    if not permissions.may_govern_investment(caller.user, request, caller):
        raise NotFound(f"No project {key} that you can see.")
    return project, caller


@router.get("/investment/proposals/{key}/scores")
@answers(PROPOSAL_VIEW)
def proposal_scores(request: HttpRequest, key: str) -> dict[str, Any]:
    """The proposal's scores under the model version they came from, each with its reason,
    its total and whether it was scored under an older version; `history` holds every score
    ever given, superseded ones included. The governance group, site admins, and the
    project's lead and sponsor; hidden from everyone else."""
    project, _ = _proposal_for(request, key)
    return proposal_view(request, project)


@router.post("/investment/proposals/{key}/scores", openapi_extra=SCORE_BODY)
@answers(PROPOSAL_VIEW)
def proposal_score_set(request: HttpRequest, key: str) -> dict[str, Any]:
    """Score the proposal against one criterion a person scores, in the model in force, with
    the reason: the PMO (the governance group, site admins) or the sponsor. A rescore
    supersedes the previous score, which is kept."""
    project, caller = _proposal_for(request, key)
    services.score_set(caller=caller, data=json_object(request), request=request)
    return proposal_view(request, project)


# --- scenarios -------------------------------------------------------------------------------


def chosen_ids() -> set[Any]:
    return set(PortfolioDecision.objects.values_list("scenario_id", flat=True))


def scenario_dict(scenario: Scenario, chosen: set[Any] | None = None) -> dict[str, Any]:
    chosen = chosen_ids() if chosen is None else chosen
    return {
        "id": str(scenario.pk),
        "name": scenario.name,
        "notes": scenario.notes,
        "budgetByYear": scenario.budget_by_year or {},
        "budgetTotal": decimal_to_json(scenario.budget_total),
        "selection": list(scenario.selection or []),
        "mustHaves": list(scenario.must_haves or []),
        "copyOf": str(scenario.copy_of_id) if scenario.copy_of_id else None,
        "chosen": scenario.pk in chosen,
        "createdAt": scenario.created_at.isoformat(),
        "createdByAccountId": scenario.created_by_account_id,
        "updatedAt": scenario.updated_at.isoformat(),
        "updatedByAccountId": scenario.updated_by_account_id,
        "revision": scenario.revision,
    }


def scenario_view(
    request: HttpRequest, scenario: Scenario, response: HttpResponse, move: str | None = None
) -> dict[str, Any]:
    board = selectors.board_for(selectors.visible_projects(request), [scenario])
    rows = selectors.scenario_rows(board, selectors.all_scored(board), scenario)
    budget = selectors.Budget.of(scenario)
    evaluation = selectors.cut_line(rows, budget)
    moved = None
    if move:
        moved = selectors.move_across(rows, budget, move.strip().upper()) or None
        if moved is None:
            raise ValidationFailed({"move": [f"{move} is not in the scenario."]})
    with_etag(response, scenario.revision)
    return {"scenario": scenario_dict(scenario), **evaluation.as_dict(), "move": moved}


@router.get("/investment/scenarios")
@answers({"type": "object", "properties": {"items": list_of(SCENARIO)}, "required": ["items"]})
def scenarios(request: HttpRequest) -> dict[str, Any]:
    """Every scenario, by name."""
    _governor(request)
    chosen = chosen_ids()
    return {"items": [scenario_dict(s, chosen) for s in Scenario.objects.all()]}


@router.post("/investment/scenarios", response={201: dict}, openapi_extra=SCENARIO_BODY)
@answers(SCENARIO_VIEW, etag=True)
def scenario_create(request: HttpRequest, response: HttpResponse) -> dict[str, Any]:
    """A scenario: a name, a budget per year ({"2027": amount}) or one total, the selection
    (project keys; empty: every proposal) and the must-haves among them. Answers it with its
    cut-line."""
    user = _governor(request)
    scenario = services.scenario_create(user=user, data=json_object(request), request=request)
    return scenario_view(request, scenario, response)


@router.get("/investment/scenarios/{scenario_id}")
@answers(SCENARIO_VIEW, etag=True)
def scenario_get(
    request: HttpRequest, scenario_id: str, response: HttpResponse, move: str | None = None
) -> dict[str, Any]:
    """The scenario with its ranked rows (must-haves first), the cut-line (`cutAfter`: how
    many rows stand above it), each row's cost per year from its budget phasing and whether
    it fits each year, and the totals of cost, benefit and score above the line. `move`: a
    project key; `move` answers what moving it across the line does."""
    _governor(request)
    return scenario_view(request, services.scenario_get(scenario_id), response, move)


@router.patch("/investment/scenarios/{scenario_id}", openapi_extra=SCENARIO_PATCH)
@honours_if_match
@answers(SCENARIO_VIEW, etag=True)
def scenario_update(
    request: HttpRequest, scenario_id: str, response: HttpResponse
) -> dict[str, Any]:
    """Change the scenario (audited); honours If-Match."""
    user = _governor(request)
    scenario = services.scenario_update(
        user=user,
        scenario_id=scenario_id,
        data=json_object(request),
        expected_revision=read_if_match(request),
        request=request,
    )
    return scenario_view(request, scenario, response)


@router.delete("/investment/scenarios/{scenario_id}", response={204: None})
@honours_if_match
def scenario_delete(request: HttpRequest, scenario_id: str) -> None:
    """Delete a scenario (409 once the board chose it: the decision log names it)."""
    user = _governor(request)
    services.scenario_delete(
        user=user,
        scenario_id=scenario_id,
        expected_revision=read_if_match(request),
        request=request,
    )


@router.post(
    "/investment/scenarios/{scenario_id}/copy", response={201: dict}, openapi_extra=SCENARIO_PATCH
)
@answers(SCENARIO_VIEW, etag=True)
def scenario_copy(request: HttpRequest, scenario_id: str, response: HttpResponse) -> dict[str, Any]:
    """A copy of the scenario ("Copy of X" unless a name is sent; any field sent replaces the
    copied one)."""
    user = _governor(request)
    copy = services.scenario_copy(
        user=user, scenario_id=scenario_id, data=json_object(request), request=request
    )
    return scenario_view(request, copy, response)


@router.get("/investment/compare")
@answers(component("ScenarioComparison", COMPARISON_ANSWER))
def scenarios_compare(request: HttpRequest, ids: str = "") -> dict[str, Any]:
    """Two or three scenarios side by side (`ids`: their ids, separated by commas): each one's
    rows, cut-line and totals, and for each project whether it stands above the line in each."""
    _governor(request)
    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    if not 2 <= len(wanted) <= 3:
        raise ValidationFailed({"ids": ["Name two or three scenarios, separated by commas."]})
    chosen = [services.scenario_get(i) for i in wanted]
    board = selectors.board_for(selectors.visible_projects(request), chosen)
    return selectors.compare(board, chosen)


# --- the board's choice and the portfolio decision log ---------------------------------------


def _viewable(request: HttpRequest) -> set[str]:
    return {p.key for p in selectors.visible_projects(request)}


def _decision_dict(decision: PortfolioDecision, viewable: set[str]) -> dict[str, Any]:
    """A made decision as the caller may read it: only the prioritised proposals whose project
    they can view, and how many more (`proposalsHidden`, no keys)."""
    ref = decision.minutes_ref or {}
    shown, hidden = selectors.decision_proposals(decision.proposals or [], viewable)
    return {
        "id": str(decision.pk),
        "decision": decision.decision,
        "rationale": decision.rationale,
        "state": "Made",
        "madeOn": decision.made_on.isoformat(),
        "madeByAccountId": decision.made_by_account_id,
        "minutesRef": {
            "title": ref.get("title", ""),
            "url": ref.get("url"),
            "pageId": ref.get("pageId"),
        },
        "scenarioId": str(decision.scenario_id),
        "scenarioName": decision.scenario_name,
        "scenarioRevision": decision.scenario_revision,
        "proposals": shown,
        "proposalsHidden": hidden,
        "figures": decision.figures,
        "createdAt": decision.created_at.isoformat(),
    }


@router.post(
    "/investment/scenarios/{scenario_id}/choose", response={201: dict}, openapi_extra=CHOICE_BODY
)
@honours_if_match
@answers(DECISION)
def scenario_choose(request: HttpRequest, scenario_id: str) -> dict[str, Any]:
    """The board chooses the scenario: a made decision in the portfolio decision log, with the
    minutes (`minutesRef` {title, url, pageId}); the proposals above its line are marked
    "prioritised in scenario X" on their business cases and their leads and sponsors are
    told. No business case is submitted or approved. Honours If-Match (the scenario's)."""
    user = _governor(request)
    decision = services.scenario_choose(
        user=user,
        scenario_id=scenario_id,
        data=json_object(request),
        projects=selectors.visible_projects(request),
        expected_revision=read_if_match(request),
        request=request,
    )
    return _decision_dict(decision, _viewable(request))


@router.get("/investment/decisions")
@answers({"type": "object", "properties": {"items": list_of(DECISION)}, "required": ["items"]})
def portfolio_decisions(request: HttpRequest) -> dict[str, Any]:
    """The portfolio decision log, newest first: made decisions, never changed."""
    _governor(request)
    viewable = _viewable(request)
    return {"items": [_decision_dict(d, viewable) for d in PortfolioDecision.objects.all()]}


@router.get("/investment/decisions/{portfolio_decision_id}")
@answers(DECISION)
def portfolio_decision_read(request: HttpRequest, portfolio_decision_id: str) -> dict[str, Any]:
    """One entry of the portfolio decision log."""
    _governor(request)
    decision = services.portfolio_decision_get(portfolio_decision_id)
    return _decision_dict(decision, _viewable(request))


@router.patch("/investment/decisions/{portfolio_decision_id}")
@answers(DECISION)
def portfolio_decision_patch(request: HttpRequest, portfolio_decision_id: str) -> dict[str, Any]:
    """Always refused (409): a made portfolio decision is never changed."""
    user = _governor(request)
    services.portfolio_decision_update(
        user=user, decision_id=portfolio_decision_id, request=request
    )
    return {}  # never reached


@router.delete("/investment/decisions/{portfolio_decision_id}", response={204: None})
def portfolio_decision_remove(request: HttpRequest, portfolio_decision_id: str) -> None:
    """Always refused (409): a made portfolio decision is never deleted."""
    user = _governor(request)
    services.portfolio_decision_delete(
        user=user, decision_id=portfolio_decision_id, request=request
    )
