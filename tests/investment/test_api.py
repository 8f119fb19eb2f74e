"""Investment decisions through the API: every answer as the document declares it, the flow
from a model to the board's choice, and who sees and does what (admin, governance group,
lead, sponsor, viewer, outsider)."""

import json

import pytest
from django.test import Client

from charter.models import BusinessCase
from config.api import api
from investment.models import PortfolioDecision
from tests.governance.test_api_document import conforms
from tests.investment.conftest import criterion, make_project, phased, proposal

BASE = "/api/v1"
MINUTES = {"title": "Investment board", "url": "https://wiki.example/board"}


@pytest.fixture(scope="module")
def document():
    return json.loads(json.dumps(api.get_openapi_schema()))


@pytest.fixture
def clients(governed, bearer):
    def client(user):
        return Client(headers={"Authorization": bearer(user)["HTTP_AUTHORIZATION"]})

    return {
        role: client(getattr(governed, role))
        for role in ("site_admin", "pmo", "lead", "sponsor", "viewer", "outsider", "editor")
    }


def send(client, method, path, body=None, **headers):
    data = json.dumps(body) if body is not None else None
    kwargs = {"content_type": "application/json"} if data is not None else {}
    return client.generic(method, BASE + path, data or "", headers=headers, **kwargs)


def test_the_flow_from_a_model_to_the_boards_choice(document, governed, clients):
    admin, pmo, sponsor = clients["site_admin"], clients["pmo"], clients["sponsor"]
    body = {
        "why": "First model",
        "criteria": [
            criterion("strategy", weight=2),
            criterion("risk", source="topRiskScore"),
        ],
    }
    version = conforms(
        document,
        send(admin, "POST", "/investment/model/versions", body),
        "post",
        "/investment/model/versions",
        201,
    )
    assert version["number"] == 1 and version["criteria"][1]["thresholds"] == [4, 9, 14, 19]
    conforms(document, send(pmo, "GET", "/investment/model"), "get", "/investment/model")
    conforms(
        document,
        send(pmo, "GET", "/investment/model/versions"),
        "get",
        "/investment/model/versions",
    )
    for key, value, amounts in (
        ("AAA", 5, {"2027-03": 60}),
        ("BBB", 3, {"2027-06": 30, "2028-02": 50}),
    ):
        project = make_project(key, governed, sponsor=governed.sponsor)
        proposal(project, status="Draft")
        phased(project, amounts)
        scored = conforms(
            document,
            send(
                sponsor if key == "BBB" else pmo,
                "POST",
                f"/investment/proposals/{key}/scores",
                {"criterion": "strategy", "value": value, "reason": f"{key} because"},
            ),
            "post",
            "/investment/proposals/{key}/scores",
        )
        assert scored["proposal"]["criteria"][0]["reason"] == f"{key} because"
    ranked = conforms(
        document, send(pmo, "GET", "/investment/proposals"), "get", "/investment/proposals"
    )
    assert [(p["projectKey"], p["rank"]) for p in ranked["items"]] == [("AAA", 1), ("BBB", 2)]
    # A proposal's own answer gives the rank the ranked list gives (one meaning of "rank").
    own = send(pmo, "GET", "/investment/proposals/BBB/scores").json()
    assert own["proposal"]["rank"] == 2
    created = send(
        pmo,
        "POST",
        "/investment/scenarios",
        {"name": "Plan", "budgetByYear": {"2027": 100, "2028": 40}, "selection": ["AAA", "BBB"]},
    )
    view = conforms(document, created, "post", "/investment/scenarios", 201)
    scenario = view["scenario"]["id"]
    assert created["ETag"]
    assert [(r["projectKey"], r["aboveLine"]) for r in view["rows"]] == [
        ("AAA", True),
        ("BBB", False),
    ]
    assert view["rows"][1]["fitsByYear"] == {"2027": True, "2028": False}
    moved = conforms(
        document,
        send(pmo, "GET", f"/investment/scenarios/{scenario}?move=bbb"),
        "get",
        "/investment/scenarios/{scenario_id}",
    )
    assert moved["move"]["direction"] == "in" and moved["move"]["after"]["overBudgetYears"] == [
        "2028"
    ]
    stale = send(
        admin,
        "PATCH",
        f"/investment/scenarios/{scenario}",
        {"budgetTotal": 500},
        **{"If-Match": '"9"'},
    )
    assert stale.status_code == 412
    patched = conforms(
        document,
        send(
            pmo,
            "PATCH",
            f"/investment/scenarios/{scenario}",
            {"budgetByYear": {"2027": 100, "2028": 80}},
            **{"If-Match": '"1"'},
        ),
        "patch",
        "/investment/scenarios/{scenario_id}",
    )
    assert patched["scenario"]["revision"] == 2 and patched["cutAfter"] == 2
    copy = conforms(
        document,
        send(pmo, "POST", f"/investment/scenarios/{scenario}/copy", {"name": "Lean"}),
        "post",
        "/investment/scenarios/{scenario_id}/copy",
        201,
    )
    conforms(document, send(pmo, "GET", "/investment/scenarios"), "get", "/investment/scenarios")
    compared = conforms(
        document,
        send(pmo, "GET", f"/investment/compare?ids={scenario},{copy['scenario']['id']}"),
        "get",
        "/investment/compare",
    )
    assert len(compared["scenarios"]) == 2
    assert send(pmo, "GET", f"/investment/compare?ids={scenario}").status_code == 422
    chosen = conforms(
        document,
        send(pmo, "POST", f"/investment/scenarios/{scenario}/choose", {"minutesRef": MINUTES}),
        "post",
        "/investment/scenarios/{scenario_id}/choose",
        201,
    )
    assert [p["projectKey"] for p in chosen["proposals"]] == ["AAA", "BBB"]
    assert set(BusinessCase.objects.values_list("approval_status", flat=True)) == {"Draft"}
    marked = conforms(
        document,
        send(sponsor, "GET", "/investment/proposals/AAA/scores"),
        "get",
        "/investment/proposals/{key}/scores",
    )
    assert marked["prioritised"]["scenarioName"] == "Plan"
    assert marked["prioritised"]["decisionId"] == chosen["id"]
    log = conforms(
        document, send(pmo, "GET", "/investment/decisions"), "get", "/investment/decisions"
    )
    assert log["items"][0]["id"] == chosen["id"]
    path = f"/investment/decisions/{chosen['id']}"
    conforms(
        document, send(admin, "GET", path), "get", "/investment/decisions/{portfolio_decision_id}"
    )
    for method in ("PATCH", "DELETE"):
        refused = send(
            admin, method, path, {"rationale": "Rewritten"} if method == "PATCH" else None
        )
        assert refused.status_code == 409 and refused.json()["error"]["message"]
    assert send(admin, "DELETE", f"/investment/scenarios/{scenario}").status_code == 409
    assert PortfolioDecision.objects.count() == 1


