"""What the four register pages share, as one class: `RegisterPages` declares a register (its
resource, names and template) and serves its pages the way Django's `ModelAdmin` serves an
admin: `get_urls()` gives the URL patterns of the list, add, detail, edit and delete views, and
each register's module subclasses it, declaring its write services (`writes`), overriding the
hooks (rows, `extra`, the form's choices, the edit and detail checks) and adding its own acts
to `get_urls()`. The page shows its rows a page at a time (registers.paging: filters, search
and sort in SQL); the full page and the HTMX responses render the same partials; the rows'
answers, row forms, undo and the detail page are registers.views.rowforms, and the bulk edit of
selected rows registers.views.bulk."""

from collections.abc import Callable, Iterable
from functools import partial, wraps
from typing import Any, ClassVar

from django.contrib import messages
from django.db.models import ManyToOneRel, Model, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import URLPattern, path, reverse
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import reswap, retarget

from governance import charts, permissions
from governance.errors import Conflict, Frozen, Stale
from governance.http import HtmxHttpRequest, form_revision, page, render_htmx, wants_partial
from governance.models import Project
from governance.people import Person, resolve
from governance.permissions import Caller
from governance.picker import people_choices
from registers import paging, selectors, summary, tables
from registers.summary import Summary
from registers.views import redraw
from registers.views.bulk import BulkEdit
from registers.views.rowforms import RowForms
from registers.views.shared import (
    STATIC_CHOICES,
    Choices,
    Drawing,
    RowForm,
    csrf_input,
    form_people,
    htmx_response,
    pictures_html,
)

ORDER = ["work-packages", "risks", "decisions", "changes"]

REGISTERS: dict[str, "RegisterPages"] = {}


def register(pages: "RegisterPages") -> "RegisterPages":
    REGISTERS[pages.slug] = pages
    return pages


