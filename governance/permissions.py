"""THE access gate. Roles are computed per (user, project) here and nowhere else; views, the
API and the agent ask this module and hand the resulting `Caller` to templates.

Rules (docs/product.md section 1):
- view: the user can browse the project in the tracker and, once a governance group is set,
  is a member of that group or of the project's steering committee;
- edit: view and (Project Lead or nominated editor); site-admin rights never confer edit;
- sponsor: view and the business case's decision authority;
- a project the user cannot view is not found (404); a write they may not do is forbidden (403).
"""

import datetime
import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connections, router, transaction
from django.db.models import (
    BooleanField,
    DateTimeField,
    Exists,
    JSONField,
    OuterRef,
    Q,
    Subquery,
    TextField,
)
from django.db.models.base import ModelState
from django.db.models.functions import Cast
from django.db.models.signals import post_init, pre_init
from django.http import HttpRequest
from django.utils.functional import LazyObject

from governance import audit, cleaning
from governance.errors import Forbidden, Moved, NotFound, Unauthenticated
from governance.models import EditorNomination, Project, SiteSettings, User
from governance.tracker import TrackerError, TrackerProject, get_tracker


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

    @property
    def is_sponsor(self) -> bool:
        sponsor = self.project.sponsor_account_id
        return self.can_view and bool(sponsor) and sponsor == self.account_id

    @property
    def is_steering_member(self) -> bool:
        return self.account_id in (self.project.steering_account_ids or [])

    @property
    def is_bau_owner(self) -> bool:
        owner = self.project.bau_owner_account_id
        return self.can_view and bool(owner) and owner == self.account_id

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
        if not self.can_view:
            return False
        named = approver_account_id or (approver_seat or {}).get("accountId")
        if named:
            return named == self.account_id
        return self.is_sponsor

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
        return self.can_edit or (
            self.can_view and bool(proposer_account_id) and proposer_account_id == self.account_id
        )

    @property
    def may_report_exception(self) -> bool:
        """The Project Lead answers a project's exception with the exception report."""
        return self.is_project_lead

    def may_decide_exception(self, *, reported_by_account_id: str | None) -> bool:
        """The sponsor decides an exception, unless they wrote its report themselves (nobody
        decides on their own work)."""
        return self.is_sponsor and reported_by_account_id != self.account_id

    def as_api(self) -> dict:
        return {"canEdit": self.can_edit, "isLead": self.is_lead, "isSponsor": self.is_sponsor}


# --- request helpers ------------------------------------------------------------------------


def request_user(request: HttpRequest) -> User:
    """The authenticated user: an API token's owner or the session user."""
    user = getattr(request, "auth", None)
    if not isinstance(user, User):
        user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        raise Unauthenticated()
    if isinstance(user, LazyObject):
        # The session's user, already loaded by the check above: the object itself, so that
        # a page of a thousand projects does not go through the proxy for each of its reads.
        user = user._wrapped
    return user


def _memo(request: HttpRequest | None) -> dict:
    if request is None:
        return {}
    memo = getattr(request, "_governance_memo", None)
    if memo is None:
        memo = {}
        request._governance_memo = memo
    return memo


def _site_settings(memo: dict) -> SiteSettings:
    if "site_settings" not in memo:
        memo["site_settings"] = SiteSettings.load()
    return memo["site_settings"]


def site_settings(request: HttpRequest | None) -> SiteSettings:
    """The site settings row as this request's access gate read it (read once a request)."""
    return _site_settings(_memo(request))


