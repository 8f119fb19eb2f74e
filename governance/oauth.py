"""The app as the OAuth 2.1 authorization server of its MCP endpoint, as the MCP
specification's authorization section asks (django-oauth-toolkit does the protocol):

- Protected Resource Metadata (RFC 9728) names `{site}/mcp` as the resource and the app as its
  authorization server; Authorization Server Metadata (RFC 8414) says what the server takes.
- Authorization code with PKCE S256 only; the consent page names the client and the person.
- Public clients only: registered dynamically (RFC 7591) with validated redirect URIs, or named
  by a client ID metadata document (an https URL, fetched with a size limit, a timeout and no
  private addresses: the toolkit's fetcher).
- Every token is bound to `{site}/mcp` (RFC 8707 `resource`; a request naming another resource
  is refused, one naming none gets /mcp) and is accepted there only: the JSON API and the pages
  read personal API tokens and sessions, never these.
- Refresh tokens rotate; a reused one revokes its family. Each connected client is listed on
  the profile page and revoked there (`client_revoke`)."""

import hashlib
import ipaddress
import json
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Min
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model
from oauth2_provider.models import get_refresh_token_model as _refresh_model
from oauth2_provider.oauth2_backends import OAuthLibCore
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.views import (
    AuthorizationView,
    DynamicClientRegistrationView,
    OAuthProtectedResourceMetadataView,
)
from oauthlib.oauth2.rfc6749 import errors as oauth_errors

from governance import audit, cleaning
from governance.errors import NotFound
from governance.models import User
from governance.people import resolve

MCP_PATH = "/mcp"
SCOPE = "mcp"


def mcp_resource(request: HttpRequest) -> str:
    """The resource identifier of the MCP endpoint: `{scheme}://{host}/mcp`."""
    return request.build_absolute_uri(MCP_PATH)


def resource_metadata_url(request: HttpRequest) -> str:
    """Where a client finds the MCP endpoint's Protected Resource Metadata (RFC 9728, the
    path-suffixed form, which the root form repeats)."""
    return request.build_absolute_uri("/.well-known/oauth-protected-resource" + MCP_PATH)


def _same_resource(value: str, resource: str) -> bool:
    return value.rstrip("/") == resource.rstrip("/")


class AbsoluteUriCore(OAuthLibCore):
    """The toolkit's bridge to oauthlib, with the request's absolute URI (scheme and host as
    Django reads them, behind a proxy too), so the validator knows the site's /mcp."""

    def _get_escaped_full_path(self, request):
        return request.build_absolute_uri(super()._get_escaped_full_path(request))


# --- the validator: every token bound to /mcp -------------------------------------------------


class McpValidator(OAuth2Validator):
    """The toolkit's validator with the resource fixed to the MCP endpoint: a token request
    naming no resource gets `{site}/mcp`; one naming any other is refused (invalid_target)."""

    def validate_redirect_uri(self, client_id, redirect_uri, request, *args, **kwargs):
        """The client's registered URI, and one this server sends codes to at all (http only
        on a loopback address), whichever way the client came (registration, a metadata
        document, the admin)."""
        allowed = super().validate_redirect_uri(client_id, redirect_uri, request, *args, **kwargs)
        return allowed and redirect_uri_problem(redirect_uri) is None

    def _check_and_set_request_resource(self, request):
        super()._check_and_set_request_resource(request)
        parts = urlsplit(request.uri or "")
        resource = f"{parts.scheme}://{parts.netloc}{MCP_PATH}"
        others = [r for r in request.resource if not _same_resource(r, resource)]
        if others:
            raise oauth_errors.CustomOAuth2Error(
                error="invalid_target",
                description=f"This server issues tokens for its MCP endpoint only: {resource}.",
                request=request,
            )
        request.resource = [resource]


# --- discovery --------------------------------------------------------------------------------


class ProtectedResourceMetadata(OAuthProtectedResourceMetadataView):
    """RFC 9728 at /.well-known/oauth-protected-resource and .../mcp: the one protected
    resource (the MCP endpoint) and the app as its authorization server."""

    def get_resource(self, request):
        return mcp_resource(request)

    def get_authorization_servers(self, request):
        return [request.build_absolute_uri("/").rstrip("/")]

    def get_resource_documentation(self):
        return ""


# --- Dynamic Client Registration (RFC 7591): public clients, checked redirect URIs -------------


