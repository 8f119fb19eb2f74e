"""The change register page: inline add / edit / delete while Proposed, the application
state as a note under the status, and adjudication (Approve, Reject with a reason, Withdraw)
offered only to whom the access gate allows."""

from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.vary import vary_on_headers

from governance import permissions, specs
from governance.errors import Conflict, Frozen, Stale, ValidationFailed
from governance.http import page
from governance.permissions import require
from registers import selectors, services
from registers.derive import approved_variations
from registers.models import ChangeRequest
from registers.serializers import change_to_dict
from registers.services.changes import WRITABLE as CHANGE_WRITABLE
from registers.services.changes import adjudication_rights, require_open
from registers.services.common import get_in_project
from registers.specs import ChangeSpec
from registers.tables import money
from registers.views import base


def variations_summary(project) -> dict:
    """The approved variations the Approved changes roll up to (registers.derive)."""
    budget, days = approved_variations(project)
    if budget:
        budget_text = f"{'add' if budget > 0 else 'take'} {money(abs(budget))} " + (
            "to the budget" if budget > 0 else "off the budget"
        )
    else:
        budget_text = "leave the budget as it is"
    if days:
        n = abs(days)
        length = f"{n} day{'s' if n != 1 else ''}"
        days_text = f"{'add' if days > 0 else 'take'} {length} " + (
            "to the schedule" if days > 0 else "off the schedule"
        )
    else:
        days_text = "leave the schedule as it is"
    return {"budget": budget_text, "days": days_text}


REG = base.register(
    base.Register(
        slug="changes",
        title="Changes",
        noun="change request",
        anchor="change",
        template="registers/changes.html",
        model=ChangeRequest,
        id_kwarg="change_id",
        labels=specs.labels(ChangeSpec),
        records=selectors.changes,
        extra=lambda project: {"packages": selectors.work_package_names(project)},
        summary=variations_summary,
        to_dict=change_to_dict,
        create=lambda *, caller, data: services.change_create(caller=caller, data=data),
        update=lambda *, caller, pk, data, expected_revision: services.change_update(
            caller=caller, change_id=pk, data=data, expected_revision=expected_revision
        ),
        delete=lambda *, caller, pk, expected_revision: services.change_delete(
            caller=caller, change_id=pk, expected_revision=expected_revision
        ),
        name_field="summary",
        restorable=frozenset(CHANGE_WRITABLE),
        empty_hint=(
            "Raise a change request when scope, budget, schedule or quality must move from "
            "the approved plan. The named approver, or else the sponsor, decides it."
        ),
    )
)


@page("GET", "POST")
@vary_on_headers("HX-Request")
def changes(request, key):
    project, caller = permissions.project_for(request, key)
    if request.method == "POST":
        return base.save(request, REG, project, caller)
    return base.render_page(request, REG, project, caller)


@page("GET")
@vary_on_headers("HX-Request")
def change_new(request, key):
    project, caller = permissions.editable_project_for(request, key)
    project.assert_registers_unfrozen()
    return base.render_form(request, REG, project, caller, base.new_form(REG, project))


@page("GET", "POST")
@vary_on_headers("HX-Request")
def change_detail(request, key, change_id):
    project, caller = permissions.project_for(request, key)
    if request.method == "POST":
        return base.save(request, REG, project, caller, change_id)
    change = get_in_project(ChangeRequest, project, change_id, lock=False)
    if request.htmx:
        return base.render_row(request, REG, project, caller, change)
    return render(
        request,
        "registers/detail.html",
        base.detail_context(request, REG, project, caller, change),
    )


@page("GET")
@vary_on_headers("HX-Request")
def change_edit(request, key, change_id):
    project, caller = permissions.editable_project_for(request, key)
    project.assert_registers_unfrozen()
    change = get_in_project(ChangeRequest, project, change_id, lock=False)
    require_open(change, "edited")
    return base.render_form(
        request, REG, project, caller, base.edit_form(REG, project, change), record=change
    )


@page("POST")
@vary_on_headers("HX-Request")
def change_delete(request, key, change_id):
    project, caller = permissions.project_for(request, key)
    return base.delete(request, REG, project, caller, change_id)


@page("GET", "POST")
@vary_on_headers("HX-Request")
def change_adjudicate(request, key, change_id):
    """GET: the decide form under the row (HTMX) or the detail page. POST: Approved,
    Rejected (a reason is required) or Withdrawn, as the clicked button says."""
    project, caller = permissions.project_for(request, key)
    change = get_in_project(ChangeRequest, project, change_id, lock=False)
    may_decide, may_withdraw = adjudication_rights(caller, change)
    require(
        may_decide or may_withdraw,
        "Only the named approver (or, with none named, the sponsor) decides this change; "
        "its proposer or an editor may withdraw it.",
    )
    if request.method == "GET":
        if not request.htmx:
            return HttpResponseRedirect(f"{REG.base_url(project)}{change.pk}/#decide")
        return _decide_row(request, project, caller, change, status=200)
    comment = request.POST.get("decisionComment", "")
    raw_revision = request.POST.get("revision", "")
    try:
        change = services.change_adjudicate(
            caller=caller,
            change_id=change.pk,
            outcome=request.POST.get("outcome"),
            decision_comment=comment,
            expected_revision=int(raw_revision) if raw_revision.isdigit() else None,
        )
    except ValidationFailed as exc:
        return _decide_row(
            request, project, caller, change, errors=exc.fields, comment=comment, status=422
        )
    except (Stale, Conflict, Frozen) as exc:
        change = get_in_project(ChangeRequest, project, change_id, lock=False)
        message = (
            "Someone changed this request since you opened it; check it and decide again."
            if isinstance(exc, Stale)
            else exc.message
        )
        return _decide_row(
            request, project, caller, change, message=message, comment=comment, status=exc.status
        )
    if not request.htmx:
        return HttpResponseRedirect(f"{REG.base_url(project)}#change-{change.pk}")
    return base.render_row(request, REG, project, caller, change)


def _decide_row(request, project, caller, change, *, status, errors=None, message="", comment=""):
    if not request.htmx:
        context = base.detail_context(
            request,
            REG,
            project,
            caller,
            change,
            decide_errors=errors or {},
            decide_message=message,
            decide_comment=comment,
        )
        return render(request, "registers/detail.html", context, status=status)
    html = base.row_html(
        request,
        REG,
        project,
        caller,
        change,
        partial="row-decide",
        decide_errors=errors or {},
        decide_message=message,
        decide_comment=comment,
    )
    return base._htmx_response(html, status)
