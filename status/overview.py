"""The pages a project's people start from: "My projects" (a lead's week: each project's RAG
and what waits for whom) and a project's overview (RAG, budget, dates, the top risks and what
waits for whom). Both read the one project model: the stored health rows (`status.health`) for
the list, the project's own status view (`status.selectors.view_for`) for its overview, and
`waiting_items` alone says what waits."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django.utils.http import urlencode

from charter import acts
from charter.models import BusinessCase
from governance import (
    cleaning,
    formatting,
    gatelist,
    paging,
    permissions,
    services,
    summaries,
    textsearch,
)
from governance.atlassian.context import incomplete_listings
from governance.formatting import plural
from governance.http import HtmxHttpRequest, page
from governance.people import resolve
from governance.rag import risk_zone
from governance.tracker import work_package_field_note
from governance.views import project_context
from status import derive, health, selectors
from status.exceptions import information_asked
from status.models import DIMENSIONS, UNDECIDED_STATES, ProjectException

if TYPE_CHECKING:
    from governance.models import Project
    from governance.permissions import Caller

# A status update or a benefits review this close is "due" (before it is overdue).
DUE_SOON_DAYS = 7
REVIEW_SOON_DAYS = 30
TOP_RISKS = 5
_AWAITING = "?state=AwaitingApplication"


@dataclass(frozen=True)
class Waiting:
    """One thing that waits: what, for whom ("you", a role), and where it is done."""

    text: str
    who: str
    url: str
    urgent: bool = False


def _date(value: Any) -> dt.date | None:
    """A stored row's ISO date or timestamp as a date in the site's time zone."""
    if not value:
        return None
    moment = parse_datetime(value) if "T" in value else None
    if moment is not None:
        return timezone.localdate(moment) if timezone.is_aware(moment) else moment.date()
    return parse_date(value[:10])


def waiting_items(
    project: Project,
    caller: Caller,
    row: Mapping[str, Any],
    *,
    exception: ProjectException | None,
    case: BusinessCase | None,
    today: dt.date,
) -> list[Waiting]:
    """What waits on `project` and for whom, from its stored health row (the portfolio's
    values: `status.health.portfolio_values`), its business case (whether the caller may take
    the approval or the close-out act now: `charter.acts.allowed`, separation of duties
    included) and its undecided exception (Open: the lead
    reports; Reported: the sponsor decides, unless the sponsor asked the lead for more first).
    "you" only where the caller may do the act. Register rows wait only while the registers
    can change."""
    key = project.key
    lead = "you" if caller.is_lead else "the Project Lead"
    editors = "you" if caller.can_edit else "the Project Lead and editors"
    items: list[Waiting] = []
    status_url = reverse("status:index", args=[key])
    for state, act, text in (
        ("Submitted", "approve", "Business case submitted: approve or return it"),
        ("ClosingSubmitted", "close", "Close-out submitted: accept it or send it back"),
    ):
        if project.approval_status == state:
            may = case is not None and acts.allowed(acts.ACTS[act], case, caller)
            url = reverse("charter:index", args=[key])
            items.append(Waiting(text, "you" if may else "the sponsor", url, urgent=may))
    exception_url = reverse("status:exception", args=[key])
    if exception is not None and exception.state == "Open":
        items.append(Waiting("In exception: write the exception report", lead, exception_url, True))
    elif exception is not None and information_asked(exception):
        text = "The sponsor asked for more on the exception report: answer in a new report"
        items.append(Waiting(text, lead, exception_url, True))
    elif exception is not None:
        decides = caller.may_decide_exception(
            reported_by_account_id=exception.reported_by_account_id or None
        )
        who = "you" if decides else "the sponsor"
        items.append(Waiting("Exception report waits for a decision", who, exception_url, decides))
    due = _date(row.get("nextUpdateDueAt"))
    if row.get("stale"):
        when = f" (due {formatting.day(due)})" if due else ""
        items.append(Waiting(f"Status update overdue{when}", editors, status_url, True))
    elif due is not None and (due - today).days <= DUE_SOON_DAYS:
        items.append(Waiting(f"Status update due {formatting.day(due)}", editors, status_url))
    if project.registers_frozen:
        # Close-out onward (or archived) no register row can change: nothing there waits.
        decisions = changes = late = 0
    else:
        decisions = row.get("pendingDecisions") or 0
        changes = row.get("changesAwaitingApplication") or 0
        schedule = (row.get("drivers") or {}).get("scheduleRag") or {}
        late = (schedule.get("figures") or {}).get("latePackages") or 0
    for count, noun, text, who, register, query in (
        (decisions, "decision", "pending", "their owners", "decisions", "?state=Pending"),
        (changes, "approved change", "to apply to the plan", lead, "changes", _AWAITING),
        (late, "work package", "late against baseline", editors, "work-packages", ""),
    ):
        if count:
            url = reverse(f"registers:{register}", args=[key]) + query
            items.append(Waiting(f"{plural(count, noun)} {text}", who, url))
    reviewers = "you" if caller.can_edit or caller.is_sponsor else "the lead, editors or sponsor"
    review = _date(row.get("realisationReviewDueOn"))
    if row.get("realisationReviewOverdue"):
        text = f"Benefits review overdue (due {formatting.day(review)})"
        items.append(Waiting(text, reviewers, reverse("charter:index", args=[key]), True))
    elif review is not None and (review - today).days <= REVIEW_SOON_DAYS:
        text = f"Benefits review due {formatting.day(review)}"
        items.append(Waiting(text, reviewers, reverse("charter:index", args=[key])))
    return items


def _mine(caller: Caller) -> bool:
    return caller.is_lead or caller.can_edit or caller.is_sponsor


def role_of(caller: Caller) -> str:
    role = "Project Lead" if caller.is_lead else "Editor" if caller.can_edit else "Viewer"
    return f"{role}, Sponsor" if caller.is_sponsor else role


def _undecided(projects: Sequence[Project]) -> dict[int, ProjectException]:
    """Each project's undecided exception, by project id (one query)."""
    ids = [p.pk for p in projects]
    if not ids:
        return {}
    found = ProjectException.objects.filter(project_id__in=ids, state__in=UNDECIDED_STATES)
    return {record.project_id: record for record in found}


