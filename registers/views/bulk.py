"""The bulk edit of a register's selected rows: the part of `RegisterPages`
(registers.views.base) that offers the bulk bar's choices, reads the selected rows and the
fields the bar sets, and answers the edit. Each row goes through the single edit's update
service, all or nothing (registers.services.bulk); the answer is the table again, with a
toast, or with the rows still selected and each refused row named with its reason."""

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

from django.contrib import messages
from django.db.models import Model
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string

from governance import cleaning, permissions, picker
from governance.errors import Frozen, ValidationFailed
from governance.formatting import with_article
from governance.http import HtmxHttpRequest, render_htmx
from governance.models import Project
from governance.people import Person, resolve
from governance.permissions import Caller
from governance.picker import people_choices
from registers.services.bulk import BulkRefused, BulkRow, bulk_update
from registers.services.common import as_uuid, require_editor
from registers.views.shared import STATIC_CHOICES, htmx_response

# The bulk bar's owner choice that clears the owner (a blank choice keeps each row's owner).
BULK_NOBODY = "-"

if TYPE_CHECKING:

    class _Pages(Protocol):
        """What the bulk edit uses of `RegisterPages` (registers.views.base), which it is
        mixed into: its declaration, the update service and the page's context."""

        noun: ClassVar[str]
        template: ClassVar[str]
        model: ClassVar[type[Model]]
        labels: ClassVar[dict[str, str]]
        name_field: ClassVar[str]

        def update(
            self, *, caller: Caller, pk: Any, data: dict[str, Any], expected_revision: int | None
        ) -> Any: ...
        def base_url(self, project: Project) -> str: ...
        def page_context(
            self, request: HttpRequest, project: Project, caller: Caller, *, form: Any = None
        ) -> dict[str, Any]: ...

else:
    _Pages = object


def _choices(name: str) -> list[tuple[str, str]]:
    """One of the fixed choice lists of the register forms (status, RAG)."""
    return list(cast(Iterable[tuple[str, str]], STATIC_CHOICES[name]))