def _site_gate(user: User, memo: dict) -> None:
    """The site-wide part of the gate in one statement, for requests that ask it before (or
    without) a project: the site settings row with whether the user is a site administrator
    and a member of the governance group (the local tracker's answers; Jira's come from its
    cache and are asked as before)."""
    if "site_settings" in memo:
        return
    tracker = get_tracker()
    expressions = getattr(tracker, "site_gate_expressions", None)
    if expressions is None:
        return

    def build(account_id):
        site = SiteSettings.objects.filter(pk=1)
        group = Subquery(site.values("governance_group")[:1])
        answers = expressions(account_id, group)
        return _compile(site.annotate(**answers), list(answers), ())

    rows = _statement("site", tracker, user.account_id, build).run(user.account_id)
    if not rows:
        return
    site, gate, _ = rows[0]
    memo["site_settings"] = site
    memo.setdefault(("site_admin", user.pk), bool(user.is_superuser) or bool(gate["gate_t_admin"]))
    if site.governance_group:
        memo.setdefault(("group", user.pk, site.governance_group), bool(gate["gate_t_group"]))


def governance_group(request: HttpRequest | None = None) -> str:
    return _site_settings(_memo(request)).governance_group


def is_site_admin(user: User, request: HttpRequest | None = None) -> bool:
    """Django superuser, or a site administrator in the tracker."""
    memo = _memo(request)
    key = ("site_admin", user.pk)
    if request is not None and not user.is_superuser:
        _site_gate(user, memo)
    if key not in memo:
        memo[key] = bool(user.is_superuser) or get_tracker().is_site_admin(user.account_id)
    return memo[key]


def _in_group(user: User, group: str, memo: dict) -> bool:
    key = ("group", user.pk, group)
    if key not in memo:
        memo[key] = get_tracker().is_group_member(user.account_id, group)
    return memo[key]


def has_portfolio_access(user: User, request: HttpRequest | None = None) -> bool:
    """The portfolio/agent gate: site admins while no governance group is set; once one is
    set, that group's members only."""
    memo = _memo(request)
    _site_gate(user, memo)
    group = _site_settings(memo).governance_group
    if group:
        return _in_group(user, group, memo)
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


def require_site_admin(request: HttpRequest) -> User:
    user = request_user(request)
    if not is_site_admin(user, request):
        raise Forbidden("Only site administrators may do this.")
    return user


def _mirrors_of(tracker_projects: Collection[TrackerProject]) -> dict[str, Project]:
    """The governance mirrors of these tracker projects, by the tracker's id, in one query:
    matched by the tracker's project id, or by key for a mirror not yet keyed by id."""
    ids = [t.id for t in tracker_projects if t.id]
    keys = [t.key for t in tracker_projects]
    rows = list(Project.objects.filter(Q(tracker_id__in=ids) | Q(key__in=keys, tracker_id=None)))
    by_id = {p.tracker_id: p for p in rows if p.tracker_id}
    by_key = {p.key: p for p in rows if not p.tracker_id}
    found = {}
    for t in tracker_projects:
        mirror = by_id.get(t.id) if t.id else None
        if mirror is None:
            mirror = by_key.pop(t.key, None)
        if mirror is not None:
            found[t.id or t.key] = mirror
    return found


def _free_key(key: str, tracker_id: str) -> None:
    """Another mirror holding `key` under another tracker id: that project's key changed
    since (Jira lets a new project take an old key), so it is read again by its id and
    follows; gone from the tracker, it keeps its registers under a key of its own."""
    other = Project.objects.filter(key=key).exclude(tracker_id=tracker_id).first()
    if other is None:
        return
    current = get_tracker().get_project(other.tracker_id) if other.tracker_id else None
    new_key = current.key if current and current.key != key else f"{key}_{other.pk}"[:32]
    _rename(other, new_key)


def _rename(project: Project, new_key: str, former: Collection[str] = ()) -> None:
    old_key = project.key
    project.former_keys = sorted({*(project.former_keys or []), old_key, *former} - {new_key})
    project.key = new_key
    project.save(update_fields=["key", "former_keys"])
    audit.record(
        actor_account_id="",
        kind="project.key_changed",
        target_type="project",
        target_id=project.pk,
        project_key=new_key,
        changes={"key": {"before": old_key, "after": new_key}},
    )


