"""What the four register pages share, as one class: `RegisterPages` declares a register (its
resource, names and template) and serves its pages the way Django's `ModelAdmin` serves an
admin: `get_urls()` gives the URL patterns of the list, add, detail, edit and delete views,
and each register's module subclasses it, overriding the hooks (rows, `extra`, create, update,
delete, the form's choices, the edit and detail checks) and adding its own acts to
`get_urls()`. The full page and the HTMX responses render the same partials; an inline save
answers 422 with the errors in the row and a conflict row on a stale save
(`governance.conflicts`); the table and the pictures are cached by what they show."""

import contextlib
import hashlib
import secrets
from collections.abc import Callable, Iterable
from functools import cache, partial
from typing import Any, ClassVar

from django.contrib import messages
from django.core.cache import cache as shared_cache
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.template.context import make_context
from django.template.loader import get_template, render_to_string
from django.urls import URLPattern, path, reverse
from django.utils import timezone, translation
from django.utils.cache import patch_vary_headers
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import reswap, retarget

from governance import audit_text, deflate, formatting, permissions, submissions
from governance import services as kernel_services
from governance.conflicts import conflict_rows
from governance.errors import Conflict, Frozen, Stale, ValidationFailed
from governance.http import form_revision, page, render_htmx
from governance.models import RAG_CHOICES, AuditEntry, Project
from governance.people import browsers_among, resolve, search_browsers
from governance.permissions import Caller
from governance.tracker import TrackerError
from registers import forms, selectors, tables
from registers.models import (
    CHANGE_DIMENSIONS,
    RISK_DIRECTIONS,
    RISK_STATUSES,
    RISK_TREATMENTS,
    WP_STATUSES,
)
from registers.services.common import get_in_project

ORDER = ["work-packages", "risks", "decisions", "changes"]

REGISTERS: dict[str, "RegisterPages"] = {}


def register(pages: "RegisterPages") -> "RegisterPages":
    REGISTERS[pages.slug] = pages
    return pages


# --- people and choices --------------------------------------------------------------------


def people_choices(project: Project, current: Iterable[str | None] = ()) -> list[tuple[str, str]]:
    """People offered by the owner / maker / approver pickers: of the project's lead,
    editors, sponsor and steering committee and the tracker's people directory, those who
    can browse the project; and whoever the record already names. Resolved in one call."""
    ids = {
        project.lead_account_id,
        project.sponsor_account_id,
        *kernel_services.editor_account_ids(project),
        *(project.steering_account_ids or []),
        *current,
    }
    with contextlib.suppress(TrackerError):  # the picker still offers the known people
        ids.update(u.account_id for u in search_browsers(project.key, "", limit=100))
    ids.discard(None)
    ids.discard("")
    # Only people who can browse the project are offered (and whoever the record names now).
    ids = browsers_among(project.key, ids) | {a for a in current if a}
    people = resolve(ids)
    return sorted(
        ((a, p.display_name) for a, p in people.items()), key=lambda pair: pair[1].casefold()
    )


STATIC_CHOICES = {
    "wp_status": [(v, v) for v in WP_STATUSES],
    "rag": [(v, "No RAG" if v == "None" else v) for v in RAG_CHOICES],
    "progress": [(str(v), f"{v}%") for v in range(0, 101, 10)],
    "risk_status": [(v, v) for v in RISK_STATUSES],
    "direction": [(v, v) for v in RISK_DIRECTIONS],
    "score": [(str(v), str(v)) for v in range(1, 6)],
    "treatments": list(RISK_TREATMENTS.items()),
    "dimensions": CHANGE_DIMENSIONS,
}


def csrf_input(request: HttpRequest | None) -> str:
    """The CSRF hidden input, built once per response: rows repeat it in every form (htmx
    sends the token in a header; the input serves forms posted without script)."""
    if request is None:
        return ""
    return format_html(
        '<input type="hidden" name="csrfmiddlewaretoken" value="{}">', get_token(request)
    )


def form_people(form: dict | None) -> set[str]:
    return {a for a, _ in (form or {}).get("choices", {}).get("people", [])}


