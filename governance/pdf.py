"""PDF downloads of pages (a status report, a business case) with WeasyPrint: the page's own
HTML, laid out by the stylesheet's print rules, so the PDF and the browser's print look the
same. Nothing is fetched while rendering: the stylesheet is read from the static files and
every other URL in the page is refused (no request leaves the server)."""

import json
import logging
from collections.abc import Callable
from functools import wraps

from django.contrib.staticfiles import finders
from django.http import HttpResponse
from django.utils.text import slugify

from governance.errors import Unauthenticated

logger = logging.getLogger(__name__)


def _no_fetching():
    from weasyprint.urls import URLFetcher

    class NoFetching(URLFetcher):
        def fetch(self, url, headers=None):
            raise ValueError(f"not fetched while making a PDF: {url[:80]}")

    return NoFetching()


def pdf_response(page: HttpResponse, filename: str) -> HttpResponse:
    """The rendered page as a PDF attachment."""
    from weasyprint import CSS, HTML  # imported on use: it loads Pango

    html = page.content.decode(page.charset or "utf-8")
    stylesheet = CSS(filename=finders.find("css/app.css"), url_fetcher=_no_fetching())
    pdf = HTML(string=html, url_fetcher=_no_fetching(), base_url="/").write_pdf(
        stylesheets=[stylesheet]
    )
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{file_name(filename)}.pdf"'
    return response


def file_name(words: str) -> str:
    """A file name of `words` (slugified) with each word once: a report titled "Status
    report March" of ALPHA is alpha-status-report-march, not alpha-status-report-status-..."""
    seen: list[str] = []
    for word in slugify(words).split("-"):
        if word and word not in seen:
            seen.append(word)
    return "-".join(seen) or "page"


def wants_pdf(request) -> bool:
    return request.method == "GET" and request.GET.get("format") == "pdf"


OAUTH_ONLY = (
    "This token was given to an MCP client and works at /mcp only; a PDF takes a personal API "
    "token from your profile page."
)


def bearer(view: Callable) -> Callable:
    """Let a page's PDF (`?format=pdf`) be fetched with a personal API token, as the JSON API
    is (Authorization: Bearer <token>): the token's owner is the request's user, and the view's
    own gates apply (404 for what they may not see). A bad token answers 401 with the error
    body; an OAuth token (for /mcp only) is refused. Without the header, the page as before."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not wants_pdf(request):
            return view(request, *args, **kwargs)
        from governance import oauth, throttling
        from governance.atlassian.context import act_for

        user = throttling.bearer_user(request, token)
        if user is None:
            mcp_only = oauth.user_for_access_token(request, token.strip()) is not None
            refused = Unauthenticated(OAUTH_ONLY if mcp_only else None)
            response = HttpResponse(
                json.dumps(refused.body()), status=refused.status, content_type="application/json"
            )
            response["WWW-Authenticate"] = "Bearer"
            return response
        request.user = user
        act_for(user.account_id)
        return view(request, *args, **kwargs)

    return wrapped
