"""The catalogue as MCP tools, through the official SDK's client: over streamable HTTP against
the running app (bearer = the API token), and the stdio server's tools in memory."""

import json

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.memory import create_connected_server_and_client_session

from agent import catalogue
from agent.mcp_server import build_server
from governance.models import AuditEntry
from governance.services import token_create
from registers.models import Risk
from tests.agent.conftest import EVERYONE, use_group
from tests.conftest import PMO_GROUP, run_async


def _session_over_http(url: str, token: str | None, work):
    async def go():
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)

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
    assert by_name["add_risk"].inputSchema["required"] == ["projectKey", "title"]
    assert by_name["list_register"].annotations.readOnlyHint is True
    assert not read.isError
    items = read.structuredContent["items"]
    assert [i["title"] for i in items] == ["Vendor lock-in"]
    assert items[0]["link"].startswith(live_server.url)
    assert not write.isError, write.content
    risk = Risk.objects.get(title="Supplier insolvency")
    entry = AuditEntry.objects.get(kind="risk.created", target_id=str(risk.pk))
    assert entry.channel == "agent" and entry.client.startswith("mcp")
    assert entry.actor_account_id == world.lead.account_id
    assert refused.isError
    assert refused.structuredContent["error"]["code"] == "validation"
    assert hidden.isError
    assert hidden.structuredContent["error"]["code"] == "not_found"


@pytest.mark.django_db(transaction=True)
def test_a_token_outside_the_group_gets_nothing(world, live_server, client):
    use_group(PMO_GROUP)
    _, raw = token_create(user=world.lead, name="mcp")
    response = client.post(
        "/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
        HTTP_ACCEPT="application/json, text/event-stream",
    )
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"
    with pytest.raises(Exception):  # noqa: B017 the client cannot even initialise
        _session_over_http(f"{live_server.url}/mcp", raw, lambda s: s.list_tools())
    anonymous = client.post("/mcp", data="{}", content_type="application/json")
    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")


def _in_memory(user, work):
    server = build_server(lambda: catalogue.request_for(user))

    async def go():
        async with create_connected_server_and_client_session(server) as session:
            return await work(session)

    return run_async(go)


@pytest.mark.django_db(transaction=True)
def test_the_stdio_server_runs_tools_as_its_user_under_the_gates(world):
    use_group(EVERYONE)

    async def work(session):
        tools = (await session.list_tools()).tools
        result = await session.call_tool(
            "add_decision_note",
            {"projectKey": "ALPHA", "decisionId": str(world.decision.pk), "text": "From MCP"},
        )
        return tools, result

    tools, result = _in_memory(world.viewer, work)
    assert tools and all(t.annotations.readOnlyHint for t in tools)  # a viewer: reads only
    assert result.isError
    assert result.structuredContent["error"]["code"] in ("forbidden", "not_found")
    tools, result = _in_memory(world.editor, work)
    assert not result.isError
    entry = AuditEntry.objects.get(kind="decision.note_added")
    assert entry.channel == "agent" and entry.client.startswith("mcp")
    use_group(PMO_GROUP)
    tools, result = _in_memory(world.editor, work)
    assert tools == []
    assert result.structuredContent["error"]["code"] == "forbidden"
