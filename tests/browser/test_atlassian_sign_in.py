"""Sign in with Atlassian in a real browser: the login page sends the person to a fake
Atlassian authorization server (pytest-httpserver), which sends them back with a code; the
app exchanges it, picks the site, maps the accountId and lands on My projects, whose list
comes from the Jira stand-in."""

from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import expect
from werkzeug import Response

from governance.models import AtlassianGrant
from tests.atlassian.conftest import atlassian_settings, jira, rsps  # noqa: F401  (fixtures)
from tests.atlassian.fake_jira import FakeJira

pytestmark = pytest.mark.browser
SITE = "https://example.atlassian.net"


@pytest.fixture
def fake_atlassian(cast, httpserver, atlassian_settings, rsps, jira):  # noqa: F811
    base = httpserver.url_for("").rstrip("/")
    atlassian_settings.ATLASSIAN_AUTH_URL = base
    atlassian_settings.ATLASSIAN_API_URL = base
    atlassian_settings.ATLASSIAN_SITE_URL = SITE
    rsps.add_passthru(base)
    lead = cast.lead.account_id

    def authorize(request):
        query = parse_qs(urlsplit(request.url).query)
        back = (
            query["redirect_uri"][0]
            + "?"
            + urlencode({"code": "code-1", "state": query["state"][0]})
        )
        return Response(status=302, headers={"Location": back})

    httpserver.expect_request("/authorize").respond_with_handler(authorize)
    httpserver.expect_request("/oauth/token", method="POST").respond_with_json(
        {
            "access_token": f"tok-{lead}",
            "refresh_token": "refresh-1",
            "expires_in": 3600,
            "token_type": "Bearer",
            "scope": "read:jira-work offline_access",
        }
    )
    httpserver.expect_request("/oauth/token/accessible-resources").respond_with_json(
        [{"id": "cloud-1", "name": "example", "url": SITE, "scopes": [], "avatarUrl": ""}]
    )
    return FakeJira(jira)


def test_sign_in_with_atlassian_lands_on_my_projects(
    fake_atlassian, live_server, watched_page, cast
):
    page = watched_page
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_role("link", name="Sign in with Atlassian").click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.get_by_role("heading", name="My projects")).to_be_visible()
    expect(page.get_by_role("link", name="Alpha programme")).to_be_visible()
    assert AtlassianGrant.objects.get(account_id=cast.lead.account_id).cloud_id == "cloud-1"
