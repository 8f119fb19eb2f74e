"""The service account's API token: which kind it is, where its calls go, when it expires.

Atlassian has two kinds of API token and nothing in a token says which it is
(https://support.atlassian.com/atlassian-cloud/kb/401-unauthorized-error-when-service-account-accesses-jira-or-confluence-api):
a classic token works on the site URL (`https://<site>.atlassian.net/rest/...`); a token
with scopes, the only kind a service account can create, works only through the gateway
(`https://api.atlassian.com/ex/jira/{cloudId}/...`, `.../ex/confluence/{cloudId}/...`) and the
site URL answers it 401
(https://support.atlassian.com/atlassian-account/docs/manage-api-tokens-for-your-atlassian-account/).
So the kind is a setting, ATLASSIAN_SERVICE_TOKEN_KIND (`classic`, the default, or `scoped`),
never guessed per request; `atlassian_check` tries the other kind when the configured one is
refused and says which setting to change.

The cloud id of a scoped token's calls is ATLASSIAN_CLOUD_ID, or else what the site's
`/_edge/tenant_info` answers (https://support.atlassian.com/jira/kb/retrieve-my-atlassian-sites-cloud-id/),
asked once and cached.

Atlassian tells a token's expiry only to organization admins (the admin API's token lists,
which Forge and OAuth apps cannot call), not to the token itself: the expiry is configured,
ATLASSIAN_SERVICE_TOKEN_EXPIRES (YYYY-MM-DD, as shown when the token was created)."""

import datetime as dt

import requests
from django.conf import settings
from django.core.cache import cache

from governance.atlassian.http import ServiceCredentials

CLASSIC, SCOPED = "classic", "scoped"
KINDS = (CLASSIC, SCOPED)
# atlassian_check warns this many days before the configured expiry.
EXPIRY_WARNING_DAYS = 30
_GATEWAY_PATH = {"Jira": "jira", "Confluence": "confluence"}


class ServiceTokenError(Exception):
    """The service token's kind, cloud id or expiry is not usable as configured."""


def token_kind() -> str:
    kind = (settings.ATLASSIAN_SERVICE_TOKEN_KIND or CLASSIC).strip().lower()
    if kind not in KINDS:
        raise ServiceTokenError(
            f"ATLASSIAN_SERVICE_TOKEN_KIND is {kind!r}: set it to 'classic' (a token from "
            "id.atlassian.com without scopes) or 'scoped' (a token with scopes, as service "
            "accounts have)."
        )
    return kind


def tenant_info_url() -> str:
    return settings.ATLASSIAN_SITE_URL + "/_edge/tenant_info"


def cloud_id() -> str:
    """ATLASSIAN_CLOUD_ID, else the site's tenant_info (cached: a site's cloud id does not
    change)."""
    if settings.ATLASSIAN_CLOUD_ID:
        return settings.ATLASSIAN_CLOUD_ID
    key = f"atlassian:v1:cloud-id:{settings.ATLASSIAN_SITE_URL}"
    found: str | None = cache.get(key)
    if found:
        return found
    try:
        answer = requests.get(
            tenant_info_url(),
            headers={"Accept": "application/json"},
            timeout=(settings.ATLASSIAN_CONNECT_TIMEOUT, settings.ATLASSIAN_READ_TIMEOUT),
        )
        found = str(answer.json().get("cloudId") or "") if answer.status_code == 200 else ""
    except (requests.RequestException, ValueError, AttributeError):
        found = ""
    if not found:
        raise ServiceTokenError(
            f"the site's cloud id could not be read from {tenant_info_url()}: set "
            "ATLASSIAN_CLOUD_ID (admin.atlassian.com, Apps, Sites: the id after /s/ in the "
            "address)."
        )
    cache.set(key, found, None)
    return found


def base_url(product: str, kind: str | None = None) -> str:
    """Where the service account's calls to `product` go: the override (a mock), the site
    for a classic token, the gateway for a scoped one."""
    override = (
        settings.ATLASSIAN_JIRA_URL if product == "Jira" else settings.ATLASSIAN_CONFLUENCE_URL
    )
    if override:
        return override
    if (kind or token_kind()) == SCOPED:
        return f"{settings.ATLASSIAN_API_URL}/ex/{_GATEWAY_PATH[product]}/{cloud_id()}"
    return settings.ATLASSIAN_SITE_URL


def credentials(
    product: str, error_class: type[Exception], kind: str | None = None
) -> ServiceCredentials:
    """The service account's Basic credentials for `product`; a named `error_class` when
    they are not configured or their base cannot be known."""
    if not (settings.ATLASSIAN_SERVICE_EMAIL and settings.ATLASSIAN_SERVICE_API_TOKEN):
        raise error_class(
            f"{product} is not configured: set ATLASSIAN_SERVICE_EMAIL and "
            "ATLASSIAN_SERVICE_API_TOKEN."
        )
    try:
        base = base_url(product, kind)
    except ServiceTokenError as exc:
        raise error_class(f"{product} is not configured: {exc}") from None
    return ServiceCredentials(
        settings.ATLASSIAN_SERVICE_EMAIL, settings.ATLASSIAN_SERVICE_API_TOKEN, base_url=base
    )


def expires() -> dt.date | None:
    """ATLASSIAN_SERVICE_TOKEN_EXPIRES as a date; None when not set."""
    value = (settings.ATLASSIAN_SERVICE_TOKEN_EXPIRES or "").strip()
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        raise ServiceTokenError(
            f"ATLASSIAN_SERVICE_TOKEN_EXPIRES is {value!r}, not a date: write it as "
            "YYYY-MM-DD (the expiry shown when the token was created)."
        ) from None
