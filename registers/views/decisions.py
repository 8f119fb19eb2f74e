"""The decision log page: newest first, a state badge (Pending / Made), inline add and edit of
pending decisions, and appended notes (the one write onto a made decision, allowed on frozen
registers too). There is no delete and no approval of decisions."""

from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.vary import vary_on_headers

from governance import permissions, specs
from governance.errors import ValidationFailed
from governance.http import page
from registers import selectors, services
from registers.models import Decision
from registers.serializers import decision_to_dict
from registers.services.common import get_in_project
from registers.services.decisions import require_editable
from registers.specs import DecisionSpec
from registers.views import base

REG = base.register(
    base.Register(
        slug="decisions",
        title="Decisions",
        noun="decision",
        anchor="decision",
        template="registers/decisions.html",
        model=Decision,
        id_kwarg="decision_id",
        labels=specs.labels(DecisionSpec),
        records=selectors.decisions,
        extra=lambda project: {},
        to_dict=decision_to_dict,
        create=lambda *, caller, data: services.decision_create(caller=caller, data=data),
        update=lambda *, caller, pk, data, expected_revision: services.decision_update(
            caller=caller, decision_id=pk, data=data, expected_revision=expected_revision
        ),
        delete=None,
        empty_hint=(
            "The decision log records what was decided, by whom and why. Leave 'Made on' "
            "empty while a decision is pending; fill it when the decision is taken."
        ),
    )
)


@page("GET", "POST")
@vary_on_headers("HX-Request")
def decisions(request, key):
    project, caller = permissions.project_for(request, key)
    if request.method == "POST":
        return base.save(request, REG, project, caller)
    return base.render_page(request, REG, project, caller)


@page("GET")
@vary_on_headers("HX-Request")
def decision_new(request, key):
    project, caller = permissions.editable_project_for(request, key)
    project.assert_registers_unfrozen()
    return base.render_form(request, REG, project, caller, base.new_form(REG, project))


@page("GET", "POST")
@vary_on_headers("HX-Request")
def decision_detail(request, key, decision_id):
    project, caller = permissions.project_for(request, key)
    if request.method == "POST":
        return base.save(request, REG, project, caller, decision_id)
    decision = get_in_project(Decision, project, decision_id, lock=False)
    if request.htmx:
        return base.render_row(request, REG, project, caller, decision)
    return render(
        request,
        "registers/detail.html",
        base.detail_context(request, REG, project, caller, decision),
    )


@page("GET")
@vary_on_headers("HX-Request")
def decision_edit(request, key, decision_id):
    """Pending decisions only: a made decision answers 409 (add a note instead)."""
    project, caller = permissions.editable_project_for(request, key)
    project.assert_registers_unfrozen()
    decision = get_in_project(Decision, project, decision_id, lock=False)
    require_editable(decision)
    return base.render_form(
        request, REG, project, caller, base.edit_form(REG, project, decision), record=decision
    )


@page("GET", "POST")
@vary_on_headers("HX-Request")
def decision_notes(request, key, decision_id):
    """appendDecisionNote. GET: the note form under the row (HTMX) or the detail page."""
    project, caller = permissions.editable_project_for(request, key)
    decision = get_in_project(Decision, project, decision_id, lock=False)
    if request.method == "GET":
        if not request.htmx:
            return HttpResponseRedirect(f"{REG.base_url(project)}{decision.pk}/#notes")
        return _note_row(request, project, caller, decision, {}, "", 200)
    text = request.POST.get("text", "")
    try:
        decision = services.decision_append_note(
            caller=caller, decision_id=decision.pk, text_value=text
        )
    except ValidationFailed as exc:
        if not request.htmx:
            context = base.detail_context(
                request, REG, project, caller, decision, note_errors=exc.fields, note_text=text
            )
            return render(request, "registers/detail.html", context, status=422)
        return _note_row(request, project, caller, decision, exc.fields, text, 422)
    if not request.htmx:
        return HttpResponseRedirect(f"{REG.base_url(project)}{decision.pk}/#notes")
    return base.render_row(request, REG, project, caller, decision)


def _note_row(request, project, caller, decision, errors, text, status):
    html = base.row_html(
        request,
        REG,
        project,
        caller,
        decision,
        partial="row-note",
        note_errors=errors,
        note_text=text,
    )
    return base._htmx_response(html, status)
