"""The change register page: inline add / edit / delete while Proposed, the application
state as a note under the status, and adjudication (Approve, Reject with a reason, Withdraw)
offered only to whom the access gate allows."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.http import HttpResponse


from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping
    from uuid import UUID

    from django.urls import URLPattern

    from governance.models import Project
    from governance.permissions import Caller
    from registers.views.shared import Choices


from django.http import HttpResponseRedirect

from governance import permissions, specs
from governance.errors import Conflict, Frozen, Stale, ValidationFailed
from governance.http import HtmxHttpRequest, form_revision
from governance.permissions import require
from registers import selectors, services
from registers.derive import approved_variations
from registers.models import ChangeRequest
from registers.serializers import change_to_dict
from registers.services.changes import (
    adjudication_rights,
    build_change,
    decided_elsewhere,
    require_open,
)
from registers.specs import ChangeSpec
from registers.tables import money
from registers.views import base
from registers.views.shared import Writes


def variations_summary(project: Project) -> dict[str, Any]:
    """The approved variations the Approved changes roll up to (registers.derive)."""
    budget, days = approved_variations(project)
    if budget:
        budget_text = f"{'add' if budget > 0 else 'take'} {money(abs(budget))} " + (
            "to the budget" if budget > 0 else "off the budget"
        )
    else:
        budget_text = "leave the budget as it is"
    if days:
        n = abs(days)
        length = f"{n} day{'s' if n != 1 else ''}"
        days_text = f"{'add' if days > 0 else 'take'} {length} " + (
            "to the schedule" if days > 0 else "off the schedule"
        )
    else:
        days_text = "leave the schedule as it is"
    return {"budget": budget_text, "days": days_text}


class ChangePages(base.RegisterPages):
    slug = "changes"
    title = "Changes"
    noun = "change request"
    anchor = "change"
    template = "registers/changes.html"
    model = ChangeRequest
    id_kwarg = "change_id"
    writes = Writes(
        create=services.change_create,
        build=build_change,
        update=services.change_update,
        delete=services.change_delete,
    )
    labels = specs.labels(ChangeSpec)
    name_field = "summary"
    restorable = frozenset(specs.writable(ChangeSpec))
    drawn_again = ("variations",)
    empty_hint = (
        "Raise a change request when scope, budget, schedule or quality must move from "
        "the approved plan. The named approver, or else the sponsor, decides it."
    )

    def extra(self, project: Project) -> dict[str, Any]:
        proposed = list(ChangeRequest.objects.filter(project=project, status="Proposed").only("pk"))
        return {
            "packages": selectors.work_package_names(project),
            # Changes decided with another decision (an exception plan's): no Approve or
            # Reject on their row, a link to where they are decided.
            "elsewhere": decided_elsewhere(proposed),
        }

    def summary(self, project: Project) -> dict[str, Any]:
        return variations_summary(project)

    def to_dict(self, record: ChangeRequest) -> dict[str, Any]:
        return change_to_dict(record)

    def check_editable(self, record: ChangeRequest) -> None:
        require_open(record, "edited")

    def form_choices(self, project: Project, values: dict[str, Any]) -> Choices:
        choices = super().form_choices(project, values)
        choices["packages"] = sorted(
            selectors.work_package_names(project).items(), key=lambda p: p[1].casefold()
        )
        return choices

    def get_urls(self) -> list[URLPattern]:
        return [
            *super().get_urls(),
            self.item_act("adjudicate", self.adjudicate_view, "GET", "POST"),
        ]

    def adjudicate_view(self, request: HtmxHttpRequest, key: str, change_id: UUID) -> HttpResponse:
        """GET: the decide form under the row (HTMX) or the detail page. POST: Approved,
        Rejected (a reason is required) or Withdrawn, as the clicked button says."""
        project, caller = permissions.project_for(request, key)
        change = self.current(project, change_id)
        may_decide, may_withdraw = adjudication_rights(caller, change)
        require(
            may_decide or may_withdraw,
            "Only the named approver (or, with none named, the sponsor) decides this change; "
            "its proposer or an editor may withdraw it.",
        )
        if request.method == "GET":
            if not request.htmx:
                return HttpResponseRedirect(f"{self.base_url(project)}{change.pk}/#decide")
            return self.decide_row(request, project, caller, change, status=200)
        comment = request.POST.get("decisionComment", "")
        try:
            change = services.change_adjudicate(
                caller=caller,
                change_id=change.pk,
                outcome=request.POST.get("outcome"),
                decision_comment=comment,
                expected_revision=form_revision(request.POST),
            )
        except ValidationFailed as exc:
            return self.decide_row(
                request, project, caller, change, errors=exc.fields, comment=comment, status=422
            )
        except (Stale, Conflict, Frozen) as exc:
            change = self.current(project, change_id)
            message = (
                "Someone changed this request since you opened it; check it and decide again."
                if isinstance(exc, Stale)
                else exc.message
            )
            return self.decide_row(
                request,
                project,
                caller,
                change,
                message=message,
                comment=comment,
                status=exc.status,
            )
        if not request.htmx:
            return HttpResponseRedirect(f"{self.base_url(project)}#change-{change.pk}")
        return self.render_row(request, project, caller, change)

    def decide_row(
        self,
        request: HtmxHttpRequest,
        project: Project,
        caller: Caller,
        change: ChangeRequest,
        *,
        status: int,
        errors: Mapping[str, list[str]] | None = None,
        message: str = "",
        comment: str = "",
    ) -> HttpResponse:
        shown = {
            "decide_errors": errors or {},
            "decide_message": message,
            "decide_comment": comment,
        }
        if not request.htmx:
            return self.detail_response(request, project, caller, change, status=status, **shown)
        return self.render_partial(
            request, project, caller, change, "row-decide", status=status, **shown
        )


PAGES = base.register(ChangePages())
