"""A refusal keeps the house order through the agent's doors as through the JSON API: 401,
404 (a project the caller cannot view), 403 (may not write), 409 (frozen registers), 412
(a stale revision), and only then 422 for the body. Every write action with a body the
schema refuses: a viewer gets 403, an unknown project 404, the one who may write it (the
lead; for the exception's decision, the sponsor) 422; through the agent API and MCP."""

import json

import pytest
from django.test import Client
from mcp import Client as McpClient

from agent import catalogue
from agent.catalogue import CATALOGUE
from agent.mcp_server import build_server
from tests.agent.conftest import EVERYONE, use_group
from tests.agent.test_action_matrix import GOVERNORS, at_gate, scored
from tests.conftest import run_async


def invalid(name: str, world) -> dict:
    """Arguments of each write action that its schema refuses (422 for the lead)."""
    key = {"projectKey": "ALPHA"}
    if name == "decide_gate_review":  # a review waits for the sponsor
        at_gate(world, requested=True)
        return {**key, "outcome": "Maybe"}
    if name == "score_proposal":  # a proposal and a scoring model
        scored(world)
        return {**key, "criterion": "strategy", "value": 9, "reason": "Too many points."}
    return {
        "request_gate_review": {**key, "lessons": 5},
        "add_risk": {**key, "title": "   ", "likelihood": 3, "impact": 4},
        "update_risk": {**key, "riskId": str(world.risk.pk), "likelihood": 9},
        "update_work_package": {**key, "workPackageId": str(world.wp.pk), "progress": 15},
        "add_decision": {**key, "decision": ""},
        "record_decision_made": {
            **key,
            "decisionId": str(world.decision.pk),
            "madeOn": "last week",
        },
        "add_decision_note": {**key, "decisionId": str(world.decision.pk), "text": " "},
        "raise_change_request": {**key, "summary": "", "dimensions": ["Scope"]},
        "apply_change_to_baseline": {
            **key,
            "changeId": str(world.awaiting_change().pk),
            "expectedRevision": "one",
        },
        "update_project_status": {**key, "overallRag": "Purple"},
        "draft_status_report": {**key, "title": ""},
        "write_exception_report": {**key, "cause": "x", "options": []},
        "decide_project_exception": {**key, "decision": "Maybe"},
        "import_project_plan": {**key, "xml": ""},
    }[name]


# Who may write each action (its 422): the Project Lead unless named here.
WRITER = {"decide_project_exception": "sponsor", "decide_gate_review": "sponsor"}


WRITES = sorted(name for name, a in CATALOGUE.items() if a.is_write)


def _post(user, name: str, arguments: dict):
    client = Client()
    client.force_login(user)
    return client.post(
        f"/api/v1/agent/actions/{name}",
        data=json.dumps({"arguments": arguments}),
        content_type="application/json",
    )


@pytest.mark.parametrize("name", WRITES)
def test_the_gates_come_before_the_body_through_the_api(name, world):
    use_group(EVERYONE)
    arguments = invalid(name, world)
    writer = world.user(WRITER.get(name, "lead"))
    allowed = _post(writer, name, arguments)
    assert allowed.status_code == 422, allowed.content
    # A governor's write (scoring): the viewer, in the governance group, governs too.
    viewer = _post(world.viewer, name, arguments)
    assert viewer.status_code == (422 if name in GOVERNORS else 403), viewer.content
    if name not in GOVERNORS:
        assert viewer.json()["error"]["code"] == "forbidden"
    unknown = _post(writer, name, {**arguments, "projectKey": "NOSUCH"})
    assert unknown.status_code == 404, unknown.content
    hidden = _post(world.outsider, name, arguments)
    assert hidden.status_code == 404, hidden.content


def test_a_frozen_register_and_a_stale_revision_come_before_the_body(world):
    use_group(EVERYONE)
    arguments = {"projectKey": "ALPHA", "riskId": str(world.risk.pk), "likelihood": 9}
    stale = _post(world.editor, "update_risk", {**arguments, "expectedRevision": 99})
    assert stale.status_code == 412, stale.content
    missing = _post(world.editor, "update_risk", {**arguments, "riskId": "not-an-id"})
    assert missing.status_code == 404, missing.content
    world.project.approval_status = "Archived"
    world.project.save(update_fields=["approval_status"])
    frozen = _post(world.editor, "update_risk", arguments)
    assert frozen.status_code == 409, frozen.content
    note = _post(world.editor, "add_decision_note", invalid("add_decision_note", world))
    assert note.status_code == 422, note.content  # notes are taken on frozen registers


def _mcp_call(user, name: str, arguments: dict):
    server = build_server(lambda: catalogue.request_for(user))

    async def go():
        async with McpClient(server) as client:
            return await client.call_tool(name, arguments)

    return run_async(go)


@pytest.mark.django_db(transaction=True)
def test_the_gates_come_before_the_body_through_mcp(world):
    use_group(EVERYONE)
    arguments = {"projectKey": "ALPHA", "title": " ", "likelihood": 3, "impact": 4}
    viewer = _mcp_call(world.viewer, "add_risk", arguments)
    assert viewer.is_error
    assert viewer.structured_content["error"]["code"] == "forbidden"
    unknown = _mcp_call(world.lead, "add_risk", {**arguments, "projectKey": "NOSUCH"})
    assert unknown.is_error
    assert unknown.structured_content["error"]["code"] == "not_found"
    lead = _mcp_call(world.lead, "add_risk", arguments)
    assert lead.is_error
    assert lead.structured_content["error"]["code"] == "validation"


HOSTILE = {
    "a NUL in a property name": {"\u0000": 1},
    "a control character in a value": {"colour": "red\u0007"},
    "a noncharacter in a nested value": {"colour": [{"shade": "\ufffe"}]},
}


@pytest.mark.parametrize("name", WRITES)
@pytest.mark.parametrize("hostile", sorted(HOSTILE))
def test_hostile_text_in_the_arguments_comes_after_the_gates(name, hostile, world):
    """Text no field takes, anywhere in the arguments (the API's body walk would refuse it
    before the action's gate): 403 to a viewer, 404 to an outsider, 422 naming it to the one
    who may write, through the agent API and MCP."""
    use_group(EVERYONE)
    arguments = {**invalid(name, world), **HOSTILE[hostile]}
    writer = world.user(WRITER.get(name, "lead"))
    allowed = _post(writer, name, arguments)
    assert allowed.status_code == 422, allowed.content
    assert allowed.json()["error"]["fields"], allowed.content
    viewer = _post(world.viewer, name, arguments)
    assert viewer.status_code == (422 if name in GOVERNORS else 403), viewer.content
    hidden = _post(world.outsider, name, arguments)
    assert hidden.status_code == 404, hidden.content


@pytest.mark.django_db(transaction=True)
def test_hostile_and_deep_arguments_come_after_the_gates_through_mcp(world):
    use_group(EVERYONE)
    deep: object = "x"
    for _ in range(40):
        deep = [deep]
    base = {"projectKey": "ALPHA", "title": "A risk", "likelihood": 3, "impact": 4}
    for extra in [*HOSTILE.values(), {"colour": deep}]:
        arguments = {**base, **extra}
        viewer = _mcp_call(world.viewer, "add_risk", arguments)
        assert viewer.structured_content["error"]["code"] == "forbidden", extra
        hidden = _mcp_call(world.outsider, "add_risk", arguments)
        assert hidden.structured_content["error"]["code"] == "not_found", extra
        lead = _mcp_call(world.lead, "add_risk", arguments)
        assert lead.structured_content["error"]["code"] == "validation", extra
