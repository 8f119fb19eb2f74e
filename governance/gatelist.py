"""The access gate for lists, in SQL (`governance.permissions` holds the rules and the gate of
one project; this module reads them, never the other way): the projects a person may view
as a filter (`viewable`), for a list that filters, sorts and pages in SQL and gives roles to
its page's rows only (`page_callers`); the projects they lead, edit or sponsor
(`mine_condition`); the callers a question "on any project?" needs (`role_callers`).
`permissions.viewable_projects` lists every viewable project with its role, for the few
readers that need them all."""

from collections.abc import Sequence
from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Min, Q, QuerySet
from django.http import HttpRequest

from governance import gatefilter, gatesql, permissions
from governance.models import Project, User
from governance.tracker import get_tracker


def viewable(request: HttpRequest, *, shown: bool = False, page: bool = False) -> QuerySet[Project]:
    """The projects the user can view (exactly those `permissions.viewable_projects` lists),
    as SQL: the tracker's browse answer (the gate statement's own expression, `gatefilter`)
    under the view rule (`permissions.view_rule`), the request-wide answers (the governance
    group, membership of it) read once. A tracker that answers only from its listing (Jira)
    is listed the long way and filtered by id. One condition a request. `shown`: the rows
    carry the tracker's name and lead of the moment, for a page (`page_callers`). `page`: the
    statement walks the projects in their order and stops at a page (`condition`)."""
    projects = Project.objects.filter(condition(request, page=page))
    if shown:
        user = permissions.request_user(request)
        return gatefilter.with_tracker_answers(projects, user.account_id, get_tracker())
    return projects


def condition(request: HttpRequest, path: str = "", *, page: bool = False) -> Q:
    """`viewable`'s condition, over projects or over the rows of a model that reach their
    project through `path` ("project__"): such a list filters the project it joins already,
    so PostgreSQL can walk a page in the project's order instead of matching every row's
    project against a second reading of the projects (the portfolio's page rows at 10,000
    projects: 34-41 ms -> 4-6 ms, record 0306). `page`: the statement walks the projects in
    their order and stops at a page, so the tracker asks each one's grant by its index instead
    of hashing every grant the person holds (`gate_expressions(every=False)`, record 0308);
    a statement over every viewable project (a count, a summary, a choice list) keeps the
    hash. The same rule either way, built once a request for each path and shape."""
    user = permissions.request_user(request)
    memo = gatesql.request_memo(request)
    key = ("viewable", user.pk, path, page)
    if key not in memo:
        memo[key] = _condition(request, user, memo, path, page)
    found: Q = memo[key]
    return found


def _condition(request: HttpRequest, user: User, memo: gatesql.Memo, path: str, page: bool) -> Q:
    browse = gatefilter.browse_condition(user.account_id, get_tracker(), path, every=not page)
    if browse is None:
        listed = memo.get(("listed", user.pk))
        if listed is None:
            # Kept for the page's rows: the tracker's key, name and lead of the moment, and
            # roles (`page_callers`).
            listed = memo[("listed", user.pk)] = {
                project.pk: (project, caller)
                for project, caller in permissions.viewable_projects(request)
            }
        return gatefilter.one_of(list(listed), path)
    gatesql.read_site_gate(user, memo)
    group = gatesql.memo_site_settings(memo).governance_group
    return permissions.view_rule(
        browse,
        lambda: gatefilter.steering_condition(user.account_id, path),
        group,
        lambda: gatesql.memo_in_group(user, group, memo),
    )


def page_callers(
    request: HttpRequest, projects: Sequence[Project]
) -> list[tuple[Project, permissions.Caller]]:
    """The callers of a page of projects `viewable` selected (so viewable): one query for
    the person's nominations among them, the request-wide answers read once. A project read
    with the tracker's answers (`gatefilter.with_tracker_answers`) takes the tracker's name
    and lead of the moment, as the gate's statement gives them (nothing written)."""
    user = permissions.request_user(request)
    memo = gatesql.request_memo(request)
    nominated = gatefilter.nominations(user.account_id, projects)
    site_admin = permissions.is_site_admin(user, request)
    listed: dict[Any, tuple[Project, permissions.Caller]] = memo.get(("listed", user.pk)) or {}
    result = []
    for project in projects:
        if project.pk in listed:  # listed the long way (a tracker without SQL answers)
            shown, known = listed[project.pk]
            project.key, project.name = shown.key, shown.name
            project.lead_account_id = shown.lead_account_id
            result.append((project, known))
            continue
        name = getattr(project, "gate_t_name", None)
        if name is not None:
            project.name = name
            project.lead_account_id = getattr(project, "gate_t_lead", None) or ""
        key = ("caller", user.pk, project.pk)
        caller = memo.get(key)
        if caller is None:
            nominee = project.pk in nominated
            caller = memo[key] = permissions._caller(user, project, True, site_admin, nominee)
        result.append((project, caller))
    return result


