"""The API door onto the action catalogue: listing, running, refusals with the one error body,
audit with the channel, paging, query counts, OpenAPI."""

import json

import pytest

from governance.cleaning import CONTROL_MESSAGE
from governance.errors import ValidationFailed
from governance.models import AuditEntry
from registers.models import Risk
from tests.agent.conftest import EVERYONE, use_group
from tests.conftest import PMO_GROUP
from tests.factories import ProjectFactory, RiskFactory

pytestmark = pytest.mark.django_db


def run(client, name, arguments, **headers):
    return client.post(
        f"/api/v1/agent/actions/{name}",
        data=json.dumps({"arguments": arguments}),
        content_type="application/json",
        **headers,
    )


def test_catalogue_lists_only_what_the_caller_may_use(world, client, bearer):
    use_group(EVERYONE)
    lead = client.get("/api/v1/agent/actions", **bearer(world.lead)).json()
    names = {a["name"]: a for a in lead}
    assert {"add_risk", "find_projects", "draft_status_report"} <= set(names)
    add_risk = names["add_risk"]
    assert add_risk["kind"] == "write"
    assert add_risk["inputSchema"]["required"] == ["projectKey", "title"]
    assert add_risk["description"]
    viewer = client.get("/api/v1/agent/actions", **bearer(world.viewer)).json()
    # The viewer edits nothing; in the governance group they score proposals (the PMO's).
    assert {a["name"] for a in viewer if a["kind"] == "write"} == {"score_proposal"}
    assert "list_register" in {a["name"] for a in viewer}


def test_the_agent_gate_answers_403_with_its_reason(world, client, bearer):
    response = client.get("/api/v1/agent/actions", **bearer(world.lead))
    assert response.status_code == 403
    assert response.json()["error"] == {
        "code": "forbidden",
        "message": "The assistant is open to site administrators until a governance group is set.",
    }
    use_group(PMO_GROUP)
    response = run(client, "find_projects", {}, **bearer(world.lead))
    assert response.status_code == 403
    assert "'pmo'" in response.json()["error"]["message"]
    assert client.get("/api/v1/agent/actions").status_code == 401


def test_a_write_runs_as_the_caller_and_is_audited_with_the_channel(world, client, bearer):
    use_group(EVERYONE)
    response = run(
        client,
        "add_risk",
        {"projectKey": "alpha", "title": "Supplier insolvency", "likelihood": 3, "impact": 4},
        **bearer(world.lead),
        HTTP_X_CLIENT_NAME="planning-script",
    )
    assert response.status_code == 200, response.content
    result = response.json()["result"]
    assert result["done"] == "risk.created"
    assert result["score"] == 12
    assert result["link"].endswith(f"/projects/ALPHA/registers/risks/{result['id']}/")
    risk = Risk.objects.get(pk=result["id"])
    assert risk.updated_by_account_id == world.lead.account_id
    entry = AuditEntry.objects.get(kind="risk.created", target_id=result["id"])
    assert (entry.channel, entry.client) == ("agent", "api: planning-script")
    assert entry.actor_account_id == world.lead.account_id
    # The API's audit trail shows the channel too.
    trail = run(client, "audit_trail", {"projectKey": "ALPHA"}, **bearer(world.lead)).json()
    assert trail["result"]["items"][0]["channel"] == "agent"


def test_pages_writes_carry_no_channel(world, client_for):
    client = client_for(world.lead)
    response = client.post(
        "/api/v1/projects/ALPHA/risks",
        data=json.dumps({"title": "Direct"}),
        content_type="application/json",
    )
    assert response.status_code == 201
    assert AuditEntry.objects.get(kind="risk.created").channel == ""


@pytest.mark.parametrize(
    ("name", "arguments", "status", "code"),
    [
        ("add_risk", {"projectKey": "ALPHA", "title": ""}, 422, "validation"),
        ("add_risk", {"projectKey": "ALPHA", "title": "x", "likelihood": 9}, 422, "validation"),
        ("add_risk", {"projectKey": "ALPHA", "title": "x", "bogus": 1}, 422, "validation"),
        ("add_risk", {"title": "x"}, 422, "validation"),
        ("update_risk", {"projectKey": "ALPHA", "riskId": "nope"}, 404, "not_found"),
        ("no_such_action", {}, 404, "not_found"),
        ("find_projects", {"cursor": "x"}, 422, "validation"),
        ("find_projects", {"rag": "Purple"}, 422, "validation"),
    ],
)
def test_refusals_answer_with_the_api_error_body(
    world, client, bearer, name, arguments, status, code
):
    use_group(EVERYONE)
    headers = bearer(world.lead)
    before = AuditEntry.objects.count()
    response = run(client, name, arguments, **headers)
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert AuditEntry.objects.count() == before


