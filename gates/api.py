"""JSON API of the stage plan and its gates (mounted at /api/v1). Every write goes through
`gates.services`; every read answers the plan with each stage's criteria evaluated live
(`gates.selectors.plan_answer`)."""

from typing import Any

from django.http import HttpRequest
from ninja import Router, Status

from gates import selectors, services
from gates.specs import (
    REVIEW_ANSWER,
    STAGE_ANSWER,
    CriterionSpec,
    DismissalSpec,
    GateDecisionSpec,
    GateReviewRequestSpec,
    StagePlanSpec,
    plan_answer_schema,
)
from governance import permissions, specs
from governance.api import answers, body_schema, component, json_object, list_of
from governance.concurrency import honours_if_match, read_if_match

router = Router(tags=["gates"])

PLAN_BODY = body_schema(*specs.body(StagePlanSpec, creating=True))
CRITERION_BODY = body_schema(*specs.body(CriterionSpec, creating=True))
DISMISSAL_BODY = body_schema(*specs.body(DismissalSpec, creating=True))
REQUEST_BODY = body_schema(*specs.body(GateReviewRequestSpec, creating=True))
DECISION_BODY = body_schema(*specs.body(GateDecisionSpec, creating=True))

GATE_REVIEW = component("GateReview", REVIEW_ANSWER)
STAGE = component("Stage", STAGE_ANSWER)
STAGE_PLAN = component("StagePlan", plan_answer_schema(STAGE, GATE_REVIEW))


def _plan(request: HttpRequest, key: str) -> dict[str, Any]:
    project, caller = permissions.project_for(request, key)
    return selectors.plan_answer(project, caller)


@router.get("/projects/{key}/stages")
@answers(STAGE_PLAN)
def stage_plan_get(request: HttpRequest, key: str) -> dict[str, Any]:
    """The stage plan in order: each stage's dates, packages, stage tolerances, figures and
    entry and exit criteria evaluated now (met or not, the figure, the rows behind it); the
    current stage, the review awaiting the sponsor (and its days at the gate), and whether
    the plan may be edited now (and why not)."""
    return _plan(request, key)


@router.post("/projects/{key}/stages", response={201: dict})
@answers(STAGE_PLAN)
def stage_plan_post(request: HttpRequest, key: str) -> Status[dict[str, Any]]:
    """Editors: make the plan from the site's default stages with the default criteria,
    while the plan is editable. 409 when the project has a plan already."""
    _, caller = permissions.project_for(request, key)
    services.stage_plan_create(caller=caller, data=json_object(request))
    return Status(201, _plan(request, key))


@router.put("/projects/{key}/stages", openapi_extra=PLAN_BODY)
@honours_if_match
@answers(STAGE_PLAN)
def stage_plan_put(request: HttpRequest, key: str) -> dict[str, Any]:
    """Editors: the whole plan in order (`stages`: a kept stage by its id, a new one without;
    a planned stage not listed is removed), If-Match the plan's `revision` (412 when the plan
    changed since). Stage tolerances may not exceed the project's.
    409 once the business case is approved, unless an approved change request opened the
    amendment."""
    _, caller = permissions.project_for(request, key)
    services.stage_plan_update(
        caller=caller,
        data=json_object(request),
        expected_revision=read_if_match(request),
    )
    return _plan(request, key)


@router.post(
    "/projects/{key}/stages/{stage_id}/criteria", response={201: dict}, openapi_extra=CRITERION_BODY
)
@answers(STAGE_PLAN)
def criterion_post(request: HttpRequest, key: str, stage_id: str) -> Status[dict[str, Any]]:
    """Editors: name a criterion of the catalogue on the stage's entry or exit (a dismissed
    one is named again), with its parameter."""
    _, caller = permissions.project_for(request, key)
    services.criterion_add(caller=caller, stage_id=stage_id, data=json_object(request))
    return Status(201, _plan(request, key))


@router.post(
    "/projects/{key}/stages/{stage_id}/criteria/{criterion_id}/dismissal",
    openapi_extra=DISMISSAL_BODY,
)
@answers(STAGE_PLAN)
def criterion_dismissal_post(
    request: HttpRequest, key: str, stage_id: str, criterion_id: str
) -> dict[str, Any]:
    """Editors: dismiss a criterion of the stage with a reason (who and when recorded)."""
    _, caller = permissions.project_for(request, key)
    services.criterion_dismiss(
        caller=caller, stage_id=stage_id, criterion_id=criterion_id, data=json_object(request)
    )
    return _plan(request, key)


@router.get("/projects/{key}/gate-reviews")
@answers({"type": "object", "properties": {"items": list_of(GATE_REVIEW)}, "required": ["items"]})
def gate_reviews_get(request: HttpRequest, key: str) -> dict[str, Any]:
    """Every gate review of the project, newest first, with its end-stage report as
    generated and, once decided, the outcome and the decision-log entry it made."""
    project, _ = permissions.project_for(request, key)
    return {"items": [selectors.review_to_dict(r) for r in selectors.reviews(project)]}


@router.post("/projects/{key}/gate-reviews", response={201: dict}, openapi_extra=REQUEST_BODY)
@answers(STAGE_PLAN)
def gate_review_post(request: HttpRequest, key: str) -> Status[dict[str, Any]]:
    """Editors: request the gate review of the current stage (the end-stage report is
    generated from the model and stored); the sponsor is notified. 409 without a current
    stage or with a review already waiting."""
    _, caller = permissions.project_for(request, key)
    services.gate_review_request(caller=caller, data=json_object(request))
    return Status(201, _plan(request, key))


@router.post("/projects/{key}/gate-reviews/decision", openapi_extra=DECISION_BODY)
@answers(STAGE_PLAN)
def gate_decision_post(request: HttpRequest, key: str) -> dict[str, Any]:
    """The sponsor (not the requester): Go, Hold (holdUntil), Recycle or Stop (comment: the
    reason; the business case's Kill act). A Go with unmet criteria names each in
    unmetCriteria with a reason. Written as a made decision of the decision log."""
    _, caller = permissions.project_for(request, key)
    services.gate_review_decide(caller=caller, data=json_object(request))
    return _plan(request, key)
