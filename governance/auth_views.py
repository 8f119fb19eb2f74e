"""Signing in. With TRACKER_BACKEND=local: username and password (the laptop demo). With
TRACKER_BACKEND=jira: "Sign in with Atlassian" (OAuth 2.0 3LO, authorization code with state
and PKCE, through Authlib); only Django superusers may still use a password there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import HttpResponse

if TYPE_CHECKING:
    from django.http import HttpRequest

    from governance.models import User


import hmac
import logging

import requests
from authlib.common.security import generate_token
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from governance import auth_backends, mirror
from governance.atlassian import grants, scopes
from governance.atlassian.http import BearerCredentials
from governance.http import page
from governance.tracker import TrackerError, get_tracker
from governance.tracker.jira import JiraTracker

logger = logging.getLogger(__name__)
SESSION_KEY = "atlassian_oauth"


def atlassian_mode() -> bool:
    backend: str = settings.TRACKER_BACKEND
    return backend == "jira"


class SuperuserPasswordForm(AuthenticationForm):
    """With Jira, a password signs in Django superusers only; people use Atlassian."""

    def confirm_login_allowed(self, user: User) -> None:
        super().confirm_login_allowed(user)
        if not user.is_superuser:
            raise ValidationError(
                "Sign in with your Atlassian account; passwords are for administrators only.",
                code="atlassian_only",
            )


class LoginView(auth_views.LoginView):
    redirect_authenticated_user = True

    def get_form_class(self) -> type[AuthenticationForm]:
        return SuperuserPasswordForm if atlassian_mode() else AuthenticationForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "atlassian": atlassian_mode()}


def _refuse(request: HttpRequest, message: str, status: int = 400) -> HttpResponse:
    return render(
        request,
        "registration/atlassian_refused.html",
        {"message": message},
        status=status,
    )


def _callback_url(request: HttpRequest) -> str:
    return request.build_absolute_uri(reverse("atlassian-callback"))


@page("GET", login=False)
def atlassian_login(request: HttpRequest) -> HttpResponse:
    if not atlassian_mode():
        raise Http404
    if not (settings.ATLASSIAN_CLIENT_ID and settings.ATLASSIAN_CLIENT_SECRET):
        return _refuse(
            request,
            "Sign-in with Atlassian is not configured: ATLASSIAN_CLIENT_ID and "
            "ATLASSIAN_CLIENT_SECRET are missing. Tell your administrator.",
            503,
        )
    verifier = generate_token(64)
    # A Jira administrator grants the webhooks' scope once (docs/atlassian.md, item 13);
    # everyone else is asked only for sign-in's read scopes.
    wanted = (
        scopes.admin_grant_scopes()
        if request.GET.get("grant") == "webhooks"
        else grants.sign_in_scopes()
    )
    client = grants.oauth_session(
        scope=" ".join(wanted),
        redirect_uri=_callback_url(request),
        code_challenge_method="S256",
    )
    url, state = client.create_authorization_url(
        grants.authorize_url(),
        code_verifier=verifier,
        audience="api.atlassian.com",
        prompt="consent",
    )
    next_url = request.GET.get("next", "")
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = ""
    request.session[SESSION_KEY] = {"state": state, "verifier": verifier, "next": next_url}
    return redirect(url)


def _pick_site(resources: list[dict[str, Any]]) -> dict[str, Any] | None:
    wanted = settings.ATLASSIAN_SITE_URL.rstrip("/").lower()
    for resource in resources if isinstance(resources, list) else []:
        if str(resource.get("url", "")).rstrip("/").lower() == wanted:
            return resource
    return None


@page("GET", login=False)
def atlassian_callback(request: HttpRequest) -> HttpResponse:
    if not atlassian_mode():
        raise Http404
    pending = request.session.pop(SESSION_KEY, None)
    if request.GET.get("error"):
        return _refuse(
            request,
            "Atlassian did not grant access ("
            + request.GET.get("error_description", request.GET["error"])[:200]
            + "). You can try again.",
            403,
        )
    state = request.GET.get("state", "")
    if not pending or not state or not hmac.compare_digest(state, pending["state"]):
        return _refuse(
            request,
            "This sign-in could not be verified: it did not start here or has already been "
            "used. Start again.",
        )
    code = request.GET.get("code", "")
    if not code:
        return _refuse(request, "Atlassian sent no authorization code. Start again.")
    client = grants.oauth_session(redirect_uri=_callback_url(request))
    try:
        token = client.fetch_token(
            grants.token_url(),
            grant_type="authorization_code",
            code=code,
            code_verifier=pending["verifier"],
        )
        answer = requests.get(
            grants.resources_url(),
            headers={"Authorization": f"Bearer {token['access_token']}"},
            timeout=(settings.ATLASSIAN_CONNECT_TIMEOUT, settings.ATLASSIAN_READ_TIMEOUT),
        )
        answer.raise_for_status()
        resources = answer.json()
    except requests.RequestException as exc:
        logger.warning("Atlassian sign-in: %s", type(exc).__name__)
        return _refuse(request, "Atlassian is not answering. Try again in a minute.", 503)
    except Exception as exc:  # authlib's OAuthError: a refused or replayed code
        logger.info("Atlassian sign-in refused: %s", type(exc).__name__)
        return _refuse(request, "Atlassian refused this sign-in. Start again.", 403)
    site = _pick_site(resources)
    if site is None:
        return _refuse(
            request,
            f"Your Atlassian account has not granted access to {settings.ATLASSIAN_SITE_URL}, "
            "the site this app works with. Sign in again and choose that site, or ask its "
            "administrator for access.",
            403,
        )
    tracker = get_tracker()
    if not isinstance(tracker, JiraTracker):  # atlassian_mode(): TRACKER_BACKEND is jira
        raise Http404
    try:
        me = tracker.http.request(
            "getCurrentUser",
            "GET",
            "/rest/api/3/myself",
            BearerCredentials(token["access_token"], grants.api_base("Jira", site["id"])),
        )
    except TrackerError as exc:
        return _refuse(request, f"Jira could not say who you are: {exc}", 503)
    account_id = (me or {}).get("accountId")
    if not account_id:
        return _refuse(request, "Jira could not say who you are. Start again.", 503)
    user = _user_for(account_id, me)
    if not user.is_active:
        return _refuse(request, "This account is disabled here.", 403)
    login(request, user, backend=auth_backends.PATH)
    grants.store(user, account_id=account_id, cloud_id=site["id"], token=token)
    mirror.sync_browsable(account_id)  # their projects mirrored before their first page
    messages.success(request, f"Signed in as {me.get('displayName') or account_id}.")
    return redirect(pending.get("next") or "project-list")


def _user_for(account_id: str, me: dict[str, Any]) -> User:
    """The person keyed by their accountId (the tracker accountId records use)."""
    User = get_user_model()
    with transaction.atomic():
        user, created = User.objects.get_or_create(
            account_id=account_id,
            defaults={"username": account_id[:150], "email": me.get("emailAddress") or ""},
        )
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
    return user


def forget_grant_on_sign_out(
    sender: type[User], request: HttpRequest, user: User | None, **kwargs: Any
) -> None:
    """Signing out of any session deletes the person's Atlassian tokens: every other session
    of theirs then goes back through sign-in."""
    if user is not None:
        grants.forget(user)
