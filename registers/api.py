"""The registers' JSON API (docs/api.md): work packages, risks, decisions, change
requests, their acts, exports and imports. Every write calls a service; no rule lives here."""

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from ninja import P, PathEx, Router, Status
from ninja.constants import NOT_SET

from governance import paging, permissions, specs
from governance.api import (
    CLEAN_JSON,
    answers,
    body_schema,
    component,
    json_object,
    list_of,
    other_members,
    with_etag,
)
from governance.cleaning import required_text_schema
from governance.concurrency import honours_if_match, read_if_match
from governance.errors import NotFound
from governance.specs import Spec
from registers import import_templates, listing, services, spreadsheets
from registers.derive import plan_baseline_of
from registers.models import TEXT_MAX, Decision, Risk
from registers.serializers import (
    change_to_dict,
    decision_to_dict,
    risk_to_dict,
    work_package_to_dict,
)
from registers.services.common import get_in_project
from registers.specs import ISSUE_KEY_SCHEMA, ChangeSpec, DecisionSpec, RiskSpec, WorkPackageSpec
from registers.views import changes as change_pages
from registers.views import decisions as decision_pages
from registers.views import risks as risk_pages
from registers.views import work_packages as work_package_pages
from registers.views.base import RegisterPages

router = Router(tags=["registers"])

STRING = {"type": "string"}
# The records as the API answers them (registers.serializers), from their declarations.
WORK_PACKAGE = component("WorkPackage", specs.response_schema(WorkPackageSpec))
RISK = component("Risk", specs.response_schema(RiskSpec, optional=["imported"]))
DECISION = component("Decision", specs.response_schema(DecisionSpec, optional=["imported"]))
CHANGE = component("ChangeRequest", specs.response_schema(ChangeSpec, optional=["imported"]))
ROW_MESSAGES = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {"row": {"type": "integer"}, "field": STRING, "message": STRING},
    },
}
IMPORT_PREVIEW = component(
    "ImportPreview",
    {
        "type": "object",
        "description": "What the import would do; nothing is stored.",
        "properties": {
            "register": STRING,
            "create": {"type": "integer"},
            "rows": {"type": "integer", "description": "The rows the file holds."},
            "errors": ROW_MESSAGES,
            "warnings": ROW_MESSAGES,
            "createRows": {
                "type": "array",
                "description": (
                    "The first 500 records the file would create, as the register would store"
                    " them: the row (or a plan's task ID) and the values of the fields a person"
                    " checks first (API names). Empty when any row is refused."
                ),
                "items": {
                    "type": "object",
                    "properties": {
                        "row": {"type": "integer"},
                        "values": {"type": "object", "additionalProperties": True},
                    },
                    "required": ["row", "values"],
                },
            },
            "previewDigest": STRING,
        },
        "required": [
            "register",
            "create",
            "rows",
            "errors",
            "warnings",
            "createRows",
            "previewDigest",
        ],
    },
)
IMPORT_DONE = component(
    "ImportDone",
    {
        "type": "object",
        "properties": {"created": {"type": "integer"}, "warnings": ROW_MESSAGES},
        "required": ["created", "warnings"],
    },
)
SPREADSHEET = {
    "text/csv": {"schema": {"type": "string"}},
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": {
        "schema": {"type": "string", "format": "binary"}
    },
}


def _body(spec: type[Spec], *, creating: bool = False) -> dict[str, Any]:
    """openapi_extra of a create or a patch: the declaration's body (registers.specs)."""
    properties, required = specs.body(spec, creating=creating)
    return body_schema(properties, required)


# --- exports and imports (before the {id} routes, which would otherwise match them) ----------


# The register's URL segment, one of `spreadsheets.REGISTERS`.
RegisterName = PathEx[str, P(alias="register")]


def _register(register: str) -> str:
    if register not in spreadsheets.REGISTERS:
        raise NotFound(f"No register called {register!r}.")
    return register


