"""The JSON API (/api/v1): auth, the one error mapping, body parsing, and the kernel
endpoints. Each app's `api.router` is mounted by the site (config/api.py); no rule lives in an
endpoint."""

import copy
import logging
import math
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import CsrfViewMiddleware
from ninja import NinjaAPI, Router
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.openapi.schema import OpenAPISchema
from ninja.params import functions as params
from ninja.renderers import JSONRenderer
from ninja.security import APIKeyCookie, HttpBearer

from governance import (
    audit,
    cleaning,
    gatelist,
    oauth,
    paging,
    permissions,
    services,
    specs,
    throttling,
)
from governance.atlassian.context import act_for
from governance.atlassian.errors import SignInRequired
from governance.concurrency import View, etag, honours_if_match, read_if_match
from governance.errors import (
    BadRequest,
    DomainError,
    Forbidden,
    Internal,
    Moved,
    NotFound,
    PayloadTooLarge,
    Unauthenticated,
    Unavailable,
    UnsupportedMediaType,
    ValidationFailed,
    database_unavailable,
)
from governance.middleware import FORM_TYPES, request_id, unavailable_response
from governance.models import (
    AuditEntry,
    EditorNomination,
    Project,
    SiteSettings,
    SiteSettingsSpec,
    User,
)
from governance.people import resolve
from governance.permissions import Caller
from governance.tracker import TrackerError

MAX_BODY_DEPTH = cleaning.MAX_JSON_DEPTH
MAX_OFFSET = 1_000_000_000
logger = logging.getLogger("governance.api")


class BearerToken(HttpBearer):
    """Authorization: Bearer <personal API token>."""

    def authenticate(self, request: HttpRequest, token: str) -> User | None:
        user = throttling.bearer_user(request, token)
        if user is not None:
            act_for(user.account_id)
        elif oauth.user_for_access_token(request, token.strip()) is not None:
            raise Unauthenticated(
                "This token was given to an MCP client and works at /mcp only; the API takes a "
                "personal API token from your profile page."
            )
        return user


class _CsrfCheck(CsrfViewMiddleware):
    def _reject(self, request: HttpRequest, reason: str) -> str:
        return reason


def _no_view(request: HttpRequest) -> HttpResponse:
    """The view `_CsrfCheck` is given: never called (the check answers, never a view)."""
    raise AssertionError("never called")


class SessionCookie(APIKeyCookie):
    """The browser session; unsafe methods need the CSRF token (X-CSRFToken header)."""

    param_name = settings.SESSION_COOKIE_NAME

    def __init__(self) -> None:
        super().__init__(csrf=False)

    def authenticate(self, request: HttpRequest, key: str | None) -> User | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        if request.method not in ("GET", "HEAD", "OPTIONS", "TRACE"):
            check = _CsrfCheck(_no_view)
            check.process_request(request)
            reason = check.process_view(request, _no_view, (), {})
            if reason:
                raise Forbidden(f"CSRF check failed: {reason}. Send the X-CSRFToken header.")
        signed_in: User = user
        return signed_in


