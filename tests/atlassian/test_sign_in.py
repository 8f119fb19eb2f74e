"""Sign in with Atlassian against a fake authorization server: state, PKCE, the code
exchange, the site pick, the accountId, encrypted tokens, sign-out."""

import base64
import hashlib
import json
from urllib.parse import parse_qs, urlsplit

import pytest
import responses
from django.test import Client

from governance.atlassian import crypto
from governance.models import AtlassianGrant, Project, User
from tests.atlassian.conftest import API_URL, AUTH_URL, user_json
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db
SITE = "https://example.atlassian.net"
ACCOUNT = "712020:fresh-person"


@pytest.fixture
def fake_auth(rsps, jira):
    """Atlassian's token endpoint and accessible-resources, and Jira's /myself."""
    seen = {"token": []}

    def token(request):
        body = (
            parse_qs(request.body)
            if isinstance(request.body, str)
            else parse_qs(request.body.decode())
        )
        seen["token"].append({k: v[0] for k, v in body.items()})
        return (
            200,
            {},
            json.dumps(
                {
                    "access_token": "plain-access-token",
                    "refresh_token": "plain-refresh-token",
                    "expires_in": 3600,
                    "token_type": "Bearer",
                    "scope": "read:jira-work offline_access",
                }
            ),
        )

    rsps.add_callback(responses.POST, AUTH_URL + "/oauth/token", callback=token)
    seen["resources"] = [
        {"id": "other-cloud", "name": "other", "url": "https://other.atlassian.net", "scopes": []},
        {"id": "cloud-1", "name": "example", "url": SITE, "scopes": ["read:jira-work"]},
    ]
    rsps.add_callback(
        responses.GET,
        API_URL + "/oauth/token/accessible-resources",
        callback=lambda r: (200, {}, json.dumps(seen["resources"])),
    )
    jira.on("getCurrentUser", lambda r, q, b: (200, user_json(ACCOUNT, "Fresh Person")))
    jira.on(
        "getMyPermissions",
        lambda r, q, b: (
            200,
            {"permissions": {"ADMINISTER": {"key": "ADMINISTER", "havePermission": False}}},
        ),
    )
    jira.on(
        "bulkGetUsers",
        lambda r, q, b: (
            200,
            {"isLast": True, "values": [user_json(a, "Fresh Person") for a in q["accountId"]]},
        ),
    )
    fresh = {"id": "10077", "key": "FRESH", "name": "Fresh project", "lead": {"accountId": ACCOUNT}}
    jira.on(
        "searchProjects",
        lambda r, q, b: (200, {"isLast": True, "startAt": 0, "total": 1, "values": [fresh]}),
    )
    return seen


def start(client: Client, next_url: str = "") -> dict:
    response = client.get("/accounts/atlassian/login/" + (f"?next={next_url}" if next_url else ""))
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == AUTH_URL + "/authorize"
    return {k: v[0] for k, v in parse_qs(location.query).items()}


def test_authorize_redirect_carries_state_pkce_audience_and_offline_access(
    atlassian_settings, fake_auth
):
    query = start(Client())
    assert query["response_type"] == "code"
    assert query["client_id"] == "client-id"
    assert query["audience"] == "api.atlassian.com"
    assert query["prompt"] == "consent"
    assert query["code_challenge_method"] == "S256"
    assert len(query["state"]) >= 20 and query["code_challenge"]
    assert "offline_access" in query["scope"].split()
    assert query["redirect_uri"].endswith("/accounts/atlassian/callback/")


def test_sign_in_asks_for_the_confluence_search_the_reader_makes_only_with_confluence(
    atlassian_settings, fake_auth
):
    atlassian_settings.WIKI_BACKEND = "local"
    assert "search:confluence" not in start(Client())["scope"].split()
    atlassian_settings.WIKI_BACKEND = "confluence"
    assert "search:confluence" in start(Client())["scope"].split()
    # Only the read scopes of the calls made as the person (governance.atlassian.scopes).
    assert start(Client())["scope"].split() == [
        "read:jira-user",
        "read:jira-work",
        "search:confluence",
        "offline_access",
    ]


