"""The risks and opportunities register page: inline add / edit / delete, scores with their
heat colour, and the Record-decision act on a materialised risk."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.http import HttpResponse

    from governance import charts


from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uuid import UUID

    from django.urls import URLPattern

    from governance.models import Project
    from governance.permissions import Caller
    from registers.views.shared import Drawing, RowForm


from django.contrib import messages
from django.http import HttpResponseRedirect

from governance import permissions, specs, submissions
from governance.errors import Conflict, Frozen, ValidationFailed
from governance.http import HtmxHttpRequest
from governance.services import rag_thresholds
from registers import forms, pictures, selectors, services
from registers.models import Risk
from registers.serializers import risk_to_dict
from registers.services.risks import build_risk, decision_prefill, require_decision_recordable
from registers.specs import RiskSpec
from registers.views import base
from registers.views.decisions import PAGES as DECISIONS
from registers.views.shared import Writes


class RiskPages(base.RegisterPages):
    slug = "risks"
    title = "Risks"
    noun = "risk"
    anchor = "risk"
    template = "registers/risks.html"
    model = Risk
    id_kwarg = "risk_id"
    writes = Writes(
        create=services.risk_create,
        build=build_risk,
        update=services.risk_update,
        delete=services.risk_delete,
    )
    labels = specs.labels(RiskSpec)
    name_field = "title"
    restorable = frozenset(specs.writable(RiskSpec))
    empty_hint = "Record what could knock the project off course, and what could help it."
    draws_pictures = True
    bulk_fields = ("status", "ownerAccountId")
    bulk_statuses = "risk_status"

    def extra(self, project: Project) -> dict[str, Any]:
        return {"treating": selectors.treating_decisions(project), "thresholds": rag_thresholds()}

    def pictures(self, drawing: Drawing) -> list[charts.Chart]:
        # Every open risk of the register, whatever the page shows: counted per cell in SQL.
        cells = pictures.open_risk_cells(drawing.project.risks.all())
        return pictures.risk_matrices(cells, drawing.extra["thresholds"], drawing.url)

    def to_dict(self, record: Risk) -> dict[str, Any]:
        return risk_to_dict(record, [])

    def get_urls(self) -> list[URLPattern]:
        act = self.item_act("record-decision", self.record_decision_view, "GET", "POST")
        return [*super().get_urls(), act]

    # --- record the decision that treats a materialised risk -------------------------------

    def record_decision_view(
        self, request: HtmxHttpRequest, key: str, risk_id: UUID
    ) -> HttpResponse:
        """Record the decision that treats a materialised risk: a decision form pre-filled
        from the risk, inline under its row. Refused (409) for a risk that has not
        materialised."""
        project, caller = permissions.editable_project_for(request, key)
        risk = self.current(project, risk_id)
        if request.method == "GET":
            project.assert_registers_unfrozen()
            require_decision_recordable(risk)
            form = self.record_form(project, risk)
            return self.record_response(request, project, caller, risk, form, 200)
        data = forms.data_from_post("decisions", request.POST)
        try:
            _, repeated = submissions.create_once(
                submissions.token_of(request.POST),
                account_id=caller.account_id,
                kind=f"record-decision:{risk.pk}",
                create=lambda: services.risk_record_decision(
                    caller=caller, risk_id=risk.pk, data=data
                ),
            )
        except ValidationFailed as exc:
            form = self.record_form(
                project, risk, forms.values_from_post("decisions", request.POST)
            )
            form["errors"] = forms.errors_by_field("decisions", exc.fields)
            form["message"] = "The decision was not recorded: correct the fields marked below."
            return self.record_response(request, project, caller, risk, form, 422)
        except (Conflict, Frozen) as exc:
            form = self.record_form(
                project, risk, forms.values_from_post("decisions", request.POST)
            )
            form["message"] = exc.message
            return self.record_response(request, project, caller, risk, form, exc.status)
        notice = "This form was already sent: the decision was recorded once, not twice."
        if repeated is not None and not request.htmx:
            messages.info(request, notice)
        if not request.htmx:
            return HttpResponseRedirect(f"{self.base_url(project)}#risk-{risk.pk}")
        if repeated is not None:
            return self.render_row(request, project, caller, risk, tabs=True, notice=notice)
        return self.render_row(request, project, caller, risk, status=201, tabs=True)

    def record_form(
        self, project: Project, risk: Risk, values: dict[str, Any] | None = None
    ) -> RowForm:
        prefill = forms.values_from_record("decisions", decision_prefill(risk))
        form = DECISIONS.new_form(project, values or prefill)
        form["risk"] = risk
        form["labels"] = DECISIONS.labels  # the decision register's own field labels
        return form

    def record_response(
        self,
        request: HtmxHttpRequest,
        project: Project,
        caller: Caller,
        risk: Risk,
        form: RowForm,
        status: int,
    ) -> HttpResponse:
        if not request.htmx:
            return self.detail_response(
                request, project, caller, risk, status=status, record_form=form
            )
        return self.render_partial(
            request, project, caller, risk, "row-record", status=status, form=form
        )


PAGES = base.register(RiskPages())
