"""The service account's API token of either kind (issue 20, item 9), against a site and a
gateway that treat them as Atlassian documents (tests/atlassian/fake_tokens.py):

- a classic token works on the site URL; a token with scopes (the only kind a service
  account can create) is refused there with 401 and works through
  `api.atlassian.com/ex/jira/{cloudId}` and `.../ex/confluence/{cloudId}`
  (https://support.atlassian.com/atlassian-cloud/kb/401-unauthorized-error-when-service-account-accesses-jira-or-confluence-api/,
  https://support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account/);
- the cloud id is ATLASSIAN_CLOUD_ID or the site's `/_edge/tenant_info`
  (https://support.atlassian.com/jira/kb/retrieve-my-atlassian-sites-cloud-id/);
- a token's expiry is told only to organization admins (the admin API's token lists,
  https://developer.atlassian.com/cloud/admin/api-access/rest/api-group-api-token/, which
  Forge and OAuth apps cannot call), so it is configured (ATLASSIAN_SERVICE_TOKEN_EXPIRES)
  and atlassian_check warns 30 days before.

Every request is checked against the contract documents (the gateway serves the same
operations under its prefix)."""

import datetime as dt

import pytest
import responses
from django.utils import timezone

from governance.atlassian import scopes
from governance.models import AtlassianGrant
from governance.tracker import TrackerError, get_tracker
from governance.wiki import WikiError
from governance.wiki.confluence import ConfluenceWiki
from tests.atlassian.conftest import AUTH_URL, give_grant, grant_all, user_json
from tests.atlassian.conftest import run_check as run
from tests.atlassian.fake_tokens import (
    CLASSIC_TOKEN,
    CLOUD,
    SCOPED_TOKEN,
    SITE,
    FakeTokenSite,
)
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def project(key="ALPHA"):
    return {"id": "10000", "key": key, "name": f"{key} project", "lead": user_json("l", "Lead")}


def page(page_id="123"):
    return {
        "id": page_id,
        "status": "current",
        "title": "Board paper",
        "spaceId": "98",
        "_links": {"webui": f"/spaces/GOV/pages/{page_id}"},
    }


@pytest.fixture
def site(atlassian_settings, rsps):
    fake = FakeTokenSite(rsps, atlassian_settings)
    fake.on("getProject", (200, project()))
    fake.on("getPageById", (200, page()))
    fake.on("getCurrentUser", (200, user_json("svc", "Governance bot")))
    yield fake
    assert not fake.violations(), fake.violations()


def with_token(settings, token, kind):
    settings.ATLASSIAN_SERVICE_API_TOKEN = token
    settings.ATLASSIAN_SERVICE_TOKEN_KIND = kind


def test_a_classic_token_works_on_the_site_url(site, atlassian_settings):
    with_token(atlassian_settings, CLASSIC_TOKEN, "classic")
    assert get_tracker().get_project("ALPHA").key == "ALPHA"
    assert ConfluenceWiki().get_page("123").title == "Board paper"
    assert site.site.count("getProject") == site.site.count("getPageById") == 1
    assert not site.jira.calls and not site.wiki.calls and not site.tenant_info


def test_a_scoped_token_on_the_site_url_is_refused_with_401(site, atlassian_settings):
    with_token(atlassian_settings, SCOPED_TOKEN, "classic")
    with pytest.raises(TrackerError, match="HTTP 401"):
        get_tracker().get_project("ALPHA")


def test_a_scoped_token_goes_through_the_gateway_with_the_cloud_id_of_tenant_info(
    site, atlassian_settings
):
    with_token(atlassian_settings, SCOPED_TOKEN, "scoped")
    tracker = get_tracker()
    assert tracker.get_project("ALPHA").key == "ALPHA"
    assert tracker.get_project("BETA") is not None
    wiki_page = ConfluenceWiki().get_page("123")
    assert site.jira.count("getProject") == 2 and site.wiki.count("getPageById") == 1
    assert site.wiki.calls and not site.on_site()
    assert len(site.tenant_info) == 1  # asked once, then cached
    # Links are for people: on the site, not the gateway.
    assert wiki_page.url == SITE + "/wiki/spaces/GOV/pages/123"


def test_a_scoped_token_writes_confluence_v2_and_v1_through_the_gateway(site, atlassian_settings):
    with_token(atlassian_settings, SCOPED_TOKEN, "scoped")
    site.on(
        "getSpaces",
        (200, {"results": [{"id": "98", "key": "GOV", "name": "Governance"}], "_links": {}}),
    )
    site.on("createPage", lambda r, q, b: (200, page("555")))
    site.on(
        "addLabelsToContent",
        lambda r, q, b: (
            200,
            {"results": [{"id": "1", "name": "x", "prefix": "global", "label": "x"}], "size": 1},
        ),
    )
    created = ConfluenceWiki().create_page(
        space_key="GOV", title="Board paper", body="text", labels=["governance"]
    )
    assert created.id == "555" and created.url == SITE + "/wiki/spaces/GOV/pages/555"
    assert [name for name, _, _ in site.wiki.calls] == [
        "getSpaces",
        "createPage",
        "addLabelsToContent",
    ]
    assert not site.on_site()


def test_the_cloud_id_setting_spares_the_tenant_info_lookup(site, atlassian_settings):
    with_token(atlassian_settings, SCOPED_TOKEN, "scoped")
    atlassian_settings.ATLASSIAN_CLOUD_ID = CLOUD
    assert get_tracker().get_project("ALPHA").key == "ALPHA"
    assert not site.tenant_info


