"""Every action of the catalogue x every role x the governance group unset, set to a group of
the PMO analyst alone, and set to a group holding everyone: both gates, through the API door.

Expected: no credentials 401; outside the portfolio/agent gate 403; past it but unable to view
ALPHA 404 for every action that names it; reads 200 for anyone who can view; writes 200 for
the Project Lead and nominated editors only (the lead's own acts: the lead; the exception's
decision: the sponsor), 403 for the other viewers."""

import json

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from agent.catalogue import CATALOGUE
from gates.models import GateReview, Stage
from tests.agent.conftest import EVERYONE, PLAN_XML, build_world, use_group
from tests.conftest import PMO_GROUP, ROLES, build_cast, fresh
from tests.gates_support import case_in

# Actions that name no project: they read across whatever the caller can view.
ACROSS = {
    "find_projects",
    "portfolio_summary",
    "waiting_for_me",
    "search_lessons",
    "ranked_proposals",
    "investment_scenarios",
}
# Writes for the PMO (the governance group, who alone pass the assistant's gate once it is
# set; site admins before) and the sponsor: everyone past the gate who views ALPHA.
GOVERNORS = {"score_proposal"}
# Writes reserved to the Project Lead.
LEAD_ONLY = {"apply_change_to_baseline", "write_exception_report"}
# Writes reserved to the sponsor.
SPONSOR_ONLY = {"decide_project_exception", "decide_gate_review"}


def at_gate(world, requested: bool) -> None:
    """ALPHA approved and running its first stage; with its gate review requested (by
    someone else than the sponsor) when `requested`."""
    case_in(world, "Approved")
    stage = Stage.objects.filter(project=world.project, state="Current").first()
    if stage is None:
        stage = Stage.objects.create(
            project=world.project, position=1, name="Design", state="Current"
        )
        Stage.objects.create(project=world.project, position=2, name="Build")
    if requested and not GateReview.objects.filter(stage=stage, state="Requested").exists():
        GateReview.objects.create(
            stage=stage, requested_at=timezone.now(), requested_by_account_id="someone"
        )


def scored(world) -> None:
    """ALPHA a proposal (Draft) and a scoring model with a criterion a person scores."""
    from investment.models import Criterion, ModelVersion

    case_in(world, "Draft")
    if not ModelVersion.objects.exists():
        version = ModelVersion.objects.create(number=1, why="Matrix")
        Criterion.objects.create(
            version=version, key="strategy", name="Strategy", points=list("12345"), weight=1
        )


def arguments(name: str, world) -> dict:
    key = {"projectKey": "ALPHA"}
    if name == "score_proposal":
        scored(world)
        return {**key, "criterion": "strategy", "value": 4, "reason": "Fits the strategy."}
    if name == "decide_project_exception":  # a decision needs the lead's report first
        world.reported_exception()
        return {**key, "decision": "AcceptPlan", "comment": "Go on."}
    if name in ("request_gate_review", "decide_gate_review"):  # a stage under way
        at_gate(world, requested=name == "decide_gate_review")
        if name == "decide_gate_review":
            return {**key, "outcome": "Recycle", "comment": "Re-plan the build."}
        return {**key, "lessons": "Plan the tests earlier."}
    return {
        "find_projects": {},
        "portfolio_summary": {"since": "2026-01-01"},
        "project_overview": key,
        "list_register": {**key, "register": "risks", "minScore": 10},
        "business_case": key,
        "project_status": key,
        "status_reports": key,
        "waiting_for_me": {},
        "search_lessons": {"q": "supplier"},
        "audit_trail": key,
        "add_risk": {**key, "title": "Supplier insolvency", "likelihood": 3, "impact": 4},
        "update_risk": {**key, "riskId": str(world.risk.pk), "likelihood": 5},
        "update_work_package": {
            **key,
            "workPackageId": str(world.wp.pk),
            "forecastEndDate": "2026-07-31",
        },
        "add_decision": {**key, "decision": "Go with vendor B"},
        "record_decision_made": {**key, "decisionId": str(world.decision.pk)},
        "add_decision_note": {**key, "decisionId": str(world.decision.pk), "text": "Checked."},
        "raise_change_request": {**key, "summary": "Add SSO", "dimensions": ["Scope"]},
        "apply_change_to_baseline": {**key, "changeId": str(world.awaiting_change().pk)},
        "update_project_status": {**key, "keyMessages": "Build on track."},
        "draft_status_report": key,
        "project_exception": key,
        "stage_plan": key,
        "write_exception_report": {
            **key,
            "cause": "Supplier late.",
            "consequences": "A month later.",
            "options": ["Accept the delay"],
            "recommendation": "Accept the delay.",
        },
        "import_project_plan": {**key, "xml": PLAN_XML},
        "ranked_proposals": {},
        "proposal_scores": key,
        "investment_scenarios": {},
    }[name]


def expected(name: str, role: str, group: str | None) -> int:
    if role == "anonymous":
        return 401
    gate = {None: {"site_admin"}, PMO_GROUP: {"pmo"}, EVERYONE: set(ROLES) - {"anonymous"}}
    if role not in gate[group]:
        return 403
    if role == "outsider" and name not in ACROSS:
        return 404
    if name in LEAD_ONLY:
        return 200 if role == "lead" else 403
    if name in SPONSOR_ONLY:
        return 200 if role == "sponsor" else 403
    if name in GOVERNORS:
        return 200
    if CATALOGUE[name].is_write:
        return 200 if role in ("lead", "editor") else 403
    return 200


@pytest.fixture(scope="module")
def built_world(module_db):
    """The agent's world (tests/agent/conftest.py), built once for the matrix's cases."""
    return build_world(build_cast())


@pytest.fixture
def world(db, built_world):
    return fresh(built_world)


def test_every_action_is_in_the_matrix(world):
    for name in CATALOGUE:
        assert arguments(name, world) is not None


@pytest.mark.parametrize("group", [None, PMO_GROUP, EVERYONE])
@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_action_matrix(name, group, world):
    failures = []
    for role in ROLES:
        with transaction.atomic():
            if group:
                use_group(group)
            client = Client()
            user = world.user(role)
            if user is not None:
                client.force_login(user)
            response = client.post(
                f"/api/v1/agent/actions/{name}",
                data=json.dumps({"arguments": arguments(name, world)}),
                content_type="application/json",
            )
            want = expected(name, role, group)
            if response.status_code != want:
                failures.append(
                    f"{role}: expected {want}, got {response.status_code} "
                    f"{response.content[:200]!r}"
                )
            elif want >= 400:
                assert set(response.json()) == {"error"}, response.content
            if role == "outsider" and want == 200:
                # The per-project gate: ALPHA is never revealed, not even counted.
                assert "ALPHA" not in response.content.decode()
                assert "Alpha programme" not in response.content.decode()
            transaction.set_rollback(True)
    assert not failures, "\n".join(failures)
