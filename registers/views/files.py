"""The Registers tab landing, and the CSV / XLSX export and import of each register."""

from django.contrib import messages
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render

from governance import permissions
from governance.errors import ValidationFailed
from governance.http import page
from registers import services, spreadsheets
from registers.views import base


@page("GET")
def index(request, key):
    """The Registers tab opens on the work packages."""
    project, _ = permissions.project_for(request, key)
    return HttpResponseRedirect(base.REGISTERS["work-packages"].base_url(project))


@page("GET")
def export(request, key, register):
    project, _ = permissions.project_for(request, key)
    content, content_type, name = spreadsheets.export(
        project, register, request.GET.get("format", "csv")
    )
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@page("GET", "POST")
def import_file(request, key, register):
    """Upload a CSV or XLSX file: every row is created, or none (each refused row listed)."""
    project, caller = permissions.editable_project_for(request, key)
    reg = base.REGISTERS[register]
    errors: dict = {}
    rows: list = []
    status = 200
    if request.method == "POST":
        try:
            created = services.register_import(
                caller=caller, register=register, upload=request.FILES.get("file")
            )
        except ValidationFailed as exc:
            errors, rows, status = exc.fields, exc.extra.get("rows", []), 422
        else:
            noun = reg.noun if created == 1 else f"{reg.noun}s"
            messages.success(request, f"Imported {created} {noun}.")
            return HttpResponseRedirect(reg.base_url(project))
    context = reg.common_context(
        project,
        caller,
        registers=reg.tabs(project),
        errors=errors,
        rows=rows,
        columns=sorted(spreadsheets.WRITABLE[register]),
    )
    return render(request, "registers/import.html", context, status=status)


@page("POST")
def undo_delete(request, key, register):
    """Undo one of this person's recent deletes (the token the "Deleted" notice carried)."""
    project, caller = permissions.editable_project_for(request, key)
    reg = base.REGISTERS[register]
    return reg.undo_delete(request, project, caller, request.POST.get("token", ""))
