"""The lifecycle acts from the pages: one URL per act (so the permission matrix covers each
with its own actor), the body parsed from the act's form, and the page the act was taken
from rendered again with the refusal when it is refused."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect

from charter import derive, forms, services
from charter.views.context import DONE, PAGES, page_url, render_page
from governance import permissions
from governance.errors import Conflict, GateBlocked, Stale, ValidationFailed
from governance.http import HtmxHttpRequest, form_revision, page


@page("POST")
def act(request: HtmxHttpRequest, key: str, act: str) -> HttpResponse:
    project, caller = permissions.project_for(request, key)
    page_name = request.POST.get("page", "case")
    if page_name not in PAGES:
        page_name = "case"
    if act == "submit" and request.POST.get("confirmBlockers") != "yes":
        blockers = derive.open_blockers(services.current_case(project))
        if blockers:
            warning = Conflict(
                "The sponsor's Blocker return "
                + ("note is" if len(blockers) == 1 else "notes are")
                + " still open: "
                + "; ".join(f"“{note.get('ask', '')}”" for note in blockers)
                + ". Address it first, or confirm that you submit with it open."
            )
            return render_page(
                request, project, caller, page_name, status=409, act_error=warning, act_name=act
            )
    try:
        services.charter_act(
            caller=caller,
            act=act,
            data=forms.act_body(act, request.POST),
            expected_revision=form_revision(request.POST),
        )
    except Stale as exc:
        exc.message = (
            "Someone changed the business case since you loaded this page, so nothing was "
            "done. Here it is as it stands now: check it, then try again."
        )
        return render_page(
            request, project, caller, page_name, status=exc.status, act_error=exc, act_name=act
        )
    except (ValidationFailed, GateBlocked, Conflict) as exc:
        return render_page(
            request, project, caller, page_name, status=exc.status, act_error=exc, act_name=act
        )
    messages.success(request, DONE[act])
    target = "closeout" if act == "closeout-start" else page_name
    return redirect(page_url(project, target))