def redirect_uri_problem(uri: object) -> str | None:
    """Why a client's redirect URI is refused, or None: https anywhere; http only on a
    loopback address (a desktop app's own listener, RFC 8252); a desktop app's own scheme
    when MCP_OAUTH_REDIRECT_SCHEMES names it; never a fragment, credentials or a wildcard."""
    if not isinstance(uri, str) or not uri.strip():
        return "Each redirect URI must be a non-empty text."
    try:
        parts = urlsplit(uri)
        _ = parts.port
    except ValueError:
        return f"The redirect URI {uri!r} is not a URL."
    if parts.fragment or "#" in uri:
        return f"The redirect URI {uri!r} has a fragment (#...), which OAuth does not allow."
    if parts.username or parts.password:
        return f"The redirect URI {uri!r} carries a user name or password."
    if "*" in uri:
        return f"The redirect URI {uri!r} has a wildcard; name the exact address."
    scheme = parts.scheme.lower()
    if scheme == "https":
        return None if parts.hostname else f"The redirect URI {uri!r} names no host."
    if scheme == "http":
        host = (parts.hostname or "").lower()
        if host == "localhost":
            return None
        try:
            if ipaddress.ip_address(host).is_loopback:
                return None
        except ValueError:
            pass
        return (
            f"The redirect URI {uri!r} uses http on another machine: use https, or http on "
            "127.0.0.1, [::1] or localhost."
        )
    if scheme in {s.lower() for s in settings.MCP_OAUTH_REDIRECT_SCHEMES}:
        return None
    return f"The redirect URI {uri!r} uses the scheme {scheme or 'none'!r}, which is not allowed."


def _registration_refused(description: str) -> JsonResponse:
    return JsonResponse(
        {"error": "invalid_client_metadata", "error_description": description}, status=400
    )


def _redirect_refused(description: str) -> JsonResponse:
    return JsonResponse(
        {"error": "invalid_redirect_uri", "error_description": description}, status=400
    )


class Register(DynamicClientRegistrationView):
    """RFC 7591 registration, open to anyone (an MCP client registers before its person signs
    in), for public clients only: no secret is issued; `token_endpoint_auth_method` is `none`
    (left out, it is taken as none) and the redirect URIs are checked first."""

    def post(self, request, *args, **kwargs):
        try:
            data = cleaning.json_loads(request.body or b"null", what="The registration")
        except cleaning.JsonRefused as exc:
            return _registration_refused(str(exc))
        except ValueError:
            return _registration_refused("The registration must be a JSON object.")
        if not isinstance(data, dict):
            return _registration_refused("The registration must be a JSON object.")
        method = data.get("token_endpoint_auth_method", "none")
        if method != "none":
            return _registration_refused(
                "Only public clients are registered here: send token_endpoint_auth_method "
                '"none" and prove possession with PKCE (S256).'
            )
        uris = data.get("redirect_uris")
        if not isinstance(uris, list) or not uris:
            return _redirect_refused("Name at least one redirect URI (redirect_uris).")
        for uri in uris:
            problem = redirect_uri_problem(uri)
            if problem:
                return _redirect_refused(problem)
        name, error = cleaning.text(data.get("client_name") or "", max_length=255)
        if error or not isinstance(data.get("client_name") or "", str):
            return _registration_refused(
                f"client_name must be a text of at most 255 characters: {error or 'Must be text.'}"
            )
        grants = data.get("grant_types") or ["authorization_code"]
        if not isinstance(grants, list) or not all(isinstance(g, str) for g in grants):
            return _registration_refused("grant_types must be a list of grant type names.")
        data["client_name"] = name
        data["token_endpoint_auth_method"] = "none"
        data["grant_types"] = [g for g in grants if g != "refresh_token"] or ["authorization_code"]
        request._body = json.dumps(data).encode()
        return super().post(request, *args, **kwargs)


# --- authorization: the consent page ------------------------------------------------------------


