"""The access gate's statements: the SQL the gate (`governance.permissions`) reads its answers
with, one statement a request, and nothing else.

Building the gate's statement with the ORM (some forty sub-selects) and compiling it to SQL
cost more than running it, so each statement's shape is compiled once per process and
database, with stand-ins for the two values a request binds (the person's account id and the
project key); a request binds them and runs the SQL on its own thread's connection
(`django.db.connections`). What is kept is SQL text and how to read its columns, keyed by
the database alias, its vendor, the statement's shape and the tracker's class: never a
connection, a cursor or an answer. Every answer is read fresh on every request. Only public
Django APIs: the queryset's compiler (`as_sql`, `get_converters`), `Model.from_db`,
`connections[alias].cursor()`."""

import datetime
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connections, router
from django.db.models import (
    BooleanField,
    DateTimeField,
    Exists,
    JSONField,
    Model,
    OuterRef,
    QuerySet,
    Subquery,
    TextField,
)
from django.db.models.functions import Cast
from django.http import HttpRequest

from governance.models import EditorNomination, Project, SiteSettings, User
from governance.tracker import get_tracker

ACCOUNT = "\x00gate account\x00"
KEY = "\x00gate key\x00"

Row = tuple[Any, dict[str, Any], tuple[Any, ...] | None]

# The compiled statements (SQL text and column readers; see the module's docstring). A few
# shapes per database: the project gate, the list gate, the site gate.
_STATEMENTS: dict[tuple[str, str, str, type, bool], "Statement"] = {}


@dataclass(frozen=True)
class Statement:
    """One gate statement, compiled: its SQL and parameters (with the stand-ins), and where
    its rows carry the model's columns, the gate's answers and the site settings' columns
    (as text, parsed once a request, not once a row)."""

    alias: str
    model: type[Model]
    field_names: tuple[str, ...]  # the model's concrete fields, as `Model.from_db` takes them
    sql: str
    params: tuple[Any, ...]
    model_columns: tuple[int, ...]
    gate_names: tuple[str, ...]
    gate_columns: tuple[int, ...]
    site_columns: tuple[int, ...]
    # (column, the gate's own readers or None, expression). None: Django's converters for
    # the expression, taken from the running request's connection (never kept here: the
    # backend's are bound to the connection that made them, which is another thread's).
    converters: tuple[tuple[int, tuple[Any, ...] | None, Any], ...]

    def run(self, account_id: str, key: str = "") -> list[Row]:
        """The statement's rows for this person (and key): (model instance, the gate's
        answers, the site settings' texts on the first row only)."""
        params = tuple(account_id if p == ACCOUNT else key if p == KEY else p for p in self.params)
        connection = connections[self.alias]
        with connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            raw = cursor.fetchall()
        from_db, alias, names = self.model.from_db, self.alias, self.gate_names
        field_names = self.field_names
        model_columns, gate_columns = self.model_columns, self.gate_columns
        converters = [
            (column, functions if functions is not None else _django_converters(e, connection), e)
            for column, functions, e in self.converters
        ]
        converters = [(column, functions, e) for column, functions, e in converters if functions]
        result: list[Row] = []
        for n, row in enumerate(raw):
            if converters:
                row = list(row)
                for column, functions, expression in converters:
                    value = row[column]
                    if value is not None:
                        for function in functions:
                            value = function(value, expression, connection)
                        row[column] = value
            instance = from_db(alias, field_names, [row[c] for c in model_columns])
            gate = {name: row[c] for name, c in zip(names, gate_columns, strict=True)}
            site = tuple(row[c] for c in self.site_columns) if n == 0 else None
            result.append((instance, gate, site))
        return result


def _django_converters(expression: Any, connection: Any) -> tuple[Any, ...]:
    """What Django's compiler applies to `expression`'s column, for `connection`."""
    return tuple(
        connection.ops.get_db_converters(expression) + expression.get_db_converters(connection)
    )


def _json_list_or_value(value: str, expression: Any, connection: Any) -> Any:
    """A model's JSON column, parsed: the empty list (most rows) without the parser."""
    return [] if value == "[]" else json.loads(value)


