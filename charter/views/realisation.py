"""The realisation page: the review log, the KPI resolution, the verdict, maintenance, and
the realisation record (summary, 'measured by' date, benefits owner)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect

from charter import services
from charter.specs import RealisationSpec
from charter.views.context import page_url, render_page, render_refused
from governance import permissions, specs
from governance.errors import Conflict, Stale, ValidationFailed
from governance.http import HtmxHttpRequest, form_revision, page

FIELDS = specs.writable(RealisationSpec)


@page("GET", "POST")
def realisation(request: HtmxHttpRequest, key: str) -> HttpResponse:
    project, caller = permissions.project_for(request, key)
    if request.method == "GET":
        return render_page(request, project, caller, "realisation")
    data = {field: request.POST.get(field, "") for field in FIELDS}
    try:
        services.realisation_update(
            caller=caller, data=data, expected_revision=form_revision(request.POST)
        )
    except (ValidationFailed, Conflict, Stale) as exc:
        return render_refused(
            request,
            project,
            caller,
            "realisation",
            exc,
            form=data,
        )
    messages.success(request, "Realisation record saved.")
    return redirect(page_url(project, "realisation"))