def sync_project(tracker_project: TrackerProject, existing: Project | None = None) -> Project:
    """The governance mirror of a tracker project, created or refreshed as needed. Mirrors are
    keyed by the tracker's project id: a project whose key changed keeps its mirror (and its
    registers), which takes the new key and keeps the old ones as redirects."""
    t = tracker_project
    if existing is None:
        existing = _mirrors_of([t]).get(t.id or t.key)
    if existing is None:
        with transaction.atomic():
            if t.id:
                _free_key(t.key, t.id)
            project, _ = Project.objects.get_or_create(
                key=t.key,
                defaults={
                    "tracker_id": t.id or None,
                    "name": t.name,
                    "lead_account_id": t.lead_account_id,
                    "former_keys": sorted(set(t.former_keys) - {t.key}),
                },
            )
        return project
    fields = []
    if t.id and existing.tracker_id != t.id:
        existing.tracker_id = t.id
        fields.append("tracker_id")
    if existing.key != t.key:
        with transaction.atomic():
            _free_key(t.key, t.id or existing.tracker_id or "")
            if fields:
                existing.save(update_fields=fields)
                fields = []
            _rename(existing, t.key, t.former_keys)
    elif set(t.former_keys) - set(existing.former_keys or []) - {t.key}:
        existing.former_keys = sorted({*(existing.former_keys or []), *t.former_keys} - {t.key})
        fields.append("former_keys")
    if (existing.name, existing.lead_account_id) != (t.name, t.lead_account_id):
        existing.name = t.name
        existing.lead_account_id = t.lead_account_id
        fields += ["name", "lead_account_id"]
    if existing.tracker_deleted_at is not None:
        existing.tracker_deleted_at = None
        fields.append("tracker_deleted_at")
    if fields:
        existing.save(update_fields=fields)  # one UPDATE: atomic as it is
    return existing


def mirror_for_key(key: str) -> Project | None:
    """The mirror a URL's key names: the project with that key now, else the one that had it
    before (its URLs redirect to the current key)."""
    project = Project.objects.filter(key=key).first()
    if project is not None:
        return project
    candidates = Project.objects.filter(former_keys__icontains=f'"{key}"')
    return next((p for p in candidates if key in (p.former_keys or [])), None)


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
    memo = _memo(request)
    key = ("caller", user.pk, project.pk)
    if key in memo:
        return memo[key]
    if can_browse is None:
        can_browse = get_tracker().can_browse(user.account_id, project.key)
    group = _site_settings(memo).governance_group
    can_view = _may_view(user, project, can_browse, group, lambda: _in_group(user, group, memo))
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


def _may_view(
    user: User, project: Project, can_browse: bool, group: str, in_group: Callable[[], bool]
) -> bool:
    """The view rule: browsing the project in the tracker and, once a governance group is
    set, membership of the project's steering committee or of that group (`in_group()`,
    asked only when needed)."""
    if not can_browse or not group:
        return bool(can_browse)
    return user.account_id in (project.steering_account_ids or []) or in_group()


def _caller(
    user: User, project: Project, can_view: bool, site_admin: bool, nominated: Any
) -> Caller:
    """The caller's role from the gate's answers (`caller_for`; a list's rows share the
    request-wide ones: the group, membership of it, site administration)."""
    lead = project.lead_account_id
    return Caller(
        user=user,
        project=project,
        can_view=can_view,
        is_site_admin=site_admin,
        is_lead=bool(lead) and lead == user.account_id,
        is_nominated_editor=bool(nominated),
    )


def _renamed_in_tracker(mirror: Project | None) -> TrackerProject | None:
    """The project as the tracker has it now, when its key is no longer the mirror's."""
    if mirror is None or not mirror.tracker_id:
        return None
    try:
        current = get_tracker().get_project(mirror.tracker_id)
    except TrackerError:
        return None
    return current if current is not None and current.key != mirror.key else None


