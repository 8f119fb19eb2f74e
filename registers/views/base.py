"""What the four register pages share: the register descriptions, the page and row
rendering (the full page and the HTMX responses render the same partials), inline save with
422 errors in the row and a conflict row on a stale save, delete, the read-only detail."""

import contextlib
import hashlib
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from django.contrib import messages
from django.core.cache import cache as shared_cache
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from governance import audit_text, formatting
from governance import services as kernel_services
from governance.errors import Conflict, Frozen, Stale, ValidationFailed
from governance.http import render_htmx
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


@dataclass(frozen=True)
class Register:
    slug: str
    title: str
    noun: str
    anchor: str
    template: str
    model: type
    id_kwarg: str
    labels: dict[str, str]
    records: Callable[[Project], list]
    extra: Callable[[Project], dict]
    to_dict: Callable[[Any], dict]
    create: Callable[..., Any]
    update: Callable[..., Any]
    delete: Callable[..., Any] | None
    empty_hint: str
    summary: Callable[[Project], dict] | None = None
    # The register's pictures (server-drawn charts) from its decorated rows and `extra`.
    pictures: Callable[[Project, list, dict, str], list] | None = None
    # The attribute that names a record to a person ("Deleted the risk “Vendor delay”").
    name_field: str = "pk"
    # The fields its create service accepts that rebuild a deleted record whole; empty where
    # a delete cannot be undone (a work package's linked issues and baselines are gone).
    restorable: frozenset[str] = frozenset()

    def base_url(self, project: Project) -> str:
        return reverse(f"registers:{self.slug}", args=[project.key])


REGISTERS: dict[str, Register] = {}


def register(reg: Register) -> Register:
    REGISTERS[reg.slug] = reg
    return reg


def record_id(reg: Register, kwargs: dict) -> Any:
    return kwargs[reg.id_kwarg]


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


# --- rendering -------------------------------------------------------------------------------


def decorated(reg: Register, project: Project, caller: Caller, records: list, extra_ids=()):
    """Resolve everyone the rows show in one call and precompute each row's display values."""
    extra = reg.extra(project)
    people = resolve(tables.person_ids(reg.slug, records) | set(extra_ids))
    tables.decorate(reg.slug, records, people, caller, extra, reg.base_url(project))
    return people, extra


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


def common_context(
    reg: Register, project: Project, caller: Caller, request: HttpRequest | None = None, **more
) -> dict:
    form = more.get("form")
    if form and reg.slug == "work-packages":  # the budget phasing month grid
        form["phasing_rows"] = forms.phasing_rows(form["values"].get("budgetPhasing") or "")
    return {
        "csrf_input": csrf_input(request),
        "project": project,
        "caller": caller,
        "tab": "registers",
        "reg": reg,
        "register": reg.slug,
        "base": reg.base_url(project),
        "can_edit": caller.can_edit_registers,
        "static": STATIC_CHOICES,
        "detail_template": f"{reg.template}#detail",
        **more,
    }


def page_context(
    request: HttpRequest,
    reg: Register,
    project: Project,
    caller: Caller,
    *,
    form: dict | None = None,
) -> dict:
    records = reg.records(project)
    extra_ids = form_people(form)
    people, extra = decorated(reg, project, caller, records, extra_ids)
    table = tables.build(reg.slug, records, request.GET, people)
    counts = selectors.register_counts(project)
    return common_context(
        reg,
        project,
        caller,
        request,
        table=table,
        rows=table.rows,
        people=people,
        extra=extra,
        counts=counts,
        registers=[(slug, REGISTERS[slug].title, counts[slug]) for slug in ORDER],
        summary=reg.summary(project) if reg.summary else None,
        # A callable: the template calls it where the page shows the pictures, so a table
        # swap never draws them.
        pictures_html=partial(pictures_html, reg, project, records, extra),
        form=form,
        editing_id=form.get("uuid") if form else None,
    )


def render_page(
    request: HttpRequest,
    reg: Register,
    project: Project,
    caller: Caller,
    *,
    form: dict | None = None,
    status: int = 200,
) -> HttpResponse:
    """The register page, or its table alone for an HTMX filter / sort request."""
    context = page_context(request, reg, project, caller, form=form)
    if form is None:
        context["table_html"] = table_html(request, reg, context)
    return render_htmx(request, reg.template, context, partial="table", status=status)


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