ERROR_CODES = [
    "bad_request",
    "unauthenticated",
    "forbidden",
    "not_found",
    "conflict",
    "frozen",
    "stale",
    "too_large",
    "unsupported_media_type",
    "validation",
    "gate",
    "throttled",
    "internal",
    "unavailable",
    "moved",
]
ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "enum": ERROR_CODES},
                "message": {"type": "string"},
                "fields": {
                    "type": "object",
                    "additionalProperties": {"type": "array", "items": {"type": "string"}},
                },
                "rows": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "row": {"type": "integer"},
                            "field": {"type": "string"},
                            "message": {"type": "string"},
                        },
                    },
                },
                "requestId": {"type": "string"},
            },
        }
    },
}
ERROR_DESCRIPTIONS = {
    "400": "bad_request: the body is not a JSON object, or a header or parameter is malformed",
    "401": "unauthenticated: no valid session or token",
    "403": "forbidden: the caller may view this but may not do it",
    "404": "not_found: no such resource, or the caller may not view it",
    "409": "conflict or frozen: not allowed in the current state",
    "412": "stale: the If-Match revision is not the stored one",
    "413": "too_large: the body is over the upload limit (DATA_UPLOAD_MAX_MEMORY_SIZE)",
    "415": "unsupported_media_type: a form or multipart body sent where JSON is read",
    "422": "validation or gate: the body or a parameter is refused, each field named",
    "429": "throttled: too many invalid tokens from this address (see Retry-After)",
    "500": "internal: an unexpected failure, with the request id",
}
UNSAFE = {"post", "put", "patch", "delete"}
IF_MATCH_PARAMETER = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": (
        'The ETag of the revision the change is based on (for example "3"), as a GET or the '
        "last write answered it; when it is no longer the stored one the write is refused with "
        "412 (stale) and nothing changes. Absent or `*`: no check."
    ),
    "schema": {"type": "string", "pattern": '^\\s*(\\*|(W/)?"[0-9]+")?\\s*$'},
}
ETAG_HEADER = {
    "description": (
        'The resource\'s revision (for example "3"; W/"3" when the answer is compressed): '
        "send it back as If-Match."
    ),
    "schema": {"type": "string"},
}
# Response schemas the operations name by reference (`component`), by name.
RESPONSE_COMPONENTS: dict[str, dict[str, Any]] = {}
FREE_OBJECT = {"type": "object", "additionalProperties": True}