def _holder_of(key: str) -> TrackerProject | None:
    """The tracker project whose key is `key` now (not one that had it before), if any."""
    try:
        current = get_tracker().get_project(key)
    except TrackerError:
        return None
    return current if current is not None and current.key == key else None


# --- the gate's statements, compiled once per process ---------------------------------------
#
# Building the gate's statement with the ORM (some forty sub-selects) and compiling it to SQL
# cost more than running it. Each statement's shape is compiled once per process and
# database, with stand-ins for the two values a request binds (the person's account id and
# the project key); a request binds them and runs the SQL. Nothing the statement reads is
# kept: every answer is read fresh on every request.

_ACCOUNT = "\x00gate account\x00"
_KEY = "\x00gate key\x00"
_statements: dict[tuple, "_Statement"] = {}


@dataclass(frozen=True)
class _Statement:
    """One gate statement, compiled: its SQL and parameters (with the stand-ins), and where
    its rows carry the model's columns, the gate's answers and the site settings' columns
    (as text, parsed once a request, not once a row)."""

    alias: str
    sql: str
    params: tuple
    make: Callable[[str, list], Any]
    model_columns: tuple[int, ...]
    gate_names: tuple[str, ...]
    gate_columns: tuple[int, ...]
    site_columns: tuple[int, ...]
    converters: tuple[tuple[int, tuple, Any], ...]

    def run(self, account_id: str, key: str = "") -> list[tuple[Any, dict, tuple | None]]:
        """The statement's rows for this person (and key): (model instance, the gate's
        answers, the site settings' texts on the first row only)."""
        params = tuple(
            account_id if p == _ACCOUNT else key if p == _KEY else p for p in self.params
        )
        connection = connections[self.alias]
        with connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            raw = cursor.fetchall()
        make, alias, names = self.make, self.alias, self.gate_names
        model_columns, gate_columns = self.model_columns, self.gate_columns
        converters = self.converters
        result = []
        for n, row in enumerate(raw):
            if converters:
                row = list(row)
                for column, functions, expression in converters:
                    value = row[column]
                    if value is not None:
                        for function in functions:
                            value = function(value, expression, connection)
                        row[column] = value
            instance = make(alias, [row[c] for c in model_columns])
            gate = {name: row[c] for name, c in zip(names, gate_columns, strict=True)}
            site = tuple(row[c] for c in self.site_columns) if n == 0 else None
            result.append((instance, gate, site))
        return result


def _json_list_or_value(value, expression, connection):
    """A model's JSON column, parsed: the empty list (most rows) without the parser."""
    return [] if value == "[]" else json.loads(value)


def _datetime_from_text(value, expression=None, connection=None) -> datetime.datetime:
    """A date and time read as text: PostgreSQL's carries its offset ("+00"), SQLite's is
    UTC. Python's own ISO parser, not the driver's (one a row of a thousand-row list)."""
    parsed = datetime.datetime.fromisoformat(value)
    if settings.USE_TZ and parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed


def _maker(model) -> Callable[[str, list], Any]:
    """How a statement's row becomes a model instance: `from_db`, or, when nothing listens
    to the model's init signals, the instance's attributes set directly (what `__init__`
    does with every field given, without its per-argument checks)."""
    if pre_init.has_listeners(model) or post_init.has_listeners(model):
        return lambda alias, values: model.from_db(alias, None, values)
    attnames = tuple(field.attname for field in model._meta.concrete_fields)
    new = model.__new__

    def make(alias, values):
        instance = new(model)
        instance.__dict__.update(zip(attnames, values, strict=True))
        state = instance._state = ModelState()
        state.adding, state.db = False, alias
        return instance

    return make