class BulkEdit(_Pages):
    """The bulk edit of a register's pages (mixed into `RegisterPages`)."""

    # The fields a bulk edit of selected rows may set (of status, ownerAccountId, rag); none:
    # the register offers no bulk edit.
    bulk_fields: ClassVar[tuple[str, ...]] = ()
    # The choices of the bulk edit's status select (its RAG's are the RAG values).
    bulk_statuses: ClassVar[str] = ""

    def bulk_choices(self, project: Project) -> dict[str, Any]:
        """The bulk bar's fields with their labels and options (status, owner, RAG: those
        the register has), for the page's editors."""
        fields = []
        for name in self.bulk_fields:
            if name == "ownerAccountId":
                options = [(BULK_NOBODY, "— nobody —"), *people_choices(project)]
            else:
                options = _choices("rag" if name == "rag" else self.bulk_statuses)
            fields.append({"name": name, "label": self.labels.get(name, name), "options": options})
        return {"fields": fields}

    def bulk_data(self, post: Any) -> tuple[dict[str, Any], list[str]]:
        """The fields the bulk bar sets (a blank choice keeps each row's value), and the
        labels of any choice it does not offer (the owner is checked by the update service)."""
        data: dict[str, Any] = {}
        unknown = []
        for name in self.bulk_fields:
            value = str(post.get(name, "")).strip()
            if not value:
                continue
            if name == "ownerAccountId":
                data[name] = None if value == BULK_NOBODY else value
                continue
            offered = _choices("rag" if name == "rag" else self.bulk_statuses)
            if value in {v for v, _ in offered}:
                data[name] = value
            else:
                unknown.append(self.labels.get(name, name))
        return data, unknown

    def bulk_rows(self, project: Project, post: Any) -> list[BulkRow]:
        """The selected rows (`row` = `<id>:<revision>`, as each row's checkbox sends it),
        named by the register's name field, read in one query."""
        picked: list[tuple[str, int | None]] = []
        for raw in post.getlist("row"):
            pk, _, revision = str(raw).partition(":")
            picked.append((pk.strip(), cleaning.whole_number(revision) if revision else None))
        ids = [pk for pk, _ in picked if as_uuid(pk) is not None]
        names = {
            str(pk): str(name or "")
            for pk, name in self.model._default_manager.filter(
                project=project, pk__in=ids
            ).values_list("pk", self.name_field)
        }
        return [
            BulkRow(
                pk,
                revision,
                names.get(str(as_uuid(pk)), "")
                or f"{with_article(self.noun, capital=True)} no longer here",
            )
            for pk, revision in picked
        ]

    def bulk_summary(self, data: dict[str, Any], count: int, people: dict[str, Person]) -> str:
        """What a bulk edit did, in words: 'Changed 3 work packages: Status In Progress.'"""
        parts = []
        for name, value in data.items():
            if name == "ownerAccountId":
                person = people.get(value) if value else None
                shown = person.display_name if person else (value or "nobody")
            else:
                shown = "No RAG" if name == "rag" and value == "None" else str(value)
            parts.append(f"{self.labels.get(name, name)} {shown}")
        nouns = self.noun if count == 1 else f"{self.noun}s"
        return f"Changed {count} {nouns}: {', '.join(parts)}."

    def bulk_view(self, request: HtmxHttpRequest, key: str) -> HttpResponse:
        """Set status, owner or RAG on the selected rows, through the single edit's service,
        all or nothing (registers.services.bulk). 200 with the table and a toast; 422 with
        the table, the rows still selected and each refused row named with its reason; 403 for
        a reader, 409 for frozen registers, as the single edit answers."""
        project, caller = permissions.project_for(request, key)
        require_editor(caller)  # 403 before anything is read of the body, as every write
        rows = self.bulk_rows(project, request.POST)
        data, unknown = self.bulk_data(request.POST)
        status, refusals, message = 200, [], ""
        try:
            project.assert_registers_unfrozen()  # 409 before the body's 422, as every write
            if unknown:
                raise ValidationFailed(
                    fields={"": [f"Choose one of the offered values for {', '.join(unknown)}."]}
                )
            owner = data.get("ownerAccountId")
            strangers = picker.strangers(project, {"ownerAccountId": owner} if owner else {})
            if strangers:  # as the row form refuses a person who cannot see the project
                label = self.labels.get("ownerAccountId", "Owner")
                raise ValidationFailed(fields={"": [f"{label}: {strangers['ownerAccountId'][0]}"]})
            bulk_update(
                caller=caller,
                update=self.update,
                rows=rows,
                data=data,
                field_labels=self.labels,
            )
        except BulkRefused as exc:
            status, refusals = exc.status, [r.text for r in exc.refusals]
            message = (
                f"Nothing was changed: {len(exc.refusals)} of the {len(rows)} selected "
                f"{self.noun}s cannot take this edit."
            )
        except ValidationFailed as exc:
            status = exc.status
            message = " ".join(m for msgs in exc.fields.values() for m in msgs) or exc.message
        except Frozen as exc:
            status, message = exc.status, f"Nothing was changed. {exc.message}"
        people = resolve([v for k, v in data.items() if k == "ownerAccountId" and v])
        done = self.bulk_summary(data, len(rows), people) if status == 200 else ""
        if not request.htmx and done:
            messages.success(request, done)
            query = request.GET.urlencode()
            return HttpResponseRedirect(self.base_url(project) + (f"?{query}" if query else ""))
        context = self.page_context(request, project, caller)
        if status != 200:
            context.update(
                bulk_selected={str(row.pk) for row in rows},
                bulk_values=request.POST,
                bulk_message=message,
                bulk_refusals=refusals,
            )
            if context["bulk"] is not None or not request.htmx:
                return render_htmx(request, self.template, context, partial="table", status=status)
            # No bar to say it in (the registers froze meanwhile): the table and a toast.
            done, kind = message, "error"
        else:
            kind = "success"
        html = render_to_string(f"{self.template}#table", context, request=request)
        flash = render_to_string(
            "registers/_bulk_done.html", {"message": done, "kind": kind}, request=request
        )
        return htmx_response(html + flash, status)
