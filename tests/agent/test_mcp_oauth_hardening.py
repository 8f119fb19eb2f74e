"""The OAuth server's doors, each walked: no RFC 7592 management endpoint, no automatic
redirect to an untrusted address before consent, registration throttled per address, JSON
only and removed when never used, consent always shown, a refresh token raced by two requests
(one wins, the other is refused with invalid_grant), a replayed code ending what it gave, a
tampered consent form, one issuer everywhere, and a metadata document's failure in words."""

import datetime as dt
import json
import threading
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.db import connection
from django.test import Client as Browser
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

from governance import oauth
from governance.models import SpentAuthorizationCode
from tests.agent.conftest import EVERYONE, use_group
from tests.agent.test_mcp_oauth import REDIRECT, _hidden_fields, _pkce, _register, _tools_list

HTTPS_REDIRECT = "https://client.example/cb"


def _query(client_id: str, challenge: str, **extra) -> dict:
    return {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st",
        **extra,
    }


def _code(person: Browser, client_id: str, challenge: str) -> str:
    page = person.get("/oauth/authorize/?" + urlencode(_query(client_id, challenge)))
    assert page.status_code == 200 and 'name="allow"' in page.content.decode()
    answer = person.post(
        "/oauth/authorize/", {**_hidden_fields(page.content.decode()), "allow": "Authorize"}
    )
    assert answer.status_code == 302, answer.content
    return parse_qs(urlsplit(answer["Location"]).query)["code"][0]


def _exchange(anonymous: Browser, client_id: str, code: str, verifier: str):
    return anonymous.post(
        "/oauth/token/",
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": client_id,
            "code_verifier": verifier,
        },
    )


def _signed_in(world) -> tuple[Browser, Browser, str]:
    use_group(EVERYONE)
    anonymous, person = Browser(), Browser()
    person.force_login(world.lead)
    registered = _register(anonymous)
    assert registered.status_code == 201, registered.content
    return anonymous, person, registered.json()["client_id"]


# --- registration ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_registration_issues_no_management_credentials_and_there_is_no_management_endpoint(
    world, client
):
    client.force_login(world.lead)  # a signed-in person's registration is still nobody's
    answer = _register(client)
    assert answer.status_code == 201
    body = answer.json()
    assert "registration_access_token" not in body and "registration_client_uri" not in body
    assert body["token_endpoint_auth_method"] == "none" and "client_secret" not in body
    application = Application.objects.get(client_id=body["client_id"])
    assert application.user is None and application.client_type == "public"
    assert not AccessToken.objects.exists()  # no registration token of any kind
    # The profile lists no client the person never connected.
    assert "Inspector test" not in client.get("/profile/").content.decode()
    # The library's RFC 7592 view is not served: whatever is sent, nothing changes.
    upgrade = {
        "redirect_uris": ["http://evil.example/cb"],
        "token_endpoint_auth_method": "client_secret_basic",
        "grant_types": ["client_credentials"],
    }
    for method in ("get", "put", "delete"):
        answer = client.generic(
            method.upper(),
            f"/oauth/register/{body['client_id']}/",
            data=json.dumps(upgrade),
            content_type="application/json",
            HTTP_AUTHORIZATION="Bearer anything",
        )
        assert answer.status_code == 404, method
    application.refresh_from_db()
    assert application.client_type == "public"
    assert application.authorization_grant_type == "authorization-code"
    assert application.redirect_uris == REDIRECT
    metadata = client.get("/.well-known/oauth-authorization-server").json()
    assert metadata["registration_endpoint"].endswith("/oauth/register/")


@pytest.mark.django_db
def test_registration_refuses_other_grants_and_response_types(client):
    for grants in (["client_credentials"], ["authorization_code", "implicit"], ["password"]):
        answer = _register(client, grant_types=grants)
        assert answer.status_code == 400, grants
        assert "grant_types" in answer.json()["error_description"]
    answer = _register(client, response_types=["token"])
    assert answer.status_code == 400 and "response_types" in answer.json()["error_description"]


@pytest.mark.django_db
def test_registration_takes_json_only(client):
    body = json.dumps({"redirect_uris": [REDIRECT], "client_name": "Cross-site"})
    for content_type in (
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json-patch+json",
        "",
    ):
        answer = client.post("/oauth/register/", data=body, content_type=content_type)
        assert answer.status_code == 415, content_type
        assert "application/json" in answer.json()["error_description"]
    assert not Application.objects.exists()
    ok = client.post("/oauth/register/", data=body, content_type="application/json; charset=utf-8")
    assert ok.status_code == 201