def _compile(queryset, gate_names: Collection[str], site_names: Collection[str]) -> _Statement:
    """Compile a gate queryset (the model's rows, annotated with the gate's answers and the
    site settings' texts) once. Its date-time columns are read as text (`_datetime_from_text`)."""
    model = queryset.model
    fields = model._meta.concrete_fields
    texts = {
        f"gate_text_{field.attname}": Cast(field.attname, TextField())
        for field in fields
        if isinstance(field, DateTimeField)
    }
    columns = [
        f"gate_text_{field.attname}" if isinstance(field, DateTimeField) else field.attname
        for field in fields
    ]
    queryset = queryset.annotate(**texts).values_list(*columns, *gate_names, *site_names)
    compiler = queryset.query.get_compiler(using=queryset.db)
    sql, params = compiler.as_sql()
    assert _ACCOUNT not in sql and _KEY not in sql, "the stand-ins must be parameters"
    names = list(queryset._fields)  # a values_list's columns come in the order it names
    assert len(names) == len(compiler.select), "one column for each name"
    index = {name: n for n, name in enumerate(names)}
    converters = {
        column: (tuple(functions), expression)
        for column, (functions, expression) in compiler.get_converters(
            [expression for expression, _, _ in compiler.select]
        ).items()
        if names[column] not in site_names  # parsed once, from the first row (`_site_from`)
    }
    for column, name in enumerate(names):
        expression = compiler.select[column][0]
        field = getattr(expression, "target", None)
        if name in gate_names and isinstance(expression.output_field, BooleanField):
            # The gate's yes/no answers are read through bool() (SQLite's 0/1 as they come).
            converters.pop(column, None)
        elif name in texts:
            converters[column] = ((_datetime_from_text,), expression)
        elif isinstance(field, JSONField) and field.model is model and field.decoder is None:
            converters[column] = ((_json_list_or_value,), expression)
    return _Statement(
        alias=queryset.db,
        sql=sql,
        params=tuple(params),
        make=_maker(model),
        model_columns=tuple(index[name] for name in columns),
        gate_names=tuple(gate_names),
        gate_columns=tuple(index[name] for name in gate_names),
        site_columns=tuple(index[name] for name in site_names),
        converters=tuple(
            (column, functions, expression)
            for column, (functions, expression) in sorted(converters.items())
        ),
    )


def _site_texts() -> dict:
    """The site settings row's columns, each as its text: the same on every row of a list,
    so each row carries text only and the request parses it once (`_site_from`)."""
    site = SiteSettings.objects.filter(pk=1)
    return {
        f"gate_site_{field.attname}": Subquery(
            site.annotate(gate_text=Cast(field.attname, TextField())).values("gate_text")[:1]
        )
        for field in SiteSettings._meta.concrete_fields
    }


def _site_value(field, text: str | None):
    if text is None:
        return None
    if isinstance(field, JSONField):
        return field.from_db_value(text, None, None)
    if isinstance(field, DateTimeField):
        return _datetime_from_text(text)
    if isinstance(field, BooleanField):
        return text.lower() in ("1", "t", "true")
    return field.to_python(text)


def _site_from(texts: tuple | None, alias: str) -> SiteSettings:
    """The site settings row from the texts a gate statement read (the row is made when
    there is none yet)."""
    if texts is None or texts[0] is None:
        return SiteSettings.load()
    fields = SiteSettings._meta.concrete_fields
    values = [_site_value(field, text) for field, text in zip(fields, texts, strict=True)]
    return SiteSettings.from_db(alias, None, values)


def _statement(shape: str, tracker: Any, account_id: str, build) -> _Statement:
    """The statement of this shape for this tracker, compiled by `build(stand_in)` the first
    time in the process (per database)."""
    alias = router.db_for_read(Project)
    cache_key = (alias, connections[alias].vendor, shape, type(tracker), bool(account_id))
    statement = _statements.get(cache_key)
    if statement is None:
        statement = build(_ACCOUNT if account_id else "")
        _statements[cache_key] = statement
    return statement


