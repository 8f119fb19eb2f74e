"""PDF downloads of pages (a status report, a business case) with WeasyPrint: the page's own
HTML, laid out by the stylesheet's print rules, so the PDF and the browser's print look the
same. Nothing is fetched while rendering: the stylesheet is read from the static files and
every other URL in the page is refused (no request leaves the server)."""

import logging

from django.contrib.staticfiles import finders
from django.http import HttpResponse
from django.utils.text import slugify

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
    response["Content-Disposition"] = f'attachment; filename="{slugify(filename) or "page"}.pdf"'
    return response


def wants_pdf(request) -> bool:
    return request.method == "GET" and request.GET.get("format") == "pdf"