@router.get(
    "/projects/{key}/{register}/export",
    openapi_extra={
        "x-enums": {"format": ["csv", "xlsx", "mspdi"], "shape": list(spreadsheets.SHAPES)}
    },
)
@answers(content=SPREADSHEET)
def register_export(
    request: HttpRequest,
    key: str,
    register_name: RegisterName,
    format: str = "csv",
    shape: str = "people",
) -> HttpResponseBase:
    """The register as CSV or XLSX (`format`), one column per field; the work packages also
    as a Microsoft Project XML plan (`format=mspdi`). `shape=people` (the default): the
    labels the register pages use, people by name, typed dates and amounts, the header row
    frozen and filtered. `shape=api`: the API field names, people as account ids with their
    names beside them, for round trips. Another shape answers 400."""
    project, _ = permissions.project_for(request, key)
    return spreadsheets.export_response(project, _register(register_name), format, shape)


@router.post(
    "/projects/{key}/{register}/import",
    response={200: dict, 201: dict},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "file": {"type": "string", "format": "binary"},
                            "outlineLevel": {
                                "type": "string",
                                "description": (
                                    "Work packages from a Microsoft Project XML plan only: "
                                    "the outline level whose tasks become packages (1 to "
                                    "100, default 1); the tasks below roll up into them. "
                                    "Also taken as a query parameter."
                                ),
                            },
                            "previewDigest": {
                                "type": "string",
                                "description": (
                                    "The `previewDigest` of a dry run of the same file: the "
                                    "import is refused (409, nothing created) when it would "
                                    "now do anything else than that preview showed."
                                ),
                            },
                        },
                        "required": ["file"],
                    }
                }
            },
        }
    },
)
@answers(statuses={200: IMPORT_PREVIEW, 201: IMPORT_DONE})
def register_import(
    request: HttpRequest, key: str, register_name: RegisterName, dryRun: bool = False
) -> Status[dict[str, Any]]:
    """Preview, then commit. `?dryRun=true`: 200 with what the import would do, nothing
    stored: {register, create, rows, errors: [{row, field, message}], warnings: [{row, field,
    message}], previewDigest}. Without it, all or nothing: 201 {"created": N, "warnings"},
    or 422 with `rows` [{row, field, message}]; send the preview's `previewDigest` with the
    file to have the import refused (409) if it would differ from the preview. The work
    packages also import from a Microsoft Project XML plan (MSPDI): `outlineLevel` (query or
    form field, default 1) chooses the tasks that become packages."""
    _, caller = permissions.project_for(request, key)
    register = _register(register_name)
    upload = request.FILES.get("file")
    level = request.GET.get("outlineLevel") or request.POST.get("outlineLevel")
    if dryRun:
        preview = services.import_preview(
            caller=caller, register=register, upload=upload, outline_level=level
        )
        return Status(200, preview.preview())
    outcome = services.import_file(
        caller=caller,
        register=register,
        upload=upload,
        expected_digest=request.POST.get("previewDigest") or None,
        outline_level=level,
    )
    return Status(201, {"created": outcome.created, "warnings": outcome.warnings})


@router.get(
    "/projects/{key}/{register}/template", openapi_extra={"x-enums": {"format": ["csv", "xlsx"]}}
)
@answers(content=SPREADSHEET)
def register_template(
    request: HttpRequest, key: str, register_name: RegisterName, format: str = "xlsx"
) -> HttpResponse:
    """An empty import file for the register (`format` xlsx or csv): the columns it takes in
    the export's order; XLSX adds an example row and drop-down lists of the allowed values."""
    project, _ = permissions.project_for(request, key)
    content, content_type, name = import_templates.template(
        project, _register(register_name), format
    )
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


# --- the four registers: list, create, detail, update and delete from one declaration ------