def table_cache_key(request: HttpRequest, reg: Register, context: dict) -> str:
    caller: Caller = context["caller"]
    project: Project = context["project"]
    table = context["table"]
    digest = hashlib.blake2b(digest_size=20)
    parts = [
        formatting.currency(),
        str(timezone.localdate()),
        reg.slug,
        request.path,
        sorted(request.GET.lists()),
        context["base"],
        caller.account_id,
        [caller.can_view, caller.is_site_admin, caller.is_lead, caller.is_nominated_editor],
        [caller.can_edit, caller.can_edit_registers, caller.is_sponsor],
        _values(project),
        [(k, repr(v)) for k, v in vars(table).items() if k != "rows"],
        sorted((k, repr(v)) for k, v in context["people"].items()),
        repr(context["extra"]),
    ]
    digest.update(repr(parts).encode())
    digest.update("\n".join(_record_text(row) for row in table.rows).encode())
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


def table_html(request: HttpRequest, reg: Register, context: dict) -> str:
    """The table partial, from the cache when the same table was rendered before."""
    key = table_cache_key(request, reg, context)
    html = _TABLES.get(key)
    if html is None:
        html = shared_cache.get(key)
        if html is None:
            html = render_to_string(
                f"{reg.template}#table", {**context, "csrf_input": _CSRF_SLOT}, request
            )
            shared_cache.set(key, html, TABLE_CACHE_SECONDS)
        _keep_table(key, html)
    return mark_safe(html.replace(_CSRF_SLOT, context["csrf_input"]))


# The register's pictures (its risk matrices, its timeline and budget curve) are drawn from
# the stored values of every record of the register, whatever the table's filters, and cached
# like the table (the deploy's version in every cache key stands for the drawing code and
# templates): under the day, the currency, the register's URL, its `extra` and every stored
# value of every record. They show nothing that depends on the reader, so every reader shares
# them. They are drawn only when the page shows them (an HTMX table swap does not).


def pictures_cache_key(reg: Register, project: Project, records: list, extra: Any) -> str:
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


def pictures_html(reg: Register, project: Project, records: list, extra: Any) -> str:
    """The register's pictures, rendered, from the cache when the same were drawn before."""
    if not reg.pictures:
        return ""
    key = pictures_cache_key(reg, project, records, extra)
    html = shared_cache.get(key)
    if html is None:
        drawn = reg.pictures(project, records, extra, reg.base_url(project))
        html = render_to_string("charts/_pictures.html", {"pictures": drawn})
        shared_cache.set(key, html, TABLE_CACHE_SECONDS)
    return mark_safe(html)  # rendered by our template, autoescaped


