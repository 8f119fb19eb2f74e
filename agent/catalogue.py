"""The assistant's action catalogue: one place that names every action, describes it for a
language model, declares its JSON Schema and whether it reads or writes, and runs it as the
caller through the existing selectors and services.

Every door (the API, the MCP tools, the Assistant page) goes through `run()`, which applies
both gates in order: the portfolio/agent gate first (403 `forbidden` with the reason), then,
inside each action, the per-project gate for every project it touches (a project the caller
cannot view answers 404 and is never named or counted). Validation, refusals, audit and
concurrency stay the services' own; writes are audited with the channel `agent`.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest
from jsonschema import Draft202012Validator

from governance import audit, cleaning, gatelist, permissions, specs
from governance.cleaning import NOT_BLANK_TEXT
from governance.errors import BadRequest, Forbidden, Moved, NotFound, ValidationFailed
from governance.models import Project, User

CHANNEL = "agent"
READ, WRITE = "read", "write"
DEFAULT_LIMIT, MAX_LIMIT = 20, 100


@dataclass
class Context:
    """Who runs an action, and through which client. `request` carries the user (an HTTP
    request of the API or the page, or one built for the caller by `request_for`)."""

    request: HttpRequest
    client: str = ""
    base_url: str = ""

    @property
    def user(self) -> User:
        return permissions.request_user(self.request)

    def link(self, path: str) -> str:
        return f"{self.base_url.rstrip('/')}{path}" if self.base_url else path


def request_for(user: User) -> HttpRequest:
    """A request standing for `user` outside HTTP (the MCP stdio server, tests)."""
    request = HttpRequest()
    request.user = user
    request.auth = user  # type: ignore[attr-defined]  # read by permissions.request_user
    request.method = "POST"
    return request


@dataclass(frozen=True)
class Hints:
    """What a client may know of an action before calling it (MCP tool annotations): whether
    it only reads; whether it may undo or end something for good (a client asks its person
    first); whether a second call with the same arguments changes nothing more; whether it
    reaches outside the app (never: the tracker is the app's own business)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = False


# The writes whose effect cannot be taken back in the app: a made decision can no longer be
# changed (only annotated); a change applied to the baseline moves it for good; the sponsor's
# decision on an exception approves its plan or kills the project, and closes the exception;
# the sponsor's decision at a gate is a made decision of the log (Stop kills the project).
IRREVERSIBLE = frozenset(
    {
        "record_decision_made",
        "apply_change_to_baseline",
        "decide_project_exception",
        "decide_gate_review",
    }
)
# The writes that set values (or end a state) rather than add a record: sent twice with the
# same arguments, the second changes nothing more (an act already done is refused).
IDEMPOTENT_WRITES = frozenset(
    {
        "update_risk",
        "update_work_package",
        "update_project_status",
        "record_decision_made",
        "apply_change_to_baseline",
    }
)


@dataclass(frozen=True)
class Action:
    name: str
    title: str
    description: str
    kind: str
    schema: dict[str, Any]
    function: Callable[[Context, dict[str, Any]], Any]
    # For a write: whether the caller's role on a project lets them use it there (default:
    # edit rights); the write is offered to those who may use it on some project they view.
    offered_to: Callable[[permissions.Caller], bool] | None = None
    # The gates a refused body must pass first (404, 403, 409, 412 before 422): called with
    # the unchecked arguments only when the schema refuses them.
    gate: Callable[[Context, dict[str, Any]], None] | None = None
    validator: Draft202012Validator = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        Draft202012Validator.check_schema(self.schema)
        # Formats (dates) are checked too: what the schema says is what is refused.
        validator = Draft202012Validator(
            self.schema, format_checker=Draft202012Validator.FORMAT_CHECKER
        )
        object.__setattr__(self, "validator", validator)

    @property
    def is_write(self) -> bool:
        return self.kind == WRITE

    @property
    def hints(self) -> Hints:
        if not self.is_write:
            return Hints(read_only=True, destructive=False, idempotent=True)
        return Hints(
            read_only=False,
            destructive=self.name in IRREVERSIBLE,
            idempotent=self.name in IDEMPOTENT_WRITES,
        )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "kind": self.kind,
            "inputSchema": self.schema,
        }


CATALOGUE: dict[str, Action] = {}
ActionFunction = Callable[[Context, dict[str, Any]], Any]


