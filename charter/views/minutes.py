"""Steering committee minutes: the list, and recording a meeting (a URL, or a new wiki page
from the steering-minutes template). The first minutes complete initiation."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect

from charter import forms, services
from charter.views.context import page_url, render_refused, show_page
from governance import permissions, submissions
from governance.errors import Conflict, ValidationFailed
from governance.http import HtmxHttpRequest, page


@page("GET", "POST")
def minutes(request: HtmxHttpRequest, key: str) -> HttpResponse:
    if request.method == "GET":
        return show_page(request, key, "minutes")
    project, caller = permissions.editable_project_for(request, key)
    token = submissions.token_of(request.POST)
    data = forms.minutes(request.POST)
    try:
        record, _ = submissions.create_once(
            token,
            account_id=caller.account_id,
            kind=f"minutes:{project.key}",
            create=lambda: services.minutes_record(
                caller=caller, data=data, base_url=request.build_absolute_uri("/")
            ),
        )
    except (ValidationFailed, Conflict) as exc:
        return render_refused(
            request,
            project,
            caller,
            "minutes",
            exc,
            form={**data, "source": request.POST.get("source", "url")},
            **({"form_token": token} if token and isinstance(exc, ValidationFailed) else {}),
        )
    if record is None:
        messages.info(request, "This form was already sent: the minutes were recorded once.")
        return redirect(page_url(project, "minutes"))
    messages.success(request, f"Minutes “{record.title}” recorded.")
    return redirect(page_url(project, "minutes"))