@dataclass(frozen=True)
class RegisterApi:
    """One register's API. The page declaration (`registers.views`) gives its URL segment,
    model, record id and writes; this adds what only the API says: the operations' names
    (`{noun}_list`, `{noun}_create`, ...), the answer's schema and how records read as
    the API answers them. The list's order is the register's (`registers.listing`)."""

    pages: RegisterPages
    noun: str
    spec: type[Spec]
    schema: dict[str, Any]
    # One record as a detail or a write answers it.
    one: Callable[[Any], dict[str, Any]]
    docs: dict[str, str] = field(default_factory=dict)
    # One page of the list: `{schema's name}Page`.
    page_schema: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        name = self.schema["$ref"].rsplit("/", 1)[-1]
        page = paging.schema_of(self.schema, f"{self.pages.noun}s")
        object.__setattr__(self, "page_schema", component(f"{name}Page", page))

    def answer(self, response: HttpResponse, record: Any) -> dict[str, Any]:
        """`record` as a detail or a write answers it, its revision the response's ETag."""
        with_etag(response, record.revision)
        return self.one(record)

    @property
    def collection(self) -> str:
        return f"/projects/{{key}}/{self.pages.slug}"

    @property
    def item(self) -> str:
        return f"{self.collection}/{{{self.pages.id_kwarg}}}"


_REQUEST = inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _param(name: str, annotation: Any, default: Any = inspect.Parameter.empty) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default
    )


def _operation(
    register: RegisterApi,
    act: str,
    params: list[inspect.Parameter],
    view: Callable[..., Any],
) -> Callable[..., Any]:
    """`view` named `{noun}_{act}` (its operation id, URL name and summary), its docstring
    the declaration's, taking `params` (the path's, the query's, the response)."""
    view.__name__ = view.__qualname__ = f"{register.noun}_{act}"
    view.__doc__ = register.docs.get(act)
    view.__signature__ = inspect.Signature([_REQUEST, *params])  # type: ignore[attr-defined]
    return view


