"""The honest placeholder a project tab shows until its feature lands."""

from django.shortcuts import render

from governance import permissions
from governance.http import page


def project_tab(tab: str, title: str, what: str):
    @page("GET")
    def view(request, key):
        project, caller = permissions.project_for(request, key)
        return render(
            request,
            "governance/not_yet.html",
            {"project": project, "caller": caller, "tab": tab, "title": title, "what": what},
        )

    view.__name__ = f"{tab}_not_yet"
    return view
