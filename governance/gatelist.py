"""The access gate's side for lists (`governance.permissions` holds the rules; this module
reads them): every viewable project with its role (`viewable_projects`, for the few readers
that need them all), and the same as SQL (`viewable`) for a list that filters, sorts and pages
in SQL and gives roles to its page's rows only (`page_callers`)."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.db.models import Q, QuerySet
from django.http import HttpRequest

from governance import gatefilter, gatesql, mirror, permissions
from governance.models import EditorNomination, Project, User
from governance.tracker import get_tracker


def viewable(request: HttpRequest, *, shown: bool = False) -> QuerySet[Project]:
    """The projects the user can view (exactly those `viewable_projects` lists), as SQL:
    the tracker's browse answer (the gate statement's own expression, `gatefilter`) under the
    view rule (`permissions.view_rule`), the request-wide answers (the governance group,
    membership of it) read once. A tracker that answers only from its listing (Jira) is
    listed the long way and filtered by id. One condition a request. `shown`: the rows
    carry the tracker's name and lead of the moment, for a page (`page_callers`)."""
    user = permissions.request_user(request)
    memo = gatesql.request_memo(request)
    key = ("viewable", user.pk)
    if key not in memo:
        memo[key] = _condition(request, user, memo)
    condition: Q = memo[key]
    projects = Project.objects.filter(condition)
    if shown:
        return gatefilter.with_tracker_answers(projects, user.account_id, get_tracker())
    return projects


def _condition(request: HttpRequest, user: User, memo: gatesql.Memo) -> Q:
    browse = gatefilter.browse_condition(user.account_id, get_tracker())
    if browse is None:
        return gatefilter.one_of([project.pk for project, _ in viewable_projects(request)])
    gatesql.read_site_gate(user, memo)
    group = gatesql.memo_site_settings(memo).governance_group
    return permissions.view_rule(
        browse,
        lambda: gatefilter.steering_condition(user.account_id),
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
    result = []
    for project in projects:
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


def viewable_projects(request: HttpRequest) -> list[tuple[Project, permissions.Caller]]:
    """Every project the user can view, with their role: one SQL statement once the mirrors
    exist (`gatesql.rows_for_browsable`, `gatesql.rows_for_keys`), a few statements else."""
    user = permissions.request_user(request)
    tracker = get_tracker()
    if hasattr(tracker, "gate_browsable_keys"):
        rows = gatesql.rows_for_browsable(user.account_id, tracker)
        if rows and len(rows) == rows[0][1]["gate_count"]:
            viewable = _viewable_rows(request, user, tracker, rows, None)
            if viewable is not None:
                return viewable
    elif hasattr(tracker, "gate_browsable"):
        listing = tracker.gate_browsable(user.account_id)
        if listing == []:
            return []
        if listing is not None:
            by_key = {t.key: t for t in listing}
            rows = gatesql.rows_for_keys(user.account_id, tracker, by_key)
            if rows and not rows[0][1]["gate_t_grant"]:
                return []
            if len(rows) == len(by_key):
                viewable = _viewable_rows(request, user, tracker, rows, by_key)
                if viewable is not None:
                    return viewable
    return _viewable_projects_first_sight(request, user)


def _viewable_rows(
    request: HttpRequest,
    user: User,
    tracker: Any,
    rows: list[gatesql.Row],
    listing: Mapping[str, Any] | None,
) -> list[tuple[Project, permissions.Caller]] | None:
    """The gate rows' callers; None when a mirror's key is held by another tracker project
    now (a key changed in the tracker: the long way follows it)."""
    gates = []
    for row, values, _ in rows:
        gate = tracker.gate(user.account_id, values)
        t = listing[row.key] if listing is not None else gate.project(row.key)
        if t.id and row.tracker_id and t.id != row.tracker_id:
            return None
        mirror.current(t, row)  # the tracker's name and lead of the moment, in memory
        gates.append(gate)
    result = []
    memo = gatesql.request_memo(request)
    # The request-wide answers are the same on every row (uncorrelated sub-selects): read
    # from the first row, once; each row adds its own (browse is given by the list, the
    # nomination, the lead and the steering committee).
    site = rows[0][2]
    gatesql.remember_gate(user, site, gates[0], memo)
    group = memo["site_settings"].governance_group
    in_group = bool(group) and gatesql.memo_in_group(user, group, memo)
    site_admin = permissions.is_site_admin(user, request)
    user_pk = user.pk
    for row, values, _ in rows:
        key = ("caller", user_pk, row.pk)
        caller = memo.get(key)
        if caller is None:
            can_view = permissions._may_view(user, row, True, group, lambda: in_group)
            caller = memo[key] = permissions._caller(
                user, row, can_view, site_admin, values["gate_nominated"]
            )
        if caller.can_view:
            result.append((row, caller))
    return result


def _viewable_projects_first_sight(
    request: HttpRequest, user: User
) -> list[tuple[Project, permissions.Caller]]:
    """The long way: the projects the tracker lists for the person, those mirrored (as the
    tracker has them now, `mirror.current`); one not mirrored yet is listed once its
    upkeep made it (`governance.mirror`). Reads only."""
    projects = mirror.mirrored(get_tracker().browsable_projects(user.account_id))
    nominated = set(
        EditorNomination.objects.filter(
            account_id=user.account_id, project_id__in=[p.pk for p in projects]
        ).values_list("project_id", flat=True)
    )
    callers = [
        permissions.caller_for(
            user, p, request=request, can_browse=True, nominated=p.pk in nominated
        )
        for p in projects
    ]
    return [(caller.project, caller) for caller in callers if caller.can_view]