def register_collection(register: RegisterApi) -> None:
    """GET (one page of the list) and POST (create) on the register's collection."""
    pages = register.pages
    salt = f"registers:{pages.slug}"

    def list_page(
        request: HttpRequest, key: str, cursor: str | None, pageSize: int
    ) -> dict[str, Any]:
        project, _ = permissions.project_for(request, key)
        found = paging.page(
            listing.records(project, pages.slug),
            listing.ORDERS[pages.slug],
            cursor=cursor,
            size=pageSize,
            salt=salt,
        )
        return paging.answer(
            request, listing.dicts(project, pages.slug, found.rows), found.next_cursor
        )

    def create(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
        _, caller = permissions.project_for(request, key)
        record = pages.create(caller=caller, data=json_object(request))
        return register.answer(response, record)

    query = [
        _param("key", str),
        _param("cursor", str | None, paging.cursor_parameter()),
        _param("pageSize", int, paging.page_size_parameter()),
    ]
    view = _operation(register, "list", query, list_page)
    router.get(register.collection)(answers(register.page_schema)(view))
    view = _operation(
        register, "create", [_param("key", str), _param("response", HttpResponse)], create
    )
    router.post(
        register.collection,
        response={201: dict},
        openapi_extra=_body(register.spec, creating=True),
    )(answers(register.schema, etag=True)(view))


def register_items(register: RegisterApi) -> None:
    """GET, PATCH (If-Match) and, where the register deletes, DELETE (If-Match) on one
    record."""
    pages = register.pages
    record_id = pages.id_kwarg
    params = [_param("key", str), _param(record_id, str), _param("response", HttpResponse)]

    def detail(request: HttpRequest, key: str, response: HttpResponse, **ids: str) -> Any:
        project, _ = permissions.project_for(request, key)
        record: Any = get_in_project(pages.model, project, ids[record_id], lock=False)
        return register.answer(response, record)

    def update(request: HttpRequest, key: str, response: HttpResponse, **ids: str) -> Any:
        _, caller = permissions.project_for(request, key)
        record = pages.update(
            caller=caller,
            pk=ids[record_id],
            data=json_object(request),
            expected_revision=read_if_match(request),
        )
        return register.answer(response, record)

    def delete(request: HttpRequest, key: str, **ids: str) -> None:
        _, caller = permissions.project_for(request, key)
        pages.delete(caller=caller, pk=ids[record_id], expected_revision=read_if_match(request))

    view = _operation(register, "detail", params, detail)
    router.get(register.item)(answers(register.schema, etag=True)(view))
    view = _operation(register, "update", params, update)
    router.patch(register.item, openapi_extra=_body(register.spec))(
        honours_if_match(answers(register.schema, etag=True)(view))
    )
    if pages.deletable:
        view = _operation(register, "delete", params[:2], delete)
        router.delete(register.item, response={204: None})(honours_if_match(view))


@dataclass(frozen=True)
class Act:
    """An act on one record, POST `{item}/{path}` (If-Match honoured), named `{noun}_{name}`
    with the register's `docs[name]`: the body's `members` (API name: the service's keyword)
    go to `service` with the caller, the record's id, If-Match and the body's other members
    but `ignored` (written by the server), which it refuses. Answers the record as the
    register's detail does, with its ETag."""

    name: str
    path: str
    service: Callable[..., Any]
    members: dict[str, str]
    body: dict[str, Any]  # openapi_extra of the body (body_schema)
    ignored: tuple[str, ...] = ()
    status: int = 200


def register_act(register: RegisterApi, act: Act) -> None:
    record_id = register.pages.id_kwarg

    def perform(request: HttpRequest, key: str, response: HttpResponse, **ids: str) -> Any:
        _, caller = permissions.project_for(request, key)
        body = json_object(request)
        record = act.service(
            caller=caller,
            **{record_id: ids[record_id]},
            **{keyword: body.get(name) for name, keyword in act.members.items()},
            expected_revision=read_if_match(request),
            other_members=other_members(body, *act.members, *act.ignored),
        )
        return register.answer(response, record)

    params = [_param("key", str), _param(record_id, str), _param("response", HttpResponse)]
    answered = NOT_SET if act.status == 200 else {act.status: dict}
    view = _operation(register, act.name, params, perform)
    router.post(f"{register.item}/{act.path}", response=answered, openapi_extra=act.body)(
        honours_if_match(answers(register.schema, etag=True)(view))
    )


# --- work packages ---------------------------------------------------------------------------


WORK_PACKAGES = RegisterApi(
    pages=work_package_pages.PAGES,
    noun="work_package",
    spec=WorkPackageSpec,
    schema=WORK_PACKAGE,
    one=work_package_to_dict,
    docs={
        "list": "Ordered: sortOrder, then plannedStartDate, then name.",
        "update": "budgetBaseline, the lock stamps and derived fields are ignored when sent.",
        "link": "Link a tracker issue; its 'Work Package' field is written after commit.",
    },
)
register_collection(WORK_PACKAGES)


@router.post(
    "/projects/{key}/work-packages/reorder",
    openapi_extra=body_schema(
        {"ids": {"type": "array", "items": {"type": "string", "format": "uuid"}}}, ["ids"]
    ),
)
@answers(list_of(WORK_PACKAGE))
def work_package_reorder(request: HttpRequest, key: str) -> list[dict[str, Any]]:
    """Set the manual order; `ids` lists every work package of the project once."""
    _, caller = permissions.project_for(request, key)
    body = json_object(request)
    packages = services.work_package_reorder(
        caller=caller, ids=body.get("ids"), other_members=other_members(body, "ids")
    )
    plan = plan_baseline_of(caller.project) if packages else None
    return [work_package_to_dict(wp, plan) for wp in packages]


register_items(WORK_PACKAGES)


register_act(
    WORK_PACKAGES,
    Act(
        name="link",
        path="links",
        service=services.work_package_link_issue,
        members={"issueKey": "issue_key"},
        body=body_schema({"issueKey": ISSUE_KEY_SCHEMA}, ["issueKey"]),
    ),
)


@router.delete("/projects/{key}/work-packages/{wp_id}/links/{issue_key}", response={204: None})
@honours_if_match
def work_package_unlink(request: HttpRequest, key: str, wp_id: str, issue_key: str) -> None:
    """Unlink an issue; its 'Work Package' field is cleared after commit."""
    _, caller = permissions.project_for(request, key)
    services.work_package_unlink_issue(
        caller=caller, wp_id=wp_id, issue_key=issue_key, expected_revision=read_if_match(request)
    )


# --- risks -----------------------------------------------------------------------------------


def _risk_dict(risk: Risk) -> dict[str, Any]:
    treating = Decision.objects.filter(
        project_id=risk.project_id, treated_risk_id=str(risk.pk)
    ).order_by("created_at")
    return risk_to_dict(risk, [str(pk) for pk in treating.values_list("id", flat=True)])


RISKS = RegisterApi(
    pages=risk_pages.PAGES,
    noun="risk",
    spec=RiskSpec,
    schema=RISK,
    one=_risk_dict,
    docs={"list": "Open before Closed, newest first."},
)
register_collection(RISKS)
register_items(RISKS)


@router.post(
    "/projects/{key}/risks/{risk_id}/record-decision",
    response={201: dict},
    openapi_extra=_body(DecisionSpec),
)
@answers(DECISION, etag=True)
def risk_record_decision(
    request: HttpRequest, key: str, risk_id: str, response: HttpResponse
) -> dict[str, Any]:
    """Materialised risks only: a new decision with riskId and treatedRiskId, pre-filled from
    the risk (decision = title, decisionNotes = description, rationale = mitigation); the
    body overrides any of them."""
    _, caller = permissions.project_for(request, key)
    decision = services.risk_record_decision(
        caller=caller, risk_id=risk_id, data=json_object(request)
    )
    with_etag(response, decision.revision)
    return decision_to_dict(decision)


# --- decisions -------------------------------------------------------------------------------

DECISIONS = RegisterApi(
    pages=decision_pages.PAGES,
    noun="decision",
    spec=DecisionSpec,
    schema=DECISION,
    one=decision_to_dict,
    docs={
        "list": "Newest first.",
        "update": "updateDecision: pending decisions only; a made decision answers 409.",
        "note": (
            "appendDecisionNote: allowed on made decisions and on frozen registers. Author and\n"
            "timestamp are written by the server. Answers the decision with its notes."
        ),
    },
)
register_collection(DECISIONS)
register_items(DECISIONS)

# A note's server-written fields, ignored when a client sends a note back.
NOTE_WRITTEN = {
    name: {**CLEAN_JSON, "readOnly": True, "description": "Written by the server; ignored."}
    for name in ("id", "authorAccountId", "at")
}


register_act(
    DECISIONS,
    Act(
        name="note",
        path="notes",
        service=services.decision_append_note,
        members={"text": "text_value"},
        body=body_schema({"text": required_text_schema(TEXT_MAX), **NOTE_WRITTEN}, ["text"]),
        ignored=tuple(NOTE_WRITTEN),
        status=201,
    ),
)


# --- change requests -------------------------------------------------------------------------

CHANGES = RegisterApi(
    pages=change_pages.PAGES,
    noun="change",
    spec=ChangeSpec,
    schema=CHANGE,
    one=change_to_dict,
    docs={
        "list": "Newest first.",
        "update": "While Proposed only (409 once decided).",
        "delete": "While Proposed only (409 once decided).",
        "adjudicate": (
            "Approved or Rejected (a reason is required) by the named approver, else the sponsor;\n"
            "Withdrawn by the proposer or an editor."
        ),
    },
)
register_collection(CHANGES)
register_items(CHANGES)


register_act(
    CHANGES,
    Act(
        name="adjudicate",
        path="adjudicate",
        service=services.change_adjudicate,
        members={"outcome": "outcome", "decisionComment": "decision_comment"},
        body=body_schema(
            {
                "outcome": {"enum": ["Approved", "Rejected", "Withdrawn"]},
                "decisionComment": {"type": "string", "maxLength": 2000},
            },
            ["outcome"],
        ),
    ),
)