@pytest.fixture
def scored(governed, clients):
    send(
        clients["site_admin"],
        "POST",
        "/investment/model/versions",
        {"why": "Model", "criteria": [criterion("strategy")]},
    )
    proposal(governed.project)
    answer = send(
        clients["pmo"],
        "POST",
        "/investment/proposals/ALPHA/scores",
        {"criterion": "strategy", "value": 4, "reason": "Secret reason"},
    )
    assert answer.status_code == 200, answer.content
    return governed


@pytest.mark.parametrize(
    ("role", "read", "write", "board"),
    [
        # Once a governance group is set, a site admin outside it views no project (the view
        # rule): the board's pages answer them, each project's scores are hidden.
        ("site_admin", 404, 404, 200),
        ("pmo", 200, 200, 200),
        ("lead", 200, 403, 403),
        ("sponsor", 200, 200, 403),
        ("viewer", 404, 404, 403),
        ("editor", 404, 404, 403),
        ("outsider", 404, 404, 403),
    ],
)
def test_who_sees_and_does_what(scored, clients, role, read, write, board):
    client = clients[role]
    answer = send(client, "GET", "/investment/proposals/ALPHA/scores")
    assert answer.status_code == read
    if read == 200:
        assert answer.json()["proposal"]["criteria"][0]["reason"] == "Secret reason"
    else:
        assert b"Secret reason" not in answer.content
    answer = send(
        client,
        "POST",
        "/investment/proposals/ALPHA/scores",
        {"criterion": "strategy", "value": 2, "reason": "Mine"},
    )
    assert answer.status_code == write, answer.content
    for path in ("/investment/proposals", "/investment/scenarios", "/investment/model"):
        answer = send(client, "GET", path)
        assert answer.status_code == board
        if board == 403:
            assert b"Secret reason" not in answer.content
            assert answer.json()["error"]["message"]
    answer = send(client, "POST", "/investment/scenarios", {"name": "Mine", "budgetTotal": 5})
    assert answer.status_code == (201 if board == 200 else 403)


