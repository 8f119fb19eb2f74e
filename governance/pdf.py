"""PDF downloads of pages (a status report, a business case) with WeasyPrint: the page's own
HTML, laid out by the stylesheet's print rules, so the PDF and the browser's print look the
same. Nothing is fetched while rendering: the stylesheet is read from the static files and
every other URL in the page is refused (no request leaves the server)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.http import HttpRequest


import json
import logging
import re
from collections.abc import Callable
from functools import wraps

from django.contrib.staticfiles import finders
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.utils.text import slugify

from governance.errors import DomainError, Forbidden, NotFound, TooManyRequests, Unauthenticated

logger = logging.getLogger(__name__)
STYLESHEET_LINKS = re.compile(r'<link rel="stylesheet"[^>]*>')


def _no_fetching() -> object:
    from weasyprint.urls import URLFetcher

    class NoFetching(URLFetcher):  # type: ignore[misc]  # weasyprint has no type hints
        def fetch(self, url: str, headers: dict[str, str] | None = None) -> None:
            raise ValueError(f"not fetched while making a PDF: {url[:80]}")

    return NoFetching()


def pdf_response(
    page: HttpResponse, filename: str, *, stylesheet: str = "css/app.css"
) -> HttpResponse:
    """The rendered page as a PDF attachment, laid out by `stylesheet` (a static file: the
    app's, or a page's own small print stylesheet, which lays out many times faster)."""
    pdf = render_pdf(page.content.decode(page.charset or "utf-8"), stylesheet)
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{file_name(filename)}.pdf"'
    return response


def document(html: str, stylesheet: str = "css/app.css") -> Any:
    """The laid-out WeasyPrint document of `html` (its `.pages`; `.write_pdf()`)."""
    from weasyprint import CSS, HTML  # imported on use: it loads Pango

    css = CSS(filename=finders.find(stylesheet), url_fetcher=_no_fetching())
    html = STYLESHEET_LINKS.sub("", html)  # the page's own links: `stylesheet` lays it out
    return HTML(string=html, url_fetcher=_no_fetching(), base_url="/").render(stylesheets=[css])


def render_pdf(html: str, stylesheet: str = "css/app.css") -> bytes:
    pdf: bytes = document(html, stylesheet).write_pdf()
    return pdf


def file_name(words: str) -> str:
    """A file name of `words` (slugified) with each word once: a report titled "Status
    report March" of ALPHA is alpha-status-report-march, not alpha-status-report-status-..."""
    seen: list[str] = []
    for word in slugify(words).split("-"):
        if word and word not in seen:
            seen.append(word)
    return "-".join(seen) or "page"


def wants_pdf(request: HttpRequest) -> bool:
    return request.method == "GET" and request.GET.get("format") == "pdf"


OAUTH_ONLY = (
    "This token was given to an MCP client and works at /mcp only; a PDF takes a personal API "
    "token from your profile page."
)


# A page's refusal by its status, answered to a token as the API answers it.
REFUSALS: dict[int, type[DomainError]] = {
    401: Unauthenticated,
    403: Forbidden,
    404: NotFound,
    429: TooManyRequests,
}


def error_response(error: DomainError) -> HttpResponse:
    """The API's error body (`{"error": {code, message, ...}}`) with the error's headers."""
    response = HttpResponse(
        json.dumps(error.body()), status=error.status, content_type="application/json"
    )
    for name, value in error.headers().items():
        response[name] = value
    if isinstance(error, Unauthenticated):
        response["WWW-Authenticate"] = "Bearer"
    return response


def bearer(view: Callable[..., Any]) -> Callable[..., Any]:
    """Let a page's PDF (`?format=pdf`) be fetched with a personal API token, as the JSON API
    is (Authorization: Bearer <token>): the token's owner is the request's user, and the view's
    own gates apply (404 for what they may not see). A token's caller is a program: every
    refusal (a bad token 401, a gate's 403 or 404, too many bad tokens 429 with Retry-After)
    is the API's JSON error body, never a page; an OAuth token (for /mcp only) is refused.
    Without the header, the page as before."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not wants_pdf(request):
            return view(request, *args, **kwargs)
        try:
            return _as_token(request, token, view, *args, **kwargs)
        except DomainError as error:
            return error_response(error)
        except Http404:
            return error_response(NotFound())
        except PermissionDenied as denied:
            return error_response(Forbidden(str(denied) or None))

    return wrapped


def _as_token(
    request: HttpRequest, token: str, view: Callable[..., Any], *args: Any, **kwargs: Any
) -> HttpResponse:
    from governance import oauth, throttling
    from governance.atlassian.context import act_for

    user = throttling.bearer_user(request, token)
    if user is None:
        mcp_only = oauth.user_for_access_token(request, token.strip()) is not None
        return error_response(Unauthenticated(OAUTH_ONLY if mcp_only else None))
    request.user = user
    act_for(user.account_id)
    response: HttpResponse = view(request, *args, **kwargs)
    refusal = REFUSALS.get(response.status_code)
    if refusal is not None and response.get("Content-Type", "").startswith("text/html"):
        return error_response(refusal())  # a page's refusal the view rendered itself
    return response
