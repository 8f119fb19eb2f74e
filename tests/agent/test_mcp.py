"""The catalogue as MCP tools, through the official SDK's client (2.x): over streamable HTTP
against the running app (bearer = the API token), in the current protocol (no handshake) and
in 2025-11-25's (initialize first), and the stdio server's tools in process."""

import json

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from agent import catalogue
from agent.mcp_server import build_server
from governance.models import AuditEntry
from governance.services import token_create
from registers.models import Risk
from tests.agent.conftest import EVERYONE, use_group
from tests.conftest import PMO_GROUP, run_async


def _session_over_http(url: str, token: str | None, work, *, mode: str = "auto"):
    """`work(client)` with the SDK's Client over HTTP: "auto" speaks the current protocol
    (discover, then stateless requests); "legacy" the 2025-11-25 initialize handshake."""

    async def go():
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with create_mcp_http_client(headers=headers) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode) as client:
                return await work(client)

    return run_async(go)


@pytest.mark.django_db(transaction=True)
def test_the_official_client_lists_and_calls_tools_over_http(world, live_server):
    use_group(EVERYONE)
    _, raw = token_create(user=world.lead, name="mcp")
    url = f"{live_server.url}/mcp"

    async def work(session):
        tools = (await session.list_tools()).tools
        read = await session.call_tool(
            "list_register", {"register": "risks", "projectKey": "ALPHA", "minScore": 10}
        )
        write = await session.call_tool(
            "add_risk",
            {"projectKey": "ALPHA", "title": "Supplier insolvency", "likelihood": 3, "impact": 4},
        )
        refused = await session.call_tool("add_risk", {"projectKey": "ALPHA", "title": ""})
        hidden = await session.call_tool("project_overview", {"projectKey": "NOPE"})
        return tools, read, write, refused, hidden

    tools, read, write, refused, hidden = _session_over_http(url, raw, work)
    by_name = {t.name: t for t in tools}
    assert {"find_projects", "add_risk", "draft_status_report"} <= set(by_name)
    assert by_name["add_risk"].input_schema["required"] == ["projectKey", "title"]
    assert by_name["list_register"].annotations.read_only_hint is True
    assert not read.is_error
    items = read.structured_content["items"]
    assert [i["title"] for i in items] == ["Vendor lock-in"]
    assert items[0]["link"].startswith(live_server.url)
    assert not write.is_error, write.content
    risk = Risk.objects.get(title="Supplier insolvency")
    entry = AuditEntry.objects.get(kind="risk.created", target_id=str(risk.pk))
    assert entry.channel == "agent" and entry.client.startswith("mcp")
    assert entry.actor_account_id == world.lead.account_id
    assert refused.is_error
    assert refused.structured_content["error"]["code"] == "validation"
    assert hidden.is_error
    assert hidden.structured_content["error"]["code"] == "not_found"


@pytest.mark.django_db(transaction=True)
def test_a_client_of_2025_11_25_still_connects(world, live_server):
    use_group(EVERYONE)
    _, raw = token_create(user=world.lead, name="mcp")

    async def work(client):
        tools = (await client.list_tools()).tools
        read = await client.call_tool("find_projects", {})
        return client.protocol_version, tools, read

    version, tools, read = _session_over_http(f"{live_server.url}/mcp", raw, work, mode="legacy")
    assert version == "2025-11-25"
    assert tools and not read.is_error


def _mcp_error(exc: BaseException) -> MCPError | None:
    """The MCPError a client raised (the SDK may wrap it in an exception group)."""
    if isinstance(exc, MCPError):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _mcp_error(inner)
        if found is not None:
            return found
    return None


def _refusal(url, token) -> MCPError:
    with pytest.raises(BaseException) as refused:
        _session_over_http(url, token, lambda c: c.list_tools())
    error = _mcp_error(refused.value)
    assert error is not None, refused.value
    return error


@pytest.mark.django_db(transaction=True)
def test_refusals_reach_the_sdk_client_in_the_apps_words(world, live_server, client):
    """A missing or bad token and a person outside the gate: the HTTP status, and a JSON-RPC
    error whose message is the app's sentence (the SDK shows it; it used to read "Server
    returned an error response")."""
    use_group(PMO_GROUP)
    _, raw = token_create(user=world.lead, name="mcp")
    url = f"{live_server.url}/mcp"
    outsider = _refusal(url, raw)
    assert "members of the governance group" in outsider.message
    assert outsider.data["code"] == "forbidden" and outsider.data["status"] == 403
    bad = _refusal(url, "gov_not-a-token")
    assert bad.message.startswith("This token is not valid")
    assert bad.data["code"] == "unauthenticated"
    missing = _refusal(url, None)
    assert "OAuth" in missing.message

    response = client.post(
        "/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        HTTP_ACCEPT="application/json, text/event-stream",
    )
    assert response.status_code == 403
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] == 7
    assert body["error"]["data"]["code"] == "forbidden"
    anonymous = client.post("/mcp", data="{}", content_type="application/json")
    assert anonymous.status_code == 401
    challenge = anonymous["WWW-Authenticate"]
    assert challenge.startswith("Bearer")
    assert 'resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp"' in (
        challenge
    )


def _in_memory(user, work):
    server = build_server(lambda: catalogue.request_for(user))

    async def go():
        async with Client(server) as client:
            return await work(client)

    return run_async(go)


@pytest.mark.django_db(transaction=True)
def test_the_stdio_server_runs_tools_as_its_user_under_the_gates(world):
    use_group(EVERYONE)

    async def work(client):
        tools = (await client.list_tools()).tools
        result = await client.call_tool(
            "add_decision_note",
            {"projectKey": "ALPHA", "decisionId": str(world.decision.pk), "text": "From MCP"},
        )
        return tools, result

    tools, result = _in_memory(world.viewer, work)
    # A viewer: reads only, but for scoring proposals (in the governance group, the PMO's).
    writes = {t.name for t in tools if not t.annotations.read_only_hint}
    assert tools and writes == {"score_proposal"}
    assert result.is_error
    assert result.structured_content["error"]["code"] in ("forbidden", "not_found")
    tools, result = _in_memory(world.editor, work)
    assert not result.is_error
    entry = AuditEntry.objects.get(kind="decision.note_added")
    assert entry.channel == "agent" and entry.client.startswith("mcp")
    use_group(PMO_GROUP)
    with pytest.raises(BaseException) as refused:  # the reason, not an empty list
        _in_memory(world.editor, work)
    assert "governance group" in _mcp_error(refused.value).message


def test_tool_annotations_come_from_the_catalogue():
    from agent.mcp_server import tool_for

    tools = {name: tool_for(a) for name, a in catalogue.CATALOGUE.items()}
    read = tools["list_register"].annotations
    assert (read.read_only_hint, read.destructive_hint, read.idempotent_hint) == (
        True,
        False,
        True,
    )
    add = tools["add_risk"].annotations
    assert (add.read_only_hint, add.destructive_hint, add.idempotent_hint) == (
        False,
        False,
        False,
    )
    assert tools["update_risk"].annotations.idempotent_hint is True
    assert tools["update_risk"].annotations.destructive_hint is False
    for irreversible in (
        "record_decision_made",
        "apply_change_to_baseline",
        "decide_project_exception",
    ):
        assert tools[irreversible].annotations.destructive_hint is True
    assert all(
        t.annotations.title == t.title and t.annotations.open_world_hint is False
        for t in tools.values()
    )
