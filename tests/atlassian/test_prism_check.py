"""`python manage.py atlassian_check` against the Prism mocks: it passes with the right
credentials, and fails naming the setting when the client secret or the service account's
API token is wrong. Runs under `make contract-prism`; skipped otherwise.

Prism serves Jira and Confluence but checks no credentials (only that they are sent), and
Atlassian's authorization server is in no document. So `responses` stands in front of them
for exactly that: the token endpoint answers as Atlassian's does for a known client
(`invalid_grant` for the throwaway code) or an unknown one (`invalid_client`), and Jira's
/myself answers 401 to a service token other than the configured one before forwarding the
call to Prism. Every other call goes to Prism as it is, except getMyPermissions' example
being keyed by the permission asked (tests/atlassian/prism.py)."""

import base64
import json
import re

import pytest
import responses

from tests.atlassian.conftest import AUTH_URL
from tests.atlassian.conftest import run_check as run
from tests.atlassian.prism import (
    CONFLUENCE_V1,
    CONFLUENCE_V2,
    JIRA,
    forward,
    granted_bulk_permissions,
    needs_prism,
    relabelled_permissions,
)

pytestmark = [pytest.mark.prism, pytest.mark.django_db, needs_prism]

SECRET = "the-client-secret"
SERVICE = ("governance-bot@example.com", "the-service-api-token")


@pytest.fixture
def site(atlassian_settings):
    s = atlassian_settings
    s.WIKI_BACKEND = "confluence"
    s.ATLASSIAN_JIRA_URL = JIRA
    s.ATLASSIAN_CONFLUENCE_URL = CONFLUENCE_V1
    s.ATLASSIAN_CONFLUENCE_V2_URL = CONFLUENCE_V2
    s.ATLASSIAN_RETRIES = 0
    s.ATLASSIAN_CLIENT_SECRET = SECRET
    s.ATLASSIAN_SERVICE_EMAIL, s.ATLASSIAN_SERVICE_API_TOKEN = SERVICE
    # Names from Atlassian's examples: a custom field of getFieldsPaginated's, the space of
    # getSpaces'.
    s.ATLASSIAN_FIELD_NAME = "Approvers"
    s.WIKI_SPACE_KEY = "string"

    def token(request):
        body = json.loads(request.body)
        if body.get("client_secret") != SECRET:
            return 401, {}, json.dumps({"error": "invalid_client", "error_description": "x"})
        return 403, {}, json.dumps({"error": "invalid_grant", "error_description": "code"})

    def myself(request):
        basic = base64.b64encode(":".join(SERVICE).encode()).decode()
        if request.headers.get("Authorization") != f"Basic {basic}":
            return 401, {}, json.dumps({"message": "Client must be authenticated to access this"})
        status, body = forward(request)
        return status, {"Content-Type": "application/json"}, json.dumps(body)

    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add_callback(responses.POST, AUTH_URL + "/oauth/token", callback=token)
        mock.add_callback(responses.GET, JIRA + "/rest/api/3/myself", callback=myself)
        mock.add_callback(
            responses.GET,
            re.compile(re.escape(JIRA) + r"/rest/api/3/mypermissions\b.*"),
            callback=relabelled_permissions,
        )
        mock.add_callback(
            responses.POST,
            JIRA + "/rest/api/3/permissions/check",
            callback=granted_bulk_permissions,
        )
        for base in (JIRA, CONFLUENCE_V2, CONFLUENCE_V1):
            mock.add_passthru(base)
        yield s


def test_check_passes_against_the_mocks(site):
    code, out, err = run()
    assert code == 0, out + err
    for line in (
        "OAuth app: ATLASSIAN_CLIENT_ID and ATLASSIAN_CLIENT_SECRET are accepted",
        "service account Mia Krystof signs in",
        "service account is a Jira administrator",
        "custom field 'Approvers' present (customfield_10000)",
        "wiki space string present",
        "All checks passed.",
    ):
        assert line in out, out


