"""Maps domain errors that escape an HTML view to a page a person can act on. The API maps
domain errors itself (governance.api); `RequestIdMiddleware` gives the one error body to what
never reaches an endpoint (an unknown API path, a method a path does not answer) and to any
failure under /api/ (`internal`, 500, with the request id).
Before any view runs, it refuses control characters (NUL and the other C0 controls but tab
and line breaks) in the path (404), the query parameters and form fields (422, named)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.http import HttpRequest


import gzip
import json
import logging
import secrets
import uuid

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse, HttpResponseBase
from django.middleware.gzip import GZipMiddleware, re_accepts_gzip
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers
from django_htmx.http import reswap, trigger_client_event

from governance import cleaning, deflate, errors
from governance.atlassian.errors import SignInRequired
from governance.errors import (
    BadRequest,
    DatabaseUnavailable,
    DomainError,
    Forbidden,
    Internal,
    Moved,
    NotFound,
    Unauthenticated,
    Unavailable,
    ValidationFailed,
    database_unavailable,
)
from governance.tracker import TrackerError

logger = logging.getLogger("governance.requests")


def request_id(request: HttpRequest) -> str:
    """The id of this request (X-Request-ID on every response, in the log of any failure)."""
    rid: str | None = getattr(request, "request_id", None)
    if rid is None:
        rid = uuid.uuid4().hex
        request.__dict__["request_id"] = rid
    return rid


class RequestIdMiddleware:
    """Outermost: gives every request an id and keeps the API's promise of one error body.
    Whatever answers an error under /api/ without JSON (an unknown path, a method a path does
    not answer, a failure in a middleware, Django's own 400 and 500 pages) is replaced by the
    error body; a 500 carries the request id, which the log line names."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        rid = request_id(request)
        # Coercions: the API answers them as `warnings`; stored writes: an answer that fails
        # afterwards says the change was stored.
        with cleaning.noting_coercions(), errors.noting_stored_writes():
            response = self.get_response(request)
        if (
            request.path.startswith("/api/")
            and response.status_code >= 400
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            response = self._api_error(request, response)
        response["X-Request-ID"] = rid
        return response

    @staticmethod
    def _api_error(request: HttpRequest, response: HttpResponseBase) -> HttpResponse:
        status = response.status_code
        error: DomainError
        if status == 404:
            error = NotFound()
        elif status == 405:
            allowed = response.get("Allow", "")
            error = BadRequest(f"This path does not answer that method. It answers: {allowed}.")
        elif status == 403:
            error = Forbidden()
        elif status >= 500:
            logger.error("Request %s answered %s on %s", request_id(request), status, request.path)
            error = Internal(request_id(request))
        else:
            error = BadRequest("The request could not be read.")
        api_response = HttpResponse(
            json.dumps(error.body()), status=status, content_type="application/json"
        )
        for header in ("Allow", "Retry-After"):
            if response.has_header(header):
                api_response[header] = response[header]
        return api_response


class DomainErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_view(
        self,
        request: HttpRequest,
        view: Callable[..., Any],
        args: Sequence[Any],
        kwargs: dict[str, Any],
    ) -> HttpResponse | None:
        error = _control_characters(request)
        if error is None:
            return None
        if request.path.startswith("/api/"):
            return HttpResponse(
                json.dumps(error.body()), status=error.status, content_type="application/json"
            )
        response = self._page(request, error)
        if getattr(request, "htmx", False) and isinstance(error, ValidationFailed):
            # An in-place form keeps what was typed; the refusal is flashed, naming the field.
            names = ", ".join(error.fields)
            message = next(iter(error.fields.values()))[0]
            reswap(response, "none")
            trigger_client_event(
                response, "flash", {"message": f"{names}: {message}", "kind": "error"}
            )
        return response

    def process_exception(
        self, request: HttpRequest, exception: Exception
    ) -> HttpResponseBase | None:
        unavailable = database_unavailable(exception)
        if unavailable is not None:
            return unavailable_response(request, unavailable, exception)
        api = request.path.startswith("/api/")
        if isinstance(exception, SignInRequired) and not api:
            # A revoked or expired Atlassian grant: back through sign-in, plainly.
            logout(request)
            messages.info(request, str(exception) or "Sign in with Atlassian again.")
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        if isinstance(exception, TrackerError):
            # Fail closed: no traceback, no open door.
            exception = Unavailable.from_tracker(exception)
        if isinstance(exception, Moved):
            return moved_response(request, exception)
        if not isinstance(exception, DomainError):
            # Django answers the rest (Http404 as 404, anything unexpected as 500, logged);
            # under /api/ RequestIdMiddleware turns that answer into the error body.
            return None
        if request.path.startswith("/api/"):
            return HttpResponse(
                json.dumps(exception.body()),
                status=exception.status,
                content_type="application/json",
            )
        return self._page(request, exception)

    @staticmethod
    def _page(request: HttpRequest, exception: DomainError) -> HttpResponse:
        if isinstance(exception, Unauthenticated):
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        template = "partials/error.html" if getattr(request, "htmx", False) else "error.html"
        message = exception.message
        if isinstance(exception, NotFound):
            message = "There is nothing here, or you do not have access to it."
        response = render(
            request,
            template,
            {"error": exception, "message": message, "fields": exception.fields},
            status=exception.status,
        )
        patch_vary_headers(response, ("HX-Request",))
        return response


def wants_json(request: HttpRequest) -> bool:
    """The API, /mcp and clients asking for JSON get the error body; browsers a page."""
    if request.path.startswith("/api/") or request.path == "/mcp":
        return True
    accept = request.headers.get("Accept", "")
    return "application/json" in accept and "text/html" not in accept


def unavailable_response(
    request: HttpRequest, error: DatabaseUnavailable, exception: BaseException | None = None
) -> HttpResponse:
    """503 with Retry-After while the database cannot be reached: the error body (`code:
    unavailable`) for the API, else a page in words that needs no database (no user, no
    menu, no session) to render."""
    logger.warning(
        "Request %s on %s: the database cannot be reached (%s)",
        request_id(request),
        request.path,
        f"{type(exception).__name__}: {exception}".strip() if exception else "-",
    )
    if wants_json(request):
        response = HttpResponse(
            json.dumps(error.body()), status=error.status, content_type="application/json"
        )
    else:
        html = render_to_string(
            "unavailable.html",
            {"message": error.message, "path": request.path, "stored": error.stored},
        )
        response = HttpResponse(html, status=error.status)
    for name, value in error.headers().items():
        response[name] = value
    response["Cache-Control"] = "no-store"
    return response


def server_error(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """handler500: a failure anywhere (a middleware reading the session or the user
    included) that is the database not answering is a 503 that says so; the rest is the
    500 page."""
    import sys

    unavailable = database_unavailable(sys.exc_info()[1])
    if unavailable is not None:
        return unavailable_response(request, unavailable, sys.exc_info()[1])
    from django.views.defaults import server_error as default_server_error

    return default_server_error(request, *args, **kwargs)


def moved_response(request: HttpRequest, moved: Moved) -> HttpResponse:
    """A URL naming a project's former key: the same URL under its current key (301 for a
    read, 308 for a write). Only someone who may view the project is told."""
    status = moved.status_for(request.method or "GET")
    if request.path.startswith("/api/"):
        response = HttpResponse(
            json.dumps(moved.body()), status=status, content_type="application/json"
        )
    else:
        response = HttpResponse(status=status)
    response["Location"] = moved.location(request.get_full_path())
    return response


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _control_characters(request: HttpRequest) -> DomainError | None:
    """NotFound for a path holding a control character or a Unicode noncharacter;
    ValidationFailed naming each query parameter or form field that holds one (or a lone
    surrogate: `cleaning.text_error`); else None."""
    if cleaning.text_error(request.path):
        return NotFound()
    fields: dict[str, list[str]] = {}
    sources = [request.GET]
    if request.method == "POST" and request.content_type in FORM_TYPES:
        sources.append(request.POST)
    for source in sources:
        for name, values in source.lists():
            for text in (name, *values):
                error = cleaning.text_error(text)
                if error:
                    fields[cleaning.file_text(name)] = [error]
                    break
    return ValidationFailed(fields) if fields else None


class CompressionMiddleware(GZipMiddleware):
    """Django's gzip (with its Heal-the-BREACH random bytes) for pages and API answers, except
    a response a view marks `uncompressed` (one that shows a long-lived secret, such as a new
    API token, beside text the request chose). Static files never reach it: WhiteNoise, above
    it, serves their precompressed copies.

    At `GZIP_LEVEL` (default 1) rather than Django's fixed 6: a 100-row register page (367 KB)
    is 36 KB at level 1 in 1.9 ms of CPU, 30 KB at level 6 in 4.1 ms (docs/decisions/0045,
    "Compression and BREACH"); the bytes saved are not worth the worker's time on every request."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if getattr(response, "uncompressed", False):
            patch_vary_headers(response, ("Accept-Encoding",))
            return response
        if response.streaming or not isinstance(response, HttpResponse):
            return super().process_response(request, response)
        # Django's GZipMiddleware for a whole body, at our level.
        if len(response.content) < 200 or response.has_header("Content-Encoding"):
            return response
        patch_vary_headers(response, ("Accept-Encoding",))
        if not re_accepts_gzip.search(request.META.get("HTTP_ACCEPT_ENCODING", "")):
            return response
        assembled = getattr(response, "deflate_parts", None)
        if assembled is not None and assembled[0] == response.content:
            # A page with stored parts compressed once (governance.deflate).
            compressed = deflate.gzip_parts(
                assembled[1], settings.GZIP_LEVEL, self.max_random_bytes
            )
        else:
            compressed = compress(response.content, max_random_bytes=self.max_random_bytes)
        if len(compressed) >= len(response.content):
            return response
        response.content = compressed
        response.headers["Content-Length"] = str(len(compressed))
        etag = response.get("ETag")
        if etag and etag.startswith('"'):
            response.headers["ETag"] = "W/" + etag
        response.headers["Content-Encoding"] = "gzip"
        return response


def compress(content: bytes, *, max_random_bytes: int) -> bytes:
    """`django.utils.text.compress_string` at `GZIP_LEVEL`: gzip with mtime 0, and 0 to
    `max_random_bytes - 1` random bytes as the gzip header's file name (Heal-the-BREACH)."""
    data = gzip.compress(content, compresslevel=settings.GZIP_LEVEL, mtime=0)
    header = bytearray(data[:10])
    header[3] = gzip.FNAME
    name = b"a" * secrets.randbelow(max_random_bytes) + b"\x00"
    return bytes(header) + name + data[10:]