def _chosen(governed, clients):
    """Plan, over AAA (a proposal the governance group views), chosen by the board."""
    send(
        clients["site_admin"],
        "POST",
        "/investment/model/versions",
        {"why": "Model", "criteria": [criterion("strategy")]},
    )
    project = make_project("AAA", governed, sponsor=governed.sponsor)
    proposal(project)
    phased(project, {"2027-03": 60})
    created = send(
        clients["pmo"], "POST", "/investment/scenarios", {"name": "Plan", "budgetTotal": 100}
    )
    scenario = created.json()["scenario"]["id"]
    chosen = send(
        clients["pmo"], "POST", f"/investment/scenarios/{scenario}/choose", {"minutesRef": MINUTES}
    )
    assert chosen.status_code == 201, chosen.content
    return scenario, chosen.json()


def test_a_chosen_scenario_refuses_a_change_and_a_second_choice(governed, clients):
    scenario, _ = _chosen(governed, clients)
    pmo = clients["pmo"]
    patched = send(pmo, "PATCH", f"/investment/scenarios/{scenario}", {"name": "Rewritten"})
    assert patched.status_code == 409
    assert "kept as it was chosen" in patched.json()["error"]["message"]
    again = send(pmo, "POST", f"/investment/scenarios/{scenario}/choose", {"minutesRef": MINUTES})
    assert again.status_code == 409
    assert "can no longer be changed or chosen again" in again.json()["error"]["message"]
    assert PortfolioDecision.objects.count() == 1
    assert send(pmo, "GET", f"/investment/scenarios/{scenario}").json()["scenario"]["name"] == (
        "Plan"
    )


def test_the_decision_log_names_only_the_projects_the_caller_views(document, governed, clients):
    _, chosen = _chosen(governed, clients)
    assert [p["projectKey"] for p in chosen["proposals"]] == ["AAA"]
    assert chosen["proposalsHidden"] == 0
    # Once a governance group is set, a site admin outside it views no project.
    admin = clients["site_admin"]
    log = conforms(
        document, send(admin, "GET", "/investment/decisions"), "get", "/investment/decisions"
    )
    assert log["items"][0]["proposals"] == [] and log["items"][0]["proposalsHidden"] == 1
    one = send(admin, "GET", f"/investment/decisions/{chosen['id']}")
    assert b"AAA" not in one.content and one.json()["proposalsHidden"] == 1
    full = send(clients["pmo"], "GET", "/investment/decisions").json()["items"][0]
    assert [p["projectKey"] for p in full["proposals"]] == ["AAA"]
    assert full["proposalsHidden"] == 0


def test_a_choice_with_the_proposals_it_expects(governed, clients):
    """`expectedKeys`: sent and different from what the choice would prioritise now, 409 in
    words and nothing recorded; the same, recorded."""
    send(
        clients["site_admin"],
        "POST",
        "/investment/model/versions",
        {"why": "Model", "criteria": [criterion("strategy")]},
    )
    project = make_project("AAA", governed, sponsor=governed.sponsor)
    proposal(project)
    pmo = clients["pmo"]
    created = send(pmo, "POST", "/investment/scenarios", {"name": "Plan", "budgetTotal": 100})
    path = f"/investment/scenarios/{created.json()['scenario']['id']}/choose"
    wrong = send(pmo, "POST", path, {"minutesRef": MINUTES, "expectedKeys": ["AAA", "ALPHA"]})
    assert wrong.status_code == 409
    assert "changed since it was confirmed" in wrong.json()["error"]["message"]
    assert not PortfolioDecision.objects.exists()
    bad = send(pmo, "POST", path, {"minutesRef": MINUTES, "expectedKeys": "AAA"})
    assert bad.status_code == 422 and not PortfolioDecision.objects.exists()
    right = send(pmo, "POST", path, {"minutesRef": MINUTES, "expectedKeys": ["AAA"]})
    assert right.status_code == 201, right.content
    assert [p["projectKey"] for p in right.json()["proposals"]] == ["AAA"]