def action(
    name: str,
    *,
    title: str,
    kind: str,
    description: str,
    schema: dict[str, Any],
    gate: Callable[[Context, dict[str, Any]], None] | None = None,
    offered_to: Callable[[permissions.Caller], bool] | None = None,
) -> Callable[[ActionFunction], ActionFunction]:
    """Register the decorated function as an action of the catalogue. `gate`: for a write,
    the checks that come before the body's (see `run`). `offered_to`: for a write, who may
    use it on a project (default: its editors): a question of the caller's lead, editor and
    sponsor roles and of the person alone, which `available` asks of one project for each
    combination of those roles."""

    def register(function: ActionFunction) -> ActionFunction:
        if name in CATALOGUE:
            raise ValueError(f"Action {name} is registered twice.")
        full = {"type": "object", "additionalProperties": False, **schema}
        full.setdefault("properties", {})
        CATALOGUE[name] = Action(
            name=name,
            title=title,
            description=description,
            kind=kind,
            schema=full,
            function=function,
            offered_to=(offered_to or _edits) if kind == WRITE else None,
            gate=gate,
        )
        return function

    return register


# --- gates --------------------------------------------------------------------------------


def require_agent_access(request: HttpRequest) -> User:
    """The portfolio/agent gate: site administrators while no governance group is set, that
    group's members once one is. 401 without credentials, 403 with the reason."""
    user = permissions.request_user(request)
    if not permissions.has_portfolio_access(user, request):
        group = permissions.governance_group(request)
        raise Forbidden(
            f"The assistant is open to members of the governance group '{group}'."
            if group
            else "The assistant is open to site administrators until a governance group is set."
        )
    return user


def project(ctx: Context, key: Any) -> tuple[Project, permissions.Caller]:
    """The per-project gate: the project and the caller's role, 404 when they cannot view it
    (the message names only what the caller typed). A key no project can have is refused
    naming `projectKey` (the API's one key check, `cleaning.project_key`) before any query."""
    return project_of(ctx.request, key)


def project_of(request: HttpRequest, key: Any) -> tuple[Project, permissions.Caller]:
    """`project` for a request: what the actions and their forms name a project by."""
    if not isinstance(key, str) or not key.strip():
        raise ValidationFailed({"projectKey": ["Name a project key."]})
    checked, error = cleaning.project_key(key)
    if error or checked is None:
        raise ValidationFailed({"projectKey": [error or cleaning.PROJECT_KEY_MESSAGE]})
    try:
        return permissions.project_for(request, checked)
    except Moved as moved:
        # A key the project had before: the assistant goes on under the current key.
        return permissions.project_for(request, moved.new_key)


def _edits(caller: permissions.Caller) -> bool:
    return caller.can_edit


def available(request: HttpRequest) -> list[Action]:
    """The actions the caller may use: every read once past the agent gate; a write only when
    the caller may use it on at least one project they can view (most: they edit it; the
    sponsor's exception and gate decisions: they sponsor it)."""
    require_agent_access(request)
    # One caller for each combination of lead, editor and sponsor roles the person has
    # (`gatelist.role_callers`): an offer reads those roles and the person alone, so it answers
    # alike on every project of a combination (GET /assistant/ at 10,000 projects: a caller
    # made for each was 0.54-0.62 s, record 0307).
    callers = [caller for _, caller in gatelist.role_callers(request)]
    return [
        a
        for a in CATALOGUE.values()
        if a.offered_to is None or any(a.offered_to(caller) for caller in callers)
    ]


def get(name: str) -> Action:
    found = CATALOGUE.get(name)
    if found is None:
        raise NotFound(f"No action called {name!r}.")
    return found


def validate(action_: Action, arguments: Any) -> dict[str, Any]:
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise BadRequest("The arguments must be a JSON object.")
    refused = cleaning.refusals(arguments)
    if refused:  # what no field takes (a lone surrogate, NaN), before the schema's words
        raise ValidationFailed({path: [message] for path, message in sorted(refused.items())})
    fields: dict[str, list[str]] = {}
    for error in action_.validator.iter_errors(arguments):
        if error.validator == "required":
            missing = [name for name in error.validator_value if name not in error.instance]
            for name in missing:
                fields.setdefault(name, []).append("This field is required.")
            continue
        if error.validator == "additionalProperties":
            allowed = set(error.schema.get("properties", {}))
            for name in error.instance:
                if name not in allowed:
                    fields.setdefault(name, []).append("Unknown field.")
            continue
        path = ".".join(str(p) for p in error.absolute_path) or "arguments"
        message = _message(error)
        if message not in fields.get(path, []):
            fields.setdefault(path, []).append(message)
    if fields:
        raise ValidationFailed(fields)
    # JSON Schema counts 81.0 as an integer; the actions get 81.
    properties = action_.schema.get("properties", {})
    return {
        name: int(value)
        if isinstance(value, float)
        and "integer" in _types(properties.get(name, {}))
        and value.is_integer()
        else value
        for name, value in arguments.items()
    }


