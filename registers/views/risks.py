"""The risks and opportunities register page: inline add / edit / delete, scores with their
heat colour, and the Record-decision act on a materialised risk."""

from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.vary import vary_on_headers

from governance import permissions, specs
from governance.errors import Conflict, Frozen, ValidationFailed
from governance.http import page
from governance.services import rag_thresholds
from registers import forms, pictures, selectors, services
from registers.models import Risk
from registers.serializers import risk_to_dict
from registers.services.common import get_in_project
from registers.services.risks import WRITABLE as RISK_WRITABLE
from registers.services.risks import decision_prefill, require_decision_recordable
from registers.specs import RiskSpec
from registers.views import base
from registers.views.decisions import REG as DECISIONS

REG = base.register(
    base.Register(
        slug="risks",
        title="Risks",
        noun="risk",
        anchor="risk",
        template="registers/risks.html",
        model=Risk,
        id_kwarg="risk_id",
        labels=specs.labels(RiskSpec),
        records=selectors.risks,
        extra=lambda project: {
            "treating": selectors.treating_decisions(project),
            "thresholds": rag_thresholds(),
        },
        to_dict=lambda risk: risk_to_dict(risk, []),
        create=lambda *, caller, data: services.risk_create(caller=caller, data=data),
        update=lambda *, caller, pk, data, expected_revision: services.risk_update(
            caller=caller, risk_id=pk, data=data, expected_revision=expected_revision
        ),
        delete=lambda *, caller, pk, expected_revision: services.risk_delete(
            caller=caller, risk_id=pk, expected_revision=expected_revision
        ),
        name_field="title",
        restorable=frozenset(RISK_WRITABLE),
        empty_hint="Record what could knock the project off course, and what could help it.",
        pictures=lambda project, records, extra, url: pictures.risk_matrices(
            records, extra["thresholds"], url
        ),
    )
)


@page("GET", "POST")
@vary_on_headers("HX-Request")
def risks(request, key):
    project, caller = permissions.project_for(request, key)
    if request.method == "POST":
        return base.save(request, REG, project, caller)
    return base.render_page(request, REG, project, caller)


@page("GET")
@vary_on_headers("HX-Request")
def risk_new(request, key):
    project, caller = permissions.editable_project_for(request, key)
    project.assert_registers_unfrozen()
    return base.render_form(request, REG, project, caller, base.new_form(REG, project))


@page("GET", "POST")
@vary_on_headers("HX-Request")
def risk_detail(request, key, risk_id):
    project, caller = permissions.project_for(request, key)
    if request.method == "POST":
        return base.save(request, REG, project, caller, risk_id)
    risk = get_in_project(Risk, project, risk_id, lock=False)
    if request.htmx:
        return base.render_row(request, REG, project, caller, risk)
    return render(
        request, "registers/detail.html", base.detail_context(request, REG, project, caller, risk)
    )


@page("GET")
@vary_on_headers("HX-Request")
def risk_edit(request, key, risk_id):
    project, caller = permissions.editable_project_for(request, key)
    project.assert_registers_unfrozen()
    risk = get_in_project(Risk, project, risk_id, lock=False)
    return base.render_form(
        request, REG, project, caller, base.edit_form(REG, project, risk), record=risk
    )


@page("POST")
@vary_on_headers("HX-Request")
def risk_delete(request, key, risk_id):
    project, caller = permissions.project_for(request, key)
    return base.delete(request, REG, project, caller, risk_id)


def _record_form(project, risk, values=None) -> dict:
    prefill = forms.values_from_record("decisions", decision_prefill(risk))
    form = base.new_form(DECISIONS, project, values or prefill)
    form["risk"] = risk
    return form


def _record_response(request, project, caller, risk, form, status):
    if not request.htmx:
        context = base.detail_context(request, REG, project, caller, risk, record_form=form)
        return render(request, "registers/detail.html", context, status=status)
    html = base.row_html(request, REG, project, caller, risk, partial="row-record", form=form)
    return base._htmx_response(html, status)


@page("GET", "POST")
@vary_on_headers("HX-Request")
def risk_record_decision(request, key, risk_id):
    """Record the decision that treats a materialised risk: a decision form pre-filled from
    the risk, inline under its row. Refused (409) for a risk that has not materialised."""
    project, caller = permissions.editable_project_for(request, key)
    risk = get_in_project(Risk, project, risk_id, lock=False)
    if request.method == "GET":
        project.assert_registers_unfrozen()
        require_decision_recordable(risk)
        return _record_response(request, project, caller, risk, _record_form(project, risk), 200)
    data = forms.data_from_post("decisions", request.POST)
    try:
        services.risk_record_decision(caller=caller, risk_id=risk.pk, data=data)
    except ValidationFailed as exc:
        form = _record_form(project, risk, forms.values_from_post("decisions", request.POST))
        form["errors"] = forms.errors_by_field("decisions", exc.fields)
        form["message"] = "The decision was not recorded: correct the fields marked below."
        return _record_response(request, project, caller, risk, form, 422)
    except (Conflict, Frozen) as exc:
        form = _record_form(project, risk, forms.values_from_post("decisions", request.POST))
        form["message"] = exc.message
        return _record_response(request, project, caller, risk, form, exc.status)
    if not request.htmx:
        return HttpResponseRedirect(f"{REG.base_url(project)}#risk-{risk.pk}")
    html = base.row_html(request, REG, project, caller, risk)
    return base._htmx_response(html + base.tabs_oob(REG, project), 201)