def test_a_wrong_client_secret_fails_naming_it(site):
    site.ATLASSIAN_CLIENT_SECRET = "not-the-secret"
    code, out, err = run()
    assert code == 2, out + err
    assert "ATLASSIAN_CLIENT_SECRET" in err and "invalid_client" in err
    assert "not-the-secret" not in out + err


def test_a_wrong_service_token_fails_naming_it(site):
    site.ATLASSIAN_SERVICE_API_TOKEN = "not-the-token"
    code, out, err = run()
    assert code == 2, out + err
    assert "ATLASSIAN_SERVICE_API_TOKEN" in err and "HTTP 401" in err
    assert "not-the-token" not in out + err


# A service token with scopes (issue 20, item 9) -------------------------------------------------
CLOUD = "prism-cloud"
GATEWAY = "https://api.test"
SITE_URL = "https://example.atlassian.net"


def _to_prism(request):
    """The gateway's request as Prism serves the same operation: `/ex/jira/{cloudId}` and
    `/ex/confluence/{cloudId}` dropped (Prism serves the documents' paths at its root)."""
    sent = request.copy()
    rest = request.url.split(f"/{CLOUD}", 1)[1]
    if "/ex/jira/" in request.url:
        sent.url = JIRA + rest
    elif rest.startswith("/wiki/api/v2"):
        sent.url = CONFLUENCE_V2 + rest[len("/wiki/api/v2") :]
    else:
        sent.url = CONFLUENCE_V1 + rest
    return sent


@pytest.fixture
def scoped(site):
    """`site`, with the service token one with scopes: Atlassian accepts it only through
    the gateway (https://support.atlassian.com/atlassian-cloud/kb/401-unauthorized-error-when-service-account-accesses-jira-or-confluence-api/),
    so the site URL answers 401, and the gateway's calls go on to Prism, which validates them
    against the documents. The cloud id comes from the site's /_edge/tenant_info
    (https://support.atlassian.com/jira/kb/retrieve-my-atlassian-sites-cloud-id/)."""
    s = site
    s.ATLASSIAN_JIRA_URL = s.ATLASSIAN_CONFLUENCE_URL = s.ATLASSIAN_CONFLUENCE_V2_URL = ""
    s.ATLASSIAN_SITE_URL, s.ATLASSIAN_API_URL = SITE_URL, GATEWAY
    s.ATLASSIAN_SERVICE_TOKEN_KIND = "scoped"
    gateway = []

    def through(request):
        gateway.append(request.url)
        sent = _to_prism(request)
        if "/mypermissions" in sent.url:
            return relabelled_permissions(sent)
        if sent.url.endswith("/rest/api/3/permissions/check"):
            return granted_bulk_permissions(sent)
        status, body = forward(sent)
        return status, {"Content-Type": "application/json"}, json.dumps(body)

    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add(responses.GET, SITE_URL + "/_edge/tenant_info", json={"cloudId": CLOUD})
        mock.add_callback(
            responses.POST,
            AUTH_URL + "/oauth/token",
            callback=lambda r: (403, {}, json.dumps({"error": "invalid_grant"})),
        )
        for method in (responses.GET, responses.POST):
            mock.add(
                method,
                re.compile(re.escape(SITE_URL) + r"/(rest|wiki)/.*"),
                status=401,
                json={"message": "Client must be authenticated to access this resource."},
            )
            mock.add_callback(method, re.compile(re.escape(GATEWAY) + r"/ex/.*"), callback=through)
        yield gateway


def test_check_finds_a_scoped_token_through_the_gateway(scoped):
    code, out, err = run()
    assert code == 0, out + err
    assert f"accepted at {GATEWAY}/ex/jira/{CLOUD}" in out
    assert "service account Mia Krystof signs in" in out
    assert "wiki space string present" in out
    assert any(f"/ex/confluence/{CLOUD}/wiki/api/v2/spaces" in url for url in scoped)


def test_check_names_the_kind_when_a_scoped_token_is_sent_to_the_site(scoped, site):
    site.ATLASSIAN_SERVICE_TOKEN_KIND = "classic"
    code, out, err = run()
    assert code == 2, out + err
    assert "set ATLASSIAN_SERVICE_TOKEN_KIND=scoped" in err
