"""JSON API of project status and status reports (mounted at /api/v1). Every write goes
through `status.services`; reads carry the derived values from `derive`."""

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router

from governance import permissions, specs
from governance.api import answers, body_schema, component, json_object, list_of, with_etag
from governance.concurrency import honours_if_match, read_if_match
from governance.errors import NotFound, ValidationFailed
from governance.models import Project
from status import derive, exceptions, selectors, services
from status.models import REPORT_STATES, StatusReport
from status.serializers import report_summary, report_to_dict, status_to_dict
from status.specs import (
    EXCEPTION_RECORD_SCHEMA,
    ExceptionDecisionSpec,
    ExceptionReportSpec,
    StatusReportSpec,
    StatusSpec,
    exception_view_schema,
)

router = Router(tags=["status"])

STATUS_BODY = body_schema(*specs.body(StatusSpec, creating=False))
REPORT_BODY = body_schema(*specs.body(StatusReportSpec, creating=False))
# The status and its reports as the API answers them (status.serializers), from their
# declarations; a report in a list is the summary (no keyMessages, no snapshot).
PROJECT_STATUS = component("ProjectStatus", specs.response_schema(StatusSpec))
STATUS_REPORT = component("StatusReport", specs.response_schema(StatusReportSpec))
REPORT_SUMMARY = component(
    "StatusReportSummary",
    specs.response_schema(
        StatusReportSpec,
        [a for a in specs.fields(StatusReportSpec) if a not in ("keyMessages", "snapshot")],
    ),
)


def _status_response(project: Project, response: HttpResponse) -> dict[str, Any]:
    view = selectors.view_for(project)
    with_etag(response, view.status.revision)
    return status_to_dict(view)


