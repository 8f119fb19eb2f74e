"""A personal API token acts for its owner towards Jira, as the person's pages do: "as the
user" calls (site administration of oneself, the issue picker) use the owner's own grant."""

import json

import pytest
from django.test import Client

from governance.services import token_create
from tests.atlassian.conftest import give_grant, user_json
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def admin_only_with_own_token(request, query, body):
    """Jira says ADMINISTER to the person's own token only; their groups make nobody an
    admin (the way a Jira administrator outside ATLASSIAN_ADMIN_GROUPS looks)."""
    mine = request.headers.get("Authorization") == "Bearer tok-admin"
    wanted = query["permissions"][0]
    return 200, {"permissions": {wanted: {"key": wanted, "havePermission": mine}}}


@pytest.mark.parametrize("through", ["session", "token"])
def test_site_administration_is_asked_with_the_owners_grant(tracker, jira, through):
    jira.on("getMyPermissions", admin_only_with_own_token)
    jira.on("getUserGroups", (200, []))
    jira.on(
        "bulkGetUsers",
        lambda r, q, b: (
            200,
            {"isLast": True, "values": [user_json(a, "Ada Admin") for a in q["accountId"]]},
        ),
    )
    person = UserFactory(username="ada")
    give_grant(person, access="tok-admin")
    if through == "session":
        client = Client()
        client.force_login(person)
    else:
        _, token = token_create(user=person, name="script")
        client = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = client.get("/api/v1/site-settings")
    assert response.status_code == 200, response.content
    assert client.get("/api/v1/me").json()["isSiteAdmin"] is True
    assert jira.count("getUserGroups") == 0


def test_the_mcp_gate_asks_with_the_owners_grant(tracker, jira):
    jira.on("getMyPermissions", admin_only_with_own_token)
    jira.on("getUserGroups", (200, []))
    jira.on("searchProjects", (200, {"isLast": True, "values": []}))
    person = UserFactory(username="ada")
    give_grant(person, access="tok-admin")
    _, token = token_create(user=person, name="mcp")
    response = Client().post(
        "/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        HTTP_ACCEPT="application/json, text/event-stream",
    )
    # Past the portfolio/agent gate (a 403 there); the protocol itself answers the rest.
    assert response.status_code != 403, response.content
    assert jira.count("getMyPermissions") == 1 and jira.count("getUserGroups") == 0