@pytest.mark.django_db
def test_registration_is_throttled_per_address(client, settings):
    settings.MCP_OAUTH_REGISTRATION_LIMIT = 5
    for _ in range(5):
        assert _register(client).status_code == 201
    refused = _register(client)
    assert refused.status_code == 429
    assert "Too many client registrations" in refused.json()["error_description"]
    assert int(refused["Retry-After"]) > 0
    # Refused registrations of any kind count too; another address is not affected.
    other = Browser(REMOTE_ADDR="10.9.8.7")
    assert _register(other).status_code == 201
    assert Application.objects.count() == 6


@pytest.mark.django_db
def test_registration_is_throttled_while_the_cache_is_down(client, settings, monkeypatch):
    from governance import throttling
    from governance.cache import STRICT_ERRORS

    def down(key, window):
        raise STRICT_ERRORS[0]("cache down")

    monkeypatch.setattr(throttling, "hit", down)
    settings.MCP_OAUTH_REGISTRATION_LIMIT = 2
    assert [_register(client).status_code for _ in range(3)] == [201, 201, 429]


@pytest.mark.django_db
def test_registrations_never_used_are_removed_after_the_documented_age(world, settings):
    settings.MCP_OAUTH_UNUSED_REGISTRATION_HOURS = 24
    anonymous, person, used_id = _signed_in(world)
    verifier, challenge = _pkce()
    code = _code(person, used_id, challenge)
    assert _exchange(anonymous, used_id, code, verifier).status_code == 200
    unused_id = _register(anonymous).json()["client_id"]
    granted_id = _register(anonymous).json()["client_id"]
    _code(person, granted_id, _pkce()[1])  # a code issued, not yet exchanged
    manual = Application.objects.create(
        name="Admin's", client_type="public", authorization_grant_type="authorization-code"
    )
    Application.objects.update(created=timezone.now() - dt.timedelta(hours=25))
    fresh_id = _register(anonymous).json()["client_id"]  # made just now
    # A registration token the toolkit's management endpoint once issued, to the person
    # signed in when a page posted the registration: it listed a client they never saw.
    legacy = AccessToken.objects.create(
        user=world.lead,
        application=Application.objects.get(client_id=used_id),
        token_checksum="0" * 64,
        expires=timezone.now() + dt.timedelta(days=3650),
        scope="oauth2_provider:registration",
    )
    assert {c.name for c in oauth.connected_clients(world.lead)} == {"Inspector test"}
    legacy_only = Application.objects.create(
        name="Never seen", client_type="public", authorization_grant_type="authorization-code"
    )
    AccessToken.objects.filter(pk=legacy.pk).update(application=legacy_only)
    assert [c.name for c in oauth.connected_clients(world.lead)] == ["Inspector test"]

    assert oauth.forget_unused_registrations(timezone.now()) == "1 unused registrations removed"
    left = set(Application.objects.values_list("client_id", flat=True))
    assert left == {used_id, granted_id, manual.client_id, fresh_id, legacy_only.client_id}
    assert not AccessToken.objects.filter(scope="oauth2_provider:registration").exists()
    assert unused_id not in left
    # The job is the periodic one, run by manage.py runperiodic.
    from governance import periodic

    assert "oauth_registrations" in {job.name for job in periodic.jobs()}


# --- the authorization endpoint -------------------------------------------------------------


@pytest.mark.django_db
def test_errors_before_consent_are_shown_not_redirected_to_an_untrusted_address(world, client):
    client.force_login(world.lead)
    client_id = _register(client, redirect_uris=[HTTPS_REDIRECT]).json()["client_id"]
    _, challenge = _pkce()
    base = {**_query(client_id, challenge), "redirect_uri": HTTPS_REDIRECT}
    attempts = [
        {**base, "scope": "admin"},  # an unknown scope
        {**base, "response_type": "token"},  # an implicit grant
        {**base, "code_challenge_method": "plain"},
        {k: v for k, v in base.items() if k != "code_challenge"},
        {**base, "resource": "https://elsewhere.example/api"},
    ]
    for query in attempts:
        answer = client.get("/oauth/authorize/?" + urlencode(query))
        assert answer.status_code == 400, query
        assert "client.example" not in answer.get("Location", ""), query
        page = answer.content.decode()
        assert "This connection cannot be made" in page and 'name="allow"' not in page, query
    # Signed out with prompt=none: a page too, not a redirect with login_required.
    signed_out = Browser().get("/oauth/authorize/?" + urlencode({**base, "prompt": "none"}))
    assert signed_out.status_code == 400 and "Sign in to this site first" in (
        signed_out.content.decode()
    )