def _datetime_from_text(
    value: str, expression: Any = None, connection: Any = None
) -> datetime.datetime:
    """A date and time read as text: PostgreSQL's carries its offset ("+00"), SQLite's is
    UTC. Python's own ISO parser, not the driver's (one a row of a thousand-row list)."""
    parsed = datetime.datetime.fromisoformat(value)
    if settings.USE_TZ and parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed


def compile_statement(
    queryset: QuerySet[Any], gate_names: Collection[str], site_names: Collection[str]
) -> Statement:
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
    names = [*columns, *gate_names, *site_names]  # values_list keeps the order it is given
    queryset = queryset.annotate(**texts).values_list(*names)
    compiler = queryset.query.get_compiler(using=queryset.db)
    sql, params = compiler.as_sql()
    assert ACCOUNT not in sql and KEY not in sql, "the stand-ins must be parameters"
    assert len(names) == len(compiler.select), "one column for each name"
    index = {name: n for n, name in enumerate(names)}
    converters: dict[int, tuple[tuple[Any, ...] | None, Any]] = {
        column: (None, expression)
        for column, (_, expression) in compiler.get_converters(
            [expression for expression, _, _ in compiler.select]
        ).items()
        if names[column] not in site_names  # parsed once, from the first row (`site_from`)
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
    return Statement(
        alias=queryset.db,
        model=model,
        field_names=tuple(field.attname for field in fields),
        sql=sql,
        params=tuple(params),
        model_columns=tuple(index[name] for name in columns),
        gate_names=tuple(gate_names),
        gate_columns=tuple(index[name] for name in gate_names),
        site_columns=tuple(index[name] for name in site_names),
        converters=tuple(
            (column, functions, expression)
            for column, (functions, expression) in sorted(converters.items())
        ),
    )


def _site_texts() -> dict[str, Any]:
    """The site settings row's columns, each as its text: the same on every row of a list,
    so each row carries text only and the request parses it once (`site_from`)."""
    site = SiteSettings.objects.filter(pk=1)
    return {
        f"gate_site_{field.attname}": Subquery(
            site.annotate(gate_text=Cast(field.attname, TextField())).values("gate_text")[:1]
        )
        for field in SiteSettings._meta.concrete_fields
    }


def _site_value(field: Any, text: str | None) -> Any:
    if text is None:
        return None
    if isinstance(field, JSONField):
        # Django's JSONField reads neither the expression nor the connection for a text.
        return field.from_db_value(text, None, None)  # type: ignore[arg-type]
    if isinstance(field, DateTimeField):
        return _datetime_from_text(text)
    if isinstance(field, BooleanField):
        return text.lower() in ("1", "t", "true")
    return field.to_python(text)


def site_from(texts: tuple[Any, ...] | None) -> SiteSettings:
    """The site settings row from the texts a gate statement read (the defaults while none
    is stored)."""
    if texts is None:
        return SiteSettings.read()
    if texts[0] is None:  # the statement read no row: none is stored yet
        return SiteSettings(pk=1)
    fields = SiteSettings._meta.concrete_fields
    values = [_site_value(field, text) for field, text in zip(fields, texts, strict=True)]
    names = [field.attname for field in fields]
    return SiteSettings.from_db(router.db_for_read(SiteSettings), names, values)


def statement(
    shape: str, tracker: Any, account_id: str, build: Callable[[str], Statement]
) -> Statement:
    """The statement of this shape for this tracker, compiled by `build(stand_in)` the first
    time in the process (per database)."""
    alias = router.db_for_read(Project)
    cache_key = (alias, connections[alias].vendor, shape, type(tracker), bool(account_id))
    found = _STATEMENTS.get(cache_key)
    if found is None:
        found = _STATEMENTS[cache_key] = build(ACCOUNT if account_id else "")
    return found


def gate_queryset(
    account_id: str, tracker: Any, *, every: bool = False
) -> tuple[QuerySet[Project], list[str], list[str]]:
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
    # `every`: the statement reads every project the person browses (the grants hashed once);
    # else one project (its grant looked up by the index: `gate_expressions`).
    annotations.update(tracker.gate_expressions(account_id, group, every=every))
    gate_names = [name for name in annotations if name not in site_texts]
    return Project.objects.annotate(**annotations), gate_names, list(site_texts)


def rows_for_key(account_id: str, tracker: Any, key: str) -> list[Row]:
    """The gate's one statement for the project whose mirror holds `key` (no row or one)."""

    def build(stand_in: str) -> Statement:
        queryset, gate_names, site_names = gate_queryset(stand_in, tracker)
        return compile_statement(queryset.filter(key=KEY), gate_names, site_names)

    return statement("project", tracker, account_id, build).run(account_id, key)


def rows_for_browsable(account_id: str, tracker: Any) -> list[Row]:
    """The gate's one statement for every project the person browses in the local tracker,
    each row with the number of those projects (`gate_count`: a mirror missing tells)."""

    def build(stand_in: str) -> Statement:
        queryset, gate_names, site_names = gate_queryset(stand_in, tracker, every=True)
        keys, count = tracker.gate_browsable_keys(stand_in)
        queryset = queryset.filter(key__in=keys).annotate(gate_count=count)
        return compile_statement(queryset, [*gate_names, "gate_count"], site_names)

    return statement("browsable", tracker, account_id, build).run(account_id)


def rows_for_keys(account_id: str, tracker: Any, keys: Collection[str]) -> list[Row]:
    """The gate's one statement for these projects (Jira's cached listing): its list of keys
    varies, so it is compiled each time."""
    queryset, gate_names, site_names = gate_queryset(ACCOUNT, tracker)
    compiled = compile_statement(queryset.filter(key__in=list(keys)), gate_names, site_names)
    return compiled.run(account_id)


def site_rows(account_id: str, tracker: Any, expressions: Any) -> list[Row]:
    """The site-wide part of the gate: the site settings row with the tracker's answers
    (`expressions(account_id, group)`: site administrator, member of the group)."""

    def build(stand_in: str) -> Statement:
        site = SiteSettings.objects.filter(pk=1)
        group = Subquery(site.values("governance_group")[:1])
        answers = expressions(stand_in, group)
        return compile_statement(site.annotate(**answers), list(answers), ())

    return statement("site", tracker, account_id, build).run(account_id)


# --- the request's memo of the gate's answers ----------------------------------------------
#
# A request asks the gate many times (the page, its menu, its links); the answers of its
# first statement are kept on the request, for that request only.


# The request's memo: the site settings under "site_settings", yes/no answers and callers
# under tuples that start with what they answer ("site_admin", "group", "caller", ...).
Memo = dict[Any, Any]


def request_memo(request: HttpRequest | None) -> Memo:
    """The request's memo of the gate's answers (none kept without a request)."""
    if request is None:
        return {}
    memo = getattr(request, "governance_memo", None)
    if memo is None:
        memo = {}
        request.governance_memo = memo  # type: ignore[attr-defined]  # the app's own, read above
    return memo


def memo_site_settings(memo: Memo) -> SiteSettings:
    if "site_settings" not in memo:
        memo["site_settings"] = SiteSettings.read()
    site: SiteSettings = memo["site_settings"]
    return site


def read_site_gate(user: User, memo: Memo) -> None:
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
    rows = site_rows(user.account_id, tracker, expressions)
    if not rows:
        return
    site, gate, _ = rows[0]
    memo["site_settings"] = site
    memo.setdefault(("site_admin", user.pk), bool(user.is_superuser) or bool(gate["gate_t_admin"]))
    if site.governance_group:
        memo.setdefault(("group", user.pk, site.governance_group), bool(gate["gate_t_group"]))


def memo_in_group(user: User, group: str, memo: Memo) -> bool:
    key = ("group", user.pk, group)
    if key not in memo:
        memo[key] = get_tracker().is_group_member(user.account_id, group)
    member: bool = memo[key]
    return member


def remember_gate(user: User, site: tuple[Any, ...] | None, gate: Any, memo: Memo) -> None:
    """Keep the statement's request-wide answers (site settings, site admin, group) in the
    request's memo, for the rest of the request to read without asking again."""
    if "site_settings" not in memo:
        memo["site_settings"] = site_from(site)
    admin_key = ("site_admin", user.pk)
    if admin_key not in memo:
        memo[admin_key] = bool(user.is_superuser) or gate.is_site_admin()
    group = memo["site_settings"].governance_group
    if group and ("group", user.pk, group) not in memo:
        memo[("group", user.pk, group)] = gate.is_group_member(group)
