"""Kernel URLs: project list, overview, editors, audit, profile, tokens, wiki, API."""

from datetime import timedelta

from django.utils import timezone
from oauth2_provider.models import AccessToken, Application

from governance.models import OutboundTask
from governance.services import token_create
from governance.wiki.local.models import LocalWikiPage
from tests.permission_matrix import (
    HIDE,
    LEAD_ONLY,
    LOGIN,
    PUBLIC,
    READ,
    SIGNED_IN,
    SITE_ADMIN,
    profile,
)


def setup(world):
    world.dead_task = OutboundTask.objects.create(
        name="registers.work_package_field", state="dead", attempts=8, last_error="down"
    )
    # A page made for the project: read as the project is (a page of no project: site admins,
    # tests/hardening/test_reads_do_not_leak.py).
    world.wiki_page = LocalWikiPage.objects.create(
        space_key="GOV", title="A page", body="Hello", project_key=world.project.key
    )


def _own_client(world, user):
    """A client connected to `user` with OAuth (an application holding a token of theirs)."""
    if user is None:
        return 999999
    application = Application.objects.create(
        name="matrix",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1:9/cb",
    )
    AccessToken.objects.create(
        user=user,
        application=application,
        token=f"matrix-{user.pk}-{application.pk}",
        expires=timezone.now() + timedelta(hours=1),
        scope="mcp",
    )
    return application.pk


def _own_token(world, user):
    if user is None:
        return 999999
    token, _ = token_create(user=user, name="matrix")
    return token.pk


RESOLVERS = {
    "key": lambda world, user: world.project.key,
    "token_id": _own_token,
    "application_id": _own_client,
    "client_id": lambda world, user: "unknown-client",
    "page_id": lambda world, user: world.wiki_page.pk,
    "task_id": lambda world, user: world.dead_task.pk,
}

CELLS = {
    # HTML
    "GET ": SIGNED_IN,
    "GET accounts/login/": PUBLIC,
    "POST accounts/login/": PUBLIC,
    "PUT accounts/login/": PUBLIC,  # Django's LoginView treats PUT as POST
    # Sign in with Atlassian exists only with TRACKER_BACKEND=jira (the matrix runs local).
    "GET accounts/atlassian/login/": profile(HIDE, anonymous=HIDE),
    "GET accounts/atlassian/callback/": profile(HIDE, anonymous=HIDE),
    # Signing out ends on the sign-in page, whoever asks.
    "POST accounts/logout/": profile(LOGIN),
    "GET profile/": SIGNED_IN,
    "POST profile/": SIGNED_IN,
    "POST profile/tokens/<int:token_id>/revoke/": SIGNED_IN,
    "POST profile/clients/<int:application_id>/revoke/": SIGNED_IN,
    "GET notifications/": SIGNED_IN,
    "POST notifications/": SIGNED_IN,
    "POST notifications/settings/": SIGNED_IN,
    "GET projects/<str:key>/": READ,
    "GET projects/<str:key>/editors/": LEAD_ONLY,
    "POST projects/<str:key>/editors/": LEAD_ONLY,
    "GET projects/<str:key>/audit/": READ,
    "GET wiki/pages/<int:page_id>/": READ,
    "GET healthz": PUBLIC,
    "GET readyz": PUBLIC,
    # Jira's webhooks: only a JWT signed with the app's client secret passes, whoever asks.
    "POST hooks/jira/": profile(LOGIN, anonymous=LOGIN),
    "GET outbox/": SITE_ADMIN,
    "POST outbox/<uuid:task_id>/retry/": SITE_ADMIN,
    # API
    # django-ninja's root answers 404 to everyone: nothing lives there (docs are at /docs).
    "GET api/v1/": profile(HIDE, anonymous=HIDE),
    "GET api/v1/openapi.json": PUBLIC,
    "GET api/v1/docs": PUBLIC,
    "GET api/v1/me": SIGNED_IN,
    "GET api/v1/projects": SIGNED_IN,
    "GET api/v1/projects/<key>": READ,
    "PUT api/v1/projects/<key>/editors": LEAD_ONLY,
    "GET api/v1/projects/<key>/audit": READ,
    "GET api/v1/site-settings": SIGNED_IN,
    "PATCH api/v1/site-settings": SITE_ADMIN,
    # MCP OAuth (governance/oauth.py): discovery and registration are public; the consent
    # page needs a signed-in person; the token endpoints judge the client, not a session.
    # There is no registration management endpoint (RFC 7592).
    "GET .well-known/oauth-protected-resource": PUBLIC,
    "GET .well-known/oauth-protected-resource/mcp": PUBLIC,
    "GET .well-known/oauth-authorization-server": PUBLIC,
    "GET oauth/.well-known/oauth-authorization-server": PUBLIC,
    "GET oauth/authorize/": SIGNED_IN,
    "POST oauth/authorize/": SIGNED_IN,
    "PUT oauth/authorize/": SIGNED_IN,
    "POST oauth/token/": PUBLIC,
    "POST oauth/revoke_token/": PUBLIC,
    "POST oauth/register/": PUBLIC,
}