@router.get("/projects/{key}/status")
@answers(PROJECT_STATUS, etag=True)
def status_get(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """The project status: the spec's stored fields, `derived` and `effective`
    ({costRag, scheduleRag, scopeRag, riskRag}), `drivers` per dimension, `stale`, the
    initiation checklist and the realisation review due date."""
    project, _ = permissions.project_for(request, key)
    return _status_response(project, response)


@router.patch("/projects/{key}/status", openapi_extra=STATUS_BODY)
@honours_if_match
@answers(PROJECT_STATUS, etag=True)
def status_patch(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """Editors. Derived read-only fields sent back are ignored; unknown fields are refused.
    Honours If-Match (412 when stale). Always stamps lastUpdatedAt/By."""
    project, caller = permissions.editable_project_for(request, key)
    expected = read_if_match(request)
    services.status_update(caller=caller, data=json_object(request), expected_revision=expected)
    return _status_response(project, response)


def _item_id(request: HttpRequest) -> Any:
    """The body's itemId as sent (any JSON value): the service checks it."""
    body = json_object(request)
    unknown = [k for k in body if k != "itemId"]
    if unknown:
        raise ValidationFailed({k: ["Unknown field."] for k in unknown})
    return body.get("itemId")


_ITEM_BODY = body_schema({"itemId": {"enum": derive.CHECKLIST_IDS}}, ["itemId"])


def _checklist_act(
    request: HttpRequest, key: str, response: HttpResponse, act: Callable[..., Any]
) -> dict[str, Any]:
    """An initiation checklist item's act (`act`: the service) and the status it leaves."""
    project, caller = permissions.editable_project_for(request, key)
    expected = read_if_match(request)
    act(caller=caller, item_id=_item_id(request), expected_revision=expected)
    return _status_response(project, response)


@router.post("/projects/{key}/status/initiation/dismiss", openapi_extra=_ITEM_BODY)
@honours_if_match
@answers(PROJECT_STATUS, etag=True)
def checklist_dismiss(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """Dismiss an initiation checklist item (initiationDismissals keeps when)."""
    return _checklist_act(request, key, response, services.status_checklist_dismiss)


@router.post("/projects/{key}/status/initiation/restore", openapi_extra=_ITEM_BODY)
@honours_if_match
@answers(PROJECT_STATUS, etag=True)
def checklist_restore(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """Bring a dismissed initiation checklist item back."""
    return _checklist_act(request, key, response, services.status_checklist_restore)


@router.post("/projects/{key}/status/initiation/acknowledge")
@honours_if_match
@answers(PROJECT_STATUS, etag=True)
def initiation_acknowledge(
    request: HttpRequest, key: str, response: HttpResponse
) -> dict[str, Any]:
    """Acknowledge initiation as complete (initiationCompletedAt); 409 when already complete."""
    project, caller = permissions.editable_project_for(request, key)
    expected = read_if_match(request)
    services.status_initiation_acknowledge(caller=caller, expected_revision=expected)
    return _status_response(project, response)


@router.get(
    "/projects/{key}/status/reports", openapi_extra={"x-enums": {"state": list(REPORT_STATES)}}
)
@answers(list_of(REPORT_SUMMARY))
def report_list(request: HttpRequest, key: str, state: str | None = None) -> list[dict[str, Any]]:
    """Status reports: the draft (if any) first, then the published ones, newest first. Each
    carries the overall and effective RAGs it froze (the trend). Filter: state."""
    project, _ = permissions.project_for(request, key)
    if state is not None and state not in REPORT_STATES:
        raise ValidationFailed({"state": [f"Must be one of: {', '.join(REPORT_STATES)}."]})
    reports = selectors.reports(project, states=[state] if state else None)
    return [report_summary(r) for r in reports]


@router.post("/projects/{key}/status/reports", response={201: dict}, openapi_extra=REPORT_BODY)
@answers(STATUS_REPORT, etag=True)
def report_create(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """Start a draft (editors). Title defaults to today's date; key messages start from the
    status' key messages. 409 while another draft exists."""
    _project, caller = permissions.editable_project_for(request, key)
    report = services.status_report_create(caller=caller, data=json_object(request))
    return _report_response(report, response)


def _report_response(report: StatusReport, response: HttpResponse) -> dict[str, Any]:
    with_etag(response, report.revision)
    return report_to_dict(report)


def _report_write(
    request: HttpRequest,
    key: str,
    report_id: str,
    response: HttpResponse,
    service: Callable[..., StatusReport],
    *,
    with_body: bool = False,
) -> dict[str, Any]:
    """A write on one report by an editor, against the request's If-Match (`with_body`: the
    request's JSON body is its data), answered with the report."""
    _project, caller = permissions.editable_project_for(request, key)
    expected = read_if_match(request)
    body = {"data": json_object(request)} if with_body else {}
    report = service(caller=caller, report_id=report_id, expected_revision=expected, **body)
    return _report_response(report, response)


def _report(project: Project, report_id: str) -> StatusReport:
    report = selectors.report_in(project, report_id)
    if report is None:
        raise NotFound(f"No such status report in {project.key}.")
    return report


@router.get("/projects/{key}/status/reports/{report_id}")
@answers(STATUS_REPORT, etag=True)
def report_get(
    request: HttpRequest, key: str, report_id: str, response: HttpResponse
) -> dict[str, Any]:
    """One report; a published one with its immutable `snapshot` (the status representation
    as it was, with derived values and drivers)."""
    project, _ = permissions.project_for(request, key)
    return _report_response(_report(project, report_id), response)


@router.patch("/projects/{key}/status/reports/{report_id}", openapi_extra=REPORT_BODY)
@honours_if_match
@answers(STATUS_REPORT, etag=True)
def report_patch(
    request: HttpRequest, key: str, report_id: str, response: HttpResponse
) -> dict[str, Any]:
    """Edit a draft's title and key messages. 409 once published."""
    return _report_write(
        request, key, report_id, response, services.status_report_update, with_body=True
    )


@router.delete("/projects/{key}/status/reports/{report_id}", response={204: None})
@honours_if_match
def report_delete(request: HttpRequest, key: str, report_id: str) -> None:
    """Discard a draft. 409 for a published report: those are never deleted."""
    _project, caller = permissions.editable_project_for(request, key)
    expected = read_if_match(request)
    services.status_report_delete(caller=caller, report_id=report_id, expected_revision=expected)
    return None


@router.post("/projects/{key}/status/reports/{report_id}/publish")
@honours_if_match
@answers(STATUS_REPORT, etag=True)
def report_publish(
    request: HttpRequest, key: str, report_id: str, response: HttpResponse
) -> dict[str, Any]:
    """Publish a draft: freezes the snapshot. 409 when already published."""
    return _report_write(request, key, report_id, response, services.status_report_publish)


# --- tolerances and exceptions (status.exceptions) ------------------------------------------

EXCEPTION_REPORT_BODY = body_schema(*specs.body(ExceptionReportSpec, creating=True))
EXCEPTION_DECISION_BODY = body_schema(*specs.body(ExceptionDecisionSpec, creating=True))


# The exception's answers (status.exceptions.project_exception and to_dict), as declared.
EXCEPTION_RECORD = component("ProjectException", EXCEPTION_RECORD_SCHEMA)
PROJECT_EXCEPTION = component("ProjectExceptionView", exception_view_schema(EXCEPTION_RECORD))


def _exception_response(project: Project, response: HttpResponse) -> dict[str, Any]:
    answer = exceptions.project_exception(project)
    if answer["exception"]:
        with_etag(response, answer["exception"]["revision"])
    return answer


@router.get("/projects/{key}/exception")
@answers(PROJECT_EXCEPTION, etag=True)
def exception_get(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """The tolerances, the figures beyond them now (`crossed`), whether the project is in
    exception and its undecided exception (report, events, age) or null."""
    project, _ = permissions.project_for(request, key)
    return _exception_response(project, response)


@router.get("/projects/{key}/exceptions")
@answers(
    {"type": "object", "properties": {"items": list_of(EXCEPTION_RECORD)}, "required": ["items"]}
)
def exception_history(request: HttpRequest, key: str) -> dict[str, Any]:
    """Every exception of the project, newest first, decided ones included."""
    project, _ = permissions.project_for(request, key)
    return {"items": [exceptions.to_dict(record) for record in exceptions.history(project)]}


@router.put("/projects/{key}/exception/report", openapi_extra=EXCEPTION_REPORT_BODY)
@honours_if_match
@answers(PROJECT_EXCEPTION, etag=True)
def exception_report_put(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """The Project Lead's exception report (written or rewritten until decided); the plan's
    figures become a change request to the sponsor. Honours If-Match."""
    project, caller = permissions.project_for(request, key)
    exceptions.exception_report(
        caller=caller, data=json_object(request), expected_revision=read_if_match(request)
    )
    return _exception_response(project, response)


@router.post("/projects/{key}/exception/decision", openapi_extra=EXCEPTION_DECISION_BODY)
@honours_if_match
@answers(PROJECT_EXCEPTION, etag=True)
def exception_decision_post(
    request: HttpRequest, key: str, response: HttpResponse
) -> dict[str, Any]:
    """The sponsor's decision: AcceptPlan (the plan's change request is approved) or Kill (the
    business case's Kill act; comment required as its reason). Closes the exception."""
    project, caller = permissions.project_for(request, key)
    exceptions.exception_decide(
        caller=caller, data=json_object(request), expected_revision=read_if_match(request)
    )
    return _exception_response(project, response)
