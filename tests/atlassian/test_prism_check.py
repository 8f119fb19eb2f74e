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
