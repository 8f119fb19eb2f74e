"""Applying an approved change to its work package's baseline, from the change register's row
or the change's page: the button is offered to the Project Lead only, on a change that may be
applied (registers.tables)."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.http import HttpResponse, HttpResponseRedirect
from django.views.decorators.vary import vary_on_headers

from charter import services
from governance import permissions
from governance.errors import Conflict, Frozen, Stale
from governance.http import HtmxHttpRequest, form_revision, page
from registers.views.changes import PAGES


@page("POST")
@vary_on_headers("HX-Request")
def apply_to_baseline(request: HtmxHttpRequest, key: str, change_id: uuid.UUID) -> HttpResponse:
    project, caller = permissions.project_for(request, key)
    try:
        change = services.change_apply_to_baseline(
            caller=caller,
            change_id=change_id,
            expected_revision=form_revision(request.POST),
        )
    except (Stale, Conflict, Frozen) as exc:
        message = (
            "Not applied: someone changed this request since you loaded it. Check it, then "
            "apply it again."
            if isinstance(exc, Stale)
            else f"Not applied: {exc.message}"
        )
        current = PAGES.current(project, change_id)
        if not request.htmx:
            messages.error(request, message)
            return HttpResponseRedirect(f"{PAGES.base_url(project)}{current.pk}/")
        return PAGES.render_row(
            request, project, caller, current, status=exc.status, notice=message
        )
    if not request.htmx:
        messages.success(request, f"Applied “{change.summary}” to its work package's baseline.")
        return HttpResponseRedirect(f"{PAGES.base_url(project)}#change-{change.pk}")
    return PAGES.render_row(request, project, caller, change, saved=True)
