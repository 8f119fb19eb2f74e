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
- Refresh tokens rotate; a reused one revokes its family, and of two refreshes with one token
  at the same moment one gets the new pair, the other invalid_grant. A code exchanged twice
  revokes what it gave (`SpentAuthorizationCode`). Each connected client is listed on the
  profile page and revoked there (`client_revoke`).
- Registration is JSON only, throttled per address and without RFC 7592 management; a
  registration never used is removed (`forget_unused_registrations`). The consent page is
  always shown; an error before it is shown on the app's page unless the redirect URI is
  trusted (`redirect_trusted`). Every discovery document names one issuer (`issuer`)."""

import datetime as dt
import hashlib
import ipaddress
import json
import logging
import math
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, Max, Min, OuterRef
from django.forms import Form
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from oauth2_provider import cimd
from oauth2_provider.exceptions import FatalClientError
from oauth2_provider.models import get_access_token_model, get_application_model
from oauth2_provider.models import get_grant_model as _grant_model
from oauth2_provider.models import get_refresh_token_model as _refresh_model
from oauth2_provider.oauth2_backends import OAuthLibCore
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import (
    AuthorizationView,
    DynamicClientRegistrationView,
    OAuthProtectedResourceMetadataView,
    OAuthServerMetadataView,
    TokenView,
)
from oauthlib.common import Request as OAuthRequest
from oauthlib.oauth2.rfc6749 import errors as oauth_errors

from governance import audit, cleaning, periodic, throttling
from governance.errors import NotFound
from governance.models import SpentAuthorizationCode, User
from governance.people import resolve

logger = logging.getLogger(__name__)

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


def issuer(request: HttpRequest) -> str:
    """The one issuer identifier of this authorization server, the site's root: both
    addresses of its metadata (RFC 8414), the resource's `authorization_servers` (RFC 9728)
    and the `iss` of each authorization response (RFC 9207) name it."""
    return request.build_absolute_uri("/").rstrip("/")


def redirect_trusted(uri: object) -> bool:
    """Whether the authorization endpoint may send a person to `uri` without showing a page
    first (RFC 9700 section 4.11.2): http on a loopback address (the person's own machine),
    or an origin MCP_OAUTH_TRUSTED_REDIRECT_ORIGINS names. Anyone may register any https
    address, so a registered one is not trusted for that alone."""
    if not isinstance(uri, str) or redirect_uri_problem(uri) is not None:
        return False
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme == "http":  # redirect_uri_problem allows http on a loopback address only
        return True
    origin = f"{scheme}://{parts.netloc.lower()}"
    trusted = {o.strip().rstrip("/").lower() for o in settings.MCP_OAUTH_TRUSTED_REDIRECT_ORIGINS}
    return origin in trusted


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


# --- client ID metadata documents: the reason one could not be used ---------------------------


def _problem_key(client_id: str) -> str:
    return "oauth:cimd-problem:" + _digest(client_id)


def _note_problem(client_id: str, problem: str, seconds: int) -> None:
    cache.set(_problem_key(client_id), problem, max(1, seconds))


def metadata_client_problem(client_id: str) -> str | None:
    """Why the client ID metadata document at `client_id` could not be used, while that
    failure stands (CIMD_FAILURE_BACKOFF_SECONDS), or None."""
    problem: str | None = cache.get(_problem_key(client_id))
    return problem


def resolve_metadata_client(client_id: str, request: OAuthRequest) -> None:
    """Fetch the client ID metadata document `client_id` names and store its client, as the
    toolkit does on first sight of such a client_id, keeping the reason of a failure (the
    toolkit logs it and answers only "Invalid client_id") so the page can say it. The same
    gates as the toolkit's: its permission classes, its failure backoff, its cap on fetches
    in flight and its fetcher (https only, no private address, a timeout, a size limit)."""
    backoff_seconds = oauth2_settings.CIMD_FAILURE_BACKOFF_SECONDS
    if not cimd._registration_permitted(request, client_id):
        _note_problem(client_id, "this server takes no client metadata document from there", 60)
        return
    backoff = cimd._backoff_cache_key(client_id)
    if cache.get(backoff):
        return  # the failure noted then still stands
    with cimd._fetch_slot() as acquired:
        if not acquired:
            _note_problem(client_id, "too many client documents are being fetched; try again", 5)
            return
        try:
            cimd._fetch_validate_upsert(client_id)
        except cimd.CIMDError as exc:
            logger.info("Client ID metadata document %r refused: %s", client_id, exc)
            cache.set(backoff, True, backoff_seconds)
            _note_problem(client_id, str(exc), backoff_seconds)
        except Exception:
            logger.exception("Client ID metadata document %r could not be read", client_id)
            cache.set(backoff, True, backoff_seconds)
            _note_problem(client_id, "the document could not be read", backoff_seconds)


# django-oauth-toolkit and oauthlib have no type hints: their classes are Any to mypy, and
# the oauthlib requests its validator is handed are `OAuthRequest`.
class AbsoluteUriCore(OAuthLibCore):  # type: ignore[misc]  # django-oauth-toolkit: no hints
    """The toolkit's bridge to oauthlib, with the request's absolute URI (scheme and host as
    Django reads them, behind a proxy too), so the validator knows the site's /mcp."""

    def _get_escaped_full_path(self, request: HttpRequest) -> str:
        return request.build_absolute_uri(super()._get_escaped_full_path(request))


# --- the validator: every token bound to /mcp -------------------------------------------------


SPENT_CODE = (
    "This authorization code was exchanged already; every token issued from it is revoked "
    "now. Connect the client again."
)
RACED_REFRESH = (
    "This refresh token was used by another request at the same moment; use the tokens that "
    "request received, or connect the client again."
)


def revoke_issued_from(spent: SpentAuthorizationCode) -> None:
    """End every token issued from a spent code: its refresh token family (each rotation
    since) and the access token the exchange gave."""
    with transaction.atomic():
        if spent.token_family:
            _refresh_model().revoke_family(spent.token_family)
        if spent.access_token_id:
            get_access_token_model().objects.filter(pk=spent.access_token_id).delete()


class McpValidator(OAuth2Validator):  # type: ignore[misc]  # django-oauth-toolkit: no hints
    """The toolkit's validator with the resource fixed to the MCP endpoint: a token request
    naming no resource gets `{site}/mcp`; one naming any other is refused (invalid_target).
    Codes are spent once, raced refreshes refused, a metadata document's failure kept."""

    def validate_redirect_uri(
        self, client_id: str, redirect_uri: str, request: OAuthRequest, *args: Any, **kwargs: Any
    ) -> bool:
        """The client's registered URI, and one this server sends codes to at all (http only
        on a loopback address), whichever way the client came (registration, a metadata
        document, the admin)."""
        allowed: bool = super().validate_redirect_uri(
            client_id, redirect_uri, request, *args, **kwargs
        )
        return allowed and redirect_uri_problem(redirect_uri) is None

    def _load_application(self, client_id: str, request: OAuthRequest) -> Any:
        """The toolkit's lookup; a client_id that is a metadata document's URL and is not
        stored yet is resolved here first, so a failure's reason is kept for the page."""
        if (
            oauth2_settings.CIMD_ENABLED
            and isinstance(client_id, str)
            and "\x00" not in client_id
            and cimd.is_cimd_client_id(client_id)
            and not get_application_model().objects.filter(client_id=client_id).exists()
        ):
            resolve_metadata_client(client_id, request)
        return super()._load_application(client_id, request)

    def validate_code(
        self,
        client_id: str,
        code: str,
        client: Any,
        request: OAuthRequest,
        *args: Any,
        **kwargs: Any,
    ) -> bool:
        """The toolkit's check; a code exchanged already is refused and every token issued
        from it ends now (RFC 6749 section 4.1.2)."""
        if super().validate_code(client_id, code, client, request, *args, **kwargs):
            return True
        spent = SpentAuthorizationCode.objects.filter(code_digest=_digest(code or "")).first()
        if spent is not None:
            revoke_issued_from(spent)
            raise oauth_errors.InvalidGrantError(description=SPENT_CODE, request=request)
        return False

    def _create_access_token(
        self,
        expires: datetime,
        request: OAuthRequest,
        token: dict[str, Any],
        source_refresh_token: Any = None,
    ) -> Any:
        created = super()._create_access_token(expires, request, token, source_refresh_token)
        request.mcp_access_token_id = created.pk
        return created

    def _create_refresh_token(
        self, request: OAuthRequest, refresh_token_code: str, access_token: Any, previous: Any
    ) -> Any:
        created = super()._create_refresh_token(request, refresh_token_code, access_token, previous)
        request.mcp_token_family = created.token_family
        return created

    def _save_bearer_token(
        self, token: dict[str, Any], request: OAuthRequest, *args: Any, **kwargs: Any
    ) -> None:
        """The toolkit's save (inside its transaction), with two rules of this server:
        a refresh token another request rotated meanwhile is refused (invalid_grant, never a
        500), and an exchanged code is recorded as spent with what was issued from it."""
        model = _refresh_model()
        presented = getattr(request, "refresh_token_instance", None)
        if (
            request.grant_type == "refresh_token"
            and isinstance(presented, model)
            and presented.revoked is None
        ):
            current = model.objects.select_for_update().filter(pk=presented.pk).first()
            if current is None or current.revoked is not None:
                raise oauth_errors.InvalidGrantError(description=RACED_REFRESH, request=request)
        super()._save_bearer_token(token, request, *args, **kwargs)
        if request.grant_type == "authorization_code" and request.code:
            try:
                with transaction.atomic():
                    SpentAuthorizationCode.objects.create(
                        code_digest=_digest(request.code),
                        token_family=getattr(request, "mcp_token_family", None),
                        access_token_id=getattr(request, "mcp_access_token_id", None),
                    )
            except IntegrityError:
                raise oauth_errors.InvalidGrantError(
                    description=SPENT_CODE, request=request
                ) from None

    def _check_and_set_request_resource(self, request: OAuthRequest) -> None:
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


class ProtectedResourceMetadata(OAuthProtectedResourceMetadataView):  # type: ignore[misc]  # as above
    """RFC 9728 at /.well-known/oauth-protected-resource and .../mcp: the one protected
    resource (the MCP endpoint) and the app as its authorization server."""

    def get_resource(self, request: HttpRequest) -> str:
        return mcp_resource(request)

    def get_authorization_servers(self, request: HttpRequest) -> list[str]:
        return [issuer(request)]

    def get_resource_documentation(self) -> str:
        return ""


class ServerMetadata(OAuthServerMetadataView):  # type: ignore[misc]  # as above
    """RFC 8414 at /.well-known/oauth-authorization-server and under /oauth/: the toolkit's
    document with the one issuer (`issuer`), whichever address it is read at. No OpenID
    Connect discovery is served (OIDC is off)."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        data = json.loads(super().get(request, *args, **kwargs).content)
        data["issuer"] = issuer(request)
        response = JsonResponse(data)
        response["Access-Control-Allow-Origin"] = "*"
        return response


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


def _too_many(retry_after: int) -> JsonResponse:
    response = JsonResponse(
        {
            "error": "too_many_requests",
            "error_description": (
                "Too many client registrations from your address "
                f"({settings.MCP_OAUTH_REGISTRATION_LIMIT} within "
                f"{settings.MCP_OAUTH_REGISTRATION_WINDOW_SECONDS} seconds). Try again in "
                f"{retry_after} seconds."
            ),
        },
        status=429,
    )
    response["Retry-After"] = str(retry_after)
    return response


def _registration_throttled(request: HttpRequest) -> JsonResponse | None:
    """Count this registration against the client's address; past the limit, the 429."""
    key = f"throttle:oauth-register:{throttling.client_ip(request) or 'unknown'}"
    window = settings.MCP_OAUTH_REGISTRATION_WINDOW_SECONDS
    count, until = throttling.counted(key, window)
    if count <= settings.MCP_OAUTH_REGISTRATION_LIMIT:
        return None
    return _too_many(max(1, math.ceil(until - time.time())))


class Register(DynamicClientRegistrationView):  # type: ignore[misc]  # as above
    """RFC 7591 registration, open to anyone (an MCP client registers before its person signs
    in), for public clients only: no secret is issued; `token_endpoint_auth_method` is `none`
    (left out, it is taken as none) and the redirect URIs are checked first. JSON only (415
    otherwise, so no cross-site form can post one), counted per client address (429 past
    MCP_OAUTH_REGISTRATION_LIMIT), never tied to whoever is signed in, and without RFC 7592
    management: no registration access token and no configuration endpoint are issued (a
    client registers again instead). A registration no code or token ever used is removed
    after MCP_OAUTH_UNUSED_REGISTRATION_HOURS (`forget_unused_registrations`)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
        throttled = _registration_throttled(request)
        if throttled is not None:
            return throttled
        if request.content_type != "application/json":
            return JsonResponse(
                {
                    "error": "invalid_client_metadata",
                    "error_description": (
                        "Send the registration as JSON with Content-Type: application/json "
                        f"(this request's is {request.content_type or 'missing'!r})."
                    ),
                },
                status=415,
            )
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
        other = [g for g in grants if g not in ("authorization_code", "refresh_token")]
        if other:
            return _registration_refused(
                "grant_types may name authorization_code and refresh_token only; "
                f"{other[0]!r} is not offered here."
            )
        responses = data.get("response_types", ["code"])
        if responses != ["code"]:
            return _registration_refused('response_types may name "code" only.')
        model = get_application_model()
        application = model(
            user=None,
            name=name,
            client_type=model.CLIENT_PUBLIC,
            authorization_grant_type=model.GRANT_AUTHORIZATION_CODE,
            redirect_uris=" ".join(uris),
            registration_source=model.RegistrationSource.DCR,
        )
        try:
            application.full_clean()
        except ValidationError as exc:
            return _registration_refused("; ".join(exc.messages))
        application.save()
        body = {
            "client_id": application.client_id,
            "client_id_issued_at": int(application.created.timestamp()),
            "redirect_uris": uris,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
        if name:
            body["client_name"] = name
        return JsonResponse(body, status=201)


def forget_unused_registrations(now: dt.datetime) -> str:
    """The `oauth_registrations` periodic job (hourly): remove each dynamically registered
    client that no code or token ever used, MCP_OAUTH_UNUSED_REGISTRATION_HOURS after it was
    made; and the record of each spent code once every token issued from it has expired
    (the refresh token's lifetime)."""
    cutoff = now - dt.timedelta(hours=settings.MCP_OAUTH_UNUSED_REGISTRATION_HOURS)
    model = get_application_model()
    used = OuterRef("pk")
    access = get_access_token_model().objects.filter(application=used)
    unused = model.objects.filter(
        registration_source=model.RegistrationSource.DCR, created__lt=cutoff
    ).exclude(
        Exists(_grant_model().objects.filter(application=used))
        | Exists(access.exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE))
        | Exists(_refresh_model().objects.filter(application=used))
    )
    _, removed = unused.delete()
    # Registration tokens are issued no more (no management endpoint): any left are dead.
    get_access_token_model().objects.filter(scope=oauth2_settings.DCR_REGISTRATION_SCOPE).delete()
    lifetime = dt.timedelta(seconds=oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS or 0)
    SpentAuthorizationCode.objects.filter(
        created_at__lt=now - lifetime - dt.timedelta(days=1)
    ).delete()
    return f"{removed.get(model._meta.label, 0)} unused registrations removed"


periodic.register("oauth_registrations", every=dt.timedelta(hours=1))(forget_unused_registrations)


class Token(TokenView):  # type: ignore[misc]  # as above
    """The toolkit's token endpoint; a refusal raised while the tokens are saved (a refresh
    token raced by another request, a code spent meanwhile) is JSON like every other one."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response: HttpResponse = super().post(request, *args, **kwargs)
        if response.status_code >= 400 and response.content.startswith(b"{"):
            response["Content-Type"] = "application/json"
            response["Cache-Control"] = "no-store"
        return response


# --- authorization: the consent page ------------------------------------------------------------


class Authorize(AuthorizationView):  # type: ignore[misc]  # as above
    """The consent page, in the app's style: it names the client, where it sends the person
    back and the person signed in; the `resource`, when sent, must be the MCP endpoint."""

    template_name = "governance/oauth_authorize.html"

    def _refused(self, error: str, description: str) -> HttpResponse:
        context = {"error": {"error": error, "description": description}}
        response: HttpResponse = self.render_to_response(context, status=400)
        return response

    def _client_id(self) -> str:
        request: HttpRequest = self.request
        return request.POST.get("client_id") or request.GET.get("client_id") or ""

    def _words(self, oauthlib_error: oauth_errors.OAuth2Error) -> str:
        """The error's sentence for the page; for a client_id that names a metadata document
        that could not be used, the reason."""
        client_id = self._client_id()
        if isinstance(oauthlib_error, oauth_errors.InvalidClientIdError):
            shown = client_id if len(client_id) <= 200 else client_id[:200] + "…"
            problem = metadata_client_problem(client_id) if client_id else None
            if problem:
                return (
                    f"The client's metadata document {shown} could not be used: {problem}. "
                    "Check that this address serves the client's JSON document and that this "
                    "server can reach it."
                )
            if client_id:
                return (
                    f"This server knows no client {shown!r}. The client must register again "
                    "(or name a metadata document this server can fetch)."
                )
            return "The request names no client (client_id)."
        description: str | None = oauthlib_error.description
        return description or "The client's request is not valid."

    def error_response(self, error: Any, application: Any, **kwargs: Any) -> HttpResponse:
        """An error before the person's choice is shown on this page, never sent on by
        itself, unless the redirect URI is trusted (RFC 9700 section 4.11.2); after their
        choice it goes back to the redirect URI only when the client registered it."""
        oauthlib_error = error.oauthlib_error
        uri = oauthlib_error.redirect_uri or ""
        if isinstance(error, FatalClientError):
            return self._refused(oauthlib_error.error, self._words(oauthlib_error))
        if self.request.method == "POST":
            registered = application is not None and application.redirect_uri_allowed(uri)
            if not registered or redirect_uri_problem(uri) is not None:
                return self._refused(oauthlib_error.error, self._words(oauthlib_error))
        elif not redirect_trusted(uri):
            return self._refused(oauthlib_error.error, self._words(oauthlib_error))
        response: HttpResponse = super().error_response(error, application, **kwargs)
        return response

    def handle_no_permission(self) -> HttpResponse:
        """Signed out with prompt=none: said on this page (sign in first), not sent to a
        redirect URI this server does not trust."""
        prompt = set(self.request.GET.get("prompt", "").split())
        if "none" in prompt and not redirect_trusted(self.request.GET.get("redirect_uri")):
            return self._refused(
                "login_required",
                "Sign in to this site first, then connect the client again (it asked not to "
                "be shown a sign-in page).",
            )
        response: HttpResponse = super().handle_no_permission()
        return response

    def form_invalid(self, form: Form) -> HttpResponse:
        """A consent form missing what the page put in it was changed after it was shown."""
        fields = ", ".join(sorted(form.errors)) or "the form"
        return self._refused(
            "invalid_request",
            f"The consent form was changed after the page was shown ({fields}). Nothing was "
            "shared; go back to the client and connect again.",
        )

    def form_valid(self, form: Form) -> HttpResponse:
        """The person's choice. A form whose client_id was changed after the page was shown
        (no such client) is refused with words, not a server error."""
        client_id = form.cleaned_data.get("client_id") or ""
        try:
            known = get_application_model().objects.filter(client_id=client_id).exists()
        except ValueError:  # a NUL character: PostgreSQL cannot even look for it
            known = False
        if not known:
            return self._refused(
                "invalid_request",
                "The consent form names a client this server does not know (client_id): it "
                "was changed after the page was shown. Nothing was shared; go back to the "
                "client and connect again.",
            )
        response: HttpResponse = super().form_valid(form)
        return response

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if "approval_prompt" in request.GET:
            # The person always sees the consent page (REQUEST_APPROVAL_PROMPT "force"):
            # a request's approval_prompt=auto does not skip it.
            query = request.GET.copy()
            query.pop("approval_prompt")
            request.GET = query  # type: ignore[assignment]  # django-stubs: GET is immutable
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
        response: HttpResponse = super().get(request, *args, **kwargs)
        return response

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response: HttpResponse = super().dispatch(request, *args, **kwargs)
        # The form's answer redirects to the client: a browser applies form-action to that
        # redirect, so the client's redirect URI (checked against its registration by then)
        # is allowed for this page only.
        uri = request.GET.get("redirect_uri") or request.POST.get("redirect_uri") or ""
        parts = urlsplit(uri)
        if parts.scheme and not redirect_uri_problem(uri):
            origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else f"{parts.scheme}:"
            response._csp_update = {"form-action": [origin]}  # type: ignore[attr-defined]  # django-csp's
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        context["mcp_resource"] = mcp_resource(self.request)
        me = self.request.user
        account = getattr(me, "account_id", "")
        context["person"] = resolve([account]).get(account) if account else None
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
        .exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE)
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
