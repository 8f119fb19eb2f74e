"""OAuth 2.1 for MCP, end to end against the running app, as a connector does it: the 401's
resource metadata, the server's metadata, Dynamic Client Registration, the consent page as a
signed-in person, the code exchanged with PKCE S256 for a token bound to /mcp, the official SDK
client calling /mcp with it, the JSON API refusing it, refresh with rotation, and the client
disconnected from the profile page."""

import base64
import hashlib
import html
import json
import re
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client as Browser
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from governance import oauth
from governance.models import AuditEntry
from tests.agent.conftest import EVERYONE, use_group
from tests.conftest import run_async

REDIRECT = "http://127.0.0.1:33418/callback"


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _hidden_fields(page: str) -> dict[str, str]:
    fields = {}
    for tag in re.findall(r"<input[^>]*type=\"hidden\"[^>]*>", page):
        name = re.search(r'name="([^"]*)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name:
            fields[name.group(1)] = html.unescape(value.group(1)) if value else ""
    return fields


def _mcp(url: str, token: str, work):
    async def go():
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await work(client)

    return run_async(go)


def _tools_list(browser: Browser, token: str):
    return browser.post(
        "/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        HTTP_ACCEPT="application/json, text/event-stream",
    )


def _register(browser: Browser, **metadata):
    body = {
        "client_name": "Inspector test",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        **metadata,
    }
    return browser.post("/oauth/register/", data=json.dumps(body), content_type="application/json")


@pytest.mark.django_db(transaction=True)
def test_a_connector_signs_in_with_oauth_and_uses_the_tools(world, live_server):
    use_group(EVERYONE)
    host = urlsplit(live_server.url).netloc
    anonymous = Browser(HTTP_HOST=host)
    mcp_url = f"{live_server.url}/mcp"

    # 1. The 401 names the resource metadata; it names the app as the authorization server.
    challenge = anonymous.post("/mcp", data="{}", content_type="application/json")
    assert challenge.status_code == 401
    metadata_url = re.search(r'resource_metadata="([^"]+)"', challenge["WWW-Authenticate"])[1]
    assert metadata_url == f"{live_server.url}/.well-known/oauth-protected-resource/mcp"
    resource = anonymous.get(urlsplit(metadata_url).path).json()
    assert resource["resource"] == mcp_url
    assert anonymous.get("/.well-known/oauth-protected-resource").json() == resource
    (issuer,) = resource["authorization_servers"]
    assert issuer == live_server.url
    server = anonymous.get("/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == issuer
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["response_types_supported"] == ["code"]
    assert set(server["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert server["token_endpoint_auth_methods_supported"] == ["none"]
    assert server["client_id_metadata_document_supported"] is True
    for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        assert server[key].startswith(live_server.url + "/oauth/")

    # 2. Dynamic Client Registration: a public client.
    registered = _register(anonymous)
    assert registered.status_code == 201, registered.content
    client_id = registered.json()["client_id"]
    assert registered.json()["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in registered.json()

    # 3. Authorize as a signed-in person: the consent page names the client and the person.
    verifier, challenge_value = _pkce()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge_value,
        "code_challenge_method": "S256",
        "state": "xyz",
        "scope": "mcp",
        "resource": mcp_url,
    }
    person = Browser(HTTP_HOST=host)
    signed_out = person.get("/oauth/authorize/?" + urlencode(query))
    assert signed_out.status_code == 302 and "/accounts/login/" in signed_out["Location"]
    person.force_login(world.lead)
    consent = person.get("/oauth/authorize/?" + urlencode(query))
    assert consent.status_code == 200
    page = consent.content.decode()
    assert "Inspector test" in page and world.lead.username in page and REDIRECT in page
    assert "signed in as <strong>Lena Lead</strong>" in page  # the name people know
    assert "http://127.0.0.1:33418" in consent["Content-Security-Policy"]
    assert "unsafe-inline" not in consent["Content-Security-Policy"]
    answer = person.post("/oauth/authorize/", {**_hidden_fields(page), "allow": "Authorize"})
    assert answer.status_code == 302, answer.content
    back = urlsplit(answer["Location"])
    assert f"{back.scheme}://{back.netloc}{back.path}" == REDIRECT
    params = parse_qs(back.query)
    assert params["state"] == ["xyz"] and params["iss"] == [issuer]

    # 4. The code for a token, with the verifier and the resource.
    token_request = {
        "grant_type": "authorization_code",
        "code": params["code"][0],
        "redirect_uri": REDIRECT,
        "client_id": client_id,
        "code_verifier": verifier,
        "resource": mcp_url,
    }
    tokens = anonymous.post("/oauth/token/", token_request)
    assert tokens.status_code == 200, tokens.content
    access, refresh = tokens.json()["access_token"], tokens.json()["refresh_token"]
    # (A code is used once: a replay is refused and ends these tokens, see
    # test_mcp_oauth_hardening.py.)

    # 5. The official SDK client at /mcp with the token: a read and a write, as the person.
    async def work(client):
        read = await client.call_tool("find_projects", {})
        write = await client.call_tool(
            "add_risk", {"projectKey": "ALPHA", "title": "Connector risk", "likelihood": 2}
        )
        return read, write

    read, write = _mcp(mcp_url, access, work)
    assert not read.is_error and not write.is_error, write.content
    entry = AuditEntry.objects.get(kind="risk.created")
    assert entry.actor_account_id == world.lead.account_id and entry.channel == "agent"

    # 6. The token is for /mcp only: the JSON API refuses it.
    api = anonymous.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {access}")
    assert api.status_code == 401
    assert "works at /mcp only" in api.json()["error"]["message"]

    # 7. Refresh rotates: a new pair; the old refresh token is refused afterwards.
    renewed = anonymous.post(
        "/oauth/token/",
        {"grant_type": "refresh_token", "refresh_token": refresh, "client_id": client_id},
    )
    assert renewed.status_code == 200, renewed.content
    access2, refresh2 = renewed.json()["access_token"], renewed.json()["refresh_token"]
    assert refresh2 != refresh and access2 != access
    assert _tools_list(anonymous, access2).status_code == 200

    # 8. The profile page lists the client; disconnecting it ends its tokens.
    profile = person.get("/profile/").content.decode()
    assert "Connected MCP clients" in profile and "Inspector test" in profile
    (client_pk,) = re.findall(r'action="/profile/clients/(\d+)/revoke/"', profile)
    done = person.post(f"/profile/clients/{client_pk}/revoke/")
    assert done.status_code == 302
    after = person.get("/profile/").content.decode()
    assert "is disconnected" in after and "No MCP client is connected." in after
    refused = _tools_list(anonymous, access2)
    assert refused.status_code == 401
    assert refused.json()["error"]["message"].startswith("This token is not valid")
    assert AuditEntry.objects.filter(kind="oauth_client.revoked").count() == 1
    assert person.post(f"/profile/clients/{client_pk}/revoke/").status_code == 404
    for spent in (refresh2, refresh):  # neither the current nor the rotated one renews
        again = anonymous.post(
            "/oauth/token/",
            {"grant_type": "refresh_token", "refresh_token": spent, "client_id": client_id},
        )
        assert again.status_code == 400


@pytest.mark.django_db(transaction=True)
def test_a_reused_refresh_token_ends_the_whole_grant(world, live_server):
    use_group(EVERYONE)
    host = urlsplit(live_server.url).netloc
    anonymous, person = Browser(HTTP_HOST=host), Browser(HTTP_HOST=host)
    person.force_login(world.lead)
    client_id = _register(anonymous).json()["client_id"]
    verifier, challenge = _pkce()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    page = person.get("/oauth/authorize/?" + urlencode(query)).content.decode()
    answer = person.post("/oauth/authorize/", {**_hidden_fields(page), "allow": "Authorize"})
    code = parse_qs(urlsplit(answer["Location"]).query)["code"][0]
    tokens = anonymous.post(
        "/oauth/token/",
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": client_id,
            "code_verifier": verifier,
        },
    ).json()
    # No resource named: the token is bound to /mcp all the same.
    assert _tools_list(anonymous, tokens["access_token"]).status_code == 200
    renew = {"grant_type": "refresh_token", "client_id": client_id}
    renewed = anonymous.post("/oauth/token/", {**renew, "refresh_token": tokens["refresh_token"]})
    assert renewed.status_code == 200
    reused = anonymous.post("/oauth/token/", {**renew, "refresh_token": tokens["refresh_token"]})
    assert reused.status_code == 400
    assert _tools_list(anonymous, renewed.json()["access_token"]).status_code == 401


@pytest.mark.django_db
def test_registration_takes_public_clients_with_safe_redirect_uris(client):
    ok = ["https://claude.ai/api/mcp/auth_callback", "http://localhost:6274/cb", "vscode://x/cb"]
    for uri in ok:
        assert _register(client, redirect_uris=[uri]).status_code == 201, uri
    refused = {
        "http://evil.example/cb": "http on another machine",
        "https://claude.ai/cb#frag": "fragment",
        "https://user:pw@claude.ai/cb": "user name or password",
        "javascript://alert(1)": "not allowed",
        "https://*.example.com/cb": "wildcard",
    }
    for uri, words in refused.items():
        answer = _register(client, redirect_uris=[uri])
        assert answer.status_code == 400, uri
        assert answer.json()["error"] == "invalid_redirect_uri"
        assert words in answer.json()["error_description"], uri
    secret = _register(client, token_endpoint_auth_method="client_secret_post")
    assert secret.status_code == 400 and "public clients" in secret.json()["error_description"]
    assert _register(client, redirect_uris=[]).status_code == 400


@pytest.mark.django_db
def test_authorization_refuses_plain_pkce_and_another_resource(world, client):
    client.force_login(world.lead)
    client_id = _register(client).json()["client_id"]
    base = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": "s",
    }
    _, challenge = _pkce()
    other = client.get(
        "/oauth/authorize/?"
        + urlencode(
            {
                **base,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": "https://elsewhere.example/api",
            }
        )
    )
    assert other.status_code == 400
    assert "MCP endpoint only" in other.content.decode()
    plain = client.get(
        "/oauth/authorize/?"
        + urlencode({**base, "code_challenge": "a" * 43, "code_challenge_method": "plain"})
    )
    # Refused: back to the client with an error, or an error page; never a consent form.
    assert 'name="allow"' not in plain.content.decode()
    missing = client.get("/oauth/authorize/?" + urlencode(base))
    assert 'name="allow"' not in missing.content.decode()
    # A client made another way (the admin) with an http address on another machine: no code
    # is sent there.
    from oauth2_provider.models import Application

    elsewhere = Application.objects.create(
        name="Elsewhere",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://elsewhere.example/cb",
    )
    insecure = client.get(
        "/oauth/authorize/?"
        + urlencode(
            {
                **base,
                "client_id": elsewhere.client_id,
                "redirect_uri": "http://elsewhere.example/cb",
                "code_challenge": challenge,
                "code_challenge_method": "S256",
            }
        )
    )
    assert 'name="allow"' not in insecure.content.decode()
    assert insecure.status_code == 400


def test_the_resource_is_the_mcp_endpoint(settings):
    settings.ALLOWED_HOSTS = ["gov.example.com"]
    from django.test import RequestFactory

    request = RequestFactory().get("/", HTTP_HOST="gov.example.com", secure=True)
    assert oauth.mcp_resource(request) == "https://gov.example.com/mcp"
    assert oauth.resource_metadata_url(request) == (
        "https://gov.example.com/.well-known/oauth-protected-resource/mcp"
    )
