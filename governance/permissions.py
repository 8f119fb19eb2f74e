"""THE access gate. Roles are computed per (user, project) here and nowhere else; views, the
API and the agent ask this module and hand the resulting `Caller` to templates.

Rules (docs/product.md section 1):
- view: the user can browse the project in the tracker and, once a governance group is set,
  is a member of that group or of the project's steering committee;
- edit: view and (Project Lead or nominated editor); site-admin rights never confer edit;
- sponsor: view and the business case's decision authority;
- a project the user cannot view is not found (404); a write they may not do is forbidden (403).
"""

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db.models import Q
from django.http import HttpRequest

from governance import cleaning, gatesql, mirror
from governance.errors import Forbidden, Moved, NotFound, Unauthenticated
from governance.models import EditorNomination, Project, SiteSettings, User
from governance.tracker import TrackerError, get_tracker
from governance.tracker.base import is_gated

V = TypeVar("V", bool, Q)  # a yes-or-no answer, or the same as an SQL condition


@dataclass(frozen=True)
class Caller:
    """What one user may do on one project. Templates show or hide actions from this alone."""

    user: User
    project: Project
    can_view: bool
    is_site_admin: bool
    is_lead: bool
    is_nominated_editor: bool

    @property
    def account_id(self) -> str:
        return self.user.account_id

    @property
    def can_edit(self) -> bool:
        return self.can_view and (self.is_lead or self.is_nominated_editor)

    @property
    def can_manage_editors(self) -> bool:
        return self.is_project_lead

    @property
    def is_project_lead(self) -> bool:
        """The Project Lead of a project they can view: the acts reserved to the lead
        (nominating editors, applying an approved change to its work package's baseline)."""
        return self.can_view and self.is_lead

    @property
    def may_apply_change_to_baseline(self) -> bool:
        return self.is_project_lead

    def _named(self, account_id: str | None) -> bool:
        """Whether the caller, who can view the project, is the person `account_id` names."""
        return self.can_view and bool(account_id) and account_id == self.account_id

    @property
    def is_sponsor(self) -> bool:
        return self._named(self.project.sponsor_account_id)

    @property
    def is_steering_member(self) -> bool:
        return self.account_id in (self.project.steering_account_ids or [])

    @property
    def is_bau_owner(self) -> bool:
        return self._named(self.project.bau_owner_account_id)

    @property
    def registers_frozen(self) -> bool:
        return self.project.registers_frozen

    @property
    def can_edit_registers(self) -> bool:
        """Whether to offer register writes at all (frozen registers refuse them with 409)."""
        return self.can_edit and not self.registers_frozen

    def is_change_decider(
        self, *, approver_account_id: str | None, approver_seat: Mapping[str, Any] | None
    ) -> bool:
        """The named approver decides a change; with none named, the sponsor does."""
        named = approver_account_id or (approver_seat or {}).get("accountId")
        return self.can_view and (named == self.account_id if named else self.is_sponsor)

    def change_duty(
        self, *, proposer_account_id: str | None, created_by_account_id: str | None
    ) -> str | None:
        """Why separation of duties keeps this caller from deciding the change (see
        `change_duty`), or None."""
        return change_duty(
            self.project,
            self.account_id,
            proposer_account_id=proposer_account_id,
            created_by_account_id=created_by_account_id,
            editor_account_ids={self.account_id} if self.is_nominated_editor else set(),
        )

    def may_adjudicate_change(
        self,
        *,
        approver_account_id: str | None,
        approver_seat: Mapping[str, Any] | None,
        proposer_account_id: str | None,
        created_by_account_id: str | None,
    ) -> bool:
        """The change's decider (`is_change_decider`) approves or rejects it, unless they
        recorded it, proposed it, lead the project or edit it (`change_duty`)."""
        return self.is_change_decider(
            approver_account_id=approver_account_id, approver_seat=approver_seat
        ) and not self.change_duty(
            proposer_account_id=proposer_account_id, created_by_account_id=created_by_account_id
        )

    def may_withdraw_change(self, *, proposer_account_id: str | None) -> bool:
        return self.can_edit or self._named(proposer_account_id)

    @property
    def may_report_exception(self) -> bool:
        """The Project Lead answers a project's exception with the exception report."""
        return self.is_project_lead

    def may_decide_exception(self, *, reported_by_account_id: str | None) -> bool:
        """The sponsor decides an exception, unless they wrote its report themselves (nobody
        decides on their own work)."""
        return self.is_sponsor and reported_by_account_id != self.account_id

    def may_decide_gate(self, *, requested_by_account_id: str | None) -> bool:
        """As an exception: the sponsor decides a gate review, unless they requested it."""
        return self.may_decide_exception(reported_by_account_id=requested_by_account_id)

    def as_api(self) -> dict[str, bool]:
        return {"canEdit": self.can_edit, "isLead": self.is_lead, "isSponsor": self.is_sponsor}