def _htmx_response(content: str, status: int) -> HttpResponse:
    response = HttpResponse(content, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def tabs_oob(reg: Register, project: Project) -> str:
    """The register sub-tab bar with fresh counts, swapped out of band after an add or a
    delete."""
    counts = selectors.register_counts(project)
    return render_to_string(
        "registers/_tabs.html",
        {
            "project": project,
            "register": reg.slug,
            "registers": [(slug, REGISTERS[slug].title, counts[slug]) for slug in ORDER],
            "oob": True,
        },
    )


def row_html(
    request: HttpRequest,
    reg: Register,
    project: Project,
    caller: Caller,
    record,
    *,
    partial: str = "row",
    **more,
) -> str:
    records = [record] if record is not None else []
    people, extra = decorated(reg, project, caller, records, form_people(more.get("form")))
    context = common_context(
        reg, project, caller, request, r=record, people=people, extra=extra, **more
    )
    return render_to_string(f"{reg.template}#{partial}", context, request=request)


def render_row(
    request: HttpRequest,
    reg: Register,
    project: Project,
    caller: Caller,
    record,
    *,
    status: int = 200,
    tabs: bool = False,
    notice: str = "",
    saved: bool = False,
) -> HttpResponse:
    html = row_html(request, reg, project, caller, record, notice=notice, saved=saved)
    if tabs:
        html += tabs_oob(reg, project)
    return _htmx_response(html, status)


def form_people(form: dict | None) -> set[str]:
    return {a for a, _ in (form or {}).get("choices", {}).get("people", [])}


# --- forms -------------------------------------------------------------------------------------


def new_form(reg: Register, project: Project, values: dict | None = None) -> dict:
    values = forms.blank_values(reg.slug, values)
    return {
        "id": None,
        "key": "new",
        "uuid": None,
        "values": values,
        "errors": {},
        "message": "",
        "conflict": [],
        "revision": None,
        "choices": form_choices(reg, project, values),
    }


def edit_form(reg: Register, project: Project, record, values: dict | None = None) -> dict:
    values = values or forms.values_from_record(reg.slug, reg.to_dict(record))
    return {
        "id": str(record.pk),
        "key": str(record.pk),
        "uuid": record.pk,
        "values": values,
        "errors": {},
        "message": "",
        "conflict": [],
        "revision": record.revision,
        "choices": form_choices(reg, project, values),
    }


def form_choices(reg: Register, project: Project, values: dict) -> dict:
    named = [v for k, v in values.items() if k.endswith("AccountId") and isinstance(v, str)]
    choices: dict[str, Any] = {"people": people_choices(project, named)}
    if reg.slug == "decisions":
        choices["minutes"] = [
            (str(m.pk), f"{m.held_on.isoformat()}: {m.title}")
            for m in selectors.steering_minutes(project)
        ]
    if reg.slug == "changes":
        choices["packages"] = sorted(
            selectors.work_package_names(project).items(), key=lambda p: p[1].casefold()
        )
    return choices


def render_form(
    request: HttpRequest,
    reg: Register,
    project: Project,
    caller: Caller,
    form: dict,
    *,
    status: int = 200,
    record=None,
) -> HttpResponse:
    """The add or edit row: alone for HTMX, else the whole page with that row open."""
    if not request.htmx:
        return render_page(request, reg, project, caller, form=form, status=status)
    html = row_html(request, reg, project, caller, record, partial="row-edit", form=form)
    return _htmx_response(html, status)


def _expected_revision(request: HttpRequest) -> int | None:
    raw = request.POST.get("revision", "")
    return int(raw) if raw.isdigit() else None


def conflict_rows(reg: Register, mine: dict, current) -> list[dict]:
    """Field by field, what the person submitted and what is stored now, where they differ."""
    theirs = forms.values_from_record(reg.slug, reg.to_dict(current))
    people = resolve(
        value
        for values in (mine, theirs)
        for field, value in values.items()
        if field.endswith("AccountId") and isinstance(value, str)
    )
    rows = []
    for field in forms.FIELDS[reg.slug]:
        yours, stored = mine.get(field, ""), theirs.get(field, "")
        if _normal(yours) != _normal(stored):
            rows.append(
                {
                    "field": field,
                    "label": reg.labels.get(field, field),
                    "yours": _shown(yours, people),
                    "theirs": _shown(stored, people),
                }
            )
    return rows


def _normal(value: Any) -> Any:
    if isinstance(value, list):
        return sorted(value)
    return (value or "").strip().replace("\r\n", "\n")


def _shown(value: Any, people) -> str:
    if isinstance(value, list):
        return ", ".join(value) or "—"
    person = people.get(value)
    if person:
        return person.display_name
    return value or "—"


def save(
    request: HttpRequest, reg: Register, project: Project, caller: Caller, pk=None
) -> HttpResponse:
    """Create (pk None) or update from the submitted row form. 201/200 with the read row;
    422 with the errors in the row; 412 with a conflict row that shows yours and theirs;
    409 with the reason in the row when the register or the record no longer allows it."""
    data = forms.data_from_post(reg.slug, request.POST)
    values = forms.values_from_post(reg.slug, request.POST)
    current = None
    # Numbers the page cannot read are refused with the service's own errors, in one answer:
    # the service still checks the rest, and what it wrote is rolled back.
    unreadable = forms.number_errors(reg.slug, data)
    try:
        with transaction.atomic():
            if pk is None:
                record = reg.create(caller=caller, data=data)
            else:
                record = reg.update(
                    caller=caller, pk=pk, data=data, expected_revision=_expected_revision(request)
                )
            if unreadable:
                raise ValidationFailed({})
    except ValidationFailed as exc:
        current = _current(reg, project, pk)
        form = _form_for(reg, project, current, values)
        form["errors"] = forms.errors_by_field(reg.slug, {**exc.fields, **unreadable})
        form["message"] = "This was not saved: correct the fields marked below."
        return render_form(request, reg, project, caller, form, status=422, record=current)
    except Stale:
        current = _current(reg, project, pk)
        form = _form_for(reg, project, current, values)
        form["conflict"] = conflict_rows(reg, values, current)
        form["message"] = (
            f"Someone else saved this {reg.noun} while you were editing it. Their version is "
            "shown beside yours; save again to replace it with yours, or cancel to keep theirs."
        )
        return render_form(request, reg, project, caller, form, status=412, record=current)
    except (Conflict, Frozen) as exc:
        current = _current(reg, project, pk)
        form = _form_for(reg, project, current, values)
        form["message"] = exc.message
        return render_form(request, reg, project, caller, form, status=exc.status, record=current)
    if not request.htmx:
        return HttpResponseRedirect(f"{reg.base_url(project)}#{reg.anchor}-{record.pk}")
    return render_row(
        request,
        reg,
        project,
        caller,
        record,
        status=201 if pk is None else 200,
        tabs=pk is None,
        saved=True,
    )


def _current(reg: Register, project: Project, pk):
    if pk is None:
        return None
    return get_in_project(reg.model, project, pk, lock=False)


def _form_for(reg: Register, project: Project, current, values: dict) -> dict:
    if current is None:
        return new_form(reg, project, values)
    return edit_form(reg, project, current, values)


UNDO_SESSION_KEY = "register_undo"
UNDO_KEEP = 10


def record_name(reg: Register, record) -> str:
    return str(getattr(record, reg.name_field, "") or "").strip() or f"this {reg.noun}"


def delete(
    request: HttpRequest, reg: Register, project: Project, caller: Caller, pk
) -> HttpResponse:
    """Delete after confirmation. HTMX: the row disappears, the counts update and the page
    says what was deleted, with Undo where the register's create service can rebuild the
    record; a stale or refused delete answers with the row and the reason."""
    record = _current(reg, project, pk)
    name = record_name(reg, record)
    restore = (
        {k: v for k, v in reg.to_dict(record).items() if k in reg.restorable}
        if reg.restorable
        else None
    )
    try:
        reg.delete(caller=caller, pk=pk, expected_revision=_expected_revision(request))
    except (Stale, Conflict, Frozen) as exc:
        current = _current(reg, project, pk)
        notice = (
            f"Not deleted: someone changed this {reg.noun} since you loaded it. "
            "Check it, then delete again."
            if isinstance(exc, Stale)
            else f"Not deleted: {exc.message}"
        )
        if not request.htmx:
            raise
        response = render_row(
            request, reg, project, caller, current, status=exc.status, notice=notice
        )
        return _into_row(response, reg, pk)
    token = _stash_undo(request, reg, project, name, restore) if restore is not None else ""
    message = f"Deleted the {reg.noun} “{name}”."
    if not request.htmx:
        messages.success(request, message)
        return HttpResponseRedirect(reg.base_url(project))
    flash = render_to_string(
        "registers/_deleted.html",
        {"message": message, "token": token, "project": project, "reg": reg},
        request=request,
    )
    return _into_row(_htmx_response(tabs_oob(reg, project) + flash, 200), reg, pk)


def _into_row(response: HttpResponse, reg: Register, pk) -> HttpResponse:
    """The answer replaces the record's row: a row's Delete button submits the table's one
    shared form (`_row_forms.html`), which cannot name the row itself."""
    response["HX-Retarget"] = f"#{reg.anchor}-{pk}"
    response["HX-Reswap"] = "outerHTML"
    return response


def _stash_undo(request, reg: Register, project: Project, name: str, data: dict) -> str:
    """Keep what Undo needs in the person's session (the last few deletes only)."""
    token = secrets.token_urlsafe(12)
    stash = dict(request.session.get(UNDO_SESSION_KEY, {}))
    stash[token] = {"register": reg.slug, "project": project.key, "name": name, "data": data}
    request.session[UNDO_SESSION_KEY] = dict(list(stash.items())[-UNDO_KEEP:])
    return token


def undo_delete(
    request: HttpRequest, reg: Register, project: Project, caller: Caller, token: str
) -> HttpResponse:
    """Undo a delete made in this session: the register's create service makes the record
    again from what it held (a new record, audited as created). Once only."""
    stash = dict(request.session.get(UNDO_SESSION_KEY, {}))
    entry = stash.pop(token, None)
    request.session[UNDO_SESSION_KEY] = stash
    if not entry or entry["register"] != reg.slug or entry["project"] != project.key:
        messages.error(request, "There is nothing to undo: it was undone already or expired.")
        return HttpResponseRedirect(reg.base_url(project))
    try:
        record = reg.create(caller=caller, data=entry["data"])
    except (ValidationFailed, Conflict, Frozen) as exc:
        messages.error(
            request, f"The {reg.noun} “{entry['name']}” could not be restored: {exc.message}"
        )
        return HttpResponseRedirect(reg.base_url(project))
    messages.success(request, f"Restored the {reg.noun} “{entry['name']}”.")
    return HttpResponseRedirect(f"{reg.base_url(project)}#{reg.anchor}-{record.pk}")


# --- read-only detail ------------------------------------------------------------------------


def history(project: Project, record) -> list[AuditEntry]:
    return list(
        AuditEntry.objects.filter(project_key=project.key, target_id=str(record.pk)).order_by(
            "-at", "-id"
        )[:50]
    )


def detail_context(
    request: HttpRequest, reg: Register, project: Project, caller: Caller, record, **more
) -> dict:
    entries = history(project, record)
    people, extra = decorated(reg, project, caller, [record], {e.actor_account_id for e in entries})
    counts = selectors.register_counts(project)
    return common_context(
        reg,
        project,
        caller,
        request,
        r=record,
        people=people,
        extra=extra,
        entries=entries,
        history_lines=audit_text.describe(entries, record_known=True),
        detail_page=True,
        registers=[(slug, REGISTERS[slug].title, counts[slug]) for slug in ORDER],
        **more,
    )
