"""The register pages' rows as HTMX answers, the row forms, the undo of a delete and the
read-only detail page: the part of `RegisterPages` (registers.views.base) that reads a
submitted row and answers it. A save reads the form first: a number it cannot read is refused
with the person's values before any service is called; the service then checks and writes in
one transaction (422 with its errors, 412 with a conflict row, 409 with the reason)."""

import secrets
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from django.contrib import messages
from django.db import transaction
from django.db.models import Model
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.template.loader import render_to_string

from governance import audit_text, picker, submissions
from governance.conflicts import conflict_rows
from governance.errors import Conflict, Frozen, Stale, ValidationFailed
from governance.http import HtmxHttpRequest, form_revision
from governance.models import Project
from governance.people import Person
from governance.permissions import Caller
from registers import forms
from registers.services.common import get_in_project
from registers.views import rows as read_rows
from registers.views.shared import Choices, RowForm, Writes, form_people, history, htmx_response

UNDO_SESSION_KEY = "register_undo"
UNDO_KEEP = 10

if TYPE_CHECKING:

    class _Pages(Protocol):
        """What the row forms use of `RegisterPages` (registers.views.base), which they are
        mixed into: its declaration and the hooks and renderers it defines."""

        slug: ClassVar[str]
        noun: ClassVar[str]
        anchor: ClassVar[str]
        template: ClassVar[str]
        model: ClassVar[type[Model]]
        labels: ClassVar[dict[str, str]]
        name_field: ClassVar[str]
        id_kwarg: ClassVar[str]

        def to_dict(self, record: Any) -> dict[str, Any]: ...
        def form_choices(self, project: Project, values: dict[str, Any]) -> Choices: ...
        def base_url(self, project: Project) -> str: ...
        def tabs(self, project: Project) -> list[tuple[str, str, int]]: ...
        def decorated(
            self,
            project: Project,
            caller: Caller,
            records: list[Any],
            extra_ids: Iterable[str] = (),
        ) -> tuple[dict[str, Person], dict[str, Any]]: ...
        def common_context(
            self, project: Project, caller: Caller, request: HttpRequest | None = None, **more: Any
        ) -> dict[str, Any]: ...
        def render_page(
            self,
            request: HttpRequest,
            project: Project,
            caller: Caller,
            *,
            form: RowForm | None = None,
            status: int = 200,
        ) -> HttpResponse: ...
        def tabs_oob(self, project: Project) -> str: ...

else:
    _Pages = object