# --- request helpers ------------------------------------------------------------------------


def request_user(request: HttpRequest) -> User:
    """The authenticated user: an API token's owner or the session user."""
    user = getattr(request, "auth", None)
    if not isinstance(user, User):
        user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        raise Unauthenticated()
    return user


def site_settings(request: HttpRequest | None) -> SiteSettings:
    """The site settings row as this request's access gate read it (read once a request)."""
    return gatesql.memo_site_settings(gatesql.request_memo(request))


def governance_group(request: HttpRequest | None = None) -> str:
    return gatesql.memo_site_settings(gatesql.request_memo(request)).governance_group


def is_site_admin(user: User, request: HttpRequest | None = None) -> bool:
    """Django superuser, or a site administrator in the tracker."""
    memo = gatesql.request_memo(request)
    key = ("site_admin", user.pk)
    if request is not None and not user.is_superuser:
        gatesql.read_site_gate(user, memo)
    if key not in memo:
        memo[key] = bool(user.is_superuser) or get_tracker().is_site_admin(user.account_id)
    return bool(memo[key])


def has_portfolio_access(user: User, request: HttpRequest | None = None) -> bool:
    """The portfolio/agent gate: site admins while no governance group is set; once one is
    set, that group's members only."""
    memo = gatesql.request_memo(request)
    gatesql.read_site_gate(user, memo)
    group = gatesql.memo_site_settings(memo).governance_group
    if group:
        return gatesql.memo_in_group(user, group, memo)
    return is_site_admin(user, request)


def require_portfolio_access(request: HttpRequest) -> User:
    user = request_user(request)
    if not has_portfolio_access(user, request):
        group = governance_group(request)
        raise Forbidden(
            f"The portfolio is open to members of the governance group '{group}'."
            if group
            else "The portfolio is open to site administrators until a governance group is set."
        )
    return user


def may_read_site_settings(user: User, request: HttpRequest | None = None) -> bool:
    """Every site setting (the governance group's name, disabled themes, RAG thresholds, who
    changed them last): site administrators and those the portfolio gate admits. Anyone else
    signed in reads the enabled themes and the currency alone."""
    return is_site_admin(user, request) or has_portfolio_access(user, request)


def may_govern_investment(user: User, request: Any = None, caller: Caller | None = None) -> bool:
    """Scores, scenarios: site admins, the governance group; a proposal's: its lead, sponsor."""
    own = caller is not None and (caller.is_project_lead or caller.is_sponsor)
    return own or may_read_site_settings(user, request)


def require_site_admin(request: HttpRequest) -> User:
    user = request_user(request)
    if not is_site_admin(user, request):
        raise Forbidden("Only site administrators may do this.")
    return user


def caller_for(
    user: User,
    project: Project,
    *,
    request: HttpRequest | None = None,
    can_browse: bool | None = None,
    nominated: bool | None = None,
) -> Caller:
    """Compute the caller's role on `project`. `can_browse` and `nominated` may be passed in
    when the caller already fetched them in bulk (project lists)."""
    memo = gatesql.request_memo(request)
    key = ("caller", user.pk, project.pk)
    if key in memo:
        known: Caller = memo[key]
        return known
    if can_browse is None:
        can_browse = get_tracker().can_browse(user.account_id, project.key)
    group = gatesql.memo_site_settings(memo).governance_group
    can_view = _may_view(
        user, project, can_browse, group, lambda: gatesql.memo_in_group(user, group, memo)
    )
    if nominated is None:
        nominated = (
            can_view
            and EditorNomination.objects.filter(
                project=project, account_id=user.account_id
            ).exists()
        )
    caller = _caller(user, project, can_view, is_site_admin(user, request), nominated)
    memo[key] = caller
    return caller


