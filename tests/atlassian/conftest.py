"""Jira and Confluence backends against Atlassian's contract documents, offline."""

import datetime as dt
import io

import pytest
import responses
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.utils import timezone

from governance.atlassian import crypto
from governance.models import AtlassianGrant
from governance.tracker import get_tracker
from tests.atlassian.contract import CONFLUENCE_V1, CONFLUENCE_V2, JIRA, AtlassianMock

JIRA_URL = "https://jira.test"
WIKI_URL = "https://wiki.test"
AUTH_URL = "https://auth.test"
API_URL = "https://api.test"
TOKEN_KEY = Fernet.generate_key().decode()


@pytest.fixture
def atlassian_settings(settings):
    settings.TRACKER_BACKEND = "jira"
    settings.ATLASSIAN_SITE_URL = "https://example.atlassian.net"
    settings.ATLASSIAN_JIRA_URL = JIRA_URL
    settings.ATLASSIAN_CONFLUENCE_URL = WIKI_URL
    settings.ATLASSIAN_CONFLUENCE_V2_URL = ""
    settings.ATLASSIAN_AUTH_URL = AUTH_URL
    settings.ATLASSIAN_API_URL = API_URL
    settings.ATLASSIAN_CLIENT_ID = "client-id"
    settings.ATLASSIAN_CLIENT_SECRET = "client-secret"
    settings.ATLASSIAN_TOKEN_KEY = TOKEN_KEY
    settings.ATLASSIAN_SERVICE_EMAIL = "governance-bot@example.com"
    settings.ATLASSIAN_SERVICE_API_TOKEN = "service-api-token"
    return settings


@pytest.fixture
def rsps():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        yield mock


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def tracker(atlassian_settings, sleeps):
    backend = get_tracker()
    backend.http.sleep = sleeps.append
    return backend


@pytest.fixture
def jira(rsps, atlassian_settings) -> AtlassianMock:
    mock = AtlassianMock(rsps, JIRA_URL, [("", JIRA)])
    yield mock
    assert not mock.violations, mock.violations


@pytest.fixture
def confluence(rsps, atlassian_settings) -> AtlassianMock:
    mock = AtlassianMock(
        rsps,
        WIKI_URL,
        [("/wiki/api/v2", CONFLUENCE_V2), ("", CONFLUENCE_V1)],
    )
    yield mock
    assert not mock.violations, mock.violations


def give_grant(user, *, access="access-1", refresh="refresh-1", expires_in=3600, cloud="c1"):
    return AtlassianGrant.objects.update_or_create(
        user=user,
        defaults={
            "account_id": user.account_id,
            "cloud_id": cloud,
            "access_token": crypto.encrypt(access),
            "refresh_token": crypto.encrypt(refresh),
            "expires_at": timezone.now() + dt.timedelta(seconds=expires_in),
        },
    )[0]


def user_json(account_id: str, name: str) -> dict:
    return {
        "accountId": account_id,
        "accountType": "atlassian",
        "displayName": name,
        "active": True,
        "avatarUrls": {"48x48": f"https://avatars.test/{account_id}.png"},
    }


@pytest.fixture
def fake_jira(jira, tracker):
    from tests.atlassian.fake_jira import FakeJira

    return FakeJira(jira)


def run_check() -> tuple[int, str, str]:
    """`manage.py atlassian_check`: its exit code, what it printed, what it wrote to stderr."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("atlassian_check", stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


def grant_all(request, query, body):
    """getBulkPermissions answering that the account holds every permission asked."""
    return 200, {
        "globalPermissions": list(body.get("globalPermissions") or []),
        "projectPermissions": [
            {"permission": permission, "projects": list(wanted.get("projects") or []), "issues": []}
            for wanted in body.get("projectPermissions") or []
            for permission in wanted["permissions"]
        ],
    }