def _gate_queryset(account_id: str, tracker: Any) -> tuple[Any, list[str], list[str]]:
    """The access gate's statement (docs/decisions/0080, "The access gate in one statement"):
    governance project rows annotated with everything the gate decides from: the site
    settings row, the caller's nomination, and the tracker's part (the local tracker's
    browse, lead, site-admin and group answers; Jira's grant, its other answers coming from
    Jira's cache). With the names of the gate's answers and of the site settings' texts."""
    site_texts = _site_texts()
    annotations = dict(site_texts)
    annotations["gate_nominated"] = Exists(
        EditorNomination.objects.filter(project_id=OuterRef("pk"), account_id=account_id)
    )
    group = Subquery(SiteSettings.objects.filter(pk=1).values("governance_group")[:1])
    annotations.update(tracker.gate_expressions(account_id, group))
    gate_names = [name for name in annotations if name not in site_texts]
    return Project.objects.annotate(**annotations), gate_names, list(site_texts)


def _gate_for_key(user: User, tracker: Any, key: str) -> list[tuple[Project, dict, tuple]]:
    """The gate's one statement for the project whose mirror holds `key` (no row or one)."""

    def build(account_id):
        queryset, gate_names, site_names = _gate_queryset(account_id, tracker)
        return _compile(queryset.filter(key=_KEY), gate_names, site_names)

    return _statement("project", tracker, user.account_id, build).run(user.account_id, key)


def _gate_for_browsable(user: User, tracker: Any) -> list[tuple[Project, dict, tuple]]:
    """The gate's one statement for every project the person browses in the local tracker,
    each row with the number of those projects (`gate_count`: a mirror missing tells)."""

    def build(account_id):
        queryset, gate_names, site_names = _gate_queryset(account_id, tracker)
        keys, count = tracker.gate_browsable_keys(account_id)
        queryset = queryset.filter(key__in=keys).annotate(gate_count=count)
        return _compile(queryset, [*gate_names, "gate_count"], site_names)

    return _statement("browsable", tracker, user.account_id, build).run(user.account_id)


def _gate_for_keys(user: User, tracker: Any, keys: Collection[str]) -> list[tuple]:
    """The gate's one statement for these projects (Jira's cached listing): its list of keys
    varies, so it is compiled each time."""
    queryset, gate_names, site_names = _gate_queryset(_ACCOUNT, tracker)
    statement = _compile(queryset.filter(key__in=list(keys)), gate_names, site_names)
    return statement.run(user.account_id)


def _remember_gate(
    user: User, site: tuple | None, alias: str | None, gate: Any, memo: dict
) -> None:
    """Keep the statement's request-wide answers (site settings, site admin, group) in the
    request's memo, for the rest of the request to read without asking again."""
    if "site_settings" not in memo:
        memo["site_settings"] = _site_from(site, alias or "default")
    admin_key = ("site_admin", user.pk)
    if admin_key not in memo:
        memo[admin_key] = bool(user.is_superuser) or gate.is_site_admin()
    group = memo["site_settings"].governance_group
    if group and ("group", user.pk, group) not in memo:
        memo[("group", user.pk, group)] = gate.is_group_member(group)


def _gated_project(
    request: HttpRequest,
    user: User,
    row: tuple[Project, dict, tuple | None],
    gate: Any,
    tracker_project: Any,
) -> tuple[Project, Caller]:
    """The caller's role on a gate row, with the mirror refreshed from `tracker_project`."""
    mirror, values, site = row
    _remember_gate(user, site, mirror._state.db, gate, _memo(request))
    project = sync_project(tracker_project, mirror) if tracker_project is not None else mirror
    caller = caller_for(
        user, project, request=request, can_browse=True, nominated=values["gate_nominated"]
    )
    return project, caller


