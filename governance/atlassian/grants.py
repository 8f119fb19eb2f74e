"""People's Atlassian OAuth grants: stored encrypted, refreshed when expired (or once on a
401), the rotated refresh token stored in the same transaction under a row lock so two
processes refreshing at once do not both spend it; deleted on sign-out. The protocol itself
is Authlib's (authorization code with state and PKCE, refresh)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from governance.models import User


import datetime as dt
import logging

import requests
from authlib.integrations.requests_client import OAuth2Session
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from governance.atlassian import crypto, scopes
from governance.atlassian.errors import AtlassianUnavailable, SignInRequired
from governance.models import AtlassianGrant

logger = logging.getLogger(__name__)


def sign_in_scopes() -> list[str]:
    """The scopes asked for at sign-in, derived from the one table of calls
    (governance.atlassian.scopes): those of the calls made as the person (Confluence's only
    when the wiki is Confluence), and refresh tokens."""
    return scopes.sign_in_scopes()


# Refresh a little before the expiry Atlassian gave.
EXPIRY_MARGIN = dt.timedelta(seconds=60)


def authorize_url() -> str:
    return settings.ATLASSIAN_AUTH_URL + "/authorize"


def token_url() -> str:
    return settings.ATLASSIAN_AUTH_URL + "/oauth/token"


def resources_url() -> str:
    return settings.ATLASSIAN_API_URL + "/oauth/token/accessible-resources"


def api_base(product: str, cloud_id: str) -> str:
    """Where a person's calls to `product` go: the override (a mock) or the gateway."""
    if product == "Jira":
        override = settings.ATLASSIAN_JIRA_URL
        return override or f"{settings.ATLASSIAN_API_URL}/ex/jira/{cloud_id}"
    override = settings.ATLASSIAN_CONFLUENCE_URL
    return override or f"{settings.ATLASSIAN_API_URL}/ex/confluence/{cloud_id}"


def oauth_session(**kwargs: Any) -> OAuth2Session:
    return OAuth2Session(
        settings.ATLASSIAN_CLIENT_ID,
        settings.ATLASSIAN_CLIENT_SECRET,
        token_endpoint_auth_method="client_secret_post",
        timeout=(settings.ATLASSIAN_CONNECT_TIMEOUT, settings.ATLASSIAN_READ_TIMEOUT),
        **kwargs,
    )


def _expiry(token: dict[str, Any]) -> dt.datetime:
    seconds = int(token.get("expires_in") or 3600)
    return timezone.now() + dt.timedelta(seconds=seconds)


def store(user: User, *, account_id: str, cloud_id: str, token: dict[str, Any]) -> AtlassianGrant:
    """Keep a fresh grant (on sign-in), encrypted."""
    with transaction.atomic():
        AtlassianGrant.objects.filter(account_id=account_id).exclude(user=user).delete()
        grant, _ = AtlassianGrant.objects.update_or_create(
            user=user,
            defaults={
                "account_id": account_id,
                "cloud_id": cloud_id,
                "access_token": crypto.encrypt(token["access_token"]),
                "refresh_token": crypto.encrypt(token.get("refresh_token") or ""),
                "expires_at": _expiry(token),
                "scopes": str(token.get("scope") or ""),
            },
        )
    return grant


def forget(user: User) -> None:
    AtlassianGrant.objects.filter(user=user).delete()


def has_grant(account_id: str) -> bool:
    return bool(account_id) and AtlassianGrant.objects.filter(account_id=account_id).exists()


def access_token(account_id: str, *, force_refresh: bool = False) -> tuple[str, str]:
    """(access token, cloud id) for the person, refreshed when expired or when forced."""
    grant = AtlassianGrant.objects.filter(account_id=account_id).first() if account_id else None
    if grant is None:
        raise SignInRequired("Sign in with Atlassian to continue.")
    token = crypto.decrypt(grant.access_token)
    if token and not force_refresh and grant.expires_at > timezone.now() + EXPIRY_MARGIN:
        return token, grant.cloud_id
    return _refresh(account_id, stale=grant.access_token), grant.cloud_id


def _refresh(account_id: str, *, stale: str) -> str:
    revoked = ""
    with transaction.atomic():
        grant = AtlassianGrant.objects.select_for_update().filter(account_id=account_id).first()
        if grant is None:
            raise SignInRequired("Sign in with Atlassian to continue.")
        if grant.access_token != stale and grant.expires_at > timezone.now() + EXPIRY_MARGIN:
            # Another process refreshed while this one waited for the lock.
            return crypto.decrypt(grant.access_token)
        refresh_token = crypto.decrypt(grant.refresh_token)
        token = None
        if not refresh_token:
            revoked = "Your Atlassian sign-in has expired. Sign in again."
        else:
            try:
                token = oauth_session().refresh_token(token_url(), refresh_token=refresh_token)
            except requests.RequestException:
                raise AtlassianUnavailable(
                    "The Atlassian authorization server is not answering."
                ) from None
            except Exception as exc:  # authlib's OAuthError: invalid_grant, revoked, expired
                logger.info("Atlassian refresh refused for %s: %s", account_id, type(exc).__name__)
                revoked = "Your Atlassian sign-in has expired or was revoked. Sign in again."
        if token is not None:
            grant.access_token = crypto.encrypt(token["access_token"])
            # Atlassian rotates the refresh token on every refresh: the old one is spent.
            if token.get("refresh_token"):
                grant.refresh_token = crypto.encrypt(token["refresh_token"])
            grant.expires_at = _expiry(token)
            fields = ["access_token", "refresh_token", "expires_at", "updated_at"]
            # What the person granted, as the authorization server says on each refresh.
            if token.get("scope"):
                grant.scopes = str(token["scope"])
                fields.append("scopes")
            grant.save(update_fields=fields)
            access: str = token["access_token"]
            return access
    AtlassianGrant.objects.filter(account_id=account_id).delete()
    raise SignInRequired(revoked)


def rotate_key() -> int:
    """Re-encrypt every stored token with the first ATLASSIAN_TOKEN_KEY. Returns the count."""
    count = 0
    with transaction.atomic():
        for grant in AtlassianGrant.objects.select_for_update():
            grant.access_token = crypto.rotate(grant.access_token)
            grant.refresh_token = crypto.rotate(grant.refresh_token)
            grant.save(update_fields=["access_token", "refresh_token"])
            count += 1
    return count
