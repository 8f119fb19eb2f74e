"""Reads that pages need across projects, with their joins, in a constant number of queries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.http import HttpRequest

    from governance.models import Project


import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Q, QuerySet
from django.utils.dateparse import parse_datetime

from charter import acts, finance
from charter.derive import CLOSED_OR_LATER
from charter.models import BusinessCase
from governance import formatting, gatelist, labels, permissions, signals
from governance.cleaning import add_days
from registers.derive import carried_changes
from registers.models import ChangeRequest
from registers.selectors import work_packages
from registers.services.changes import decided_elsewhere, decider_refusal

# What each awaited state asks of the person, and the act that answers it.
AWAITED = {
    "Submitted": ("approve", "Approve or return the business case"),
    "ClosingSubmitted": ("close", "Close or return the close-out"),
    "InRealisation": ("verdict", "Record the realisation verdict"),
}


@dataclass(frozen=True)
class Awaiting:
    project: Project
    case: BusinessCase
    act: str
    what: str
    since: dt.datetime | None
    page: str


def waiting_for(request: HttpRequest) -> dict[str, Any]:
    """The business cases and change requests awaiting the signed-in person's decision,
    across every project they can view. Read in proportion to the projects where something
    may await them (`_maybe_waiting`, and each app's `signals.waiting_projects`), not to every
    project they can view: the access gate is a filter in that statement (`gatelist.viewable`),
    the roles then decided for those projects alone (`gatelist.page_callers`)."""
    me = permissions.request_user(request).account_id
    maybe = _maybe_waiting(me)
    for _receiver, condition in signals.waiting_projects.send(sender=None, account_id=me):
        maybe |= condition if isinstance(condition, Q) else Q(condition)
    found = gatelist.viewable(request, shown=True).filter(maybe).order_by("pk")
    rows = gatelist.page_callers(request, list(found))
    if not rows:
        return {"cases": [], "changes": [], "held": [], "deltas": {}, "exceptions": []}
    callers = {project.pk: caller for project, caller in rows}
    projects = [project for project, _ in rows]
    cases: list[Awaiting] = []
    for case in BusinessCase.objects.filter(_case_awaits(me), project__in=projects):
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
    changes: list[ChangeRequest] = []
    held: list[Held] = []
    routed = list(_changes_for(me).filter(project__in=projects).order_by("created_at"))
    elsewhere = decided_elsewhere(routed)
    for change in routed:
        caller = callers[change.project_id]
        change.project = caller.project
        if not caller.is_change_decider(
            approver_account_id=change.approver_account_id, approver_seat=change.approver_seat
        ):
            continue
        where = elsewhere.get(change.pk)
        hold = change_hold(caller, change)
        if hold is None and where is not None:
            held.append(Held(caller.project, change, where.why, "", where.url, where.label))
        elif hold is None:
            changes.append(change)
        else:
            held.append(Held(caller.project, change, *hold))
    extra: dict[str, list[Any]] = {}
    for _receiver, answer in signals.waiting_items.send(sender=None, request=request, rows=rows):
        answered: dict[str, list[Any]] = answer if isinstance(answer, dict) else {}
        for name, items in answered.items():
            extra.setdefault(name, []).extend(items)
    # Oldest first: what has waited longest comes first (an item without a date last).
    cases.sort(key=lambda a: (a.since is None, a.since or 0, a.project.key, a.act))
    deltas = {str(c.pk): impact_deltas(c) for c in changes}
    return {"cases": cases, "changes": changes, "held": held, "deltas": deltas, **extra}


def _case_awaits(me: str, case: str = "", project: str = "project__") -> Q:
    """A business case that may await `me`: in an awaited state where they sponsor the
    project, closed or later where they own it in BAU (the roles decide, `acts.allowed`). Over
    BusinessCase, or over Project with `case="business_case__", project=""`."""
    return Q(
        **{f"{case}approval_status__in": list(AWAITED), f"{project}sponsor_account_id": me}
    ) | Q(
        **{
            f"{case}approval_status__in": list(CLOSED_OR_LATER),
            f"{project}bau_owner_account_id": me,
        }
    )


def _changes_for(me: str) -> QuerySet[ChangeRequest]:
    """The proposed changes routed to `me`: named by account or seat, or on a project they
    sponsor (the roles decide, `Caller.is_change_decider`)."""
    return ChangeRequest.objects.filter(status="Proposed").filter(
        Q(approver_account_id=me)
        | Q(approver_seat__accountId=me)
        | Q(project__sponsor_account_id=me)
    )


def _maybe_waiting(me: str) -> Q:
    """The projects where a business case or a change may await `me` (`waiting_for` decides
    with the roles): the projects of the cases and changes it reads. The changes' projects are
    one sub-select, read once (as a correlated `EXISTS`, PostgreSQL asked it of every
    viewable project in turn: 70 ms at 10,000)."""
    changes = _changes_for(me).values("project_id")
    return _case_awaits(me, case="business_case__", project="") | Q(pk__in=changes)


def impact_deltas(change: ChangeRequest) -> list[str]:
    """A change's budget and schedule deltas in words, signed: ["+EUR 12,000", "+14 days"]."""
    parts = []
    if change.impact_budget:
        parts.append(formatting.money(change.impact_budget, signed=True))
    if change.impact_schedule_days:
        n = change.impact_schedule_days
        parts.append(f"{n:+d} day{'s' if abs(n) != 1 else ''}")
    return parts


@dataclass(frozen=True)
class Held:
    """A change routed to the person that they cannot decide now: why, and what to do."""

    project: Project
    change: ChangeRequest
    why: str
    todo: str
    # Where it is decided instead (a change decided with another decision), and the link's words.
    url: str = ""
    link_label: str = ""

    @property
    def deltas(self) -> list[str]:
        return impact_deltas(self.change)


def change_hold(caller: Any, change: ChangeRequest) -> tuple[str, str] | None:
    """Why the change's decider cannot approve or reject it now, and what to do instead, in
    plain words; None when they can. The reasons are the change service's own refusals
    (`registers.services.changes`: frozen registers, separation of duties)."""
    project = caller.project
    if project.registers_frozen:
        state = labels.label(project.approval_status)
        why = (
            f"The business case is {state}, so the registers of {project.key} are frozen: "
            "this change can no longer be approved or rejected."
        )
        todo = (
            "Nothing is asked of you. If the change still matters, ask the Project Lead to "
            "raise it again on a project whose registers are open."
        )
        return why, todo
    refusal = decider_refusal(caller, change)
    if refusal:
        return refusal, "Ask an editor of the project to name another approver on the change."
    return None


# --- the plan an approval freezes ----------------------------------------------------------


@dataclass(frozen=True)
class ApprovalPreview:
    """What the sponsor approves (the approval panel): the plan being frozen (its packages,
    total budget and latest end), the approved changes the approval carries on top of it
    (`registers.derive.carried_changes`), the approved budget and end date they make together
    (the same the status page reads just before and just after approval), and the financial
    case's total cost set beside the plan's budget, with the difference in words."""

    packages: list[Any]
    total_budget: Decimal
    end: dt.date | None
    carried: list[Any]
    carried_budget: Decimal
    carried_days: int
    approved_budget: Decimal
    approved_end: dt.date | None
    total_cost: Decimal | None
    reconciliation: str

    @property
    def carried_lines(self) -> list[str]:
        """Each carried change in words: its summary, deltas and when it was approved."""
        lines = []
        for change in self.carried:
            parts = impact_deltas(change)
            text = f"“{change.summary}”" + (f": {', '.join(parts)}" if parts else "")
            if change.decided_at:
                text += f" (approved {formatting.day(change.decided_at)})"
            lines.append(text)
        return lines

    @property
    def budget_sentence(self) -> str:
        """The approved budget after approval, in the status page's words."""
        text = f"Approved budget after approval: {formatting.money(self.approved_budget)}"
        if self.carried_budget:
            more = "plus" if self.carried_budget > 0 else "less"
            text += (
                f" ({formatting.money(self.total_budget)} {more} "
                f"{formatting.money(abs(self.carried_budget))} of approved changes)"
            )
        return text + "."

    @property
    def end_sentence(self) -> str:
        """The approved end date after approval, in the status page's words."""
        if self.approved_end is None:
            return "Approved end date after approval: none yet (no planned end date)."
        text = f"Approved end date after approval: {formatting.day(self.approved_end)}"
        if self.carried_days and self.end:
            more = "plus" if self.carried_days > 0 else "less"
            days = abs(self.carried_days)
            text += (
                f" ({formatting.day(self.end)} {more} {days} day{'s' if days != 1 else ''} "
                "of approved changes)"
            )
        return text + "."


def cost_reconciliation(total_cost: Decimal | None, budget: Decimal) -> str:
    """The financial case's total cost beside the plan's budget, in words."""
    plan = f"the plan's budget {formatting.money(budget)}"
    if total_cost is None:
        return f"The financial case states no total cost to set beside {plan}."
    stated = f"The financial case's total cost {formatting.money(total_cost)}"
    gap = total_cost - budget
    if gap == 0:
        return f"{stated} matches {plan}."
    side = "more" if gap > 0 else "less"
    return f"{stated} is {formatting.money(abs(gap))} {side} than {plan}."


def approval_preview(project: Project, case: BusinessCase) -> ApprovalPreview:
    """The approval panel's figures, in two queries (the packages, the carried changes)."""
    packages = work_packages(project)
    total = sum((p.budget or Decimal(0) for p in packages), Decimal(0))
    ends = [p.planned_end_date for p in packages if p.planned_end_date]
    end = max(ends) if ends else None
    carried = carried_changes(project)
    budget = sum((c.impact_budget or Decimal(0) for c in carried), Decimal(0))
    days = sum(c.impact_schedule_days or 0 for c in carried)
    cost = finance.total_cost(case.financial_case)
    return ApprovalPreview(
        packages=packages,
        total_budget=total,
        end=end,
        carried=carried,
        carried_budget=budget,
        carried_days=days,
        approved_budget=total + budget,
        approved_end=add_days(end, days) if end else None,
        total_cost=cost,
        reconciliation=cost_reconciliation(cost, total),
    )