def view_rule(browse: V, steering: Callable[[], V], group: str, in_group: Callable[[], bool]) -> V:
    """THE view rule, for one project (yes or no) and for a list (SQL, `gatelist.viewable`):
    browsing the project in the tracker and, once a governance group is set, membership of
    that group (`in_group()`) or of the project's steering committee (`steering()`)."""
    if not group or in_group():
        return browse
    return browse & steering()


def _may_view(
    user: User, project: Project, can_browse: bool, group: str, in_group: Callable[[], bool]
) -> bool:
    """`view_rule` for one project; the steering committee is read before asking the group."""
    if not can_browse:
        return False
    steering = user.account_id in (project.steering_account_ids or [])
    return view_rule(True, lambda: steering, group, lambda: steering or in_group())


def _caller(
    user: User, project: Project, can_view: bool, site_admin: bool, nominated: Any
) -> Caller:
    """The caller's role from the gate's answers (`caller_for`; a list's rows share the
    request-wide ones: the group, membership of it, site administration)."""
    is_lead = bool(project.lead_account_id) and project.lead_account_id == user.account_id
    return Caller(user, project, can_view, site_admin, is_lead, bool(nominated))


def project_for(request: HttpRequest, key: str) -> tuple[Project, Caller]:
    """The project and the caller's role on it; NotFound (404) when they may not view it,
    so a hidden project's existence is never revealed.

    One SQL statement when the project's mirror holds the key (`gatesql.rows_for_key`); the first
    sight of a project, a former key (Moved) and a refusal go the long way
    (`_project_for_first_sight`). A key no project can have (`cleaning.project_key`: NUL, a
    lone surrogate, a noncharacter, past the column) is 404 before any query."""
    if cleaning.project_key(key)[1]:
        raise NotFound("No project with that key that you can see.")
    user = request_user(request)
    tracker = get_tracker()
    if not is_gated(tracker):
        return _project_for_first_sight(request, user, key)
    rows = gatesql.rows_for_key(user.account_id, tracker, key)
    if not rows:
        return _project_for_first_sight(request, user, key)
    row = rows[0]
    stored, values, _ = row
    gate = tracker.gate(user.account_id, values)
    if not gate.can_browse(key):
        # Refused, unless the key changed in the tracker since: the long way tells.
        return _project_for_first_sight(request, user, key)
    try:
        tracker_project = gate.project(key)
    except TrackerError:
        # Browsing was confirmed (from the cache): the page renders from the local mirror.
        tracker_project = None
    else:
        if tracker_project is None:
            raise NotFound(f"No project {key} that you can see.")
        if tracker_project.id and stored.tracker_id and tracker_project.id != stored.tracker_id:
            # Another tracker project holds the key now (this one's key changed).
            return _project_for_first_sight(request, user, key)
    gatesql.remember_gate(user, row[2], gate, gatesql.request_memo(request))
    project = mirror.current(tracker_project, stored) if tracker_project else stored
    nominated = values["gate_nominated"]
    caller = caller_for(user, project, request=request, can_browse=True, nominated=nominated)
    if not caller.can_view:
        raise NotFound(f"No project {key} that you can see.")
    return project, caller


def _project_for_first_sight(request: HttpRequest, user: User, key: str) -> tuple[Project, Caller]:
    """The long way (`mirror.named_by`): a key that is not the mirror's (a former key: Moved;
    a key changed in the tracker: followed), a project not mirrored yet (not found until the
    mirror's upkeep makes it), and every refusal (which must not tell a former key from an
    unknown one). Reads only."""
    project = mirror.named_by(user.account_id, key)
    caller = caller_for(user, project, request=request, can_browse=True)
    if not caller.can_view:
        raise NotFound(f"No project {key} that you can see.")
    if project.key != key:
        raise Moved(key, project.key)
    return project, caller