def htmx_response(content: str, status: int) -> HttpResponse:
    response = HttpResponse(content, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def history(project: Project, record) -> list[AuditEntry]:
    return list(
        AuditEntry.objects.filter(project_key=project.key, target_id=str(record.pk)).order_by(
            "-at", "-id"
        )[:50]
    )


# --- the rendered table, cached by what it shows ------------------------------------------------
#
# Rendering a hundred rows costs most of a register page. The table is cached under a digest
# of everything it is rendered from (the deploy's version in every cache key stands for the
# templates and the code): the caller, the project's state,
# the query string, and every value of every row (stored and derived), of the table and of the
# people it names. Any change to any of these is a new key, so a cached table is never stale;
# old keys simply expire. The CSRF input, different per response, is put in after the cache.

TABLE_CACHE_SECONDS = 600
_CSRF_SLOT = mark_safe("<!--csrf-input-->")  # our own constant


def _values(obj: Any) -> list:
    return sorted((k, repr(v)) for k, v in vars(obj).items() if not k.startswith("_"))


@cache
def _stored_names(model: type) -> frozenset[str]:
    return frozenset(f.attname for f in model._meta.concrete_fields)


def _record_text(record: Any) -> str:
    """Every stored and derived value of a decorated record, as text for a cache key: the
    stored values' text (shared with the pictures' key), then every other value (the text
    `tables.decorate` kept with them where it did, then the row's URL)."""
    kept = tables.derived_text(record)
    if kept is not None:
        return f"{_stored_text(record)}{kept}{record.url}"
    stored = _stored_names(type(record))
    derived = {k: v for k, v in vars(record).items() if k[0] != "_" and k not in stored}
    return f"{_stored_text(record)}{derived!r}"


_stored_text = tables.stored_text


def _table_parts(request: HttpRequest, reg: "RegisterPages", context: dict) -> list:
    """Every input of the table's rendering but its rows. The project's row without its
    `registers_revision`: a stamp of the facts, which the rows' own text carries."""
    caller: Caller = context["caller"]
    project: Project = context["project"]
    table = context["table"]
    return [
        formatting.currency(),
        str(timezone.localdate()),
        reg.slug,
        request.path,
        sorted(request.GET.lists()),
        context["base"],
        caller.account_id,
        [caller.can_view, caller.is_site_admin, caller.is_lead, caller.is_nominated_editor],
        [caller.can_edit, caller.can_edit_registers, caller.is_sponsor],
        [kv for kv in _values(project) if kv[0] != "registers_revision"],
        [(k, repr(v)) for k, v in vars(table).items() if k != "rows"],
        sorted((k, repr(v)) for k, v in context["people"].items()),
        repr(context["extra"]),
    ]


def table_cache_key(
    request: HttpRequest, reg: "RegisterPages", context: dict, texts: list[str] | None = None
) -> str:
    """The table's key: every input but its rows (`_table_parts`), then every row's text
    (`_record_text`, given as `texts` when the caller made them already)."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(repr(_table_parts(request, reg, context)).encode())
    if texts is None:
        texts = [_record_text(row) for row in context["table"].rows]
    digest.update("\n".join(texts).encode())
    return f"registers:table:{digest.hexdigest()}"


# The process keeps the tables it served last too: reading a 1,000-row table back from the
# shared cache (unpickling megabytes) cost as much as a tenth of the page. Same keys, so
# never stale; bounded by the characters held (emptied when over).
_TABLES: dict[str, str] = {}
_TABLES_CHARS = 0
_TABLES_MAX_CHARS = 8_000_000


def _keep_table(key: str, html: str) -> None:
    global _TABLES_CHARS
    if _TABLES_CHARS + len(html) > _TABLES_MAX_CHARS:
        _TABLES.clear()
        _TABLES_CHARS = 0
    if len(html) <= _TABLES_MAX_CHARS:
        _TABLES[key] = html
        _TABLES_CHARS += len(html)


def table_html(request: HttpRequest, reg: "RegisterPages", context: dict) -> str:
    """The table partial, from the cache when the same table was rendered before; else
    rendered around its rows, each row from the process's row cache (`rows_html`) when the
    same row was rendered before."""
    texts = [_record_text(row) for row in context["table"].rows]
    key = table_cache_key(request, reg, context, texts)
    html = _TABLES.get(key)
    if html is None:
        html = shared_cache.get(key)
        if html is None:
            html = render_to_string(
                f"{reg.template}#table",
                {
                    **context,
                    "csrf_input": _CSRF_SLOT,
                    "rows_html": rows_html(request, reg, context, texts),
                },
                request,
            )
            shared_cache.set(key, html, TABLE_CACHE_SECONDS)
        _keep_table(key, html)
    return mark_safe(html.replace(_CSRF_SLOT, context["csrf_input"]))


# Each rendered row is kept by the process too, under a digest of every input of the table
# but its rows (`_table_parts`: the person and their rights, the project's row, the people
# shown, the register's `extra`, the day, the currency, the URL and query) and the row's own
# text (`_record_text`: every stored and derived value of the record). After a change of one
# row, the table is rendered again from the other rows' kept HTML and the changed row's
# partial: a 1,000-row table costs one row's rendering, not a thousand. A row rendered with
# a state of its own (being edited, just saved or moved, a notice, the link picker) is
# neither kept nor read. Bounded by the characters held (emptied when over), like the tables.
_ROWS: dict[bytes, str] = {}
_ROWS_CHARS = 0
_ROW_STATES = ("editing_id", "saved", "moved_id", "picking", "notice", "form")


def rows_html(request: HttpRequest, reg: "RegisterPages", context: dict, texts: list[str]):
    """The table's rows (`<reg.template>#row` for each), or None when the table shows a row in
    a state of its own (the template then renders its rows itself)."""
    global _ROWS_CHARS
    if any(context.get(name) for name in _ROW_STATES):
        return None
    rows = context["table"].rows
    base = hashlib.blake2b(repr(_table_parts(request, reg, context)).encode(), digest_size=20)
    keys = []
    for text in texts:
        digest = base.copy()
        digest.update(text.encode())
        keys.append(digest.digest())
    found = [_ROWS.get(k) for k in keys]
    missing = [n for n, html in enumerate(found) if html is None]
    if missing:
        page = get_template(reg.template).template
        row = get_template(f"{reg.template}#row").template
        bound = make_context(context, request, autoescape=True)
        with bound.render_context.push_state(page), bound.bind_template(page):
            for n in missing:
                with bound.push(r=rows[n]):
                    found[n] = html = row.nodelist.render(bound)
                if _ROWS_CHARS + len(html) > _TABLES_MAX_CHARS:
                    _ROWS.clear()
                    _ROWS_CHARS = 0
                _ROWS[keys[n]] = html
                _ROWS_CHARS += len(html)
    return mark_safe("".join(found))


# The page's body (the register tabs, the toolbar and filters, the pictures, the summary and
# the table: the template's `body` partial) is cached too, under the project's
# `registers_revision` (raised in the transaction of every change of what the body shows:
# registers.revision) and every other input of its rendering: the register, the path and
# query string, the language, the day, the currency and the register's own
# (`RegisterPages.page_key_parts`), the caller (account and rights) and the project's row as
# the access gate read it on this request. A hit skips loading and decorating the rows; the
# gate still runs first, and the page around the body (menu, flash messages, CSRF token) is
# rendered for each request. The names the body shows are checked against the people cache
# on every hit (a changed display name renders the body again). The CSRF input is put in
# after the cache, as in the table.

PAGE_CACHE_SECONDS = 600


def page_cache_key(request: HttpRequest, reg: "RegisterPages", project: Project, caller) -> str:
    digest = hashlib.blake2b(digest_size=20)
    parts = [
        reg.slug,
        request.path,
        sorted(request.GET.lists()),
        translation.get_language(),
        str(timezone.localdate()),
        formatting.currency(),
        reg.page_key_parts(project),
        caller.account_id,
        [caller.can_view, caller.is_site_admin, caller.is_lead, caller.is_nominated_editor],
        [caller.can_edit, caller.can_edit_registers, caller.is_sponsor],
        _values(project),
    ]
    digest.update(repr(parts).encode())
    return f"registers:page:{digest.hexdigest()}"


def _names(people: dict) -> list:
    return sorted((k, repr(v)) for k, v in people.items())


# The bodies this process served last, in front of the shared cache (same keys), with their
# parts between the CSRF slots as bytes ready to be compressed once (governance.deflate).
_BODIES: dict[str, tuple[list, list[deflate.Stored]]] = {}
_BODIES_SIZE = 0  # bytes held


def _keep_body(key: str, html: str, names: list) -> list[deflate.Stored]:
    global _BODIES_SIZE
    parts = [deflate.Stored(part.encode()) for part in html.split(_CSRF_SLOT)]
    size = sum(len(p.raw) for p in parts)
    if _BODIES_SIZE + size > _TABLES_MAX_CHARS:
        _BODIES.clear()
        _BODIES_SIZE = 0
    if size <= _TABLES_MAX_CHARS:
        _BODIES[key] = (names, parts)
        _BODIES_SIZE += size
    return parts


def stored_body(key: str) -> list[deflate.Stored] | None:
    """The cached body under `key`, as its parts between the CSRF slots, when the names it
    shows are still the people cache's; else None."""
    entry = _BODIES.get(key)
    if entry is None:
        stored = shared_cache.get(key)
        if not (isinstance(stored, tuple) and len(stored) == 2):
            return None
        html, names = stored
        entry = (names, _keep_body(key, html, names))
    names, parts = entry
    if names and _names(resolve(k for k, _ in names)) != names:
        return None
    return parts


_BODY_MARK = "<!--register-body-->"  # our own constant, where the page puts the body
# (a value shown in the page around it is escaped, so it cannot hold the mark)


def assembled_page(response: HttpResponse, body: list[deflate.Stored], fill: str) -> None:
    """Put the stored body into the rendered page (at `_BODY_MARK`), with `fill` (the CSRF
    input) in its slots; the parts kept on the response for the compression."""
    before, mark, after = response.content.partition(_BODY_MARK.encode())
    if not mark or _BODY_MARK.encode() in after:
        raise ValueError("The page must show the register body once.")
    parts: list[deflate.Part] = [before]
    filler = fill.encode()
    for n, part in enumerate(body):
        if n:
            parts.append(filler)
        parts.append(part)
    parts.append(after)
    response.content = deflate.content(parts)
    response.deflate_parts = (response.content, parts)


# The register's pictures (its risk matrices, its timeline and budget curve) are drawn from
# the stored values of every record of the register, whatever the table's filters, and cached
# like the table (the deploy's version in every cache key stands for the drawing code and
# templates): under the day, the currency, the register's URL, its `extra` and every stored
# value of every record. They show nothing that depends on the reader, so every reader shares
# them. They are drawn only when the page shows them (an HTMX table swap does not).


def pictures_cache_key(reg: "RegisterPages", project: Project, records: list, extra: Any) -> str:
    digest = hashlib.blake2b(digest_size=20)
    parts = [
        formatting.currency(),
        str(timezone.localdate()),
        reg.slug,
        reg.base_url(project),
        repr(extra),
    ]
    digest.update(repr(parts).encode())
    digest.update("\n".join(_stored_text(record) for record in records).encode())
    return f"registers:pictures:{digest.hexdigest()}"


def pictures_html(reg: "RegisterPages", project: Project, records: list, extra: Any) -> str:
    """The register's pictures, rendered, from the cache when the same were drawn before."""
    if not reg.draws_pictures:
        return ""
    key = pictures_cache_key(reg, project, records, extra)
    html = shared_cache.get(key)
    if html is None:
        drawn = reg.pictures(project, records, extra, reg.base_url(project))
        html = render_to_string("charts/_pictures.html", {"pictures": drawn})
        shared_cache.set(key, html, TABLE_CACHE_SECONDS)
    return mark_safe(html)  # rendered by our template, autoescaped


UNDO_SESSION_KEY = "register_undo"
UNDO_KEEP = 10


class RegisterPages:
    """A register's pages. Subclass it, set the class attributes, override the hooks the
    register needs, and add its own acts to `get_urls()`."""

    slug: ClassVar[str]  # its URL segment, the list view's URL name, the tables' and forms' key
    title: ClassVar[str]
    noun: ClassVar[str]
    # A row's anchor (`<anchor>-<uuid>`) and the prefix of the URL names (`<anchor>-new`, ...).
    anchor: ClassVar[str]
    template: ClassVar[str]
    model: ClassVar[type]
    id_kwarg: ClassVar[str]  # the URL's record id (`wp_id`, `risk_id`, ...)
    labels: ClassVar[dict[str, str]]
    empty_hint: ClassVar[str]
    # The attribute that names a record to a person ("Deleted the risk “Vendor delay”").
    name_field: ClassVar[str] = "pk"
    # The fields its create service accepts that rebuild a deleted record whole; empty where
    # a delete cannot be undone (a work package's linked issues and baselines are gone).
    restorable: ClassVar[frozenset[str]] = frozenset()
    deletable: ClassVar[bool] = True
    # Whether the page shows the register's pictures (`pictures`), server-drawn charts.
    draws_pictures: ClassVar[bool] = False

    # --- hooks ---------------------------------------------------------------------------

    def records(self, project: Project) -> list:
        """The register's rows, in its own order, with what its table shows."""
        raise NotImplementedError

    def extra(self, project: Project) -> dict:
        """Project-wide values the rows are decorated with (thresholds, names, the plan)."""
        return {}

    def summary(self, project: Project) -> dict | None:
        """What the page shows above the table."""
        return None

    def pictures(self, project: Project, records: list, extra: dict, url: str) -> list:
        """The register's pictures from its decorated rows and `extra` (see draws_pictures)."""
        return []

    def to_dict(self, record) -> dict:
        raise NotImplementedError

    def create(self, *, caller: Caller, data: dict):
        raise NotImplementedError

    def update(self, *, caller: Caller, pk, data: dict, expected_revision: int | None):
        raise NotImplementedError

    def delete(self, *, caller: Caller, pk, expected_revision: int | None) -> None:
        raise NotImplementedError

    def check_editable(self, record) -> None:
        """Refuse (409) the edit form of a record its state keeps from being edited."""

    def form_choices(self, project: Project, values: dict) -> dict:
        """The add and edit form's choices: the people pickers, and the register's own."""
        named = [v for k, v in values.items() if k.endswith("AccountId") and isinstance(v, str)]
        return {"people": people_choices(project, named)}

    def prepare_form(self, form: dict) -> None:
        """Values the register's form partial needs beyond the submitted values."""

    def detail_extra(self, record) -> dict:
        """More context for the record's read-only detail page."""
        return {}

    # --- URLs and views --------------------------------------------------------------------

    def base_url(self, project: Project) -> str:
        return reverse(f"registers:{self.slug}", args=[project.key])

    def record_id(self, kwargs: dict) -> Any:
        return kwargs[self.id_kwarg]

    @staticmethod
    def view(method: Callable, *methods: str) -> Callable:
        """A page view from a bound method: the HTTP methods it answers, signed in, and the
        answer varying with `HX-Request` (a full page, a fragment or a redirect)."""
        return page(*methods)(vary_on_headers("HX-Request")(method))

    def item_route(self) -> str:
        return f"{self.slug}/<uuid:{self.id_kwarg}>/"

    def get_urls(self) -> list[URLPattern]:
        item, name = self.item_route(), self.anchor
        urls = [
            path(f"{self.slug}/", self.view(self.list_view, "GET", "POST"), name=self.slug),
            path(f"{self.slug}/new/", self.view(self.new_view, "GET"), name=f"{name}-new"),
            path(item, self.view(self.detail_view, "GET", "POST"), name=f"{name}-detail"),
            path(f"{item}edit/", self.view(self.edit_view, "GET"), name=f"{name}-edit"),
        ]
        if self.deletable:
            urls.append(
                path(f"{item}delete/", self.view(self.delete_view, "POST"), name=f"{name}-delete")
            )
        return urls

    def list_view(self, request: HttpRequest, key: str) -> HttpResponse:
        """GET: the register page (HTMX: its table, filtered and sorted). POST: add a row."""
        project, caller = permissions.project_for(request, key)
        if request.method == "POST":
            return self.save(request, project, caller)
        return self.render_page(request, project, caller)

    def new_view(self, request: HttpRequest, key: str) -> HttpResponse:
        project, caller = permissions.editable_project_for(request, key)
        project.assert_registers_unfrozen()
        return self.render_form(request, project, caller, self.new_form(project))

    def detail_view(self, request: HttpRequest, key: str, **kwargs) -> HttpResponse:
        """GET: the read-only detail page (HTMX: the read row, as a cancelled edit shows it).
        POST: save the inline edit."""
        project, caller = permissions.project_for(request, key)
        pk = self.record_id(kwargs)
        if request.method == "POST":
            return self.save(request, project, caller, pk)
        record = self.current(project, pk)
        if request.htmx:
            return self.render_row(request, project, caller, record)
        context = self.detail_context(request, project, caller, record, **self.detail_extra(record))
        return render(request, "registers/detail.html", context)

    def edit_view(self, request: HttpRequest, key: str, **kwargs) -> HttpResponse:
        project, caller = permissions.editable_project_for(request, key)
        project.assert_registers_unfrozen()
        record = self.current(project, self.record_id(kwargs))
        self.check_editable(record)
        form = self.edit_form(project, record)
        return self.render_form(request, project, caller, form, record=record)

    def delete_view(self, request: HttpRequest, key: str, **kwargs) -> HttpResponse:
        """Delete after confirmation. HTMX: the row disappears, the counts update and the page
        says what was deleted, with Undo where the register's create service can rebuild the
        record; a stale or refused delete answers with the row and the reason."""
        project, caller = permissions.project_for(request, key)
        pk = self.record_id(kwargs)
        record = self.current(project, pk)
        name = self.record_name(record)
        restore = (
            {k: v for k, v in self.to_dict(record).items() if k in self.restorable}
            if self.restorable
            else None
        )
        try:
            self.delete(caller=caller, pk=pk, expected_revision=form_revision(request.POST))
        except (Stale, Conflict, Frozen) as exc:
            current = self.current(project, pk)
            notice = (
                f"Not deleted: someone changed this {self.noun} since you loaded it. "
                "Check it, then delete again."
                if isinstance(exc, Stale)
                else f"Not deleted: {exc.message}"
            )
            if not request.htmx:
                raise
            response = self.render_row(
                request, project, caller, current, status=exc.status, notice=notice
            )
            return self.into_row(response, pk)
        token = self.stash_undo(request, project, name, restore) if restore is not None else ""
        message = f"Deleted the {self.noun} “{name}”."
        if not request.htmx:
            messages.success(request, message)
            return HttpResponseRedirect(self.base_url(project))
        flash = render_to_string(
            "registers/_deleted.html",
            {"message": message, "token": token, "project": project, "reg": self},
            request=request,
        )
        return self.into_row(htmx_response(self.tabs_oob(project) + flash, 200), pk)

    # --- the page, the table and the rows --------------------------------------------------

    def decorated(self, project: Project, caller: Caller, records: list, extra_ids=()):
        """Resolve everyone the rows show in one call and precompute each row's display
        values."""
        extra = self.extra(project)
        people = resolve(tables.person_ids(self.slug, records) | set(extra_ids))
        tables.decorate(self.slug, records, people, caller, extra, self.base_url(project))
        return people, extra

    def tabs(self, project: Project) -> list[tuple[str, str, int]]:
        """The register sub-tabs: each register's slug, title and row count."""
        counts = selectors.register_counts(project)
        return [(slug, REGISTERS[slug].title, counts[slug]) for slug in ORDER]

    def common_context(
        self, project: Project, caller: Caller, request: HttpRequest | None = None, **more
    ) -> dict:
        form = more.get("form")
        if form:
            self.prepare_form(form)
        return {
            "csrf_input": csrf_input(request),
            "project": project,
            "caller": caller,
            "tab": "registers",
            "reg": self,
            "register": self.slug,
            "base": self.base_url(project),
            "can_edit": caller.can_edit_registers,
            "static": STATIC_CHOICES,
            "detail_template": f"{self.template}#detail",
            **more,
        }

    def page_context(
        self, request: HttpRequest, project: Project, caller: Caller, *, form: dict | None = None
    ) -> dict:
        records = self.records(project)
        people, extra = self.decorated(project, caller, records, form_people(form))
        table = tables.build(self.slug, records, request.GET, people)
        counts = selectors.register_counts(project)
        return self.common_context(
            project,
            caller,
            request,
            table=table,
            rows=table.rows,
            people=people,
            extra=extra,
            counts=counts,
            registers=[(slug, REGISTERS[slug].title, counts[slug]) for slug in ORDER],
            summary=self.summary(project),
            # A callable: the template calls it where the page shows the pictures, so a table
            # swap never draws them.
            pictures_html=partial(pictures_html, self, project, records, extra),
            form=form,
            editing_id=form.get("uuid") if form else None,
        )

    def render_page(
        self,
        request: HttpRequest,
        project: Project,
        caller: Caller,
        *,
        form: dict | None = None,
        status: int = 200,
    ) -> HttpResponse:
        """The register page, or its table alone for an HTMX filter / sort request."""
        if form is None and not request.htmx:
            return self.render_cached_page(request, project, caller, status=status)
        context = self.page_context(request, project, caller, form=form)
        if form is None:
            context["table_html"] = table_html(request, self, context)
        return render_htmx(request, self.template, context, partial="table", status=status)

    def render_cached_page(
        self, request: HttpRequest, project: Project, caller: Caller, *, status: int = 200
    ) -> HttpResponse:
        """The full page, its body from the cache (see `page_cache_key`) or rendered and
        cached; the page around it rendered for this request."""
        key = page_cache_key(request, self, project, caller)
        body = stored_body(key)
        if body is None:
            context = self.page_context(request, project, caller)
            context["csrf_input"] = _CSRF_SLOT
            context["table_html"] = table_html(request, self, context)
            html = render_to_string(f"{self.template}#body", context, request)
            names = _names(context["people"])
            shared_cache.set(key, (html, names), PAGE_CACHE_SECONDS)
            body = _keep_body(key, html, names)
        context = self.common_context(project, caller, request)
        context["body_html"] = mark_safe(_BODY_MARK)
        response = render_htmx(request, self.template, context, status=status)
        assembled_page(response, body, context["csrf_input"])
        return response

    def page_key_parts(self, project: Project) -> Any:
        """What else the register's page body is rendered from, beyond the project's facts
        (`registers_revision`), the caller, the request and the site's currency."""
        return None

    def render_table(self, request: HttpRequest, project: Project, caller: Caller, **more):
        """After a write to the table's order: the table again (without script, the page)."""
        if not request.htmx:
            return HttpResponseRedirect(self.base_url(project))
        context = self.page_context(request, project, caller)
        context.update(more)
        return render_htmx(request, self.template, context, partial="table")

    def tabs_oob(self, project: Project) -> str:
        """The register sub-tab bar with fresh counts, swapped out of band after an add or a
        delete."""
        return render_to_string(
            "registers/_tabs.html",
            {
                "project": project,
                "register": self.slug,
                "registers": self.tabs(project),
                "oob": True,
            },
        )

    def row_html(
        self,
        request: HttpRequest,
        project: Project,
        caller: Caller,
        record,
        *,
        partial: str = "row",
        **more,
    ) -> str:
        """One of the template's row partials (`row`, `row-edit`, a register's own)."""
        records = [record] if record is not None else []
        people, extra = self.decorated(project, caller, records, form_people(more.get("form")))
        context = self.common_context(
            project, caller, request, r=record, people=people, extra=extra, **more
        )
        return render_to_string(f"{self.template}#{partial}", context, request=request)

    def render_row(
        self,
        request: HttpRequest,
        project: Project,
        caller: Caller,
        record,
        *,
        status: int = 200,
        tabs: bool = False,
        notice: str = "",
        saved: bool = False,
    ) -> HttpResponse:
        html = self.row_html(request, project, caller, record, notice=notice, saved=saved)
        if tabs:
            html += self.tabs_oob(project)
        return htmx_response(html, status)

    def render_partial(
        self,
        request: HttpRequest,
        project: Project,
        caller: Caller,
        record,
        partial: str,
        *,
        status: int = 200,
        **more,
    ) -> HttpResponse:
        """A row partial of the register's own acts, as an HTMX answer."""
        html = self.row_html(request, project, caller, record, partial=partial, **more)
        return htmx_response(html, status)

    def into_row(self, response: HttpResponse, pk) -> HttpResponse:
        """The answer replaces the record's row: a row's Delete button submits the table's one
        shared form (`_row_forms.html`), which cannot name the row itself."""
        return reswap(retarget(response, f"#{self.anchor}-{pk}"), "outerHTML")

    # --- forms -----------------------------------------------------------------------------

    def new_form(self, project: Project, values: dict | None = None) -> dict:
        values = forms.blank_values(self.slug, values)
        return {
            "id": None,
            "key": "new",
            "uuid": None,
            "values": values,
            "errors": {},
            "message": "",
            "conflict": [],
            "revision": None,
            "token": submissions.new_token(),
            "choices": self.form_choices(project, values),
        }

    def edit_form(self, project: Project, record, values: dict | None = None) -> dict:
        values = values or forms.values_from_record(self.slug, self.to_dict(record))
        return {
            "id": str(record.pk),
            "key": str(record.pk),
            "uuid": record.pk,
            "values": values,
            "errors": {},
            "message": "",
            "conflict": [],
            "revision": record.revision,
            "choices": self.form_choices(project, values),
        }

    def render_form(
        self,
        request: HttpRequest,
        project: Project,
        caller: Caller,
        form: dict,
        *,
        status: int = 200,
        record=None,
    ) -> HttpResponse:
        """The add or edit row: alone for HTMX, else the whole page with that row open."""
        if not request.htmx:
            return self.render_page(request, project, caller, form=form, status=status)
        return self.render_partial(
            request, project, caller, record, "row-edit", status=status, form=form
        )

    def conflict_rows(self, mine: dict, current) -> list[dict]:
        """Field by field, what the person submitted and what is stored now, where they
        differ."""
        labels = {field: self.labels.get(field, field) for field in forms.FIELDS[self.slug]}
        stored = forms.values_from_record(self.slug, self.to_dict(current))
        return conflict_rows(labels, mine, stored)

    def save(self, request: HttpRequest, project: Project, caller: Caller, pk=None):
        """Create (pk None) or update from the submitted row form. 201/200 with the read row;
        422 with the errors in the row; 412 with a conflict row that shows yours and theirs;
        409 with the reason in the row when the register or the record no longer allows it."""
        data = forms.data_from_post(self.slug, request.POST)
        values = forms.values_from_post(self.slug, request.POST)
        # Numbers the page cannot read are refused with the service's own errors, in one
        # answer: the service still checks the rest, and what it wrote is rolled back.
        unreadable = forms.number_errors(self.slug, data)
        repeated = None
        try:
            with transaction.atomic():
                if pk is None:
                    # The form's one-time token: the same form sent again creates nothing.
                    record, repeated = submissions.create_once(
                        submissions.token_of(request.POST),
                        account_id=caller.account_id,
                        kind=f"{self.slug}:{project.key}",
                        create=lambda: self.create(caller=caller, data=data),
                    )
                else:
                    record = self.update(
                        caller=caller,
                        pk=pk,
                        data=data,
                        expected_revision=form_revision(request.POST),
                    )
                if unreadable and repeated is None:
                    raise ValidationFailed({})
        except ValidationFailed as exc:
            current = self.current(project, pk)
            form = self.form_for(project, current, values)
            form["errors"] = forms.errors_by_field(self.slug, {**exc.fields, **unreadable})
            form["message"] = "This was not saved: correct the fields marked below."
            return self.render_form(request, project, caller, form, status=422, record=current)
        except Stale:
            current = self.current(project, pk)
            form = self.form_for(project, current, values)
            form["conflict"] = self.conflict_rows(values, current)
            form["message"] = (
                f"Someone else saved this {self.noun} while you were editing it. Their version "
                "is shown beside yours; save again to replace it with yours, or cancel to keep "
                "theirs."
            )
            return self.render_form(request, project, caller, form, status=412, record=current)
        except (Conflict, Frozen) as exc:
            current = self.current(project, pk)
            form = self.form_for(project, current, values)
            form["message"] = exc.message
            return self.render_form(
                request, project, caller, form, status=exc.status, record=current
            )
        if repeated is not None:
            return self.already_created(request, project, caller, repeated)
        if not request.htmx:
            return HttpResponseRedirect(f"{self.base_url(project)}#{self.anchor}-{record.pk}")
        return self.render_row(
            request,
            project,
            caller,
            record,
            status=201 if pk is None else 200,
            tabs=pk is None,
            saved=True,
        )

    def already_created(
        self, request: HttpRequest, project: Project, caller: Caller, pk: str
    ) -> HttpResponse:
        """The answer to a create form sent again: the record its first submission created,
        with a word that nothing was added twice."""
        record = self.current(project, pk)
        notice = f"This form was already sent: the {self.noun} was added once, not twice."
        if not request.htmx:
            messages.info(request, notice)
            return HttpResponseRedirect(f"{self.base_url(project)}#{self.anchor}-{record.pk}")
        return self.render_row(request, project, caller, record, tabs=True, notice=notice)

    def current(self, project: Project, pk):
        """The stored record (404 when it is not the project's), or None for a new one."""
        if pk is None:
            return None
        return get_in_project(self.model, project, pk, lock=False)

    def form_for(self, project: Project, current, values: dict) -> dict:
        if current is None:
            return self.new_form(project, values)
        return self.edit_form(project, current, values)

    # --- undo a delete ---------------------------------------------------------------------

    def record_name(self, record) -> str:
        return str(getattr(record, self.name_field, "") or "").strip() or f"this {self.noun}"

    def stash_undo(self, request, project: Project, name: str, data: dict) -> str:
        """Keep what Undo needs in the person's session (the last few deletes only)."""
        token = secrets.token_urlsafe(12)
        stash = dict(request.session.get(UNDO_SESSION_KEY, {}))
        stash[token] = {"register": self.slug, "project": project.key, "name": name, "data": data}
        request.session[UNDO_SESSION_KEY] = dict(list(stash.items())[-UNDO_KEEP:])
        return token

    def undo_delete(
        self, request: HttpRequest, project: Project, caller: Caller, token: str
    ) -> HttpResponse:
        """Undo a delete made in this session: the register's create service makes the record
        again from what it held (a new record, audited as created). Once only."""
        stash = dict(request.session.get(UNDO_SESSION_KEY, {}))
        entry = stash.pop(token, None)
        request.session[UNDO_SESSION_KEY] = stash
        if not entry or entry["register"] != self.slug or entry["project"] != project.key:
            messages.error(request, "There is nothing to undo: it was undone already or expired.")
            return HttpResponseRedirect(self.base_url(project))
        try:
            record = self.create(caller=caller, data=entry["data"])
        except (ValidationFailed, Conflict, Frozen) as exc:
            messages.error(
                request, f"The {self.noun} “{entry['name']}” could not be restored: {exc.message}"
            )
            return HttpResponseRedirect(self.base_url(project))
        messages.success(request, f"Restored the {self.noun} “{entry['name']}”.")
        return HttpResponseRedirect(f"{self.base_url(project)}#{self.anchor}-{record.pk}")

    # --- read-only detail ------------------------------------------------------------------

    def detail_context(
        self, request: HttpRequest, project: Project, caller: Caller, record, **more
    ) -> dict:
        entries = history(project, record)
        people, extra = self.decorated(
            project, caller, [record], {e.actor_account_id for e in entries}
        )
        return self.common_context(
            project,
            caller,
            request,
            r=record,
            people=people,
            extra=extra,
            entries=entries,
            history_lines=audit_text.describe(entries, record_known=True),
            detail_page=True,
            registers=self.tabs(project),
            **more,
        )

    def detail_response(
        self,
        request: HttpRequest,
        project: Project,
        caller: Caller,
        record,
        *,
        status: int = 200,
        **more,
    ) -> HttpResponse:
        """The detail page, with a register act's form or answer (`more`) on it."""
        context = self.detail_context(request, project, caller, record, **more)
        return render(request, "registers/detail.html", context, status=status)
