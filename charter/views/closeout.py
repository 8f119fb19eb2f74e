"""The close-out page: the as-built record, a disposition for every register row, lessons,
the BAU handover, and the completeness of it all before submission."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect

from charter import forms, services
from charter.services.closeout import pending_register_rows
from charter.views.context import page_url, render_page, render_section, show_page
from governance import permissions
from governance.errors import Conflict, Stale, ValidationFailed
from governance.http import HtmxHttpRequest, form_revision, page
from governance.pageinput import check_numbers


@page("GET", "POST")
def closeout(request: HtmxHttpRequest, key: str) -> HttpResponse:
    if request.method == "GET":
        return show_page(request, key, "closeout")
    project, caller = permissions.editable_project_for(request, key)
    data = forms.closeout(request.POST, pending_register_rows(project))
    unreadable: dict[str, list[str]] = {}
    check_numbers(data, unreadable, amounts=("asBuiltReturnValue",))
    try:
        if unreadable:
            data.setdefault("asBuiltReturnValue", request.POST.get("asBuiltReturnValue", ""))
            raise ValidationFailed(unreadable)
        services.closeout_update(
            caller=caller, data=data, expected_revision=form_revision(request.POST)
        )
    except ValidationFailed as exc:
        return render_page(
            request, project, caller, "closeout", status=422, errors=exc.fields, form=data
        )
    except Stale:
        return render_page(
            request, project, caller, "closeout", status=412, form=data, conflict=True
        )
    except Conflict as exc:
        return render_section(
            request,
            project,
            caller,
            "closeout",
            "closeout-form",
            status=409,
            section_error=exc.message,
        )
    messages.success(request, "Close-out saved.")
    return redirect(page_url(project, "closeout"))