def test_stale_and_frozen_writes_are_refused_by_the_services(world, client, bearer):
    use_group(EVERYONE)
    stale = run(
        client,
        "update_risk",
        {"projectKey": "ALPHA", "riskId": str(world.risk.pk), "impact": 5, "expectedRevision": 99},
        **bearer(world.editor),
    )
    assert stale.status_code == 412
    assert stale.json()["error"]["code"] == "stale"
    world.project.approval_status = "Closed"
    world.project.save(update_fields=["approval_status"])
    frozen = run(client, "add_risk", {"projectKey": "ALPHA", "title": "x"}, **bearer(world.lead))
    assert frozen.status_code == 409
    assert frozen.json()["error"]["code"] == "frozen"
    # Notes on decisions are still allowed on frozen registers.
    note = run(
        client,
        "add_decision_note",
        {"projectKey": "ALPHA", "decisionId": str(world.decision.pk), "text": "Late note"},
        **bearer(world.lead),
    )
    assert note.status_code == 200


def test_bodies_that_are_not_objects_answer_400(world, client, bearer):
    use_group(EVERYONE)
    headers = bearer(world.lead)
    response = client.post(
        "/api/v1/agent/actions/find_projects",
        data="[1]",
        content_type="application/json",
        **headers,
    )
    assert response.status_code == 400
    response = client.post(
        "/api/v1/agent/actions/find_projects",
        data=json.dumps({"arguments": [1]}),
        content_type="application/json",
        **headers,
    )
    assert response.status_code == 400
    response = client.post(
        "/api/v1/agent/actions/find_projects",
        data=json.dumps({"args": {}}),
        content_type="application/json",
        **headers,
    )
    assert response.status_code == 422


def test_lists_page_with_limit_and_cursor(world, client, bearer):
    use_group(EVERYONE)
    for n in range(5):
        RiskFactory(project=world.project, title=f"Risk {n}", impact=2, likelihood=2)
    headers = bearer(world.viewer)
    seen = []
    cursor = None
    while True:
        arguments = {"register": "risks", "projectKey": "ALPHA", "limit": 2}
        if cursor:
            arguments["cursor"] = cursor
        result = run(client, "list_register", arguments, **headers).json()["result"]
        assert result["total"] == 6
        assert len(result["items"]) <= 2
        seen += [i["id"] for i in result["items"]]
        cursor = result["nextCursor"]
        if cursor is None:
            break
    assert len(set(seen)) == 6


def test_registers_across_projects_filter_and_hide(world, client, bearer):
    use_group(EVERYONE)
    beta = ProjectFactory(key="BETA", name="Beta", lead=world.lead, browsers=[world.viewer])
    RiskFactory(project=beta, title="Beta big", impact=5, likelihood=4)
    RiskFactory(project=world.project, title="Alpha small", impact=1, likelihood=1)
    result = run(
        client, "list_register", {"register": "risks", "minScore": 15}, **bearer(world.viewer)
    ).json()["result"]
    assert [(i["projectKey"], i["title"], i["score"]) for i in result["items"]] == [
        ("BETA", "Beta big", 20),
        ("ALPHA", "Vendor lock-in", 16),
    ]
    # The editor cannot browse BETA: it is neither listed nor counted.
    result = run(
        client, "list_register", {"register": "risks", "minScore": 15}, **bearer(world.editor)
    ).json()["result"]
    assert [i["projectKey"] for i in result["items"]] == ["ALPHA"]
    assert result["total"] == 1