def _cases(projects: Sequence[Project]) -> dict[int, BusinessCase]:
    """Each project's business case, by project id (one query)."""
    ids = [p.pk for p in projects]
    if not ids:
        return {}
    return {case.project_id: case for case in BusinessCase.objects.filter(project_id__in=ids)}


@page("GET")
def project_list(request: HtmxHttpRequest) -> HttpResponse:
    """My projects: the projects the caller can view, by key, 100 a page, each with its RAG
    and what waits for whom; "mine only" keeps those the caller leads, edits or sponsors."""
    user = permissions.request_user(request)
    # The page walks the projects in key order and stops at its size (the gate's shape for a
    # page); the counts and a search read every viewable project.
    projects = gatelist.viewable(request, shown=True, page=True)
    query = request.GET.get("q", "").strip()
    mine = request.GET.get("mine") == "1"
    mine_condition = gatelist.mine_condition(user.account_id)

    def count() -> tuple[dict[str, int], None]:
        # Counted without the tracker's name and lead of each row (read for the page's rows).
        found = gatelist.viewable(request).aggregate(
            total=Count("pk"), mine=Count("pk", filter=mine_condition)
        )
        return found, None

    # Stored for the reader while nothing they count changes (`governance.summaries`).
    counts = summaries.read(request, "projects", count, depends=[settings.DEPLOY_VERSION])
    mine_count, total = counts["mine"], counts["mine" if mine else "total"]
    if mine:
        projects = projects.filter(mine_condition)
    if query:
        # Every word in the key or the name, case-folded (`textsearch`'s rule, in Python: SQL's
        # LIKE folds ASCII only on SQLite and no database folds "ß" to "ss"); two columns a
        # viewable project are read, then the page is cut in SQL from the ids found.
        # The name searched is the one the page shows: the tracker's of the moment where the
        # gate reads it (`gate_t_name`), else the mirror's.
        wanted = textsearch.words(query)
        every = gatelist.viewable(request, shown=True)
        every = every.filter(mine_condition) if mine else every
        shown_name = "gate_t_name" if "gate_t_name" in every.query.annotations else "name"
        ids = [
            pk
            for pk, key, name, stored in every.values_list("pk", "key", shown_name, "name")
            if textsearch.matches(wanted, textsearch.haystack(key, name or stored))
        ]
        projects = projects.filter(pk__in=ids)
        total = len(ids)
    try:
        found = paging.projects_page(projects, request.GET.get("cursor"), paging.DEFAULT_PAGE_SIZE)
    except paging.BadCursor:  # a stale or altered link: the first page
        found = paging.projects_page(projects, None, paging.DEFAULT_PAGE_SIZE)
    # The page's rows as the gate gives them (a key renamed in the tracker shows at once; the
    # mirror's upkeep stores it later); roles for the page's rows only.
    shown = gatelist.page_callers(request, found.rows)
    stored = health.rows_for([p for p, _ in shown])
    exceptions = _undecided([p for p, _ in shown])
    cases = _cases([p for p, _ in shown])
    today = timezone.localdate()
    items = []
    for project, caller in shown:
        row = stored.get(project.pk, {})
        items.append(
            {
                "project": project,
                "caller": caller,
                "role": role_of(caller),
                "row": row,
                "dimensions": [
                    (derive.DIMENSION_LABELS[d], (row.get("effective") or {}).get(f"{d}Rag"))
                    for d in DIMENSIONS
                ],
                "waiting": waiting_items(
                    project,
                    caller,
                    row,
                    exception=exceptions.get(project.pk),
                    case=cases.get(project.pk),
                    today=today,
                ),
            }
        )
    people = resolve(p.lead_account_id for p, _ in shown)
    keep = {**({"q": query} if query else {}), **({"mine": "1"} if mine else {})}
    pages = {
        name: "?" + urlencode({**keep, "cursor": cursor})
        for name, cursor in (("next", found.next_cursor), ("previous", found.previous_cursor))
        if cursor
    }
    return render(
        request,
        "status/project_list.html",
        {
            "items": items,
            "total": total,
            "pages": pages,
            "people": people,
            "query": query,
            "mine": mine,
            "mine_count": mine_count,
            "incomplete": "searchProjects" in incomplete_listings.get(),
        },
    )