@pytest.mark.django_db
def test_a_trusted_redirect_uri_gets_the_error_back(world, client, settings):
    client.force_login(world.lead)
    _, challenge = _pkce()
    loopback_id = _register(client).json()["client_id"]
    answer = client.get("/oauth/authorize/?" + urlencode(_query(loopback_id, challenge, scope="x")))
    assert answer.status_code == 302 and answer["Location"].startswith(REDIRECT)
    assert "error=invalid_scope" in answer["Location"]
    settings.MCP_OAUTH_TRUSTED_REDIRECT_ORIGINS = ["https://client.example"]
    https_id = _register(client, redirect_uris=[HTTPS_REDIRECT]).json()["client_id"]
    query = {**_query(https_id, challenge, scope="x"), "redirect_uri": HTTPS_REDIRECT}
    answer = client.get("/oauth/authorize/?" + urlencode(query))
    assert answer.status_code == 302 and answer["Location"].startswith(HTTPS_REDIRECT)


@pytest.mark.django_db
def test_approval_prompt_auto_still_shows_the_consent_page(world):
    anonymous, person, client_id = _signed_in(world)
    verifier, challenge = _pkce()
    code = _code(person, client_id, challenge)
    assert _exchange(anonymous, client_id, code, verifier).status_code == 200
    for value in ("auto", "none", "force"):
        query = _query(client_id, _pkce()[1], approval_prompt=value)
        answer = person.get("/oauth/authorize/?" + urlencode(query))
        assert answer.status_code == 200, value
        assert 'name="allow"' in answer.content.decode(), value


@pytest.mark.django_db
def test_a_tampered_consent_form_is_refused_with_words(world):
    anonymous, person, client_id = _signed_in(world)
    _, challenge = _pkce()
    page = person.get("/oauth/authorize/?" + urlencode(_query(client_id, challenge)))
    fields = _hidden_fields(page.content.decode())
    other_id = _register(anonymous, redirect_uris=[HTTPS_REDIRECT]).json()["client_id"]
    for tampered in (
        {"client_id": "no-such-client"},
        {"client_id": ""},
        {"client_id": "x" * 5000},
        {"client_id": "bad\x00id"},
        {"client_id": other_id},  # a real client whose redirect URI is another
        {"redirect_uri": "https://evil.example/cb"},
    ):
        answer = person.post("/oauth/authorize/", {**fields, **tampered, "allow": "Authorize"})
        if "\x00" in tampered.get("client_id", ""):  # refused at the door, before the view
            assert answer.status_code == 422 and "line breaks" in answer.content.decode()
            continue
        assert answer.status_code == 400, tampered
        assert "evil.example" not in answer.get("Location", "")
        assert "This connection cannot be made" in answer.content.decode(), tampered
    # After the person's choice an error goes back to the client's registered address only.
    answer = person.post("/oauth/authorize/", {**fields, "resource": "not a uri", "allow": "x"})
    assert answer.status_code == 302 and answer["Location"].startswith(REDIRECT + "?")
    assert "error=invalid_target" in answer["Location"]
    assert not Grant.objects.exists()


@pytest.mark.django_db
def test_an_unreachable_client_metadata_document_is_named_on_the_page(world, client, monkeypatch):
    from oauth2_provider import cimd

    def unreachable(self, client_id):
        raise cimd.CIMDError("could not fetch client_id document: connection refused")

    monkeypatch.setattr(cimd.SafeMetadataFetcher, "fetch", unreachable)
    client.force_login(world.lead)
    url = "https://client.example/metadata.json"
    _, challenge = _pkce()
    for _attempt in range(2):  # the first fetch, then within the failure's backoff
        answer = client.get("/oauth/authorize/?" + urlencode(_query(url, challenge)))
        assert answer.status_code == 400
        page = answer.content.decode()
        assert "Invalid client_id parameter value" not in page
        assert "could not fetch client_id document: connection refused" in page
        assert url in page
    monkeypatch.undo()
    # The toolkit's own fetcher, for real: an address on this machine is never fetched.
    local = "https://localhost/metadata.json"
    answer = client.get("/oauth/authorize/?" + urlencode(_query(local, challenge)))
    assert answer.status_code == 400
    assert "non-public address" in answer.content.decode()
    unknown = client.get("/oauth/authorize/?" + urlencode(_query("no-such-client", challenge)))
    assert "This server knows no client" in unknown.content.decode()


