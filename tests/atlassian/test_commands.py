"""`atlassian_check` and `wiki_setup` against the contract mocks."""

import io

import pytest
import responses
from django.core.management import call_command

from governance.models import AtlassianGrant
from tests.atlassian.conftest import AUTH_URL, give_grant, grant_all, user_json
from tests.atlassian.conftest import run_check as run
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def healthy(atlassian_settings, rsps, jira, confluence):
    atlassian_settings.WIKI_BACKEND = "confluence"
    rsps.add(
        responses.POST,
        AUTH_URL + "/oauth/token",
        status=403,
        json={"error": "invalid_grant", "error_description": "Invalid authorization code"},
    )
    jira.on("getCurrentUser", (200, user_json("svc", "Governance bot")))
    jira.on(
        "getMyPermissions",
        (200, {"permissions": {"ADMINISTER": {"key": "ADMINISTER", "havePermission": True}}}),
    )
    jira.on("getBulkPermissions", grant_all)
    jira.on(
        "getFieldsPaginated",
        (
            200,
            {
                "isLast": True,
                "values": [
                    {
                        "id": "customfield_10101",
                        "name": "Work Package",
                        "schema": {"type": "string"},
                    }
                ],
            },
        ),
    )
    confluence.on(
        "getSpaces", (200, {"results": [{"id": "98", "key": "GOV", "name": "Gov"}], "_links": {}})
    )
    user = UserFactory(username="pat")
    grant = give_grant(user)
    AtlassianGrant.objects.filter(pk=grant.pk).update(
        scopes="read:jira-work read:jira-user write:jira-work manage:jira-configuration "
        "search:confluence "
        "offline_access"
    )
    return jira


def test_check_passes_against_the_mocks(healthy):
    code, out, err = run()
    assert code == 0, err
    for line in (
        "settings:",
        "OAuth app",
        "service account is a Jira administrator",
        "scope read:jira-work granted (getMyPermissions, searchProjects",
        "scope search:confluence granted (searchByCQL)",
        "service token: a classic API token (on the site URL)",
        "scopes granted but used by no call made as a person: manage:jira-configuration, "
        "write:jira-work",
        "custom field 'Work Package' present",
        "wiki space GOV present",
        "All checks passed.",
    ):
        assert line in out


def test_a_grant_without_the_readers_confluence_search_fails_naming_the_scope(healthy):
    AtlassianGrant.objects.update(
        scopes="read:jira-work read:jira-user write:jira-work manage:jira-configuration "
        "offline_access"
    )
    code, _out, err = run()
    assert code == 2 and "[scopes]" in err
    assert "search:confluence (needed by searchByCQL)" in err
    assert "developer console" in err


def test_a_wrong_service_token_fails_naming_it(healthy):
    healthy.on("getCurrentUser", (401, {"message": "Client must be authenticated"}))
    code, out, err = run()
    assert code == 2
    assert "ATLASSIAN_SERVICE_API_TOKEN" in err
    assert "service-api-token" not in out + err


def test_a_wrong_client_secret_fails_naming_it(healthy, rsps):
    rsps.replace(
        responses.POST,
        AUTH_URL + "/oauth/token",
        status=401,
        json={"error": "invalid_client", "error_description": "Unauthorized"},
    )
    code, _, err = run()
    assert code == 2 and "ATLASSIAN_CLIENT_SECRET" in err


def test_a_missing_token_key_fails_naming_it(healthy, settings):
    settings.ATLASSIAN_TOKEN_KEY = ""
    code, _, err = run()
    assert code == 2 and "[settings]" in err and "ATLASSIAN_TOKEN_KEY" in err


def test_missing_field_and_missing_space(healthy, confluence):
    healthy.on("getFieldsPaginated", (200, {"isLast": True, "values": []}))
    code, _, err = run()
    assert code == 2 and "[field]" in err and "Work Package" in err
    healthy.on(
        "getFieldsPaginated",
        (
            200,
            {
                "isLast": True,
                "values": [{"id": "c1", "name": "Work Package", "schema": {"type": "string"}}],
            },
        ),
    )
    confluence.on("getSpaces", (200, {"results": [], "_links": {}}))
    code, _, err = run()
    assert code == 2 and "[wiki]" in err and "wiki_setup" in err


def test_wiki_setup_creates_the_space_once(atlassian_settings, confluence):
    atlassian_settings.WIKI_BACKEND = "confluence"
    spaces = []
    confluence.on("getSpaces", lambda r, q, b: (200, {"results": spaces, "_links": {}}))

    def create(request, query, body):
        spaces.append({"id": "99", "key": body["key"], "name": body["name"]})
        return 200, {
            "id": 99,
            "key": body["key"],
            "name": body["name"],
            "status": "current",
            "type": "global",
            "_expandable": {},
            "_links": {},
        }

    confluence.on("createSpace", create)
    out = io.StringIO()
    call_command("wiki_setup", stdout=out)
    call_command("wiki_setup", stdout=out)
    assert "Created space GOV" in out.getvalue() and "already exists" in out.getvalue()
    assert confluence.count("createSpace") == 1


def test_wiki_setup_with_the_local_wiki_does_nothing(db):
    out = io.StringIO()
    call_command("wiki_setup", stdout=out)
    assert "nothing to set up" in out.getvalue()


def test_rotate_key_re_encrypts_with_the_new_first_key(atlassian_settings):
    from cryptography.fernet import Fernet

    from governance.atlassian import crypto

    old = atlassian_settings.ATLASSIAN_TOKEN_KEY
    grant = give_grant(UserFactory(username="pat"), access="secret-access")
    new = Fernet.generate_key().decode()
    atlassian_settings.ATLASSIAN_TOKEN_KEY = f"{new},{old}"
    call_command("atlassian_rotate_key", stdout=io.StringIO())
    atlassian_settings.ATLASSIAN_TOKEN_KEY = new  # the old key dropped
    grant.refresh_from_db()
    assert crypto.decrypt(grant.access_token) == "secret-access"


def test_the_service_accounts_missing_permissions_are_named_with_where_to_grant_them(healthy):
    from governance.models import Project

    Project.objects.create(key="ALPHA", name="Alpha", tracker_id="10001")
    Project.objects.create(key="BETA", name="Beta", tracker_id="10002")
    healthy.on(
        "getBulkPermissions",
        (200, {"globalPermissions": [], "projectPermissions": []}),
    )
    code, _, err = run()
    assert code == 2 and "[permissions]" in err and "Browse users and groups" in err
    healthy.on(
        "getBulkPermissions",
        (
            200,
            {
                "globalPermissions": ["USER_PICKER"],
                "projectPermissions": [
                    {"permission": "BROWSE_PROJECTS", "projects": [10001, 10002], "issues": []},
                    {"permission": "EDIT_ISSUES", "projects": [10001], "issues": []},
                ],
            },
        ),
    )
    code, _, err = run()
    assert code == 2 and "Edit issues in BETA" in err and "permission schemes" in err
    healthy.on("getBulkPermissions", grant_all)
    code, out, err = run()
    assert "browse and edit issues in 2 linked projects" in out