def project_for(request: HttpRequest, key: str) -> tuple[Project, Caller]:
    """The project and the caller's role on it; NotFound (404) when they may not view it,
    so a hidden project's existence is never revealed.

    One SQL statement when the project's mirror holds the key (`_gate_for_key`); the first
    sight of a project, a former key (Moved) and a refusal go the long way
    (`_project_for_first_sight`). A key no project can have (`cleaning.project_key`: NUL, a
    lone surrogate, a noncharacter, past the column) is 404 before any query."""
    if cleaning.project_key(key)[1]:
        raise NotFound("No project with that key that you can see.")
    user = request_user(request)
    tracker = get_tracker()
    if not hasattr(tracker, "gate_expressions"):
        return _project_for_first_sight(request, user, key)
    rows = _gate_for_key(user, tracker, key)
    if not rows:
        return _project_for_first_sight(request, user, key)
    row = rows[0]
    mirror, values, _ = row
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
        if tracker_project.id and mirror.tracker_id and tracker_project.id != mirror.tracker_id:
            # Another tracker project holds the key now (this one's key changed).
            return _project_for_first_sight(request, user, key)
    project, caller = _gated_project(request, user, row, gate, tracker_project)
    if not caller.can_view:
        raise NotFound(f"No project {key} that you can see.")
    return project, caller


def _project_for_first_sight(request: HttpRequest, user: User, key: str) -> tuple[Project, Caller]:
    """The long way: the first sight of a project (its mirror is created), a key that is
    not the mirror's (a former key: Moved; a key changed in the tracker: followed), and
    every refusal (which must not tell a former key from an unknown one)."""
    tracker = get_tracker()
    mirror = mirror_for_key(key)
    renamed = None
    if not tracker.can_browse(user.account_id, mirror.key if mirror is not None else key):
        # Refused, unless the key changed in the tracker since the mirror last saw it.
        renamed = _renamed_in_tracker(mirror)
        if renamed is None or not tracker.can_browse(user.account_id, renamed.key):
            raise NotFound(f"No project {key} that you can see.")
    try:
        # A known mirror is read by the tracker's id, so a key changed since is followed.
        asked = mirror.tracker_id if mirror is not None and mirror.tracker_id else key
        tracker_project = renamed or tracker.get_project(asked)
    except TrackerError:
        # The page renders from the local mirror, once browsing is confirmed (from the cache).
        if mirror is None:
            raise
        project = mirror
    else:
        if tracker_project is None:
            raise NotFound(f"No project {key} that you can see.")
        project = sync_project(tracker_project, mirror)
        if project.key != (renamed or tracker_project).key:
            raise NotFound(f"No project {key} that you can see.")
        browsed = mirror.key if mirror is not None else key
        if (
            renamed is None
            and project.key != browsed
            and not tracker.can_browse(user.account_id, project.key)
        ):
            raise NotFound(f"No project {key} that you can see.")
    if project.key != key:
        # The key named moved on; unless another project has taken it since, redirect.
        holder = _holder_of(key)
        if holder is not None and tracker.can_browse(user.account_id, key):
            project = sync_project(holder)
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
    """The project's nominated editors (one query): `change_duty`'s `editor_account_ids` for
    many answers in one write (an import's change requests)."""
    return set(
        EditorNomination.objects.filter(project_id=project.pk).values_list("account_id", flat=True)
    )


def may_browse(account_id: str, project: Project) -> bool:
    """Whether a person other than the caller can browse the project in the tracker: who may
    be named a change's proposer (and, in the editors list, an editor)."""
    return get_tracker().can_browse(account_id, project.key)


def require(allowed: bool, message: str) -> None:
    """Refuse with 403 unless `allowed` (a `Caller` property or method result)."""
    if not allowed:
        raise Forbidden(message)