@pytest.mark.django_db
def test_every_discovery_document_names_one_issuer(client):
    issuers = {
        client.get("/.well-known/oauth-authorization-server").json()["issuer"],
        client.get("/oauth/.well-known/oauth-authorization-server").json()["issuer"],
        *client.get("/.well-known/oauth-protected-resource").json()["authorization_servers"],
        *client.get("/.well-known/oauth-protected-resource/mcp").json()["authorization_servers"],
    }
    assert issuers == {"http://testserver"}
    assert client.get("/.well-known/openid-configuration").status_code == 404  # not served


# --- the token endpoint ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_replayed_code_is_refused_and_ends_the_tokens_it_gave(world):
    anonymous, person, client_id = _signed_in(world)
    verifier, challenge = _pkce()
    code = _code(person, client_id, challenge)
    tokens = _exchange(anonymous, client_id, code, verifier).json()
    assert _tools_list(anonymous, tokens["access_token"]).status_code == 200
    renew = {"grant_type": "refresh_token", "client_id": client_id}
    renewed = anonymous.post(
        "/oauth/token/", {**renew, "refresh_token": tokens["refresh_token"]}
    ).json()
    assert SpentAuthorizationCode.objects.count() == 1

    replay = _exchange(anonymous, client_id, code, verifier)
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    assert "revoked" in replay.json()["error_description"]
    for access in (tokens["access_token"], renewed["access_token"]):
        assert _tools_list(anonymous, access).status_code == 401
    again = anonymous.post("/oauth/token/", {**renew, "refresh_token": renewed["refresh_token"]})
    assert again.status_code == 400
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()
    # An unknown code is refused as before, ending nothing else.
    other_verifier, other_challenge = _pkce()
    other_code = _code(person, client_id, other_challenge)
    fresh = _exchange(anonymous, client_id, other_code, other_verifier)
    assert fresh.status_code == 200
    assert _exchange(anonymous, client_id, "no-such-code", other_verifier).status_code == 400
    assert _tools_list(anonymous, fresh.json()["access_token"]).status_code == 200


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_two_refreshes_at_once_one_wins_the_other_is_refused(world):
    anonymous, person, client_id = _signed_in(world)
    verifier, challenge = _pkce()
    tokens = _exchange(anonymous, client_id, _code(person, client_id, challenge), verifier).json()
    for _round in range(3):
        answers: list = []
        barrier = threading.Barrier(2)
        threads = [
            threading.Thread(
                target=_refresh, args=(barrier, answers, client_id, tokens["refresh_token"])
            )
            for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200, 400], [a.content for a in answers]
        winner = next(a for a in answers if a.status_code == 200).json()
        loser = next(a for a in answers if a.status_code == 400).json()
        assert loser["error"] == "invalid_grant"
        # Caught mid-race it says so, and the winner's tokens hold. Arriving after the
        # winner's commit it presents a spent refresh token: reuse protection
        # (REFRESH_TOKEN_REUSE_PROTECTION, RFC 9700 4.14.2) revokes the whole family, the
        # winner's new tokens with it, and the client signs in again. Never a 500.
        if "another request" in loser.get("error_description", ""):
            assert _tools_list(anonymous, winner["access_token"]).status_code == 200
            tokens = winner
        else:
            assert _tools_list(anonymous, winner["access_token"]).status_code == 401
            verifier, challenge = _pkce()
            code = _code(person, client_id, challenge)
            tokens = _exchange(anonymous, client_id, code, verifier).json()


def _refresh(barrier, answers: list, client_id: str, refresh_token: str) -> None:
    try:
        barrier.wait(timeout=30)
        answers.append(
            Browser(raise_request_exception=False).post(
                "/oauth/token/",
                {
                    "grant_type": "refresh_token",
                    "refresh_token": refresh_token,
                    "client_id": client_id,
                },
            )
        )
    finally:
        connection.close()