class RegisterPages(RowForms, BulkEdit):
    """A register's pages. Subclass it, set the class attributes, override the hooks the
    register needs, and add its own acts to `get_urls()`."""

    slug: ClassVar[str]  # its URL segment, the list view's URL name, the tables' and forms' key
    title: ClassVar[str]
    noun: ClassVar[str]
    # A row's anchor (`<anchor>-<uuid>`) and the prefix of the URL names (`<anchor>-new`, ...).
    anchor: ClassVar[str]
    template: ClassVar[str]
    model: ClassVar[type[Model]]
    id_kwarg: ClassVar[str]  # the URL's record id (`wp_id`, `risk_id`, ...)
    labels: ClassVar[dict[str, str]]
    empty_hint: ClassVar[str]
    # The attribute that names a record to a person ("Deleted the risk “Vendor delay”").
    name_field: ClassVar[str] = "pk"
    # The fields its create service accepts that rebuild a deleted record whole; empty where
    # a delete cannot be undone (a work package's linked issues and baselines are gone).
    restorable: ClassVar[frozenset[str]] = frozenset()
    # Whether the page shows the register's pictures (`pictures`), server-drawn charts.
    draws_pictures: ClassVar[bool] = False
    # The partials (of `template`) of what the page shows of the project's or the page's rows
    # besides the table and its pictures (the totals, a summary): each one element with its
    # own id, drawn again out of band (`oob`) after a write from the page.
    drawn_again: ClassVar[tuple[str, ...]] = ()

    @property
    def deletable(self) -> bool:
        """Whether the register deletes: its `writes` hold a delete service."""
        return self.writes.delete is not None

    # --- hooks ---------------------------------------------------------------------------

    def rows(self, project: Project, queryset: QuerySet[Any]) -> QuerySet[Any]:
        """The register's rows as its page reads them (the related rows it shows joined)."""
        return queryset

    def totals(self, queryset: QuerySet[Any], stored: Summary | None) -> dict[str, str] | None:
        """Totals over every row the page's filters keep (aggregate SQL), shown under the
        table; `stored`: the register's summary, when the filters keep every row."""
        return None

    def extra(self, project: Project) -> dict[str, Any]:
        """Project-wide values the rows are decorated with (thresholds, names, the plan)."""
        return {}

    def summary(self, project: Project) -> dict[str, Any] | None:
        """What the page shows above the table."""
        return None

    def pictures(self, drawing: Drawing) -> list[charts.Chart]:
        """The register's pictures (see draws_pictures and `Drawing`)."""
        return []

    def to_dict(self, record: Any) -> dict[str, Any]:
        raise NotImplementedError

    def check_editable(self, record: Any) -> None:
        """Refuse (409) the edit form of a record its state keeps from being edited."""

    def form_choices(self, project: Project, values: dict[str, Any]) -> Choices:
        """The add and edit form's choices: the people pickers, and the register's own."""
        named = [v for k, v in values.items() if k.endswith("AccountId") and isinstance(v, str)]
        return {"people": people_choices(project, named)}

    def prepare_form(self, form: RowForm) -> None:
        """Values the register's form partial needs beyond the submitted values."""

    def detail_extra(self, record: Any) -> dict[str, Any]:
        """More context for the record's read-only detail page."""
        return {}

    # --- URLs and views --------------------------------------------------------------------

    def base_url(self, project: Project) -> str:
        return reverse(f"registers:{self.slug}", args=[project.key])

    def record_id(self, kwargs: dict[str, Any]) -> Any:
        return kwargs[self.id_kwarg]

    def view(
        self, method: Callable[..., HttpResponseBase], *methods: str
    ) -> Callable[..., HttpResponseBase]:
        """A page view from a bound method: the HTTP methods it answers, signed in, and the
        answer varying with `HX-Request` (a full page, a fragment or a redirect). A write's
        HTMX answer on the register's page carries its pictures and totals, drawn again."""
        answers: Callable[[Callable[..., Any]], Callable[..., HttpResponseBase]] = page(*methods)

        @wraps(method)
        def redrawing(request: HtmxHttpRequest, key: str, **kwargs: Any) -> HttpResponseBase:
            response = method(request, key, **kwargs)
            if request.method == "POST" and isinstance(response, HttpResponse):
                redraw.draw_again_for_page_shown(self, request, key, response)
            return response

        return answers(vary_on_headers("HX-Request")(redrawing))

    def item_route(self) -> str:
        return f"{self.slug}/<uuid:{self.id_kwarg}>/"

    def item_act(
        self, act: str, method: Callable[..., HttpResponseBase], *methods: str
    ) -> URLPattern:
        """The URL pattern of an act on one record: `<item>/<act>/`, named `<anchor>-<act>`."""
        return path(
            f"{self.item_route()}{act}/", self.view(method, *methods), name=f"{self.anchor}-{act}"
        )

    def get_urls(self) -> list[URLPattern]:
        item, name = self.item_route(), self.anchor
        urls = [
            path(f"{self.slug}/", self.view(self.list_view, "GET", "POST"), name=self.slug),
            path(f"{self.slug}/new/", self.view(self.new_view, "GET"), name=f"{name}-new"),
            path(item, self.view(self.detail_view, "GET", "POST"), name=f"{name}-detail"),
            self.item_act("edit", self.edit_view, "GET"),
        ]
        if self.deletable:
            urls.append(self.item_act("delete", self.delete_view, "POST"))
        if self.bulk_fields:
            urls.append(
                path(f"{self.slug}/bulk/", self.view(self.bulk_view, "POST"), name=f"{name}-bulk")
            )
        return urls

    def list_view(self, request: HtmxHttpRequest, key: str) -> HttpResponse:
        """GET: the register page (HTMX: its table, filtered and sorted). POST: add a row."""
        project, caller = permissions.project_for(request, key)
        if request.method == "POST":
            return self.save(request, project, caller)
        return self.render_page(request, project, caller)

    def new_view(self, request: HtmxHttpRequest, key: str) -> HttpResponse:
        project, caller = permissions.editable_project_for(request, key)
        project.assert_registers_unfrozen()
        return self.render_form(request, project, caller, self.new_form(project))

    def detail_view(self, request: HtmxHttpRequest, key: str, **kwargs: Any) -> HttpResponse:
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

    def edit_view(self, request: HtmxHttpRequest, key: str, **kwargs: Any) -> HttpResponse:
        project, caller = permissions.editable_project_for(request, key)
        project.assert_registers_unfrozen()
        record = self.current(project, self.record_id(kwargs))
        self.check_editable(record)
        form = self.edit_form(project, record)
        return self.render_form(request, project, caller, form, record=record)

    def delete_view(self, request: HtmxHttpRequest, key: str, **kwargs: Any) -> HttpResponse:
        """Delete after confirmation. HTMX: the row disappears (from the register's page, the
        page's table is answered again), the counts update and the page says what was deleted,
        with Undo where the register's create service can rebuild the record; a stale or
        refused delete answers with the row and the reason."""
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
        if redraw.page_shown(self, request, project.key) is None:
            return self.into_row(htmx_response(self.tabs_oob(project) + flash, 200), pk)
        # From the register's page: its table again, so the row after the page's last takes
        # the deleted one's place and the pager counts again.
        response = self.render_table(request, project, caller)
        response.content += (self.tabs_oob(project) + flash).encode()
        return reswap(retarget(response, "#register-table"), "outerHTML")

    # --- the page, the table and the rows --------------------------------------------------

    def decorated(
        self, project: Project, caller: Caller, records: list[Any], extra_ids: Iterable[str] = ()
    ) -> tuple[dict[str, Person], dict[str, Any]]:
        """Resolve everyone the rows show in one call; precompute each row's display values."""
        extra = self.extra(project)
        people = resolve(tables.person_ids(self.slug, records) | set(extra_ids))
        tables.decorate(self.slug, records, people, caller, extra, self.base_url(project))
        return people, extra

    def tabs(self, project: Project) -> list[tuple[str, str, int]]:
        """The register sub-tabs: each register's slug, title and row count."""
        counts = selectors.register_counts(project)
        return [(slug, REGISTERS[slug].title, counts[slug]) for slug in ORDER]

    def common_context(
        self, project: Project, caller: Caller, request: HttpRequest | None = None, **more: Any
    ) -> dict[str, Any]:
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
            # Each row's tick for the bulk bar (its choices: `bulk`, on the page only).
            "bulk_on": bool(self.bulk_fields) and caller.can_edit_registers,
            "static": STATIC_CHOICES,
            "detail_template": f"{self.template}#detail",
            **more,
        }

    def page_context(
        self, request: HttpRequest, project: Project, caller: Caller, *, form: RowForm | None = None
    ) -> dict[str, Any]:
        """The page's context: a page of the register's rows (registers.paging), filtered,
        searched and sorted in SQL, decorated with what the table shows."""
        params = request.GET
        # Through the related manager: each row's `project` is this instance (no query).
        rel = self.model._meta.get_field("project").remote_field
        assert isinstance(rel, ManyToOneRel)  # a register's rows: a foreign key to the project
        scope = getattr(project, rel.get_accessor_name()).all()
        # All rows' figures as the last change stored them, else read now (registers.summary).
        stored = summary.current(project)
        owners = stored.owners[self.slug] if stored else paging.owner_ids(self.slug, scope)
        chosen = paging.choice(params, "owner", owners)
        sort = params.get("sort", "")
        spec = paging.SPECS[self.slug]
        sort = sort if sort in spec.sorts else ""
        named = {}
        if sort and sort.lower() in ("owner", "madeby", "proposer"):
            named = {a: p.display_name for a, p in resolve(owners).items()}
        keys = paging.order_keys(self.slug, sort, params.get("dir") == "desc", named)
        matching = paging.filtered(self.slug, scope, params, owners)
        page = paging.read_page(
            scope,
            self.rows(project, matching),
            keys,
            after=params.get("after", ""),
            before=params.get("before", ""),
        )
        records = page.rows
        editing = form.get("uuid") if form else None
        if editing is not None and all(r.pk != editing for r in records):
            # The row being edited without script stays open on whichever page is shown.
            records.insert(0, self.current(project, editing))
        people, extra = self.decorated(
            project, caller, records, {*form_people(form), *owners, *([chosen] if chosen else [])}
        )
        counts = stored.counts if stored else selectors.register_counts(project)
        table = tables.build(
            self.slug,
            page,
            params,
            people,
            owners,
            total=counts[self.slug],
            # No filter, no second count: the register's count is the one just read.
            matching=counts[self.slug] if matching is scope else matching.count(),
        )
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
            totals=self.totals(matching, stored if matching is scope else None),
            bulk=self.bulk_choices(project)
            if self.bulk_fields and caller.can_edit_registers
            else None,
            # A callable: drawn where the page shows the pictures, and by `render_page` and
            # `redraw` for a table swap or a write (out of band).
            pictures_html=partial(
                pictures_html,
                self,
                Drawing(project, records, extra, self.base_url(project), counts[self.slug], stored),
            ),
            form=form,
            editing_id=form.get("uuid") if form else None,
        )

    def render_page(
        self,
        request: HttpRequest,
        project: Project,
        caller: Caller,
        *,
        form: RowForm | None = None,
        status: int = 200,
    ) -> HttpResponse:
        """The register page, or its table alone for an HTMX filter / sort / page request,
        with the pictures of its rows out of band."""
        context = self.page_context(request, project, caller, form=form)
        response = render_htmx(request, self.template, context, partial="table", status=status)
        if request.method == "GET" and wants_partial(request):
            response.content += context["pictures_html"](oob=True).encode()
        return response

    def render_table(
        self, request: HtmxHttpRequest, project: Project, caller: Caller, **more: Any
    ) -> HttpResponse:
        """After a write to the table's order: the table again, as the page in view shows it
        (its filters, sort and page: `redraw.page_shown`); without script, the page."""
        if not request.htmx:
            return HttpResponseRedirect(self.base_url(project))
        shown = redraw.page_shown(self, request, project.key)
        page = shown or request
        context = self.page_context(page, project, caller)
        context.update(more)
        response = render_htmx(page, self.template, context, partial="table")
        if shown is not None and (self.draws_pictures or self.drawn_again):
            # What is drawn around the table, from the same rows (read once).
            response.content += redraw.around_table(self, context, shown)
            response.drawn_around = True  # type: ignore[attr-defined]
        return response

    def tabs_oob(self, project: Project) -> str:
        """The sub-tab bar with fresh counts, swapped out of band after an add or a delete."""
        return render_to_string(
            "registers/_tabs.html",
            {
                "project": project,
                "register": self.slug,
                "registers": self.tabs(project),
                "oob": True,
            },
        )

    def into_row(self, response: HttpResponse, pk: Any) -> HttpResponse:
        """The answer replaces the record's row: a row's Delete button submits the table's one
        shared form (`_row_forms.html`), which cannot name the row itself."""
        return reswap(retarget(response, f"#{self.anchor}-{pk}"), "outerHTML")
