"""The assistant and investment decisions: the ranked proposals and the scenarios with their
cut-line for governors, a proposal's scores also for its lead and sponsor (hidden from anyone
else), scoring by the PMO and the sponsor through `investment.services.score_set` (on the
Assistant page a proposal the person confirms); and never the board's choice of a scenario,
by no action and no MCP tool."""

import ast
import inspect
import json
from pathlib import Path

import pytest
from django.test import Client

import agent
from agent import catalogue
from agent.catalogue import CATALOGUE
from agent.mcp_server import tool_for
from governance import permissions
from governance.errors import Forbidden, NotFound, ValidationFailed
from governance.models import AuditEntry
from investment import services
from investment.models import Score
from tests.agent.conftest import EVERYONE, use_group
from tests.conftest import build_cast, fresh
from tests.investment.conftest import criterion, first_model, govern, steering, three_proposals
from tests.investment.test_services import _scenario

pytestmark = pytest.mark.django_db
INVESTMENT = ("ranked_proposals", "proposal_scores", "investment_scenarios", "score_proposal")


def run(user, name, arguments):
    ctx = catalogue.Context(request=catalogue.request_for(user), client="test")
    return catalogue.run(ctx, name, arguments)


@pytest.fixture(scope="module")
def built_board(module_db):
    """A, B and C scored by the PMO; every one in the governance group (the assistant's gate)
    but, for the investment gate, the PMO alone governs (as when the lead and the sponsor
    reach the assistant without being the PMO). Built once for the module's tests."""
    from governance.tracker.local import scripting

    governed = govern(build_cast())
    first_model(governed)
    three = three_proposals(governed)
    for project in three.values():
        steering(project, governed.lead, governed.sponsor, governed.viewer)
    scripting.ensure_group(
        EVERYONE, members=["lead", "editor", "viewer", "sponsor", "outsider", "site_admin", "pmo"]
    )
    use_group(EVERYONE)
    return three, governed


@pytest.fixture
def board_and_governed(db, built_board):
    return fresh(built_board)


@pytest.fixture
def board(board_and_governed):
    return board_and_governed[0]


@pytest.fixture
def governed(board_and_governed):
    return board_and_governed[1]


@pytest.fixture
def pmo_alone_governs(monkeypatch):
    real = permissions.may_read_site_settings
    monkeypatch.setattr(
        permissions,
        "may_read_site_settings",
        lambda user, request=None: user.username == "pmo" and real(user, request),
    )


def test_a_governor_reads_the_ranking_a_proposal_and_a_scenario_with_its_line(board, governed):
    ranked = run(governed.pmo, "ranked_proposals", {"limit": 2})
    assert [(p["projectKey"], p["rank"]) for p in ranked["items"]] == [("AAA", 1), ("BBB", 2)]
    assert ranked["total"] == 3 and ranked["nextCursor"] == "2"
    assert "criteria" not in ranked["items"][0] and ranked["items"][0]["link"]
    scores = run(governed.pmo, "proposal_scores", {"projectKey": "aaa"})
    assert scores["proposal"]["rank"] == 1
    strategy = next(c for c in scores["proposal"]["criteria"] if c["key"] == "strategy")
    assert (strategy["value"], strategy["reason"]) == (5, "AAA reason")
    scenario = _scenario(governed)
    listed = run(governed.pmo, "investment_scenarios", {})
    assert [s["name"] for s in listed["items"]] == ["Plan"] and not listed["items"][0]["chosen"]
    one = run(governed.pmo, "investment_scenarios", {"scenarioId": str(scenario.pk)})
    assert one["cutAfter"] == 1 and one["scenario"]["name"] == "Plan"
    assert [r["projectKey"] for r in one["rows"]["items"]] == ["AAA", "BBB", "CCC"]
    assert one["rows"]["items"][1]["fitsByYear"] == {"2027": True, "2028": False}
    assert one["totals"]["budgetByYear"] == {"2027": 100, "2028": 40}
    assert one["link"].endswith(f"/investment/scenarios/{scenario.pk}/export.xlsx")


def test_the_lead_and_the_sponsor_read_their_own_proposal_and_no_more(
    board, governed, pmo_alone_governs
):
    for who in (governed.lead, governed.sponsor):
        read = run(who, "proposal_scores", {"projectKey": "BBB"})["proposal"]
        assert read["projectKey"] == "BBB" and read["criteria"][0]["reason"] == "BBB reason"
        with pytest.raises(Forbidden, match="governance group"):
            run(who, "ranked_proposals", {})
        with pytest.raises(Forbidden):
            run(who, "investment_scenarios", {})
    for who in (governed.viewer, governed.editor, governed.outsider):
        with pytest.raises(NotFound):
            run(who, "proposal_scores", {"projectKey": "BBB"})


def test_the_pmo_and_the_sponsor_score_with_a_reason_the_lead_may_not(
    board, governed, pmo_alone_governs
):
    answer = run(
        governed.sponsor,
        "score_proposal",
        {"projectKey": "CCC", "criterion": "strategy", "value": 5, "reason": "Now core."},
    )
    assert answer["done"] == "investment.scored"
    strategy = next(c for c in answer["proposal"]["criteria"] if c["key"] == "strategy")
    assert (strategy["value"], strategy["reason"]) == (5, "Now core.")
    assert Score.objects.filter(project__key="CCC").count() == 2  # the first one kept
    entry = AuditEntry.objects.get(kind="investment.scored", project_key="CCC", channel="agent")
    assert entry.actor_account_id == governed.sponsor.account_id
    body = {"projectKey": "CCC", "criterion": "strategy", "value": 2, "reason": "No."}
    with pytest.raises(Forbidden, match="PMO"):
        run(governed.lead, "score_proposal", body)
    with pytest.raises(NotFound):
        run(governed.viewer, "score_proposal", body)
    run(governed.pmo, "score_proposal", {**body, "reason": "Reconsidered."})
    names = {a.name for a in catalogue.available(catalogue.request_for(governed.lead))}
    assert "score_proposal" not in names and "proposal_scores" in names
    names = {a.name for a in catalogue.available(catalogue.request_for(governed.sponsor))}
    assert "score_proposal" in names