def _message(error: Any) -> str:
    """Words for a schema refusal. Required text (blank, or with control characters) is
    refused in the services' own words, from the one text cleaner."""
    schema = error.schema
    if (
        error.validator in ("minLength", "pattern")
        and schema.get("pattern") == NOT_BLANK_TEXT
        and isinstance(error.instance, str)
    ):
        _, message = cleaning.text(
            error.instance, max_length=schema.get("maxLength", len(error.instance)), required=True
        )
        if message:
            return message
    if error.validator == "maxLength" and isinstance(error.instance, str):
        return f"At most {error.validator_value:,} characters."  # never the text sent back
    cleaner = PATTERN_CLEANERS.get(schema.get("pattern")) if error.validator == "pattern" else None
    if cleaner is not None:
        _, message = cleaner(error.instance)
        if message:
            return message
    return str(error.message)


# A declared pattern says what a cleaner takes; a refusal is said in the cleaner's words.
PATTERN_CLEANERS: dict[str, Callable[[Any], tuple[object, cleaning.Error]]] = {
    specs.DATE_PATTERN: cleaning.iso_date,
    specs.DATE_PATTERN.removeprefix("^$|"): cleaning.iso_date,
    specs.AMOUNT_PATTERN: cleaning.signed_number,
}


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type", [])
    return [kind] if isinstance(kind, str) else list(kind)


def run(ctx: Context, name: str, arguments: Any, *, other_members: Iterable[str] = ()) -> Any:
    """Run one action as the caller: the agent gate, the arguments against the schema, then
    the action (which applies the per-project gate and calls the services). A refusal keeps
    the house order (401, 404, 403, 409, 412, then 422): arguments the schema refuses first
    go through the action's gate, so an unknown project answers 404 and a viewer 403.
    `other_members`: the members of the API's request body beside `arguments`, refused with
    the arguments (422, "Unknown field.") after the same gates."""
    require_agent_access(ctx.request)
    chosen = get(name)
    unknown = {member: ["Unknown field."] for member in other_members}
    try:
        try:
            arguments = validate(chosen, arguments)
        except ValidationFailed as refused:
            if unknown:
                raise ValidationFailed({**refused.fields, **unknown}) from None
            raise
        if unknown:
            raise ValidationFailed(unknown)
    except ValidationFailed:
        if chosen.gate is not None and isinstance(arguments, dict):
            chosen.gate(ctx, arguments)
        raise
    if chosen.is_write:
        with audit.via(CHANNEL, ctx.client):
            return chosen.function(ctx, arguments)
    return chosen.function(ctx, arguments)


def judge_caller(ctx: Context, name: str, arguments: Any) -> None:
    """The checks an action makes before its arguments' faults are told (the agent gate, then
    the action's own gate: 404, 403, 409, 412), for a door that refuses the arguments itself."""
    require_agent_access(ctx.request)
    chosen = get(name)
    if chosen.gate is not None and isinstance(arguments, dict):
        chosen.gate(ctx, arguments)


# --- results --------------------------------------------------------------------------------


# A cursor is an offset into a list; past this it is none an answer gave (and past a bigint
# the database cannot take it).
CURSOR_MAX = 1_000_000_000
CURSOR_MESSAGE = "Pass back the nextCursor of an earlier answer."


def cursor_start(cursor: Any) -> int:
    """The offset a `cursor` argument names (blank is 0); 422 naming `cursor` otherwise."""
    try:
        start = int(cursor or "0")
    except (TypeError, ValueError):
        start = -1
    if not 0 <= start <= CURSOR_MAX:
        raise ValidationFailed({"cursor": [CURSOR_MESSAGE]})
    return start


def page(items: list[Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """A list result: at most `limit` items from `cursor`, and the cursor of the next page."""
    limit = arguments.get("limit") or DEFAULT_LIMIT
    start = cursor_start(arguments.get("cursor"))
    chunk = items[start : start + limit]
    following = start + limit
    return {
        "items": chunk,
        "total": len(items),
        "nextCursor": str(following) if following < len(items) else None,
    }
