"""The decision log page: newest first, a state badge (Pending / Made), inline add and edit of
pending decisions, and appended notes (the one write onto a made decision, allowed on frozen
registers too). There is no delete and no approval of decisions."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.http import HttpResponse


from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping
    from uuid import UUID

    from django.urls import URLPattern

    from governance.models import Project
    from governance.permissions import Caller
    from registers.views.shared import Choices


from django.contrib import messages
from django.http import HttpResponseRedirect

from governance import permissions, specs, submissions
from governance.errors import ValidationFailed
from governance.http import HtmxHttpRequest
from registers import selectors, services
from registers.models import Decision
from registers.serializers import decision_to_dict
from registers.services.decisions import build_decision, require_editable
from registers.specs import DecisionSpec
from registers.views import base
from registers.views.shared import Writes


class DecisionPages(base.RegisterPages):
    slug = "decisions"
    title = "Decisions"
    noun = "decision"
    anchor = "decision"
    template = "registers/decisions.html"
    model = Decision
    id_kwarg = "decision_id"
    writes = Writes(
        create=services.decision_create,
        build=build_decision,
        update=services.decision_update,
    )
    labels = specs.labels(DecisionSpec)
    empty_hint = (
        "The decision log records what was decided, by whom and why. Leave 'Made on' "
        "empty while a decision is pending; fill it when the decision is taken."
    )

    def to_dict(self, record: Decision) -> dict[str, Any]:
        return decision_to_dict(record)

    def check_editable(self, record: Decision) -> None:
        """Pending decisions only: a made decision answers 409 (add a note instead)."""
        require_editable(record)

    def form_choices(self, project: Project, values: dict[str, Any]) -> Choices:
        choices = super().form_choices(project, values)
        choices["minutes"] = [
            (str(m.pk), f"{m.held_on.isoformat()}: {m.title}")
            for m in selectors.steering_minutes(project)
        ]
        return choices

    def get_urls(self) -> list[URLPattern]:
        return [*super().get_urls(), self.item_act("notes", self.notes_view, "GET", "POST")]

    def notes_view(self, request: HtmxHttpRequest, key: str, decision_id: UUID) -> HttpResponse:
        """appendDecisionNote. GET: the note form under the row (HTMX) or the detail page."""
        project, caller = permissions.editable_project_for(request, key)
        decision = self.current(project, decision_id)
        if request.method == "GET":
            if not request.htmx:
                return HttpResponseRedirect(f"{self.base_url(project)}{decision.pk}/#notes")
            return self.note_row(request, project, caller, decision, {}, "", 200)
        text = request.POST.get("text", "")
        token = submissions.token_of(request.POST)
        try:
            noted, repeated = submissions.create_once(
                token,
                account_id=caller.account_id,
                kind=f"decision-note:{decision.pk}",
                create=lambda: services.decision_append_note(
                    caller=caller, decision_id=decision.pk, text_value=text
                ),
            )
        except ValidationFailed as exc:
            if not request.htmx:
                return self.detail_response(
                    request,
                    project,
                    caller,
                    decision,
                    status=422,
                    note_errors=exc.fields,
                    note_text=text,
                    note_token=token or submissions.new_token(),
                )
            return self.note_row(request, project, caller, decision, exc.fields, text, 422)
        notice = "This form was already sent: the note was added once, not twice."
        if repeated is not None:
            decision = self.current(project, decision.pk)
            if not request.htmx:
                messages.info(request, notice)
        elif noted is not None:
            decision = noted
        if not request.htmx:
            return HttpResponseRedirect(f"{self.base_url(project)}{decision.pk}/#notes")
        return self.render_row(
            request, project, caller, decision, notice=notice if repeated is not None else ""
        )

    def detail_extra(self, record: Decision) -> dict[str, Any]:
        return {"note_token": submissions.new_token()}

    def note_row(
        self,
        request: HtmxHttpRequest,
        project: Project,
        caller: Caller,
        decision: Decision,
        errors: Mapping[str, list[str]],
        text: str,
        status: int,
    ) -> HttpResponse:
        return self.render_partial(
            request,
            project,
            caller,
            decision,
            "row-note",
            status=status,
            note_errors=errors,
            note_text=text,
            note_token=submissions.token_of(request.POST) or submissions.new_token(),
        )


PAGES = base.register(DecisionPages())