def test_scoring_refusals_are_in_words(board, governed):
    def score(**body):
        return run(governed.pmo, "score_proposal", {"projectKey": "AAA", **body})

    good = {"criterion": "strategy", "value": 3, "reason": "Fine."}
    with pytest.raises(ValidationFailed) as refused:
        score(**{**good, "criterion": "adoption"})
    assert "read from data" in refused.value.fields["criterion"][0]
    with pytest.raises(ValidationFailed) as refused:
        score(**{**good, "value": 6})
    assert "value" in refused.value.fields
    with pytest.raises(ValidationFailed) as refused:
        score(**{**good, "reason": "   "})
    assert "reason" in refused.value.fields
    services.model_version_create(
        user=governed.site_admin,
        data={"why": "Second", "criteria": [criterion("impact")]},
    )
    with pytest.raises(ValidationFailed) as refused:
        score(**good)
    assert "version 2" in refused.value.fields["criterion"][0]


# JSON texts, as a client sends them: NUL, a lone surrogate, a noncharacter, 10 MB of text,
# 2^63, NaN, 10^400, 5,000 digits, year 9999, nesting.
HOSTILE = [
    '"\\u0000"',
    '"\\ud800"',
    '"\\ufffe"',
    '"' + "x" * 10_000_000 + '"',
    "9223372036854775808",
    "NaN",
    "1e400",
    "9" * 5000,
    '"9999-12-31"',
    '[[[[["deep"]]]]]',
    '{"a": {"b": {"c": 1}}}',
]


@pytest.mark.parametrize("literal", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize(
    "name,argument",
    [
        ("proposal_scores", "projectKey"),
        ("investment_scenarios", "scenarioId"),
        ("investment_scenarios", "cursor"),
        ("ranked_proposals", "limit"),
        ("score_proposal", "criterion"),
        ("score_proposal", "value"),
        ("score_proposal", "reason"),
        ("score_proposal", "projectKey"),
    ],
)
def test_hostile_values_are_refused_in_words(board, governed, bearer, name, argument, literal):
    """Through the assistant's API door: 4xx with words, never a 500, nothing scored."""
    base = {
        "proposal_scores": {"projectKey": "AAA"},
        "investment_scenarios": {},
        "ranked_proposals": {},
        "score_proposal": {
            "projectKey": "AAA",
            "criterion": "strategy",
            "value": 3,
            "reason": "Fine.",
        },
    }[name]
    others = json.dumps({k: v for k, v in base.items() if k != argument})[1:-1]
    body = '{"arguments": {' + (others + ", " if others else "") + f'"{argument}": {literal}}}}}'
    response = Client(**bearer(governed.pmo)).post(
        f"/api/v1/agent/actions/{name}", data=body, content_type="application/json"
    )
    if argument == "reason" and literal == '"9999-12-31"':  # a reason may read like a date
        assert response.status_code == 200, response.content[:300]
        return
    assert 400 <= response.status_code < 500, response.content[:300]
    assert response.json()["error"]["message"]
    assert Score.objects.filter(project__key="AAA").count() == 1


def test_a_scenario_id_that_is_none_is_not_found(board, governed):
    for wanted in ("nope", "00000000-0000-0000-0000-000000000000", "12"):
        with pytest.raises(NotFound, match="No scenario"):
            run(governed.pmo, "investment_scenarios", {"scenarioId": wanted})


def test_no_action_or_tool_chooses_a_scenario(board, governed, monkeypatch):
    """The board's choice stays with people in the pages: no action's code names it, and
    running every investment action calls it never."""
    sources = [Path(inspect.getfile(agent)).parent.glob("*.py")]
    for path in (p for group in sources for p in group):
        tree = ast.parse(path.read_text())
        named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        named |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        named |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert "scenario_choose" not in named, path
    for action in CATALOGUE.values():
        assert "choose" not in action.name and "choose" not in inspect.getsource(action.function)
        assert "choose" not in tool_for(action).name

    def refuse(**kwargs):
        raise AssertionError("an action chose a scenario")

    monkeypatch.setattr(services, "scenario_choose", refuse)
    scenario = _scenario(governed)
    run(governed.pmo, "ranked_proposals", {})
    run(governed.pmo, "investment_scenarios", {"scenarioId": str(scenario.pk)})
    run(governed.pmo, "proposal_scores", {"projectKey": "AAA"})
    run(
        governed.pmo,
        "score_proposal",
        {"projectKey": "AAA", "criterion": "strategy", "value": 1, "reason": "r"},
    )
    assert not scenario.decisions.exists()


def test_the_tools_say_they_read_and_that_scoring_is_not_destructive():
    tools = {name: tool_for(CATALOGUE[name]) for name in INVESTMENT}
    for name in INVESTMENT[:3]:
        assert tools[name].annotations.read_only_hint is True
    hints = tools["score_proposal"].annotations
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
        False,
        False,
        False,
    )