def test_an_unknown_cloud_id_is_a_named_error(site, atlassian_settings):
    with_token(atlassian_settings, SCOPED_TOKEN, "scoped")
    site.cloud_id = ""
    with pytest.raises(TrackerError, match="ATLASSIAN_CLOUD_ID"):
        get_tracker().get_project("ALPHA")
    with pytest.raises(WikiError, match="ATLASSIAN_CLOUD_ID"):
        ConfluenceWiki().get_page("123")
    assert not site.jira.calls and not site.on_site()


def test_people_still_call_the_gateway_with_their_own_token(site, atlassian_settings):
    with_token(atlassian_settings, CLASSIC_TOKEN, "classic")
    user = UserFactory(username="pat")
    give_grant(user, cloud=CLOUD)
    assert get_tracker().current_user(user.account_id).display_name == "Governance bot"
    assert site.jira.count("getCurrentUser") == 1 and not site.on_site()


# atlassian_check ---------------------------------------------------------------------------
@pytest.fixture
def check(site, atlassian_settings, rsps):
    atlassian_settings.WIKI_BACKEND = "local"
    rsps.add(
        responses.POST,
        AUTH_URL + "/oauth/token",
        status=403,
        json={"error": "invalid_grant", "error_description": "Invalid authorization code"},
    )
    site.on(
        "getMyPermissions",
        (200, {"permissions": {"ADMINISTER": {"key": "ADMINISTER", "havePermission": True}}}),
    )
    site.on("getBulkPermissions", grant_all)
    site.on(
        "getFieldsPaginated",
        (
            200,
            {
                "isLast": True,
                "values": [
                    {"id": "customfield_1", "name": "Work Package", "schema": {"type": "string"}}
                ],
            },
        ),
    )
    grant = give_grant(UserFactory(username="pat"))
    AtlassianGrant.objects.filter(pk=grant.pk).update(scopes=" ".join(scopes.sign_in_scopes()))
    return atlassian_settings


def test_check_says_a_classic_token_was_found(check):
    with_token(check, CLASSIC_TOKEN, "classic")
    code, out, err = run()
    assert code == 0, err
    assert f"service token: a classic API token (on the site URL), accepted at {SITE}" in out


def test_check_says_a_scoped_token_was_found_and_the_scopes_it_needs(check, site):
    with_token(check, SCOPED_TOKEN, "scoped")
    code, out, err = run()
    assert code == 0, err
    assert "service token: an API token with scopes" in out
    assert f"accepted at https://api.test/ex/jira/{CLOUD}" in out
    assert (
        "the service token needs: read:jira-user, read:jira-work, manage:jira-configuration" in out
    )
    assert site.jira.count("getFieldsPaginated") == 1 and not site.on_site()


def test_check_fails_naming_the_kind_to_set_for_a_scoped_token_sent_to_the_site(check):
    with_token(check, SCOPED_TOKEN, "classic")
    code, _out, err = run()
    assert code == 2
    assert "is an API token with scopes" in err
    assert "set ATLASSIAN_SERVICE_TOKEN_KIND=scoped" in err
    assert SCOPED_TOKEN not in err


def test_check_fails_naming_the_kind_to_set_for_a_classic_token_sent_to_the_gateway(check):
    with_token(check, CLASSIC_TOKEN, "scoped")
    code, _out, err = run()
    assert code == 2 and "set ATLASSIAN_SERVICE_TOKEN_KIND=classic" in err


def test_check_fails_asking_for_a_new_token_when_neither_place_accepts_it(check):
    with_token(check, "revoked-token", "classic")
    code, _out, err = run()
    assert code == 2 and "create a new API token" in err


def test_check_refuses_a_kind_it_does_not_know(check):
    with_token(check, CLASSIC_TOKEN, "granular")
    code, _out, err = run()
    assert code == 2 and "ATLASSIAN_SERVICE_TOKEN_KIND is 'granular'" in err


def _expires_in(settings, days: int):
    settings.ATLASSIAN_SERVICE_TOKEN_EXPIRES = (
        timezone.localdate() + dt.timedelta(days=days)
    ).isoformat()


def test_check_warns_when_the_token_expires_within_30_days(check):
    with_token(check, CLASSIC_TOKEN, "classic")
    _expires_in(check, 30)
    code, out, err = run()
    assert code == 0, err
    assert "service token expires in 30 days" in out
    assert "create a new API token for the service account before then" in out


def test_check_notes_a_far_expiry_and_an_unknown_one(check):
    with_token(check, CLASSIC_TOKEN, "classic")
    _expires_in(check, 31)
    code, out, _ = run()
    assert code == 0 and "(31 days)" in out and "expires in" not in out
    check.ATLASSIAN_SERVICE_TOKEN_EXPIRES = ""
    code, out, _ = run()
    assert code == 0 and "set ATLASSIAN_SERVICE_TOKEN_EXPIRES" in out


def test_check_fails_when_the_token_has_expired_or_its_expiry_is_not_a_date(check):
    with_token(check, CLASSIC_TOKEN, "classic")
    _expires_in(check, -1)
    code, _out, err = run()
    assert code == 2 and "expired on" in err and "ATLASSIAN_SERVICE_TOKEN_EXPIRES" in err
    check.ATLASSIAN_SERVICE_TOKEN_EXPIRES = "next spring"
    code, _out, err = run()
    assert code == 2 and "YYYY-MM-DD" in err
