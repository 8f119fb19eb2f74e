"""What a register's page shows of its rows besides the table (its pictures, its totals, a
summary line), drawn again out of band after a write from the page, so it never shows other
rows than the table does (record 0310). A table swap (a filter, a sort, a page) draws the
pictures with the table itself (`RegisterPages.render_page`)."""

from __future__ import annotations

from copy import copy
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from django.http import HttpResponse, QueryDict
from django.template.loader import render_to_string
from django.urls import Resolver404, get_script_prefix, resolve

from governance import permissions
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


def draw_again_for_page_shown(
    reg: RegisterPages, request: HtmxHttpRequest, key: str, response: HttpResponse
) -> None:
    """After a write from the register's page (an HTMX answer, 2xx), its pictures and the
    partials it names in `drawn_again` drawn again, out of band, each in a template element
    (an answer that begins with a table's row is parsed as a table's content). For the rows
    the page shows: the filters, sort and page of the page's address (`HX-Current-URL`, which
    the table's swaps push)."""
    shown = urlsplit(request.htmx.current_url or "") if request.htmx else None
    if not (reg.draws_pictures or reg.drawn_again) or not 200 <= response.status_code < 300:
        return
    if shown is None or not shows_table(reg, key, shown.path):
        return
    project, caller = permissions.project_for(request, key)
    page_shown = copy(request)
    page_shown.GET = QueryDict(shown.query)
    context = reg.page_context(page_shown, project, caller)
    html = context["pictures_html"](oob=True)
    for name in reg.drawn_again:
        part = render_to_string(f"{reg.template}#{name}", {**context, "oob": True}, request)
        html += f"<template>{part}</template>"
    response.content += html.encode()