def viewable_projects(request: HttpRequest) -> list[tuple[Project, Caller]]:
    """Every project the user can view, with their role: one SQL statement once the mirrors
    exist (`_gate_for_browsable`, `_gate_for_keys`), a constant number the first time."""
    user = request_user(request)
    tracker = get_tracker()
    if hasattr(tracker, "gate_browsable_keys"):
        rows = _gate_for_browsable(user, tracker)
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
            rows = _gate_for_keys(user, tracker, by_key)
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
    rows: list[tuple[Project, dict, tuple | None]],
    listing: dict | None,
) -> list[tuple[Project, Caller]] | None:
    """The gate rows' callers; None when a mirror's key is held by another tracker project
    now (a key changed in the tracker: the long way follows it)."""
    stale = []
    gates = []
    for row, values, _ in rows:
        gate = tracker.gate(user.account_id, values)
        t = listing[row.key] if listing is not None else gate.project(row.key)
        if t.id and row.tracker_id and t.id != row.tracker_id:
            return None
        if (row.name, row.lead_account_id, row.tracker_id) != (
            t.name,
            t.lead_account_id,
            row.tracker_id or t.id or None,
        ):
            row.name, row.lead_account_id = t.name, t.lead_account_id
            row.tracker_id = row.tracker_id or t.id or None
            stale.append(row)
        gates.append(gate)
    if stale:
        Project.objects.bulk_update(stale, ["name", "lead_account_id", "tracker_id"])
    result = []
    memo = _memo(request)
    # The request-wide answers are the same on every row (uncorrelated sub-selects): read
    # from the first row, once; each row adds its own (browse is given by the list, the
    # nomination, the lead and the steering committee).
    first, _, site = rows[0]
    _remember_gate(user, site, first._state.db, gates[0], memo)
    group = memo["site_settings"].governance_group
    in_group = bool(group) and _in_group(user, group, memo)
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
    tracker_projects = get_tracker().browsable_projects(user.account_id)
    if not tracker_projects:
        return []

    def ident(t: TrackerProject) -> str:
        return t.id or t.key

    existing = _mirrors_of(tracker_projects)
    missing = [t for t in tracker_projects if ident(t) not in existing]
    moved = [
        t for t in tracker_projects if ident(t) in existing and existing[ident(t)].key != t.key
    ]
    for t in moved:
        # Rare (a key changed in the tracker): one project at a time, as on its own page.
        existing[ident(t)] = sync_project(t, existing[ident(t)])
    if missing:
        taken = set(
            Project.objects.filter(key__in=[t.key for t in missing]).values_list("key", flat=True)
        )
        for t in [t for t in missing if t.key in taken]:
            existing[ident(t)] = sync_project(t)  # a stale mirror holds the key: freed first
        fresh = [t for t in missing if t.key not in taken]
        Project.objects.bulk_create(
            [
                Project(
                    key=t.key,
                    tracker_id=t.id or None,
                    name=t.name,
                    lead_account_id=t.lead_account_id,
                )
                for t in fresh
            ],
            ignore_conflicts=True,
        )
        created = {p.key: p for p in Project.objects.filter(key__in=[t.key for t in fresh])}
        existing.update({ident(t): created[t.key] for t in fresh if t.key in created})
    stale = []
    for t in tracker_projects:
        project = existing[ident(t)]
        if (project.name, project.lead_account_id, project.tracker_id) != (
            t.name,
            t.lead_account_id,
            t.id or project.tracker_id,
        ):
            project.name, project.lead_account_id = t.name, t.lead_account_id
            project.tracker_id = t.id or project.tracker_id
            stale.append(project)
    if stale:
        Project.objects.bulk_update(stale, ["name", "lead_account_id", "tracker_id"])
    nominated = set(
        EditorNomination.objects.filter(
            account_id=user.account_id, project_id__in=[p.pk for p in existing.values()]
        ).values_list("project_id", flat=True)
    )
    result = []
    for t in tracker_projects:
        project = existing[ident(t)]
        caller = caller_for(
            user, project, request=request, can_browse=True, nominated=project.pk in nominated
        )
        if caller.can_view:
            result.append((project, caller))
    return result
