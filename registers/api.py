"""The registers' JSON API (docs/api.md): work packages, risks, decisions, change
requests, their acts, exports and imports. Every write calls a service; no rule lives here."""

from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Path, Router, Status

from governance import permissions, specs
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
from governance.concurrency import honours_if_match, parse_if_match
from governance.errors import NotFound
from governance.specs import Spec
from registers import import_templates, selectors, services, spreadsheets
from registers.derive import plan_baseline_of
from registers.models import TEXT_MAX, ChangeRequest, Decision, Risk, WorkPackage
from registers.serializers import (
    change_to_dict,
    decision_to_dict,
    risk_to_dict,
    work_package_to_dict,
)
from registers.services.common import get_in_project
from registers.specs import ISSUE_KEY_SCHEMA, ChangeSpec, DecisionSpec, RiskSpec, WorkPackageSpec

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


def _if_match(request: HttpRequest) -> int | None:
    return parse_if_match(request.headers.get("If-Match"))


# --- exports and imports (before the {id} routes, which would otherwise match them) ----------


def _register(register: str) -> str:
    if register not in spreadsheets.REGISTERS:
        raise NotFound(f"No register called {register!r}.")
    return register


@router.get(
    "/projects/{key}/{register}/export",
    openapi_extra={"x-enums": {"format": ["csv", "xlsx", "mspdi"]}},
)
@answers(content=SPREADSHEET)
def register_export(
    request, key: str, register_name: str = Path(..., alias="register"), format: str = "csv"
):
    """The register as CSV or XLSX (`format`), one column per field, people with names; the
    work packages also as a Microsoft Project XML plan (`format=mspdi`)."""
    project, _ = permissions.project_for(request, key)
    content, content_type, name = spreadsheets.export(project, _register(register_name), format)
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


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
    request,
    key: str,
    register_name: str = Path(..., alias="register"),
    dryRun: bool = False,
):
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
    request, key: str, register_name: str = Path(..., alias="register"), format: str = "xlsx"
):
    """An empty import file for the register (`format` xlsx or csv): the columns it takes in
    the export's order; XLSX adds an example row and drop-down lists of the allowed values."""
    project, _ = permissions.project_for(request, key)
    content, content_type, name = import_templates.template(
        project, _register(register_name), format
    )
    response = HttpResponse(content, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


# --- work packages ---------------------------------------------------------------------------


@router.get("/projects/{key}/work-packages")
@answers(list_of(WORK_PACKAGE))
def work_package_list(request, key: str):
    """Ordered: sortOrder, then plannedStartDate, then name."""
    project, _ = permissions.project_for(request, key)
    plan = plan_baseline_of(project)
    return [work_package_to_dict(wp, plan) for wp in selectors.work_packages(project)]


@router.post(
    "/projects/{key}/work-packages",
    response={201: dict},
    openapi_extra=_body(WorkPackageSpec, creating=True),
)
@answers(WORK_PACKAGE, etag=True)
def work_package_create(request, key: str, response: HttpResponse):
    _, caller = permissions.project_for(request, key)
    wp = services.work_package_create(caller=caller, data=json_object(request))
    with_etag(response, wp.revision)
    return work_package_to_dict(wp)


@router.post(
    "/projects/{key}/work-packages/reorder",
    openapi_extra=body_schema(
        {"ids": {"type": "array", "items": {"type": "string", "format": "uuid"}}}, ["ids"]
    ),
)
@answers(list_of(WORK_PACKAGE))
def work_package_reorder(request, key: str):
    """Set the manual order; `ids` lists every work package of the project once."""
    _, caller = permissions.project_for(request, key)
    body = json_object(request)
    packages = services.work_package_reorder(
        caller=caller, ids=body.get("ids"), other_members=other_members(body, "ids")
    )
    plan = plan_baseline_of(caller.project) if packages else None
    return [work_package_to_dict(wp, plan) for wp in packages]


@router.get("/projects/{key}/work-packages/{wp_id}")
@answers(WORK_PACKAGE, etag=True)
def work_package_detail(request, key: str, wp_id: str, response: HttpResponse):
    project, _ = permissions.project_for(request, key)
    wp = get_in_project(WorkPackage, project, wp_id, lock=False)
    with_etag(response, wp.revision)
    return work_package_to_dict(wp)


@router.patch("/projects/{key}/work-packages/{wp_id}", openapi_extra=_body(WorkPackageSpec))
@honours_if_match
@answers(WORK_PACKAGE, etag=True)
def work_package_update(request, key: str, wp_id: str, response: HttpResponse):
    """budgetBaseline, the lock stamps and derived fields are ignored when sent."""
    _, caller = permissions.project_for(request, key)
    wp = services.work_package_update(
        caller=caller, wp_id=wp_id, data=json_object(request), expected_revision=_if_match(request)
    )
    with_etag(response, wp.revision)
    return work_package_to_dict(wp)


@router.delete("/projects/{key}/work-packages/{wp_id}", response={204: None})
@honours_if_match
def work_package_delete(request, key: str, wp_id: str):
    _, caller = permissions.project_for(request, key)
    services.work_package_delete(caller=caller, wp_id=wp_id, expected_revision=_if_match(request))


@router.post(
    "/projects/{key}/work-packages/{wp_id}/links",
    openapi_extra=body_schema({"issueKey": ISSUE_KEY_SCHEMA}, ["issueKey"]),
)
@honours_if_match
@answers(WORK_PACKAGE, etag=True)
def work_package_link(request, key: str, wp_id: str, response: HttpResponse):
    """Link a tracker issue; its 'Work Package' field is written after commit."""
    _, caller = permissions.project_for(request, key)
    body = json_object(request)
    wp = services.work_package_link_issue(
        caller=caller,
        wp_id=wp_id,
        issue_key=body.get("issueKey"),
        expected_revision=_if_match(request),
        other_members=other_members(body, "issueKey"),
    )
    with_etag(response, wp.revision)
    return work_package_to_dict(wp)


@router.delete("/projects/{key}/work-packages/{wp_id}/links/{issue_key}", response={204: None})
@honours_if_match
def work_package_unlink(request, key: str, wp_id: str, issue_key: str):
    """Unlink an issue; its 'Work Package' field is cleared after commit."""
    _, caller = permissions.project_for(request, key)
    services.work_package_unlink_issue(
        caller=caller, wp_id=wp_id, issue_key=issue_key, expected_revision=_if_match(request)
    )


# --- risks -----------------------------------------------------------------------------------


def _risk_dict(risk: Risk) -> dict[str, Any]:
    treating = Decision.objects.filter(
        project_id=risk.project_id, treated_risk_id=str(risk.pk)
    ).order_by("created_at")
    return risk_to_dict(risk, [str(pk) for pk in treating.values_list("id", flat=True)])


@router.get("/projects/{key}/risks")
@answers(list_of(RISK))
def risk_list(request, key: str):
    """Open before Closed, newest first."""
    project, _ = permissions.project_for(request, key)
    treating = selectors.treating_decisions(project)
    return [
        risk_to_dict(r, [pk for pk, _ in treating.get(str(r.pk), [])])
        for r in selectors.risks(project)
    ]


@router.post(
    "/projects/{key}/risks", response={201: dict}, openapi_extra=_body(RiskSpec, creating=True)
)
@answers(RISK, etag=True)
def risk_create(request, key: str, response: HttpResponse):
    _, caller = permissions.project_for(request, key)
    risk = services.risk_create(caller=caller, data=json_object(request))
    with_etag(response, risk.revision)
    return _risk_dict(risk)


@router.get("/projects/{key}/risks/{risk_id}")
@answers(RISK, etag=True)
def risk_detail(request, key: str, risk_id: str, response: HttpResponse):
    project, _ = permissions.project_for(request, key)
    risk = get_in_project(Risk, project, risk_id, lock=False)
    with_etag(response, risk.revision)
    return _risk_dict(risk)


@router.patch("/projects/{key}/risks/{risk_id}", openapi_extra=_body(RiskSpec))
@honours_if_match
@answers(RISK, etag=True)
def risk_update(request, key: str, risk_id: str, response: HttpResponse):
    _, caller = permissions.project_for(request, key)
    risk = services.risk_update(
        caller=caller,
        risk_id=risk_id,
        data=json_object(request),
        expected_revision=_if_match(request),
    )
    with_etag(response, risk.revision)
    return _risk_dict(risk)


@router.delete("/projects/{key}/risks/{risk_id}", response={204: None})
@honours_if_match
def risk_delete(request, key: str, risk_id: str):
    _, caller = permissions.project_for(request, key)
    services.risk_delete(caller=caller, risk_id=risk_id, expected_revision=_if_match(request))


@router.post(
    "/projects/{key}/risks/{risk_id}/record-decision",
    response={201: dict},
    openapi_extra=_body(DecisionSpec),
)
@answers(DECISION, etag=True)
def risk_record_decision(request, key: str, risk_id: str, response: HttpResponse):
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


@router.get("/projects/{key}/decisions")
@answers(list_of(DECISION))
def decision_list(request, key: str):
    """Newest first."""
    project, _ = permissions.project_for(request, key)
    return [decision_to_dict(d) for d in selectors.decisions(project)]


@router.post(
    "/projects/{key}/decisions",
    response={201: dict},
    openapi_extra=_body(DecisionSpec, creating=True),
)
@answers(DECISION, etag=True)
def decision_create(request, key: str, response: HttpResponse):
    _, caller = permissions.project_for(request, key)
    decision = services.decision_create(caller=caller, data=json_object(request))
    with_etag(response, decision.revision)
    return decision_to_dict(decision)


@router.get("/projects/{key}/decisions/{decision_id}")
@answers(DECISION, etag=True)
def decision_detail(request, key: str, decision_id: str, response: HttpResponse):
    project, _ = permissions.project_for(request, key)
    decision = get_in_project(Decision, project, decision_id, lock=False)
    with_etag(response, decision.revision)
    return decision_to_dict(decision)


@router.patch("/projects/{key}/decisions/{decision_id}", openapi_extra=_body(DecisionSpec))
@honours_if_match
@answers(DECISION, etag=True)
def decision_update(request, key: str, decision_id: str, response: HttpResponse):
    """updateDecision: pending decisions only; a made decision answers 409."""
    _, caller = permissions.project_for(request, key)
    decision = services.decision_update(
        caller=caller,
        decision_id=decision_id,
        data=json_object(request),
        expected_revision=_if_match(request),
    )
    with_etag(response, decision.revision)
    return decision_to_dict(decision)


# A note's server-written fields, ignored when a client sends a note back.
NOTE_WRITTEN = {
    name: {**CLEAN_JSON, "readOnly": True, "description": "Written by the server; ignored."}
    for name in ("id", "authorAccountId", "at")
}


@router.post(
    "/projects/{key}/decisions/{decision_id}/notes",
    response={201: dict},
    openapi_extra=body_schema({"text": required_text_schema(TEXT_MAX), **NOTE_WRITTEN}, ["text"]),
)
@honours_if_match
@answers(DECISION, etag=True)
def decision_note(request, key: str, decision_id: str, response: HttpResponse):
    """appendDecisionNote: allowed on made decisions and on frozen registers. Author and
    timestamp are written by the server. Answers the decision with its notes."""
    _, caller = permissions.project_for(request, key)
    body = json_object(request)
    decision = services.decision_append_note(
        caller=caller,
        decision_id=decision_id,
        text_value=body.get("text"),
        expected_revision=_if_match(request),
        other_members=other_members(body, "text", *NOTE_WRITTEN),
    )
    with_etag(response, decision.revision)
    return decision_to_dict(decision)


# --- change requests -------------------------------------------------------------------------


@router.get("/projects/{key}/changes")
@answers(list_of(CHANGE))
def change_list(request, key: str):
    """Newest first."""
    project, _ = permissions.project_for(request, key)
    return [change_to_dict(c) for c in selectors.changes(project)]


@router.post(
    "/projects/{key}/changes",
    response={201: dict},
    openapi_extra=_body(ChangeSpec, creating=True),
)
@answers(CHANGE, etag=True)
def change_create(request, key: str, response: HttpResponse):
    _, caller = permissions.project_for(request, key)
    change = services.change_create(caller=caller, data=json_object(request))
    with_etag(response, change.revision)
    return change_to_dict(change)


@router.get("/projects/{key}/changes/{change_id}")
@answers(CHANGE, etag=True)
def change_detail(request, key: str, change_id: str, response: HttpResponse):
    project, _ = permissions.project_for(request, key)
    change = get_in_project(ChangeRequest, project, change_id, lock=False)
    with_etag(response, change.revision)
    return change_to_dict(change)


@router.patch("/projects/{key}/changes/{change_id}", openapi_extra=_body(ChangeSpec))
@honours_if_match
@answers(CHANGE, etag=True)
def change_update(request, key: str, change_id: str, response: HttpResponse):
    """While Proposed only (409 once decided)."""
    _, caller = permissions.project_for(request, key)
    change = services.change_update(
        caller=caller,
        change_id=change_id,
        data=json_object(request),
        expected_revision=_if_match(request),
    )
    with_etag(response, change.revision)
    return change_to_dict(change)


@router.delete("/projects/{key}/changes/{change_id}", response={204: None})
@honours_if_match
def change_delete(request, key: str, change_id: str):
    """While Proposed only (409 once decided)."""
    _, caller = permissions.project_for(request, key)
    services.change_delete(caller=caller, change_id=change_id, expected_revision=_if_match(request))


@router.post(
    "/projects/{key}/changes/{change_id}/adjudicate",
    openapi_extra=body_schema(
        {
            "outcome": {"enum": ["Approved", "Rejected", "Withdrawn"]},
            "decisionComment": {"type": "string", "maxLength": 2000},
        },
        ["outcome"],
    ),
)
@honours_if_match
@answers(CHANGE, etag=True)
def change_adjudicate(request, key: str, change_id: str, response: HttpResponse):
    """Approved or Rejected (a reason is required) by the named approver, else the sponsor;
    Withdrawn by the proposer or an editor."""
    _, caller = permissions.project_for(request, key)
    body = json_object(request)
    change = services.change_adjudicate(
        caller=caller,
        change_id=change_id,
        outcome=body.get("outcome"),
        decision_comment=body.get("decisionComment", ""),
        expected_revision=_if_match(request),
        other_members=other_members(body, "outcome", "decisionComment"),
    )
    with_etag(response, change.revision)
    return change_to_dict(change)