def test_reads_across_projects_take_a_constant_number_of_queries(
    world, client, bearer, django_assert_max_num_queries
):
    use_group(EVERYONE)
    headers = bearer(world.viewer)
    for n in range(3):
        project = ProjectFactory(key=f"P{n}", lead=world.lead, browsers=[world.viewer])
        for m in range(4):
            RiskFactory(project=project, title=f"R{m}")
    for register in ("risks", "work-packages", "decisions", "changes"):
        with django_assert_max_num_queries(12):
            response = run(client, "list_register", {"register": register}, **headers)
        assert response.status_code == 200
    with django_assert_max_num_queries(40):
        assert run(client, "find_projects", {}, **headers).status_code == 200


def test_the_catalogue_is_in_the_openapi_document(client):
    """One path per action, its body the action's own arguments schema (so that a client, or
    schemathesis, knows what each accepts); the generic route is not listed."""
    from agent.catalogue import CATALOGUE

    paths = client.get("/api/v1/openapi.json").json()["paths"]
    assert "get" in paths["/api/v1/agent/actions"]
    assert "/api/v1/agent/actions/{name}" not in paths
    for name, action in CATALOGUE.items():
        operation = paths[f"/api/v1/agent/actions/{name}"]["post"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert body["additionalProperties"] is False
        arguments = body["properties"]["arguments"]
        assert arguments["properties"].keys() == action.schema["properties"].keys()
        assert arguments["additionalProperties"] is False
        assert operation["requestBody"]["required"] == bool(action.schema.get("required"))
        assert {"403", "404", "422"} <= set(operation["responses"])
        assert ("412" in operation["responses"]) == action.is_write


def test_the_audit_page_marks_writes_made_through_the_assistant(world, client, bearer):
    use_group(EVERYONE)
    run(client, "add_risk", {"projectKey": "ALPHA", "title": "Via agent"}, **bearer(world.lead))
    client.force_login(world.lead)
    page = client.get("/projects/ALPHA/audit/").content.decode()
    assert "via the assistant" in page


def test_arguments_are_taken_as_the_document_says(world, client, bearer):
    """Found by schemathesis over the per-action paths: a whole number written 81.0 is a
    JSON Schema integer (it answered 500); a date that is not one, an empty project key and a
    cursor that is not a number are refused as the document says (422); null arguments mean
    none."""
    use_group(EVERYONE)
    headers = bearer(world.lead)
    arguments = {"projectKey": "ALPHA", "register": "risks", "limit": 81.0}
    response = run(client, "list_register", arguments, **headers)
    assert response.status_code == 200, response.content
    response = run(client, "find_projects", {"limit": 2.0}, **headers)
    assert response.status_code == 200
    assert run(client, "find_projects", None, **headers).status_code == 200
    assert run(client, "find_projects", False, **headers).status_code == 400
    for name, arguments, field in [
        ("portfolio_summary", {"since": ""}, "since"),
        ("portfolio_summary", {"since": "2026-02-30"}, "since"),
        ("project_overview", {"projectKey": ""}, "projectKey"),
        ("find_projects", {"cursor": "x"}, "cursor"),
        ("find_projects", {"limit": 2.5}, "limit"),
    ]:
        response = run(client, name, arguments, **headers)
        assert response.status_code == 422, (name, arguments, response.content)
        assert field in response.json()["error"]["fields"], response.json()


@pytest.mark.parametrize(
    ("value", "fields"),
    [
        ("", {"decision": ["This field is required."]}),
        ("  \u3000", {"decision": ["This field is required."]}),
        # The API's body cleaner refuses it first, naming where it is in the body.
        ("Go\u0000", {"arguments.decision": [CONTROL_MESSAGE]}),
    ],
)
def test_required_text_is_refused_in_the_services_words(world, client, bearer, value, fields):
    use_group(EVERYONE)
    response = run(
        client, "add_decision", {"projectKey": "ALPHA", "decision": value}, **bearer(world.lead)
    )
    assert response.status_code == 422
    assert response.json()["error"]["fields"] == fields


def test_required_text_with_control_characters_is_refused_in_the_cleaners_words(world):
    from agent import catalogue

    with pytest.raises(ValidationFailed) as refused:
        catalogue.validate(catalogue.get("add_risk"), {"projectKey": "ALPHA", "title": "a\x07"})
    assert refused.value.fields == {"title": [CONTROL_MESSAGE]}