class Authorize(AuthorizationView):
    """The consent page, in the app's style: it names the client, where it sends the person
    back and the person signed in; the `resource`, when sent, must be the MCP endpoint."""

    template_name = "governance/oauth_authorize.html"

    def _refused(self, error: str, description: str):
        context = {"error": {"error": error, "description": description}}
        return self.render_to_response(context, status=400)

    def get(self, request, *args, **kwargs):
        resource = mcp_resource(request)
        for value in request.GET.getlist("resource"):
            if not _same_resource(value, resource):
                return self._refused(
                    "invalid_target",
                    f"This server gives access to its MCP endpoint only ({resource}); the "
                    f"client asked for {value}.",
                )
        if request.GET.get("code_challenge_method") != "S256" or not request.GET.get(
            "code_challenge"
        ):
            return self._refused(
                "invalid_request",
                "The client must prove itself with PKCE using S256 (code_challenge and "
                "code_challenge_method=S256); this request does not.",
            )
        return super().get(request, *args, **kwargs)

    def dispatch(self, request, *args, **kwargs):
        response = super().dispatch(request, *args, **kwargs)
        # The form's answer redirects to the client: a browser applies form-action to that
        # redirect, so the client's redirect URI (checked against its registration by then)
        # is allowed for this page only.
        uri = request.GET.get("redirect_uri") or request.POST.get("redirect_uri") or ""
        parts = urlsplit(uri)
        if parts.scheme and not redirect_uri_problem(uri):
            origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else f"{parts.scheme}:"
            response._csp_update = {"form-action": [origin]}
        return response

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["mcp_resource"] = mcp_resource(self.request)
        me = self.request.user
        context["person"] = resolve([me.account_id]).get(me.account_id) if me.account_id else None
        form = context.get("form")
        if form is not None and hasattr(form, "initial"):
            context["redirect_uri"] = form.initial.get("redirect_uri", "")
        return context


# --- tokens at /mcp ---------------------------------------------------------------------------


@dataclass(frozen=True)
class McpGrant:
    user: User
    client_name: str


def user_for_access_token(request: HttpRequest, raw: str) -> McpGrant | None:
    """The person and the client an OAuth access token stands for at the MCP endpoint, or
    None: unknown, expired, revoked, without the `mcp` scope or bound to another resource."""
    if not raw:
        return None
    checksum = hashlib.sha256(raw.encode("utf-8")).hexdigest()
    token = (
        get_access_token_model()
        .objects.select_related("user", "application")
        .filter(token_checksum=checksum)
        .first()
    )
    if token is None or token.application is None or token.user is None:
        return None
    if not token.is_valid([SCOPE]) or not token.user.is_active:
        return None
    resource = mcp_resource(request)
    if not any(_same_resource(r, resource) for r in token.resource or []):
        return None
    return McpGrant(user=token.user, client_name=token.application.name or "OAuth client")


# --- connected clients on the profile page ----------------------------------------------------


@dataclass(frozen=True)
class ConnectedClient:
    id: int
    name: str
    since: datetime
    last_active: datetime
    expires: datetime


def connected_clients(user: User) -> list[ConnectedClient]:
    """The clients holding a live token (access or refresh) of `user`, one row each, in two
    queries whatever their number."""
    now = timezone.now()
    access = (
        get_access_token_model()
        .objects.filter(user=user, application__isnull=False, expires__gt=now)
        .values("application_id")
        .annotate(since=Min("created"), last=Max("updated"), expires=Max("expires"))
    )
    rows = {row["application_id"]: row for row in access}
    refresh = (
        _refresh_model()
        .objects.filter(user=user, application__isnull=False, revoked__isnull=True)
        .values("application_id")
        .annotate(since=Min("created"), last=Max("updated"))
    )
    for row in refresh:
        found = rows.setdefault(row["application_id"], {**row, "expires": None})
        found["since"] = min(found["since"], row["since"])
        found["last"] = max(found["last"], row["last"])
    names = dict(get_application_model().objects.filter(pk__in=rows).values_list("pk", "name"))
    return sorted(
        (
            ConnectedClient(
                id=pk,
                name=names.get(pk) or "Unnamed client",
                since=row["since"],
                last_active=row["last"],
                expires=row["expires"],
            )
            for pk, row in rows.items()
        ),
        key=lambda c: c.since,
    )


def client_revoke(*, user: User, application_id: int) -> str:
    """Disconnect a client from `user`: every access and refresh token it holds for them ends
    now (audited). 404 for a client that holds none of theirs."""
    with transaction.atomic():
        application = get_application_model().objects.filter(pk=application_id).first()
        access = get_access_token_model().objects.filter(user=user, application_id=application_id)
        refresh = _refresh_model().objects.filter(
            user=user, application_id=application_id, revoked__isnull=True
        )
        if application is None or not (access.exists() or refresh.exists()):
            raise NotFound("No such connected client.")
        refresh.update(revoked=timezone.now(), access_token=None)
        access.delete()
        name = application.name or "Unnamed client"
        audit.record(
            actor_account_id=user.account_id,
            kind="oauth_client.revoked",
            target_type="oauthClient",
            target_id=application.pk,
            changes={"connected": {"before": name, "after": None}},
        )
    return name