def top_risks(view: derive.StatusView, count: int = TOP_RISKS) -> list[dict[str, Any]]:
    """The open risks with the highest judged score (residual where assessed, else inherent),
    each with both scores and its colour; unscored ones last."""
    risks = [r for r in view.facts.risks if derive.is_open_risk(r)]
    risks.sort(key=lambda r: (-(derive.score(r) or -1), r.title))
    return [
        {
            "id": r.id,
            "title": r.title,
            "score": derive.score(r),
            "zone": risk_zone(derive.score(r), view.thresholds),
            "scores": derive.scores_in_words(r) if derive.score(r) is not None else "not scored",
            "materialised": r.materialised,
        }
        for r in risks[:count]
    ]


def _overrun_text(overrun: Any) -> str:
    """The forecast against the approved budget in words ("" when they match or either is
    missing), the percentage as the cost dimension computed it."""
    if not overrun:
        return ""
    side = "over" if overrun > 0 else "under"
    return f"{formatting.percent_figure(abs(overrun))}% {side} the approved budget"


@page("GET")
def project_overview(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """A project's front page: its RAG with reasons, budget (approved, forecast, actual),
    dates (approved end, forecast end), the top risks, what waits for whom, and its people."""
    project, caller = permissions.project_for(request, key)
    view = selectors.view_for(project)
    row = health.portfolio_values(view)
    record = ProjectException.objects.filter(project=project, state__in=UNDECIDED_STATES).first()
    editor_ids = services.editor_account_ids(project)
    people = resolve(
        [project.lead_account_id, project.sponsor_account_id, *editor_ids, caller.account_id]
    )
    schedule = view.dimensions["schedule"].figures
    base_end = schedule.get("baselineEndDate")
    variation = schedule.get("approvedVariationDays") or 0
    approved_end = cleaning.add_days(base_end, variation) if base_end else None
    return render(
        request,
        "status/overview.html",
        project_context(
            project,
            caller,
            tab="overview",
            view=view,
            row=row,
            dimensions=[
                (derive.DIMENSION_LABELS[d], view.effective.get(f"{d}Rag"), view.dimensions[d])
                for d in DIMENSIONS
            ],
            figures=view.figures,
            overrun=_overrun_text(view.figures.get("costOverrunPct")),
            # The work packages' actual costs summed (all of them; earned value's AC counts
            # only the packages with a baseline budget, and is on the status page).
            actual=derive.actual_cost_recorded(view.facts),
            approved_end=approved_end,
            baseline_source=schedule.get("baselineSource") or "",
            variation_days=abs(variation),
            variation_more=variation > 0,
            forecast_end=schedule.get("latestEndDate"),
            slip_days=schedule.get("slipDays"),
            late_packages=schedule.get("latePackages") or 0,
            risks=top_risks(view),
            waiting=waiting_items(
                project,
                caller,
                row,
                exception=record,
                case=_cases([project]).get(project.pk),
                today=timezone.localdate(),
            ),
            editor_ids=editor_ids,
            people=people,
            field_note=work_package_field_note(project.key),
        ),
    )
