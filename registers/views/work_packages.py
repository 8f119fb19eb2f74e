"""The work-package register page: inline add / edit / delete, the issue-link picker, and
reordering by keyboard (move up / down) and by mouse (drag and drop)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from uuid import UUID

from django.db.models import QuerySet
from django.http import HttpResponse

if TYPE_CHECKING:
    from django.urls import URLPattern

    from governance import charts
    from governance.models import Project
    from governance.permissions import Caller
    from registers.summary import Summary
    from registers.views.shared import Drawing, RowForm
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.utils import timezone

from governance import permissions, specs
from governance.errors import Stale, ValidationFailed
from governance.http import HtmxHttpRequest, form_revision, render_htmx
from governance.tracker import TrackerError, get_tracker
from registers import forms, pictures, selectors, services, tables
from registers.derive import plan_baseline_of
from registers.models import WorkPackage
from registers.serializers import work_package_to_dict
from registers.services.work_packages import build_work_package
from registers.specs import WorkPackageSpec
from registers.views import base
from registers.views.shared import Writes


class WorkPackagePages(base.RegisterPages):
    slug = "work-packages"
    title = "Work packages"
    noun = "work package"
    anchor = "wp"
    template = "registers/work_packages.html"
    model = WorkPackage
    id_kwarg = "wp_id"
    writes = Writes(
        create=services.work_package_create,
        build=build_work_package,
        update=services.work_package_update,
        delete=services.work_package_delete,
    )
    labels = specs.labels(WorkPackageSpec)
    name_field = "name"
    empty_hint = "Work packages are the deliverable chunks of the plan, typically one per Epic."
    draws_pictures = True
    drawn_again = ("foot",)
    bulk_fields = ("status", "ownerAccountId", "rag")
    bulk_statuses = "wp_status"

    def extra(self, project: Project) -> dict[str, Any]:
        return {"plan": plan_baseline_of(project)}

    def pictures(self, drawing: Drawing) -> list[charts.Chart]:
        """The timeline of the page's packages, with a link to the whole timeline (the status
        page draws every package's) when the page shows fewer than all; the budget curve of
        every package."""
        project, records, every = drawing.project, drawing.records, drawing.total
        timeline = pictures.work_package_timeline(
            records, drawing.url, timezone.localdate(), plan=drawing.extra.get("plan")
        )
        if len(records) < every:
            timeline.note = f"This page's {len(records)} of {every} work packages."
            timeline.more_href = reverse("status:index", args=[project.key]) + "#status-timeline"
            timeline.more_text = f"See the whole timeline ({every} work packages)"
        # Every package's money, summed in SQL where packages share their months.
        stored = drawing.stored
        budget = stored.budget if stored else pictures.budget_rows(project.work_packages.all())
        return [timeline, pictures.budget_curve(budget, timezone.localdate())]

    def totals(self, queryset: QuerySet[WorkPackage], stored: Summary | None) -> dict[str, str]:
        """The money columns summed over every package the filters keep (one query, none
        from the stored summary)."""
        sums = stored.money if stored else selectors.work_package_money(queryset)
        return {name: tables.money(value) for name, value in sums.items()}

    def to_dict(self, record: WorkPackage) -> dict[str, Any]:
        return work_package_to_dict(record)

    def prepare_form(self, form: RowForm) -> None:
        """The budget phasing month grid."""
        form["phasing_rows"] = forms.phasing_rows(form["values"].get("budgetPhasing") or "")

    def detail_extra(self, record: WorkPackage) -> dict[str, Any]:
        """The linked issues as the tracker knows them now (one call)."""
        try:
            return {"issues": get_tracker().get_issues(record.linked_issue_keys or [])}
        except TrackerError:
            return {"issues": {}}

    def get_urls(self) -> list[URLPattern]:
        item = self.item_route()
        urls = super().get_urls()
        reorder = self.view(self.reorder_view, "POST")
        # After the list and new/, as the register's pattern list always had it.
        urls.insert(2, path("work-packages/reorder/", reorder, name="wp-reorder"))
        return [
            *urls,
            self.item_act("move", self.move_view, "POST"),
            self.item_act("links", self.links_view, "GET", "POST"),
            path(
                f"{item}links/<str:issue_key>/delete/",
                self.view(self.unlink_view, "POST"),
                name="wp-unlink",
            ),
        ]

    # --- reordering ------------------------------------------------------------------------

    def move_view(self, request: HtmxHttpRequest, key: str, wp_id: UUID) -> HttpResponse:
        """Keyboard reordering: move one package up or down; focus stays on the moved row."""
        project, caller = permissions.editable_project_for(request, key)
        direction = request.POST.get("direction")
        services.work_package_move(caller=caller, wp_id=wp_id, direction=direction)
        return self.render_table(
            request, project, caller, moved_id=wp_id, moved_direction=direction
        )

    def reorder_view(self, request: HtmxHttpRequest, key: str) -> HttpResponse:
        """Mouse reordering: the whole order after a drag and drop."""
        project, caller = permissions.project_for(request, key)
        services.work_package_reorder(caller=caller, ids=request.POST.getlist("ids"))
        return self.render_table(request, project, caller)

    # --- linked issues ---------------------------------------------------------------------

    def links_view(self, request: HtmxHttpRequest, key: str, wp_id: UUID) -> HttpResponse:
        """The issue-link picker. GET without `q`: the row with the picker open; GET with `q`:
        the matching issues of the project; POST: link `issue_key`."""
        project, caller = permissions.editable_project_for(request, key)
        wp = self.current(project, wp_id)
        if request.method == "GET":
            if not request.htmx:
                return HttpResponseRedirect(f"{self.base_url(project)}{wp.pk}/#links")
            if "q" in request.GET:
                return self.issue_results(request, project, caller, wp, request.GET["q"])
            return self.picker_row(request, project, caller, wp)
        issue_key = request.POST.get("issue_key", "")
        try:
            wp = services.work_package_link_issue(
                caller=caller,
                wp_id=wp.pk,
                issue_key=issue_key,
                expected_revision=form_revision(request.POST),
            )
        except ValidationFailed as exc:
            return self.picker_row(request, project, caller, wp, errors=exc.fields, status=422)
        except Stale:
            wp = self.current(project, wp_id)
            message = "Someone changed this work package meanwhile; its links are shown as stored."
            errors = {"issueKey": [message]}
            return self.picker_row(request, project, caller, wp, errors=errors, status=412)
        if not request.htmx:
            return HttpResponseRedirect(f"{self.base_url(project)}{wp.pk}/")
        return self.picker_row(request, project, caller, wp, linked=issue_key.strip().upper())

    def unlink_view(
        self, request: HtmxHttpRequest, key: str, wp_id: UUID, issue_key: str
    ) -> HttpResponse:
        project, caller = permissions.project_for(request, key)
        wp = services.work_package_unlink_issue(caller=caller, wp_id=wp_id, issue_key=issue_key)
        if not request.htmx:
            return HttpResponseRedirect(f"{self.base_url(project)}{wp.pk}/")
        return self.picker_row(request, project, caller, wp)

    def picker_row(
        self,
        request: HtmxHttpRequest,
        project: Project,
        caller: Caller,
        wp: WorkPackage,
        *,
        errors: Mapping[str, list[str]] | None = None,
        status: int = 200,
        linked: str = "",
    ) -> HttpResponse:
        return self.render_partial(
            request,
            project,
            caller,
            wp,
            "row",
            status=status,
            picking=True,
            link_errors=errors or {},
            linked=linked,
        )

    def issue_results(
        self,
        request: HtmxHttpRequest,
        project: Project,
        caller: Caller,
        wp: Any,  # a row as the template reads it: given its `url` here
        query: str,
    ) -> HttpResponse:
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
        wp.url = f"{self.base_url(project)}{wp.pk}/"
        context = self.common_context(
            project, caller, request, r=wp, issues=issues, query=query, search_error=error
        )
        return render_htmx(request, self.template, context, partial="issue-results")


PAGES = base.register(WorkPackagePages())
