"""The Registers tab landing, and the CSV / XLSX export of each register (imports:
`registers.views.imports`)."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseBase, HttpResponseRedirect

from governance import permissions
from governance.http import HtmxHttpRequest, page
from registers import spreadsheets
from registers.views import base


@page("GET")
def index(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The Registers tab opens on the work packages."""
    project, _ = permissions.project_for(request, key)
    return HttpResponseRedirect(base.REGISTERS["work-packages"].base_url(project))


@page("GET")
def export(request: HtmxHttpRequest, key: str, register: str) -> HttpResponseBase:
    project, _ = permissions.project_for(request, key)
    return spreadsheets.export_response(
        project, register, request.GET.get("format", "csv"), request.GET.get("shape")
    )


@page("POST")
def undo_delete(request: HtmxHttpRequest, key: str, register: str) -> HttpResponse:
    """Undo one of this person's recent deletes (the token the "Deleted" notice carried)."""
    project, caller = permissions.editable_project_for(request, key)
    reg = base.REGISTERS[register]
    return reg.undo_delete(request, project, caller, request.POST.get("token", ""))
