"""An Atlassian site and its API gateway as they treat the service account's two kinds of API
token, for tests; the requests are checked against the contract documents as everywhere.

- A classic API token (id.atlassian.com, no scopes) authenticates on the site URL,
  `https://<site>.atlassian.net/rest/...`; a token with scopes, the only kind a service
  account can create, is answered 401 there and works only through
  `https://api.atlassian.com/ex/jira/{cloudId}/...` and `.../ex/confluence/{cloudId}/...`
  (https://support.atlassian.com/atlassian-cloud/kb/401-unauthorized-error-when-service-account-accesses-jira-or-confluence-api/;
  https://support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account/,
  "URLs for API tokens with scopes"). The same page says to use "the appropriate URL format
  for the API token type": here the gateway answers a classic token 401 too.
- The site tells its cloud id, unauthenticated, at `/_edge/tenant_info` as
  `{"cloudId": "..."}` (https://support.atlassian.com/jira/kb/retrieve-my-atlassian-sites-cloud-id/).
- OAuth (Bearer) tokens of people go through the gateway and are let through."""

import base64

import responses

from tests.atlassian.contract import CONFLUENCE_V1, CONFLUENCE_V2, JIRA, AtlassianMock

SITE = "https://example.atlassian.net"
API = "https://api.test"
CLOUD = "0f6e0b2a-cloud-id"
EMAIL = "governance-bot@example.com"
CLASSIC_TOKEN = "classic-api-token"
SCOPED_TOKEN = "scoped-api-token"
UNAUTHENTICATED = (401, {"message": "Client must be authenticated to access this resource."})


def _token(request) -> str:
    header = request.headers.get("Authorization", "")
    if not header.startswith("Basic "):
        return ""
    return base64.b64decode(header[6:]).decode().partition(":")[2]


class FakeTokenSite:
    """`site` (Jira and Confluence on the site URL), `jira` and `wiki` (the gateway's), and
    `tenant_info` (the calls to /_edge/tenant_info)."""

    def __init__(self, rsps: responses.RequestsMock, settings):
        settings.ATLASSIAN_SITE_URL = SITE
        settings.ATLASSIAN_API_URL = API
        settings.ATLASSIAN_JIRA_URL = ""
        settings.ATLASSIAN_CONFLUENCE_URL = ""
        settings.ATLASSIAN_CONFLUENCE_V2_URL = ""
        settings.ATLASSIAN_SERVICE_EMAIL = EMAIL
        self.site = AtlassianMock(
            rsps, SITE, [("/wiki/api/v2", CONFLUENCE_V2), ("", CONFLUENCE_V1), ("", JIRA)]
        )
        self.jira = AtlassianMock(rsps, f"{API}/ex/jira/{CLOUD}", [("", JIRA)])
        self.wiki = AtlassianMock(
            rsps,
            f"{API}/ex/confluence/{CLOUD}",
            [("/wiki/api/v2", CONFLUENCE_V2), ("", CONFLUENCE_V1)],
        )
        self.site.gate = lambda request: self._refused(request, CLASSIC_TOKEN)
        self.jira.gate = self.wiki.gate = lambda request: self._refused(request, SCOPED_TOKEN)
        self.tenant_info = []
        self.cloud_id = CLOUD
        # Not an operation of the REST documents: answered beside them, unauthenticated.
        self.site.uncontracted[("GET", "/_edge/tenant_info")] = self._tenant

    def _tenant(self, request, query, body):
        self.tenant_info.append(request)
        return (200, {"cloudId": self.cloud_id}) if self.cloud_id else (404, {})

    @staticmethod
    def _refused(request, accepted: str):
        """401 for Basic credentials with any token but `accepted` (the other kind, or an
        unknown or revoked one); Bearer tokens (people's OAuth) pass."""
        header = request.headers.get("Authorization", "")
        if header.startswith("Basic ") and _token(request) != accepted:
            return UNAUTHENTICATED
        return None

    def on_site(self) -> list:
        """The REST calls made on the site URL (tenant_info aside)."""
        return [call for call in self.site.calls if not call[0].startswith("GET /_edge/")]

    def mocks(self):
        return (self.site, self.jira, self.wiki)

    def on(self, operation: str, handler) -> None:
        for mock in self.mocks():
            mock.on(operation, handler)

    def violations(self) -> list[str]:
        return [v for mock in self.mocks() for v in mock.violations]