def test_wrong_state_is_refused_and_no_code_is_exchanged(atlassian_settings, fake_auth):
    client = Client()
    start(client)
    response = client.get("/accounts/atlassian/callback/?code=abc&state=forged")
    assert response.status_code == 400
    assert b"could not be verified" in response.content
    assert fake_auth["token"] == []
    assert not User.objects.filter(account_id=ACCOUNT).exists()


def test_the_whole_dance_signs_in_stores_encrypted_tokens_and_sign_out_deletes_them(
    atlassian_settings, fake_auth
):
    client = Client()
    query = start(client, next_url="/projects/ALPHA/")
    response = client.get(f"/accounts/atlassian/callback/?code=the-code&state={query['state']}")
    assert response.status_code == 302 and response["Location"] == "/projects/ALPHA/"

    sent = fake_auth["token"][0]
    assert sent["grant_type"] == "authorization_code" and sent["code"] == "the-code"
    challenge = (
        base64.urlsafe_b64encode(hashlib.sha256(sent["code_verifier"].encode()).digest())
        .rstrip(b"=")
        .decode()
    )
    assert challenge == query["code_challenge"]  # PKCE: the verifier matches the challenge

    user = User.objects.get(account_id=ACCOUNT)
    assert not user.has_usable_password()
    # Their projects are mirrored at sign-in, before their first page.
    mirrored = Project.objects.get(tracker_id="10077")
    assert (mirrored.key, mirrored.name, mirrored.lead_account_id) == (
        "FRESH",
        "Fresh project",
        ACCOUNT,
    )
    grant = AtlassianGrant.objects.get(user=user)
    assert grant.cloud_id == "cloud-1"  # the configured site, not the first one listed
    row = json.dumps(AtlassianGrant.objects.filter(pk=grant.pk).values().get(), default=str)
    assert "plain-access-token" not in row and "plain-refresh-token" not in row
    assert crypto.decrypt(grant.refresh_token) == "plain-refresh-token"

    # The same state cannot be used twice.
    again = client.get(f"/accounts/atlassian/callback/?code=the-code&state={query['state']}")
    assert again.status_code == 400

    client.post("/accounts/logout/")
    assert not AtlassianGrant.objects.filter(user=user).exists()


def test_a_grant_without_the_configured_site_is_refused(atlassian_settings, fake_auth):
    fake_auth["resources"] = [fake_auth["resources"][0]]
    client = Client()
    query = start(client)
    response = client.get(f"/accounts/atlassian/callback/?code=c&state={query['state']}")
    assert response.status_code == 403
    assert SITE.encode() in response.content
    assert not AtlassianGrant.objects.exists()


def test_consent_denied_is_a_plain_message(atlassian_settings, fake_auth):
    client = Client()
    query = start(client)
    response = client.get(
        f"/accounts/atlassian/callback/?error=access_denied&state={query['state']}"
    )
    assert response.status_code == 403 and b"did not grant access" in response.content


def test_passwords_sign_in_only_superusers_with_jira(atlassian_settings, db):
    UserFactory(username="pat")
    admin = UserFactory(username="root")
    User.objects.filter(pk=admin.pk).update(is_superuser=True, is_staff=True)
    page = Client().get("/accounts/login/")
    assert b"Sign in with Atlassian" in page.content
    refused = Client().post("/accounts/login/", {"username": "pat", "password": PASSWORD})
    assert refused.status_code == 200 and b"Atlassian account" in refused.content
    admitted = Client().post("/accounts/login/", {"username": "root", "password": PASSWORD})
    assert admitted.status_code == 302


def test_atlassian_sign_in_does_not_exist_with_the_local_tracker(db):
    assert Client().get("/accounts/atlassian/login/").status_code == 404
    assert b"Sign in with Atlassian" not in Client().get("/accounts/login/").content