def component(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Register a response schema under components/schemas; its reference."""
    RESPONSE_COMPONENTS[name] = schema
    return {"$ref": f"#/components/schemas/{name}"}


def list_of(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": schema}


def answers(
    schema: dict[str, Any] | None = None,
    *,
    etag: bool = False,
    content: dict[str, Any] | None = None,
    statuses: dict[int, dict[str, Any]] | None = None,
) -> Callable[[View], View]:
    """Declare an operation's success answer for the OpenAPI document: `schema` the JSON body
    of each of its 2xx answers (but 204), `statuses` one per status code, or `content` (media
    type -> schema) for a file; `etag`: the answer carries the resource's ETag. The handler's
    dict is returned as is (no response model re-serialises it: the list endpoints stay as
    fast, and tests validate real answers against these schemas)."""

    def mark(view: View) -> View:
        view.__dict__["answers"] = {
            "content": content or {"application/json": {"schema": schema}},
            "statuses": {
                str(code): {"application/json": {"schema": body}}
                for code, body in (statuses or {}).items()
            },
            "etag": etag,
        }
        return view

    return mark


class GovernanceAPI(NinjaAPI):
    """The API whose OpenAPI document also lists every operation's error answers, each with
    the one error body."""

    # Functions an app above the kernel registers to finish the document (the agent app lists
    # one path per action): called last, with the document.
    schema_hooks: list[Any] = []

    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> OpenAPISchema:
        # A copy: the bodies' schemas are module constants shared by several operations.
        schema = copy.deepcopy(super().get_openapi_schema(*args, **kwargs))
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        components["Error"] = ERROR_SCHEMA
        components["CleanJson"] = CLEAN_JSON_SCHEMA
        components["CleanJsonObject"] = CLEAN_JSON_OBJECT_SCHEMA
        components.update(copy.deepcopy(RESPONSE_COMPONENTS))
        honours = self._operations_honouring_if_match()
        declared = self._declared_answers()
        for item in schema.get("paths", {}).values():
            for method, operation in item.items():
                _document_answer(operation, declared.get(operation.get("operationId")))
                if method in UNSAFE and operation.get("operationId") in honours:
                    parameters = operation.setdefault("parameters", [])
                    parameters.append(copy.deepcopy(IF_MATCH_PARAMETER))
        for item in schema.get("paths", {}).values():
            for operation in item.values():
                _document_text(operation)
        for item in schema.get("paths", {}).values():
            for method, operation in item.items():
                if method not in UNSAFE | {"get"}:
                    continue
                codes = [400, 401, 403, 404, 422, 429, 500]
                if method in UNSAFE:
                    codes.extend([409, 413])
                    if "application/json" in operation.get("requestBody", {}).get("content", {}):
                        codes.append(415)
                if method in UNSAFE and operation.get("operationId") in honours:
                    codes.append(412)
                responses = operation.setdefault("responses", {})
                for code in sorted(codes):
                    responses.setdefault(
                        code,
                        {
                            "description": ERROR_DESCRIPTIONS[str(code)],
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Error"}
                                }
                            },
                        },
                    )
        for hook in self.schema_hooks:
            hook(schema)
        return schema

    def create_response(
        self,
        request: HttpRequest,
        data: Any,
        *,
        status: int | None = None,
        temporal_response: HttpResponse | None = None,
    ) -> HttpResponse:
        """Every answer; a successful one also carries `warnings` when the spec's lenient
        fields coerced what was sent: [{field, received, stored, message}]."""
        status = temporal_response.status_code if temporal_response else status
        notes = cleaning.coercions()
        if notes and status is not None and status < 300 and isinstance(data, dict):
            data = {**data, "warnings": list(notes)}
        return super().create_response(
            request, data, status=status, temporal_response=temporal_response
        )

    def _declared_answers(self) -> dict[str, dict[str, Any]]:
        """Operation id -> what its view declares it answers (`answers`)."""
        found = {}
        for _prefix, router in self._routers:
            for path_view in router.path_operations.values():
                for operation in path_view.operations:
                    declared = getattr(operation.view_func, "answers", None)
                    if declared is not None:
                        key = operation.operation_id or self.get_openapi_operation_id(operation)
                        found[key] = declared
        return found

    def _operations_honouring_if_match(self) -> set[str]:
        """The operation ids whose view is marked `concurrency.honours_if_match` (it reads
        If-Match, and so may answer 412)."""
        found = set()
        for _prefix, router in self._routers:
            for path_view in router.path_operations.values():
                for operation in path_view.operations:
                    if getattr(operation.view_func, "honours_if_match", False):
                        found.add(
                            operation.operation_id or self.get_openapi_operation_id(operation)
                        )
        return found


# No control character (but tab and line breaks) and no Unicode noncharacter (written as the
# characters themselves, which every pattern dialect reads).
NO_CONTROL_CHARACTERS = (
    "^[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f" + "".join(cleaning.NONCHARACTER_LIST) + "]*$"
)
CLEAN_JSON = {"$ref": "#/components/schemas/CleanJson"}
# A body schema with none of these says nothing of its value: any value is taken.
ANY_VALUE_KEYS = {"type", "enum", "const", "$ref", "anyOf", "oneOf", "allOf", "not"}
# Any JSON value the body cleaner lets through: no control characters (but tab and line
# breaks) and no noncharacter in any text or any property name, at any depth. Where a body
# nests an object or a list whose members the document does not name, they are this. The
# rule holds at every depth, so the schema does: an object's members refer back to
# `CleanJsonObject` (OpenAPI 3.1 takes a recursive $ref). The recursion goes through that
# object only, the one form client generators take (openapi-python-client drops an
# operation whose body reaches a recursive union or list); lists directly within lists are
# spelt out `CLEAN_LIST_DEPTH` levels deep.
CLEAN_JSON_OBJECT = {"$ref": "#/components/schemas/CleanJsonObject"}
_CLEAN_TEXT = {"type": "string", "pattern": NO_CONTROL_CHARACTERS}
_CLEAN_SCALARS: list[dict[str, Any]] = [
    _CLEAN_TEXT,
    {"type": "number"},
    {"type": "boolean"},
    {"type": "null"},
]


# Lists directly within lists spelt out this deep; a list deeper still is said in words only
# (generated clients nest one function per level: 32 is past Python's indentation limit).
CLEAN_LIST_DEPTH = 4


def _clean_list(depth: int) -> dict[str, Any]:
    """A list of clean values, its lists directly within spelt out `depth` levels more."""
    if depth < 0:
        return {"type": "array", "items": {}}
    members: list[dict[str, Any]] = [*_CLEAN_SCALARS, CLEAN_JSON_OBJECT, _clean_list(depth - 1)]
    return {"type": "array", "items": {"anyOf": members}}


_CLEAN_VALUE: list[dict[str, Any]] = [
    *_CLEAN_SCALARS,
    _clean_list(CLEAN_LIST_DEPTH),
    CLEAN_JSON_OBJECT,
]
_CLEAN_RULE = (
    "No text in it, at any depth, nor any property name holds a control character (but tab "
    "and line breaks), a lone surrogate or a Unicode noncharacter (U+FDD0..U+FDEF, U+FFFE, "
    "U+FFFF and the last two of every plane): such a value is refused (422, the path named). "
    f"A body nests at most {cleaning.MAX_JSON_DEPTH} levels (deeper is refused, 400)."
)
CLEAN_JSON_SCHEMA = {"description": f"Any JSON value. {_CLEAN_RULE}", "anyOf": _CLEAN_VALUE}
CLEAN_JSON_OBJECT_SCHEMA = {
    "description": f"A JSON object of any members. {_CLEAN_RULE}",
    "type": "object",
    "propertyNames": {"pattern": NO_CONTROL_CHARACTERS},
    "additionalProperties": {"anyOf": _CLEAN_VALUE},
}


def _document_answer(operation: dict[str, Any], declared: dict[str, Any] | None) -> None:
    """Each success answer's body (but 204's) as the view declares it (`answers`), with the
    ETag header where the view sets one."""
    if declared is None:
        return
    for code, response in operation.get("responses", {}).items():
        if not str(code).startswith("2") or str(code) == "204":
            continue
        content = declared["statuses"].get(str(code), declared["content"])
        response["content"] = copy.deepcopy(content)
        if declared["etag"]:
            response.setdefault("headers", {})["ETag"] = dict(ETAG_HEADER)


def _document_text(operation: dict[str, Any]) -> None:
    """What every text input accepts, said in the document: in a JSON body, null wherever
    text is (it reads as empty, which clears an optional field); in a body and in the query,
    no control characters but tab and line breaks (they are refused with 422)."""
    enums = operation.pop("x-enums", {})
    for parameter in operation.get("parameters", []):
        if parameter.get("in") != "query":
            continue
        if parameter["name"] in enums:
            # A closed set of values, refused otherwise (422): said as an enum.
            parameter["schema"] = {"type": "string", "enum": list(enums[parameter["name"]])}
            continue
        schema = parameter.get("schema", {})
        for member in [schema, *schema.get("anyOf", [])]:
            if member.get("type") == "string" and "enum" not in member:
                member.setdefault("pattern", NO_CONTROL_CHARACTERS)
    contents = operation.get("requestBody", {}).get("content", {})
    form = contents.get("multipart/form-data")
    if form:  # field names too are refused with control characters
        form.get("schema", {}).setdefault("propertyNames", {"pattern": NO_CONTROL_CHARACTERS})
    content = contents.get("application/json")
    if content:
        document_body_text(content.get("schema", {}), nullable=True)


def document_body_text(schema: dict[str, Any], *, nullable: bool) -> dict[str, Any]:
    """Say, in a JSON body's schema (changed in place, and returned), what the text cleaner
    does: no control characters but tab and line breaks in text or in property names;
    `nullable`: null accepted wherever text is (the API's bodies read it as empty)."""
    stack = [(schema, False)]
    while stack:
        node, is_item = stack.pop()
        if not isinstance(node, dict):
            continue
        if not ANY_VALUE_KEYS & node.keys():
            # Any value (the spec's lenient fields): any clean one.
            node.update(CLEAN_JSON)
            continue
        kind = node.get("type")
        types = [kind] if isinstance(kind, str) else list(kind or [])
        if "string" in types and "enum" not in node:
            if (
                nullable
                and not is_item  # a list's members are not fields: null is no text there
                and "pattern" not in node  # a text of a given form (not blank, a key, a month)
                and "null" not in types
            ):
                node["type"] = [*types, "null"]
            if "format" not in node:
                node.setdefault("pattern", NO_CONTROL_CHARACTERS)
        if "object" in types:
            node.setdefault("propertyNames", {"pattern": NO_CONTROL_CHARACTERS})
            # Members it does not name: refused at the top of a body (body_schema's
            # `closed`), anything clean within.
            node.setdefault("additionalProperties", CLEAN_JSON)
        if "array" in types:
            node.setdefault("items", CLEAN_JSON)
        stack.extend((member, False) for member in node.get("properties", {}).values())
        stack.extend((member, is_item) for member in node.get("anyOf", []) + node.get("oneOf", []))
        if isinstance(node.get("items"), dict):
            stack.append((node["items"], True))
    return schema


class MoneyRenderer(JSONRenderer):
    """Ninja's JSON, with each amount in fixed-point notation (`cleaning.json_text`)."""

    def render(self, request: HttpRequest, data: Any, *, response_status: int) -> Any:
        return cleaning.json_text(data, cls=self.encoder_class, **self.json_dumps_params)


api = GovernanceAPI(
    title="Project governance API",
    version="1",
    description=(
        "Registers, business case, status and portfolio of tracker projects. "
        "Authenticate with `Authorization: Bearer <token>` (create one on your profile page) "
        "or the browser session with the X-CSRFToken header."
    ),
    auth=[BearerToken(), SessionCookie()],
    urls_namespace="api",
    docs_url="/docs",
    openapi_url="/openapi.json",
    renderer=MoneyRenderer(),
)


def _error_response(request: HttpRequest, error: DomainError) -> HttpResponse:
    response = api.create_response(request, error.body(), status=error.status)
    for name, value in error.headers().items():
        response[name] = value
    return response


@api.exception_handler(DomainError)
def _domain_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    if isinstance(exc, (BadRequest, ValidationFailed)):
        # A body json_object could not take is refused in its own words, once the caller,
        # state and revision checks have passed (they answer before any body refusal).
        exc = body_refusal(request) or exc
    return _error_response(request, exc)


@api.exception_handler(Moved)
def _moved(request: HttpRequest, exc: Moved) -> HttpResponse:
    from governance.middleware import moved_response

    return moved_response(request, exc)


@api.exception_handler(TrackerError)
def _tracker_error(request: HttpRequest, exc: TrackerError) -> HttpResponse:
    if isinstance(exc, SignInRequired):
        return _error_response(request, Unauthenticated(str(exc)))
    return _error_response(request, Unavailable.from_tracker(exc))


@api.exception_handler(AuthenticationError)
def _authentication_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _error_response(request, Unauthenticated())


@api.exception_handler(RequestDataTooBig)
def _too_large(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return _error_response(request, PayloadTooLarge())


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _error_response(request, NotFound())


@api.exception_handler(PermissionDenied)
def _permission_denied(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return _error_response(request, Forbidden(str(exc) or None))


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    by_status = {401: Unauthenticated, 403: Forbidden, 404: NotFound}
    error_class = by_status.get(exc.status_code, BadRequest)
    return _error_response(request, error_class(str(exc)))


@api.exception_handler(Exception)
def _internal(request: HttpRequest, exc: Exception) -> HttpResponse:
    """Anything unexpected: the error body (`internal`, 500) with the request id; the log has
    the traceback under the same id."""
    unavailable = database_unavailable(exc)
    if unavailable is not None:  # 503 with Retry-After: nothing was stored
        return unavailable_response(request, unavailable, exc)
    rid = request_id(request)
    logger.error("Request %s failed on %s", rid, request.path, exc_info=exc)
    return _error_response(request, Internal(rid))


@api.exception_handler(NinjaValidationError)
def _ninja_validation(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    fields: dict[str, list[str]] = {}
    for item in exc.errors:
        loc = [str(p) for p in item.get("loc", []) if p not in ("query", "path", "body", "form")]
        fields.setdefault(".".join(loc) or "request", []).append(item.get("msg", "Invalid."))
    return _error_response(request, ValidationFailed(fields))


# --- helpers every router uses ------------------------------------------------------------------


class _NotFinite(ValueError):
    pass


def _refuse_constant(name: str) -> None:
    raise _NotFinite(name)


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NotFinite(text)
    return number


def _content_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


UNREADABLE_BODY = "(unreadable body)"
"""The one member `json_object` answers for a body it cannot take: no body declares it, so
every write refuses it as an unknown member (422) after judging the caller, and the error
handler answers the body's own refusal in its place (`body_refusal`)."""


def json_object(
    request: HttpRequest, fields: Iterable[str] | None = None, *, walk_text: bool = True
) -> dict[str, Any]:
    """The request body as a JSON object. 413 over the upload limit, 415 for a form or
    multipart body, at once. An empty body reads as {} (acts without arguments).

    A body that cannot be taken (not JSON, not an object, NaN, Infinity or a number past a
    float's range: 400; text holding a control character, a noncharacter or a lone surrogate
    at any depth, keys included: 422, each named) is refused after the caller: the view gets
    `{UNREADABLE_BODY: None}`, which its service refuses as an unknown member once it has
    answered 403, 404, 409 and 412, and the refusal answered is the body's
    (`body_refusal`). So the order is the documented one whatever the body.

    With `fields`, any other member is refused (422) for views whose service takes single
    values rather than the body (after their own caller check). `walk_text=False` leaves the
    text walk to the view's own reader (the agent's catalogue walks an action's arguments
    after the action's gate, which needs the project the arguments name)."""
    try:
        body = _read_json_object(request, walk_text=walk_text)
    except (BadRequest, ValidationFailed) as refusal:
        request._unreadable_body = refusal  # type: ignore[attr-defined]
        return {UNREADABLE_BODY: None}
    if fields is not None:
        cleaning.only(body, *fields)
    return body


def body_refusal(request: HttpRequest) -> DomainError | None:
    """The refusal of the body `json_object` could not take, if it could not."""
    refusal = getattr(request, "_unreadable_body", None)
    return refusal if isinstance(refusal, DomainError) else None


def _read_json_object(request: HttpRequest, *, walk_text: bool) -> dict[str, Any]:
    if request.content_type in FORM_TYPES and _content_length(request):
        raise UnsupportedMediaType()  # (an empty body, whatever its type, reads as {})
    try:
        raw = request.body
    except RequestDataTooBig:
        raise PayloadTooLarge(
            f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."
        ) from None
    if not raw or not raw.strip():
        return {}
    try:
        body = cleaning.json_loads(
            raw,
            max_depth=MAX_BODY_DEPTH,
            what="The request body",
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
        )
    except _NotFinite as exc:
        raise BadRequest(f"The request body holds {exc}: {cleaning.NOT_FINITE_MESSAGE}") from None
    except cleaning.JsonRefused as exc:
        raise BadRequest(str(exc)) from None
    except (ValueError, UnicodeDecodeError):
        raise BadRequest("The request body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise BadRequest("The request body must be a JSON object.")
    refused = cleaning.refusals(body) if walk_text else {}
    if refused:
        raise ValidationFailed({path: [message] for path, message in sorted(refused.items())})
    return body


def other_members(body: dict[str, Any], *fields: str) -> list[str]:
    """The members of a body that a write of single values does not take: handed to its
    service, which refuses them (422) after the caller, state and revision checks, so that
    a caller who may not write hears 403 whatever the body (`json_object(fields=...)` would
    refuse them before the service runs)."""
    return [name for name in body if name not in fields]


def with_etag(response: HttpResponse, revision: int) -> None:
    response["ETag"] = etag(revision)


def body_schema(
    properties: dict[str, Any], required: list[str] | None = None, *, closed: bool = True
) -> dict[str, Any]:
    """openapi_extra for an endpoint that reads `json_object(request)`; `closed` (every
    body's view or service refuses the fields it does not know, 422) says so."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if closed:
        schema["additionalProperties"] = False
    return {
        "requestBody": {
            "required": bool(required),
            "content": {"application/json": {"schema": schema}},
        }
    }


# --- kernel endpoints ------------------------------------------------------------------------

kernel = Router(tags=["kernel"])

STRING = {"type": "string"}
NULL_STRING = {"type": ["string", "null"]}
ACCOUNT_IDS = {"type": "array", "items": STRING}
ME = component(
    "Me",
    {
        "type": "object",
        "properties": {
            "accountId": STRING,
            "displayName": STRING,
            "isSiteAdmin": {"type": "boolean"},
            "agentAccess": {"type": "boolean"},
        },
        "required": ["accountId", "displayName", "isSiteAdmin", "agentAccess"],
    },
)
PROJECT = component(
    "Project",
    {
        "type": "object",
        "properties": {
            "projectKey": STRING,
            "name": STRING,
            "leadAccountId": NULL_STRING,
            "editorAccountIds": ACCOUNT_IDS,
            "approvalStatus": STRING,
            "registersFrozen": {"type": "boolean"},
            "caller": {
                **FREE_OBJECT,
                "description": "What the caller is on this project and may do.",
            },
        },
        "required": [
            "projectKey",
            "name",
            "leadAccountId",
            "editorAccountIds",
            "approvalStatus",
            "registersFrozen",
            "caller",
        ],
    },
)
EDITORS = component(
    "ProjectEditors",
    {
        "type": "object",
        "properties": {"projectKey": STRING, "editorAccountIds": ACCOUNT_IDS},
        "required": ["projectKey", "editorAccountIds"],
    },
)
AUDIT_ENTRY = component(
    "AuditEntry",
    {
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "at": {"type": "string", "format": "date-time"},
            "actorAccountId": STRING,
            "projectKey": STRING,
            "kind": STRING,
            "targetType": STRING,
            "targetId": STRING,
            "changes": {**FREE_OBJECT, "description": "Each field changed: before and after."},
            "channel": {"type": "string", "description": "Writes made through a channel only."},
            "client": NULL_STRING,
        },
        "required": [
            "id",
            "at",
            "actorAccountId",
            "projectKey",
            "kind",
            "targetType",
            "targetId",
            "changes",
        ],
    },
)
SITE_SETTINGS = component(
    "SiteSettings",
    specs.response_schema(
        SiteSettingsSpec,
        optional=[a for a in specs.fields(SiteSettingsSpec) if a not in ("themes", "currency")],
        description=(
            "Site administrators and the governance group read every field; anyone else "
            "signed in reads themes (the enabled ones) and currency."
        ),
    ),
)


@kernel.get("/me")
@answers(ME)
def me(request: HttpRequest) -> dict[str, Any]:
    """The caller: accountId, display name, site-admin flag, portfolio/agent access."""
    user = permissions.request_user(request)
    person = resolve([user.account_id]).get(user.account_id)
    return {
        "accountId": user.account_id,
        "displayName": person.display_name if person else user.username,
        "isSiteAdmin": permissions.is_site_admin(user, request),
        "agentAccess": permissions.has_portfolio_access(user, request),
    }


def project_to_dict(project: Project, caller: Caller, editor_ids: list[str]) -> dict[str, Any]:
    return {
        "projectKey": project.key,
        "name": project.name,
        "leadAccountId": project.lead_account_id or None,
        "editorAccountIds": editor_ids,
        "approvalStatus": project.approval_status,
        "registersFrozen": project.registers_frozen,
        "caller": caller.as_api(),
    }


@kernel.get("/projects")
@answers(component("ProjectPage", paging.schema_of(PROJECT, "the projects")))
def project_list(
    request: HttpRequest,
    cursor: str | None = paging.cursor_parameter(),
    pageSize: int = paging.page_size_parameter(),
) -> dict[str, Any]:
    """Every project the caller can view, by key, a page at a time (`pageSize`, default
    100): follow `next` (null on the last page) for the rest."""
    page = paging.projects_page(gatelist.viewable(request, shown=True, page=True), cursor, pageSize)
    # The page's projects as the gate gives them (the tracker's name and lead of the moment).
    shown = gatelist.page_callers(request, page.rows)
    nominations: dict[int, list[str]] = {}
    for project_id, account_id in EditorNomination.objects.filter(
        project__in=page.rows
    ).values_list("project_id", "account_id"):
        nominations.setdefault(project_id, []).append(account_id)
    return {
        "items": [project_to_dict(p, c, nominations.get(p.pk, [])) for p, c in shown],
        "next": paging.next_link(request, page.next_cursor),
    }


@kernel.get("/projects/{key}")
@answers(PROJECT, etag=True)
@honours_if_match
def project_detail(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """The project, its lead and editors, and what the caller may do. The ETag versions the
    editor list (send it as If-Match on PUT .../editors)."""
    project, caller = permissions.project_for(request, key)
    with_etag(response, project.editors_revision)
    return project_to_dict(project, caller, services.editor_account_ids(project))


@kernel.put(
    "/projects/{key}/editors",
    openapi_extra=body_schema(
        # Each a tracker accountId: never blank (whether the tracker knows it is stateful).
        {"accountIds": {"type": "array", "items": cleaning.required_text_schema(128)}},
        ["accountIds"],
    ),
)
@answers(EDITORS, etag=True)
@honours_if_match
def project_editors_put(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """Replace the nominated editors. Project Lead only. Honours If-Match (412 when stale)."""
    project, caller = permissions.lead_project_for(request, key)
    expected = read_if_match(request)
    body = json_object(request, fields=["accountIds"])
    if "accountIds" not in body:
        raise ValidationFailed({"accountIds": ["This field is required."]})
    editors = services.editors_set(
        caller=caller, account_ids=body["accountIds"], expected_revision=expected
    )
    with_etag(response, project.editors_revision)
    return {"projectKey": project.key, "editorAccountIds": editors}


@kernel.get("/projects/{key}/audit")
@answers(list_of(AUDIT_ENTRY))
def project_audit(
    request: HttpRequest,
    key: str,
    kind: str | None = None,
    actorAccountId: str | None = None,
    limit: int = 100,
    offset: int = params.Query(0, le=MAX_OFFSET),
) -> list[dict[str, Any]]:
    """The project's audit entries, newest first. Filters: kind, actorAccountId."""
    project, _ = permissions.project_for(request, key)
    entries = AuditEntry.objects.filter(project_key__in=[project.key, *project.former_keys])
    if kind:
        entries = entries.filter(kind=kind)
    if actorAccountId:
        entries = entries.filter(actor_account_id=actorAccountId)
    limit = max(1, min(limit, 500))
    offset = max(0, offset)
    return [audit.entry_to_dict(e) for e in entries[offset : offset + limit]]


@kernel.get("/site-settings")
@answers(SITE_SETTINGS, etag=True)
def site_settings_get(request: HttpRequest, response: HttpResponse) -> dict[str, Any]:
    """Site administrators and the governance group read every setting (with ETag); anyone
    else signed in reads what editing a business case needs: the enabled themes and the
    currency."""
    user = permissions.request_user(request)
    site = SiteSettings.load()
    if not permissions.may_read_site_settings(user, request):
        return services.site_settings_for_everyone(site)
    with_etag(response, site.revision)
    return services.site_settings_to_dict(site)


@kernel.patch(
    "/site-settings", openapi_extra=body_schema(*specs.body(SiteSettingsSpec, creating=False))
)
@answers(SITE_SETTINGS, etag=True)
@honours_if_match
def site_settings_patch(request: HttpRequest, response: HttpResponse) -> dict[str, Any]:
    """Site administrators only. Honours If-Match (412 when stale)."""
    user = permissions.require_site_admin(request)
    expected = read_if_match(request)
    site = services.site_settings_update(
        actor=user, data=json_object(request), expected_revision=expected
    )
    with_etag(response, site.revision)
    return services.site_settings_to_dict(site)


api.add_router("", kernel)