def editable_project_for(request: HttpRequest, key: str) -> tuple[Project, Caller]:
    """Like `project_for`, and Forbidden (403) unless the caller may edit."""
    project, caller = project_for(request, key)
    if not caller.can_edit:
        raise Forbidden(
            "Only the Project Lead and the editors they nominate may change this project."
        )
    return project, caller


def lead_project_for(request: HttpRequest, key: str) -> tuple[Project, Caller]:
    project, caller = project_for(request, key)
    if not caller.can_manage_editors:
        raise Forbidden("Only the Project Lead may nominate editors.")
    return project, caller


def sponsor_clash(
    project: Project, account_id: str | None, editor_account_ids: Collection[str] | None = None
) -> str | None:
    """Separation of duties for the project's seats, the one rule: the business case's
    decision authority (the sponsor) is neither the Project Lead nor a nominated editor, since
    nobody approves their own work. Answers for `account_id` as sponsor, against
    `editor_account_ids` (default: the editors as stored): "lead", "editor", or None.

    The two writers of the two sides (the business case's seat, the editors list) ask it after
    locking the project row (`select_for_update()`), in the transaction that writes: two writes
    sent together then cannot each pass against the other's old state."""
    if not account_id:
        return None
    if account_id == project.lead_account_id:
        return "lead"
    if editor_account_ids is None:
        nominated = EditorNomination.objects.filter(
            project_id=project.pk, account_id=account_id
        ).exists()
    else:
        nominated = account_id in editor_account_ids
    return "editor" if nominated else None


def change_duty(
    project: Project,
    account_id: str | None,
    *,
    proposer_account_id: str | None,
    created_by_account_id: str | None,
    editor_account_ids: Collection[str] | None = None,
) -> str | None:
    """Separation of duties on a change request, the one rule: the person who recorded it
    (`createdByAccountId`), its proposer, the Project Lead and the nominated editors (who may
    edit it while it is Proposed) do not decide it. Answers for `account_id` as its approver,
    against `editor_account_ids` (default: the editors as stored): "proposed", "recorded",
    "lead", "editor", or None. Asked when an approver is named and when a change is decided."""
    if not account_id:
        return None
    if account_id == proposer_account_id:
        return "proposed"
    if account_id == created_by_account_id:
        return "recorded"
    return sponsor_clash(project, account_id, editor_account_ids)


def editor_account_ids(project: Project) -> set[str]:
    """The project's nominated editors (one query), for many answers in one write."""
    return set(
        EditorNomination.objects.filter(project_id=project.pk).values_list("account_id", flat=True)
    )


def may_browse(account_id: str, project: Project) -> bool:
    """Whether another person browses the project: who may be named proposer or editor."""
    return get_tracker().can_browse(account_id, project.key)


def require(allowed: bool, message: str) -> None:
    """Refuse with 403 unless `allowed` (a `Caller` property or method result)."""
    if not allowed:
        raise Forbidden(message)


def viewable_projects(request: HttpRequest) -> list[tuple[Project, Caller]]:
    """Every project the user can view, with their role: one SQL statement once the mirrors
    exist (`gatesql.rows_for_browsable`, `gatesql.rows_for_keys`), a few statements else."""
    user = request_user(request)
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
) -> list[tuple[Project, Caller]] | None:
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
    # The request-wide answers (the same on every row) read once, from the first row.
    site = rows[0][2]
    gatesql.remember_gate(user, site, gates[0], memo)
    group = memo["site_settings"].governance_group
    in_group = bool(group) and gatesql.memo_in_group(user, group, memo)
    site_admin = is_site_admin(user, request)
    user_pk = user.pk
    for row, values, _ in rows:
        key = ("caller", user_pk, row.pk)
        caller = memo.get(key)
        if caller is None:
            can_view = _may_view(user, row, True, group, lambda: in_group)
            caller = memo[key] = _caller(user, row, can_view, site_admin, values["gate_nominated"])
        if caller.can_view:
            result.append((row, caller))
    return result


def _viewable_projects_first_sight(
    request: HttpRequest, user: User
) -> list[tuple[Project, Caller]]:
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
        caller_for(user, p, request=request, can_browse=True, nominated=p.pk in nominated)
        for p in projects
    ]
    return [(caller.project, caller) for caller in callers if caller.can_view]
