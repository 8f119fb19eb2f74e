"""Scopes per kind of caller (issue 20, item 11): one table of calls
(governance.atlassian.scopes) gives each operation who makes it and the scopes Atlassian's
document declares for it; sign-in, atlassian_check and docs/atlassian.md are derived from it.

Atlassian documents a 3LO app's scopes per operation in each REST page ("OAuth 2.0 scopes
required", https://developer.atlassian.com/cloud/jira/platform/scopes-for-oauth-2-3LO-and-forge-apps/,
https://developer.atlassian.com/cloud/confluence/scopes-for-oauth-2-3LO-and-forge-apps/); the
same lists are the `security` of each operation in contracts/atlassian."""

import re
from pathlib import Path

import pytest
import responses

from governance.atlassian import scopes
from governance.atlassian.http import Client, ServiceCredentials
from governance.models import AtlassianGrant
from governance.tracker import TrackerError
from tests.atlassian.conftest import AUTH_URL, give_grant, user_json
from tests.atlassian.contract import contract
from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    "governance/tracker/jira.py",
    "governance/wiki/confluence.py",
    "governance/auth_views.py",
    "governance/management/commands/atlassian_check.py",
]


def _documented(call: scopes.Call, operation: str) -> set[str]:
    for op in contract(call.document).operations:
        if op.operation_id == operation:
            for requirement in op.spec.get("security") or []:
                for scheme, listed in requirement.items():
                    if scheme != "basicAuth":
                        return set(listed)
            return set()
    raise AssertionError(f"{operation} is not in {call.document}")


def test_each_call_declares_the_scopes_atlassians_document_gives_it():
    for operation, call in scopes.CALLS.items():
        if not call.document:
            continue  # findUsers: not in the trimmed documents (read:jira-user on its page)
        assert set(call.scopes) == _documented(call, operation), operation


def test_every_operation_the_app_calls_has_its_row_and_every_row_is_called():
    known = {
        op.operation_id
        for name in {c.document for c in scopes.CALLS.values()}
        if name
        for op in contract(name).operations
    } | {"findUsers"}
    called = set()
    for source in SOURCES:
        text = (ROOT / source).read_text()
        called |= {word for word in re.findall(r'"([A-Za-z]+)"', text) if word in known}
    assert called == set(scopes.CALLS)


def test_sign_in_asks_persons_only_for_the_read_scopes_of_their_calls(settings):
    settings.TRACKER_BACKEND = "jira"
    settings.WIKI_BACKEND = "local"
    assert scopes.sign_in_scopes() == ["read:jira-user", "read:jira-work", "offline_access"]
    settings.WIKI_BACKEND = "confluence"
    assert scopes.sign_in_scopes() == [
        "read:jira-user",
        "read:jira-work",
        "search:confluence",
        "offline_access",
    ]
    # Persons do not write to Jira or Confluence as themselves.
    assert not [s for s in scopes.sign_in_scopes() if s.startswith(("write:", "manage:"))]


def test_the_app_needs_the_write_and_configuration_scopes_persons_are_not_asked_for():
    app = scopes.needed(scopes.APP, (scopes.JIRA, scopes.CONFLUENCE))
    assert app["write:jira-work"] == ["editIssue"]
    assert "createCustomField" in app["manage:jira-configuration"]
    assert app["manage:jira-project"][-1] == "addScreenTabField"
    assert app["write:confluence-space"] == ["createSpace"]


def test_a_call_made_as_someone_its_row_does_not_name_is_refused_before_it_is_sent(settings):
    client = Client(product="Jira", error_class=TrackerError)
    creds = ServiceCredentials("bot@example.com", "token", base_url="https://jira.test")
    with responses.RequestsMock() as nothing_sent:  # any request would fail the test
        with pytest.raises(TrackerError, match="searchProjects is not made as the app"):
            client.request("searchProjects", "GET", "/rest/api/3/project/search", creds)
        assert not nothing_sent.calls


def test_docs_list_every_scope_with_the_calls_that_use_it():
    """docs/atlassian.md holds the table as `python -m governance.atlassian.scopes` prints
    it; regenerate it there when the table changes."""
    doc = (ROOT / "docs" / "atlassian.md").read_text()
    assert scopes.markdown() in doc


@pytest.mark.django_db
def test_a_refresh_stores_the_scopes_the_person_granted(atlassian_settings, jira, rsps):
    from governance.tracker import get_tracker

    user = UserFactory(username="pat")
    give_grant(user, expires_in=-10)
    rsps.add(
        responses.POST,
        AUTH_URL + "/oauth/token",
        json={
            "access_token": "access-2",
            "refresh_token": "refresh-2",
            "expires_in": 3600,
            "token_type": "Bearer",
            "scope": "read:jira-user read:jira-work offline_access",
        },
    )
    jira.on("getCurrentUser", (200, user_json(user.account_id, "Pat")))
    get_tracker().current_user(user.account_id)
    assert AtlassianGrant.objects.get().scopes == "read:jira-user read:jira-work offline_access"


def test_only_an_administrators_webhook_grant_asks_for_the_webhook_scope(settings):
    settings.TRACKER_BACKEND = "jira"
    settings.WIKI_BACKEND = "local"
    assert "manage:jira-webhook" not in scopes.sign_in_scopes()
    assert scopes.admin_grant_scopes() == [
        "read:jira-user",
        "read:jira-work",
        "manage:jira-webhook",
        "offline_access",
    ]
    assert scopes.allows("registerDynamicWebhooks", scopes.USER)
    assert not scopes.allows("registerDynamicWebhooks", scopes.APP)


@pytest.mark.django_db
def test_the_sign_in_url_with_grant_webhooks_asks_for_the_webhook_scope(atlassian_settings, client):
    from urllib.parse import parse_qs, urlsplit

    plain = client.get("/accounts/atlassian/login/")
    asked = parse_qs(urlsplit(plain["Location"]).query)["scope"][0].split()
    assert "manage:jira-webhook" not in asked
    admin = client.get("/accounts/atlassian/login/?grant=webhooks")
    asked = parse_qs(urlsplit(admin["Location"]).query)["scope"][0].split()
    assert "manage:jira-webhook" in asked and "offline_access" in asked
