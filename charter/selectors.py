"""Reads that pages need across projects, with their joins, in a constant number of queries."""

from dataclasses import dataclass

from django.db.models import Q
from django.utils.dateparse import parse_datetime

from charter import acts
from charter.models import BusinessCase
from governance import permissions
from registers.models import ChangeRequest

# What each awaited state asks of the person, and the act that answers it.
AWAITED = {
    "Submitted": ("approve", "Approve or return the business case"),
    "ClosingSubmitted": ("close", "Close or return the close-out"),
    "InRealisation": ("verdict", "Record the realisation verdict"),
}


@dataclass(frozen=True)
class Awaiting:
    project: object
    case: BusinessCase
    act: str
    what: str
    since: object
    page: str


def waiting_for(request) -> dict:
    """The business cases and change requests awaiting the signed-in person's decision,
    across every project they can view."""
    rows = permissions.viewable_projects(request)
    if not rows:
        return {"cases": [], "changes": []}
    user = permissions.request_user(request)
    me = user.account_id
    callers = {project.pk: caller for project, caller in rows}
    projects = [project for project, _ in rows]
    cases = []
    for case in BusinessCase.objects.filter(project__in=projects).filter(
        Q(approval_status__in=list(AWAITED), project__sponsor_account_id=me)
        | Q(approval_status__in=list(acts.CLOSED_OR_LATER), project__bau_owner_account_id=me)
    ):
        caller = callers[case.project_id]
        case.project = caller.project
        if case.approval_status in AWAITED:
            act, what = AWAITED[case.approval_status]
            since = {
                "Submitted": case.submitted_at,
                "ClosingSubmitted": parse_datetime((case.close_out or {}).get("submittedAt") or "")
                or case.updated_at,
                "InRealisation": case.last_realisation_review_at or case.realisation_started_at,
            }[case.approval_status]
            page = "realisation" if act == "verdict" else ("closeout" if act == "close" else "case")
            if acts.allowed(acts.ACTS[act], case, caller):
                cases.append(Awaiting(caller.project, case, act, what, since, page))
        if acts.allowed(acts.ACTS["handover-acknowledge"], case, caller):
            cases.append(
                Awaiting(
                    caller.project,
                    case,
                    "handover-acknowledge",
                    "Acknowledge the BAU handover",
                    case.closed_at,
                    "closeout",
                )
            )
    changes = []
    for change in (
        ChangeRequest.objects.filter(project__in=projects, status="Proposed")
        .filter(
            Q(approver_account_id=me)
            | Q(approver_seat__accountId=me)
            | Q(project__sponsor_account_id=me)
        )
        .order_by("created_at")
    ):
        caller = callers[change.project_id]
        change.project = caller.project
        if caller.may_adjudicate_change(
            approver_account_id=change.approver_account_id,
            approver_seat=change.approver_seat,
            proposer_account_id=change.proposer_account_id,
            created_by_account_id=change.created_by_account_id,
        ):
            changes.append(change)
    # Oldest first: what has waited longest comes first (an item without a date last).
    cases.sort(key=lambda a: (a.since is None, a.since or 0, a.project.key, a.act))
    return {"cases": cases, "changes": changes}
