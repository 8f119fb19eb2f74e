"""The work-package register page: inline add / edit / delete, the issue-link picker, and
reordering by keyboard (move up / down) and by mouse (drag and drop)."""

from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.vary import vary_on_headers

from governance import permissions, specs
from governance.errors import Stale, ValidationFailed
from governance.http import page, render_htmx
from governance.tracker import TrackerError, get_tracker
from registers import pictures, selectors, services
from registers.derive import plan_baseline_of
from registers.models import WorkPackage
from registers.serializers import work_package_to_dict
from registers.services.common import get_in_project
from registers.specs import WorkPackageSpec
from registers.views import base

REG = base.register(
    base.Register(
        slug="work-packages",
        title="Work packages",
        noun="work package",
        anchor="wp",
        template="registers/work_packages.html",
        model=WorkPackage,
        id_kwarg="wp_id",
        labels=specs.labels(WorkPackageSpec),
        records=selectors.work_packages,
        extra=lambda project: {"plan": plan_baseline_of(project)},
        to_dict=work_package_to_dict,
        create=lambda *, caller, data: services.work_package_create(caller=caller, data=data),
        update=lambda *, caller, pk, data, expected_revision: services.work_package_update(
            caller=caller, wp_id=pk, data=data, expected_revision=expected_revision
        ),
        delete=lambda *, caller, pk, expected_revision: services.work_package_delete(
            caller=caller, wp_id=pk, expected_revision=expected_revision
        ),
        name_field="name",
        empty_hint="Work packages are the deliverable chunks of the plan, typically one per Epic.",
        pictures=lambda project, records, extra, url: [
            pictures.work_package_timeline(
                records, url, timezone.localdate(), plan=extra.get("plan")
            ),
            pictures.budget_curve(records, timezone.localdate()),
        ],
    )
)


@page("GET", "POST")
@vary_on_headers("HX-Request")
def work_packages(request, key):
    project, caller = permissions.project_for(request, key)
    if request.method == "POST":
        return base.save(request, REG, project, caller)
    return base.render_page(request, REG, project, caller)


@page("GET")
@vary_on_headers("HX-Request")
def work_package_new(request, key):
    project, caller = permissions.editable_project_for(request, key)
    project.assert_registers_unfrozen()
    return base.render_form(request, REG, project, caller, base.new_form(REG, project))


@page("GET", "POST")
@vary_on_headers("HX-Request")
def work_package_detail(request, key, wp_id):
    """GET: the read-only detail page (HTMX: the read row, as a cancelled edit shows it).
    POST: save the inline edit."""
    project, caller = permissions.project_for(request, key)
    if request.method == "POST":
        return base.save(request, REG, project, caller, wp_id)
    wp = get_in_project(WorkPackage, project, wp_id, lock=False)
    if request.htmx:
        return base.render_row(request, REG, project, caller, wp)
    context = base.detail_context(request, REG, project, caller, wp, issues=_issues(wp))
    return render(request, "registers/detail.html", context)


def _issues(wp: WorkPackage) -> dict:
    """The linked issues as the tracker knows them now (one call), for the detail page."""
    try:
        return get_tracker().get_issues(wp.linked_issue_keys or [])
    except TrackerError:
        return {}


@page("GET")
@vary_on_headers("HX-Request")
def work_package_edit(request, key, wp_id):
    project, caller = permissions.editable_project_for(request, key)
    project.assert_registers_unfrozen()
    wp = get_in_project(WorkPackage, project, wp_id, lock=False)
    return base.render_form(
        request, REG, project, caller, base.edit_form(REG, project, wp), record=wp
    )


@page("POST")
@vary_on_headers("HX-Request")
def work_package_delete(request, key, wp_id):
    project, caller = permissions.project_for(request, key)
    return base.delete(request, REG, project, caller, wp_id)


def _table(request, project, caller, **more):
    """After a reorder: the table again, in the register's own order."""
    context = base.page_context(request, REG, project, caller)
    context.update(more)
    if not request.htmx:
        return HttpResponseRedirect(REG.base_url(project))
    return render_htmx(request, REG.template, context, partial="table")


@page("POST")
@vary_on_headers("HX-Request")
def work_package_move(request, key, wp_id):
    """Keyboard reordering: move one package up or down; focus stays on the moved row."""
    project, caller = permissions.editable_project_for(request, key)
    direction = request.POST.get("direction")
    services.work_package_move(caller=caller, wp_id=wp_id, direction=direction)
    return _table(request, project, caller, moved_id=wp_id, moved_direction=direction)


@page("POST")
@vary_on_headers("HX-Request")
def work_package_reorder(request, key):
    """Mouse reordering: the whole order after a drag and drop."""
    project, caller = permissions.project_for(request, key)
    services.work_package_reorder(caller=caller, ids=request.POST.getlist("ids"))
    return _table(request, project, caller)


@page("GET", "POST")
@vary_on_headers("HX-Request")
def work_package_links(request, key, wp_id):
    """The issue-link picker. GET without `q`: the row with the picker open; GET with `q`:
    the matching issues of the project; POST: link `issue_key`."""
    project, caller = permissions.editable_project_for(request, key)
    wp = get_in_project(WorkPackage, project, wp_id, lock=False)
    if request.method == "GET":
        if not request.htmx:
            return HttpResponseRedirect(f"{REG.base_url(project)}{wp.pk}/#links")
        if "q" in request.GET:
            return _results(request, project, caller, wp, request.GET["q"])
        return _picker_row(request, project, caller, wp)
    issue_key = request.POST.get("issue_key", "")
    try:
        wp = services.work_package_link_issue(
            caller=caller,
            wp_id=wp.pk,
            issue_key=issue_key,
            expected_revision=base._expected_revision(request),
        )
    except ValidationFailed as exc:
        return _picker_row(request, project, caller, wp, errors=exc.fields, status=422)
    except Stale:
        wp = get_in_project(WorkPackage, project, wp_id, lock=False)
        message = "Someone changed this work package meanwhile; its links are shown as stored."
        return _picker_row(request, project, caller, wp, errors={"issueKey": [message]}, status=412)
    if not request.htmx:
        return HttpResponseRedirect(f"{REG.base_url(project)}{wp.pk}/")
    return _picker_row(request, project, caller, wp, linked=issue_key.strip().upper())


@page("POST")
@vary_on_headers("HX-Request")
def work_package_unlink(request, key, wp_id, issue_key):
    project, caller = permissions.project_for(request, key)
    wp = services.work_package_unlink_issue(caller=caller, wp_id=wp_id, issue_key=issue_key)
    if not request.htmx:
        return HttpResponseRedirect(f"{REG.base_url(project)}{wp.pk}/")
    return _picker_row(request, project, caller, wp)


def _picker_row(request, project, caller, wp, *, errors=None, status=200, linked=""):
    html = base.row_html(
        request, REG, project, caller, wp, picking=True, link_errors=errors or {}, linked=linked
    )
    return base._htmx_response(html, status)


def _results(request, project, caller, wp, query):
    query = query.strip()
    error = ""
    issues = []
    if query:
        try:
            issues = get_tracker().search_issues(project.key, query, limit=15)
        except TrackerError:
            error = "The tracker cannot be searched right now; try again shortly."
    if not issues and not error and query:
        error = f"No issue of {project.key} matches “{query}”."
    wp.url = f"{REG.base_url(project)}{wp.pk}/"
    context = base.common_context(
        REG, project, caller, request, r=wp, issues=issues, query=query, search_error=error
    )
    return render_htmx(request, REG.template, context, partial="issue-results")
