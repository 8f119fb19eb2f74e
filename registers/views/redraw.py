"""What a register's page shows of its rows besides the table (its pictures, its totals, a
summary line), drawn again out of band after a write from the page, for the rows of the page
in view (record 0310). A table swap (a filter, a sort, a page) draws the pictures with the
table itself (`RegisterPages.render_page`); a write to the table's order answers the table of
the page in view (`RegisterPages.render_table`)."""

from __future__ import annotations

from copy import copy
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.core.exceptions import SuspiciousOperation
from django.http import HttpResponse, QueryDict
from django.template.loader import render_to_string
from django.urls import Resolver404, get_script_prefix, resolve

from governance import cleaning, permissions
from governance.errors import DomainError
from governance.http import HtmxHttpRequest

if TYPE_CHECKING:
    from registers.views.base import RegisterPages


def shows_table(reg: RegisterPages, key: str, path: str) -> bool:
    """Whether the page at `path` (an address's path, the site's prefix included) is the
    register's page of the project `key`: its list, or its add or edit page (the register
    with a row's form open, without script)."""
    prefix = get_script_prefix()
    if not path.startswith(prefix):
        return False
    try:
        match = resolve("/" + path.removeprefix(prefix))
    except Resolver404:
        return False
    names = {reg.slug, f"{reg.anchor}-new", f"{reg.anchor}-edit"}
    return (
        match.namespace == "registers"
        and match.url_name in names
        and match.kwargs.get("key") == key
    )


def page_shown(reg: RegisterPages, request: HtmxHttpRequest, key: str) -> HtmxHttpRequest | None:
    """The request as the register's page in view asks for its rows: its filters, sort and
    page, read from the page's address (`HX-Current-URL`, which the table's swaps push). None
    where the header names no page of this register of this project, or holds what a page's
    own address would be refused for (a control character, too many fields): the header is
    the client's, and it is read after a write has committed."""
    current = request.htmx.current_url if getattr(request, "htmx", None) else None
    if not current:
        return None
    try:
        shown = urlsplit(current)
        query = QueryDict(shown.query)
    except (ValueError, SuspiciousOperation):
        return None
    if not shows_table(reg, key, shown.path):
        return None
    if any(cleaning.text_error(text) for name, values in query.lists() for text in (name, *values)):
        return None
    page = copy(request)
    page.GET = query
    return page


def around_table(reg: RegisterPages, context: dict[str, Any], page: HtmxHttpRequest) -> bytes:
    """The page's pictures and the partials the register names in `drawn_again`, drawn from
    the page's context, out of band, each in a template element (an answer that begins with a
    table's row is parsed as a table's content)."""
    html: str = context["pictures_html"](oob=True)
    for name in reg.drawn_again:
        part = render_to_string(f"{reg.template}#{name}", {**context, "oob": True}, page)
        html += f"<template>{part}</template>"
    return html.encode()


def draw_again_for_page_shown(
    reg: RegisterPages, request: HtmxHttpRequest, key: str, response: HttpResponse
) -> None:
    """After a write from the register's page (an HTMX answer, 2xx), what is drawn around its
    table (`around_table`) for the rows the page in view shows (`page_shown`). Not again where
    the answer drew it with the page's table (`RegisterPages.render_table`: `drawn_around`)."""
    if not (reg.draws_pictures or reg.drawn_again) or not 200 <= response.status_code < 300:
        return
    if getattr(response, "drawn_around", False):
        return
    page = page_shown(reg, request, key)
    if page is None:
        return
    try:
        project, caller = permissions.project_for(request, key)
    except DomainError:
        return  # the write's own answer stands; the page's next swap draws them
    response.content += around_table(reg, reg.page_context(page, project, caller), page)