def mine_condition(account_id: str) -> Q:
    """The viewable projects the person leads, edits or sponsors (`Caller.is_lead`,
    `can_edit`, `is_sponsor` of a project they view), as SQL. The lead is the tracker's of the
    moment where the tracker answers it in SQL (`gatefilter.lead_condition`), as the page's
    roles are (`page_callers`); else the mirror's."""
    if not account_id:
        return Q(pk__in=[])
    lead, nominated, sponsor = role_conditions(account_id).values()
    return lead | nominated | sponsor


def role_conditions(account_id: str) -> dict[str, Q]:
    """Each of `mine_condition`'s roles on its own (the person named, not blank): the lead,
    the nominated editor, the sponsor."""
    lead = gatefilter.lead_condition(account_id, get_tracker())
    return {
        "lead": Q(lead_account_id=account_id) if lead is None else lead,
        "nominated": gatefilter.nominated_condition(account_id),
        "sponsor": Q(sponsor_account_id=account_id),
    }


def leads_of(projects: QuerySet[Project]) -> list[str]:
    """The leads of `projects` (a `viewable` list) as the mirror holds them, for a filter by
    lead that compares the same column: one DISTINCT."""
    leads = projects.exclude(lead_account_id="").values_list("lead_account_id", flat=True)
    return sorted(set(leads.order_by().distinct()))


def role_callers(request: HttpRequest) -> list[tuple[Project, permissions.Caller]]:
    """The callers a question "may the person do this on any project they view?" needs, when
    the question reads only whether they lead the project, are its nominated editor and
    sponsor it, and who they are (`agent.catalogue`'s offers): the first viewable project, by
    key, of each combination of those roles the person has (at most eight), whose caller
    answers for every project of its combination. One statement reads them (grouped over the
    viewable projects by `role_conditions`), whatever their number. A tracker that answers
    only from its listing (Jira) gives every listed caller: the gate has read them all
    already. (A tracker that answered the gate in SQL but not its lead would group by the
    mirror's lead while the callers read the tracker's; none does.)"""
    user = permissions.request_user(request)
    shown = viewable(request, shown=True)  # a listed tracker's listing is made here, once
    listed = gatesql.request_memo(request).get(("listed", user.pk))
    if listed is not None:
        return list(listed.values())
    if not user.account_id:
        firsts = list(shown.order_by("key")[:1])
        return page_callers(request, firsts)
    roles = {
        f"role_{name}": ExpressionWrapper(condition, output_field=BooleanField())
        for name, condition in role_conditions(user.account_id).items()
    }
    grouped = viewable(request).order_by().annotate(**roles).values(*roles)
    firsts = grouped.annotate(first=Min("key")).values("first")
    return page_callers(request, list(shown.filter(key__in=firsts).order_by("key")))


def audience(request: HttpRequest) -> tuple[Any, ...]:
    """What `condition` depends on for the person besides the stored rows it filters: who they
    are, the tracker, the governance group and their membership of it, and a listed tracker's
    ids (Jira: its listing, read from Jira or its cache). Two requests with the same audience
    and the same rows select the same projects (`governance.summaries` keys by it)."""
    user = permissions.request_user(request)
    memo = gatesql.request_memo(request)
    condition(request)  # reads the group, the membership and a listing into the memo
    site = gatesql.memo_site_settings(memo)
    group = site.governance_group
    member = bool(group) and gatesql.memo_in_group(user, group, memo)
    listed = memo.get(("listed", user.pk))
    return (
        user.pk,
        user.account_id,
        type(get_tracker()).__qualname__,
        group,
        member,
        None if listed is None else sorted(listed),
    )