class RowForms(_Pages):
    """The row forms, undo and detail of a register's pages (mixed into `RegisterPages`)."""

    writes: ClassVar[Writes]  # the register's services, which every write goes through

    # --- the writes -------------------------------------------------------------------------

    def create(self, *, caller: Caller, data: dict[str, Any]) -> Any:
        return self.writes.create(caller=caller, data=data)

    def build(self, *, caller: Caller, project: Project, data: dict[str, Any]) -> Any:
        """A new record from `data`, checked by the create service and not written."""
        return self.writes.build(caller, project, data)

    def update(
        self, *, caller: Caller, pk: Any, data: dict[str, Any], expected_revision: int | None
    ) -> Any:
        return self.writes.update(
            caller=caller, **{self.id_kwarg: pk}, data=data, expected_revision=expected_revision
        )

    def delete(self, *, caller: Caller, pk: Any, expected_revision: int | None) -> None:
        if self.writes.delete is None:
            raise NotImplementedError
        self.writes.delete(
            caller=caller, **{self.id_kwarg: pk}, expected_revision=expected_revision
        )

    # --- the rows' answers -------------------------------------------------------------

    def row_html(
        self,
        request: HttpRequest,
        project: Project,
        caller: Caller,
        record: Any,
        *,
        partial: str = "row",
        **more: Any,
    ) -> str:
        """The read row (`row`: registers.views.rows) or a partial (`row-edit`, its own)."""
        records = [record] if record is not None else []
        people, extra = self.decorated(project, caller, records, form_people(more.get("form")))
        context = self.common_context(
            project, caller, request, r=record, people=people, extra=extra, **more
        )
        if partial == "row":
            return read_rows.ROWS[self.slug](record, read_rows.RowContext.of(context))
        return render_to_string(f"{self.template}#{partial}", context, request=request)

    def render_row(
        self,
        request: HttpRequest,
        project: Project,
        caller: Caller,
        record: Any,
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
        record: Any,
        partial: str,
        *,
        status: int = 200,
        **more: Any,
    ) -> HttpResponse:
        """A row partial of the register's own acts, as an HTMX answer."""
        html = self.row_html(request, project, caller, record, partial=partial, **more)
        return htmx_response(html, status)

    # --- the row forms ------------------------------------------------------------------

    def new_form(self, project: Project, values: dict[str, Any] | None = None) -> RowForm:
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

    def edit_form(
        self, project: Project, record: Any, values: dict[str, Any] | None = None
    ) -> RowForm:
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
        request: HtmxHttpRequest,
        project: Project,
        caller: Caller,
        form: RowForm,
        *,
        status: int = 200,
        record: Any = None,
    ) -> HttpResponse:
        """The add or edit row: alone for HTMX, else the whole page with that row open."""
        if not request.htmx:
            return self.render_page(request, project, caller, form=form, status=status)
        return self.render_partial(
            request, project, caller, record, "row-edit", status=status, form=form
        )

    def conflict_rows(self, mine: dict[str, Any], current: Any) -> list[dict[str, Any]]:
        """Field by field, what the person submitted and what is stored now, where they
        differ."""
        labels = {field: self.labels.get(field, field) for field in forms.FIELDS[self.slug]}
        stored = forms.values_from_record(self.slug, self.to_dict(current))
        return conflict_rows(labels, mine, stored)

    def save(
        self, request: HtmxHttpRequest, project: Project, caller: Caller, pk: Any = None
    ) -> HttpResponse:
        """Create (pk None) or update from the submitted row form. 201/200 with the read row;
        422 with the errors in the row; 412 with a conflict row that shows yours and theirs;
        409 with the reason in the row when the register or the record no longer allows it."""
        data = forms.data_from_post(self.slug, request.POST)
        values = forms.values_from_post(self.slug, request.POST)
        # Numbers the page cannot read are refused before the service is called: it writes
        # only what the form could read whole.
        unreadable = forms.number_errors(self.slug, data)
        if unreadable:
            errors = dict(unreadable)
            if pk is None:  # and the create service's own check of the rest, which never writes
                try:
                    self.build(caller=caller, project=project, data=data)
                except ValidationFailed as exc:
                    errors = {**exc.fields, **unreadable}
            return self.refused(request, project, caller, pk, values, errors)
        strangers = self.strangers(project, pk, data)
        if strangers:
            return self.refused(request, project, caller, pk, values, strangers)
        record: Any  # the register's record, created or updated
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
        except ValidationFailed as exc:
            return self.refused(request, project, caller, pk, values, exc.fields)
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

    def refused(
        self,
        request: HtmxHttpRequest,
        project: Project,
        caller: Caller,
        pk: Any,
        values: dict[str, Any],
        errors: Mapping[str, list[str]],
    ) -> HttpResponse:
        """422: the form again with the person's values and the errors by their fields."""
        current = self.current(project, pk)
        form = self.form_for(project, current, values)
        form["errors"] = forms.errors_by_field(self.slug, errors)
        form["message"] = "This was not saved: correct the fields marked below."
        return self.render_form(request, project, caller, form, status=422, record=current)

    def already_created(
        self, request: HtmxHttpRequest, project: Project, caller: Caller, pk: str
    ) -> HttpResponse:
        """The answer to a create form sent again: the record its first submission created,
        with a word that nothing was added twice."""
        record = self.current(project, pk)
        notice = f"This form was already sent: the {self.noun} was added once, not twice."
        if not request.htmx:
            messages.info(request, notice)
            return HttpResponseRedirect(f"{self.base_url(project)}#{self.anchor}-{record.pk}")
        return self.render_row(request, project, caller, record, tabs=True, notice=notice)

    def strangers(self, project: Project, pk: Any, data: dict[str, Any]) -> dict[str, list[str]]:
        """The people picked who are not among the project's people (the picker's choices),
        refused on their fields; whoever the record names now may stay. The proposer is the
        change service's own check (in its own words)."""
        named = {
            k: v
            for k, v in data.items()
            if k.endswith("AccountId") and k != "proposerAccountId" and isinstance(v, str) and v
        }
        if not named:
            return {}
        current = self.current(project, pk)
        kept = self.to_dict(current) if current is not None else {}
        return picker.strangers(
            project, named, [v for k, v in kept.items() if k.endswith("AccountId") and v]
        )

    def current(self, project: Project, pk: Any) -> Any:
        """The stored record (404 when it is not the project's), or None for a new one."""
        if pk is None:
            return None
        return get_in_project(self.model, project, pk, lock=False)

    def form_for(self, project: Project, current: Any, values: dict[str, Any]) -> RowForm:
        if current is None:
            return self.new_form(project, values)
        return self.edit_form(project, current, values)

    # --- undo a delete ---------------------------------------------------------------------

    def record_name(self, record: Any) -> str:
        return str(getattr(record, self.name_field, "") or "").strip() or f"this {self.noun}"

    def stash_undo(
        self, request: HttpRequest, project: Project, name: str, data: dict[str, Any]
    ) -> str:
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
        self, request: HttpRequest, project: Project, caller: Caller, record: Any, **more: Any
    ) -> dict[str, Any]:
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
        record: Any,
        *,
        status: int = 200,
        **more: Any,
    ) -> HttpResponse:
        """The detail page, with a register act's form or answer (`more`) on it."""
        context = self.detail_context(request, project, caller, record, **more)
        return render(request, "registers/detail.html", context, status=status)
