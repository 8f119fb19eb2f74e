"""The declarations of the stage plan's bodies (governance.specs): a stage as the plan edit
sends it, a criterion added, a dismissal, a gate review requested and the sponsor's decision.
The API's body schemas are read from here; the services keep the stateful rules."""

from typing import Annotated, Any

from pydantic import Field

from charter.specs import TOLERANCE_DAYS_MAX, TolerancePercent
from gates.criteria import CATALOGUE
from gates.models import (
    CRITERION_KINDS,
    NAME_MAX,
    OUTCOMES,
    REVIEW_STATES,
    STAGE_STATES,
    TEXT_MAX,
)
from governance import cleaning, specs
from registers.specs import MINUTES_SCHEMA

STAGES_MAX = 20
PACKAGES_MAX = 500
UNMET_MAX = len(CATALOGUE) * 4


def _ids(value: Any) -> tuple[list[str] | None, str | None]:
    """A list of work package ids (text): blank is none."""
    if value is None:
        return [], None
    if not isinstance(value, list) or len(value) > PACKAGES_MAX:
        return None, f"Must be a list of at most {PACKAGES_MAX} work package ids."
    found = []
    for item in value:
        text, error = cleaning.text(item, max_length=64, required=True)
        if error:
            return None, f"Each work package id: {error}"
        found.append(text)
    return found, None


IDS_SCHEMA: specs.JsonSchema = {
    "type": ["array", "null"],
    "items": {"type": "string", "maxLength": 64},
    "maxItems": PACKAGES_MAX,
}


class StageSpec(specs.Spec):
    """One stage of the plan as the plan edit sends it (`id` names a stage kept)."""

    noun = "stage"

    id: Annotated[Any, specs.OptionalText(64)] = Field(None, title="Stage id")
    name: Annotated[str | None, specs.Text(NAME_MAX, required=True), specs.RequiredOnCreate()] = (
        Field(None, title="Stage name", examples=["Design"])
    )
    planned_start: Annotated[Any, specs.IsoDate()] = Field(None, title="Planned start")
    planned_end: Annotated[Any, specs.IsoDate()] = Field(None, title="Planned end")
    tolerance_days: Annotated[Any, specs.BoundedInteger(0, TOLERANCE_DAYS_MAX)] = Field(
        None, title="Stage time tolerance (days late)"
    )
    tolerance_cost_percent: TolerancePercent = Field(
        None, title="Stage cost tolerance (% over budget)"
    )
    work_package_ids: Annotated[Any, specs.Checked(_ids, IDS_SCHEMA)] = Field(
        None, title="Work packages"
    )


STAGE_SCHEMA: specs.JsonSchema = {
    "type": "object",
    "properties": specs.properties(StageSpec),
    "required": ["name"],
}


def _stages(value: Any) -> tuple[Any, str | None]:
    """The list of stage objects, in their new order; each is checked by `StageSpec` in the
    service (its refusals named stages[i].field)."""
    if not isinstance(value, list) or not value:
        return None, "Send the stages as a list of at least one stage."
    if len(value) > STAGES_MAX:
        return None, f"At most {STAGES_MAX} stages."
    if not all(isinstance(item, dict) for item in value):
        return None, "Each stage is an object."
    return value, None


class StagePlanSpec(specs.Spec):
    """The whole stage plan, in order: the stages kept (with their id), the new ones (without);
    a stage not listed is removed (only one not started)."""

    noun = "stage plan"

    stages: Annotated[
        Any,
        specs.Checked(
            _stages, {"type": "array", "items": STAGE_SCHEMA, "minItems": 1, "maxItems": STAGES_MAX}
        ),
        specs.RequiredOnCreate(),
    ] = Field(None, title="Stages")


def _parameter(value: Any) -> tuple[Any, str | None]:
    """Days (a whole number) or a template kind (text); the criterion's own rule is applied by
    the service (`gates.criteria.clean_parameter`)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value, None
    if isinstance(value, str):
        return cleaning.text(value, max_length=64)
    return None, "Must be a whole number of days or a template kind."


class CriterionSpec(specs.Spec):
    """A criterion of the catalogue the lead adds to a stage's entry or exit."""

    noun = "criterion"

    key: Annotated[str | None, specs.RequiredChoice(tuple(CATALOGUE)), specs.RequiredOnCreate()] = (
        Field(None, title="Criterion")
    )
    kind: Annotated[str | None, specs.OneOf(tuple(CRITERION_KINDS), default="exit")] = Field(
        None, title="Entry or exit"
    )
    parameter: Annotated[
        Any,
        specs.Checked(
            _parameter, {"type": ["integer", "string", "null"], "description": "Days, or a kind."}
        ),
    ] = Field(None, title="Parameter")


RequiredReason = Annotated[
    str | None, specs.Text(TEXT_MAX, required=True), specs.RequiredOnCreate()
]


class DismissalSpec(specs.Spec):
    """The lead dismisses a criterion of a stage, saying why."""

    noun = "dismissal"

    reason: RequiredReason = Field(None, title="Reason")


class GateReviewRequestSpec(specs.Spec):
    """The lead requests the gate review of the current stage; the lessons go into the
    end-stage report the model generates."""

    noun = "gate review request"

    lessons: Annotated[str | None, specs.Text(TEXT_MAX)] = Field(None, title="Lessons")


UNMET_SCHEMA: specs.JsonSchema = {
    "type": "array",
    "maxItems": UNMET_MAX,
    "items": {
        "type": "object",
        "properties": {
            "key": {"enum": list(CATALOGUE)},
            "kind": {"enum": list(CRITERION_KINDS)},
            "reason": cleaning.required_text_schema(TEXT_MAX),
        },
        "required": ["key", "reason"],
    },
}


def _unmet(value: Any) -> tuple[Any, str | specs.Refusals | None]:
    """The unmet criteria the sponsor goes through with: [{key, kind, reason}]."""
    if value is None:
        return [], None
    if not isinstance(value, list) or len(value) > UNMET_MAX:
        return None, f"Must be a list of at most {UNMET_MAX} criteria, each with a reason."
    found: list[dict[str, str]] = []
    refusals: specs.Refusals = {}
    for index, item in enumerate(value):
        if not isinstance(item, dict) or set(item) - {"key", "kind", "reason"}:
            refusals[f"[{index}]"] = ["Must be an object {key, kind, reason}."]
            continue
        key, kind = item.get("key"), item.get("kind") or "exit"
        if key not in CATALOGUE:
            refusals[f"[{index}].key"] = [f"Must be one of: {', '.join(CATALOGUE)}."]
        if kind not in CRITERION_KINDS:
            refusals[f"[{index}].kind"] = [f"Must be one of: {', '.join(CRITERION_KINDS)}."]
        reason, error = cleaning.text(item.get("reason"), max_length=TEXT_MAX, required=True)
        if error:
            refusals[f"[{index}].reason"] = [error]
        if not refusals:
            found.append({"key": str(key), "kind": str(kind), "reason": reason})
    return (None, refusals) if refusals else (found, None)


class GateDecisionSpec(specs.Spec):
    """The sponsor's decision at the gate: Go (the next stage starts), Hold (with the date to
    come back), Recycle (stay and re-plan) or Stop (the business case's Kill act, the comment
    its reason). Going through with unmet criteria names each with a reason."""

    noun = "gate decision"

    outcome: Annotated[
        str | None, specs.RequiredChoice(tuple(OUTCOMES)), specs.RequiredOnCreate()
    ] = Field(None, title="Decision")
    hold_until: Annotated[Any, specs.IsoDate()] = Field(None, title="Hold until")
    comment: Annotated[str | None, specs.Text(TEXT_MAX)] = Field(None, title="Comment")
    unmet_criteria: Annotated[Any, specs.Checked(_unmet, UNMET_SCHEMA)] = Field(
        None, title="Unmet criteria gone through"
    )
    minutes_ref: Annotated[Any, specs.Passed(MINUTES_SCHEMA)] = Field(
        None, title="Steering minutes"
    )


# --- the answers (gates.selectors.plan_answer and review_to_dict) ----------------------------

_TEXT: specs.JsonSchema = {"type": "string"}
_TEXT_OR_NULL: specs.JsonSchema = {"type": ["string", "null"]}
_DAY_OR_NULL: specs.JsonSchema = {"type": ["string", "null"], "format": "date"}
_MOMENT_OR_NULL: specs.JsonSchema = {"type": ["string", "null"], "format": "date-time"}
_ANY_FIGURE: specs.JsonSchema = {"type": ["number", "integer", "string", "object", "null"]}
_ROWS: specs.JsonSchema = {"type": "array", "items": {"type": "object"}}
_CRITERION_PROPERTIES: specs.JsonSchema = {
    "id": _TEXT,
    "key": {"type": "string", "enum": list(CATALOGUE)},
    "kind": {"type": "string", "enum": list(CRITERION_KINDS)},
    "label": _TEXT,
    "checks": _TEXT,
    "parameter": {"type": ["integer", "string", "null"]},
    "addedByAccountId": _TEXT_OR_NULL,
    "dismissed": {"type": "boolean"},
    "dismissedAt": _MOMENT_OR_NULL,
    "dismissedByAccountId": _TEXT_OR_NULL,
    "dismissalReason": _TEXT_OR_NULL,
    "met": {"type": ["boolean", "null"]},
    "figure": _ANY_FIGURE,
    "summary": _TEXT,
    "rows": _ROWS,
}
CRITERION_ANSWER = specs.object_answer(_CRITERION_PROPERTIES)
_STAGE_PROPERTIES: specs.JsonSchema = {
    "id": _TEXT,
    "position": {"type": "integer"},
    "name": _TEXT,
    "state": {"type": "string", "enum": list(STAGE_STATES)},
    "plannedStart": _DAY_OR_NULL,
    "plannedEnd": _DAY_OR_NULL,
    "toleranceDays": {"type": ["integer", "null"]},
    "toleranceCostPercent": {"type": ["number", "null"]},
    "startedAt": _MOMENT_OR_NULL,
    "endedAt": _MOMENT_OR_NULL,
    "workPackages": {
        "type": "array",
        "items": specs.object_answer({"id": _TEXT, "name": _TEXT, "status": _TEXT}),
    },
    "figures": {
        "type": "object",
        "properties": {
            "slipDays": {"type": ["integer", "null"]},
            "latePackages": _ROWS,
            "costOverPercent": {"type": ["number", "null"]},
            "costBasis": {"type": "string", "enum": ["earnedValue", "forecast"]},
        },
    },
    "criteria": {"type": "array", "items": CRITERION_ANSWER},
    "revision": {"type": "integer"},
}
STAGE_ANSWER = specs.object_answer(_STAGE_PROPERTIES)
_REVIEW_PROPERTIES: specs.JsonSchema = {
    "id": _TEXT,
    "stageId": _TEXT,
    "stageName": _TEXT,
    "state": {"type": "string", "enum": list(REVIEW_STATES)},
    "requestedAt": {"type": "string", "format": "date-time"},
    "requestedByAccountId": _TEXT,
    "report": {"type": "object", "description": "The end-stage report as generated."},
    "outcome": {"type": ["string", "null"], "enum": [*OUTCOMES, None]},
    "holdUntil": _DAY_OR_NULL,
    "comment": _TEXT_OR_NULL,
    "unmetCriteria": {
        "type": "array",
        "items": specs.object_answer({"key": _TEXT, "kind": _TEXT, "reason": _TEXT}),
    },
    "decidedAt": _MOMENT_OR_NULL,
    "decidedByAccountId": _TEXT_OR_NULL,
    "decisionId": _TEXT_OR_NULL,
    "minutesRef": {"type": ["object", "null"]},
    "revision": {"type": "integer"},
}
REVIEW_ANSWER = specs.object_answer(_REVIEW_PROPERTIES)


def plan_answer_schema(stage: specs.JsonSchema, review: specs.JsonSchema) -> specs.JsonSchema:
    """What `gates.selectors.plan_answer` answers, with the stage and review components."""
    properties: specs.JsonSchema = {
        "projectKey": _TEXT,
        "stages": {"type": "array", "items": stage},
        "revision": {"type": "integer"},
        "currentStageId": _TEXT_OR_NULL,
        "editable": {"type": "boolean"},
        "frozenBecause": _TEXT_OR_NULL,
        "openReview": {"anyOf": [review, {"type": "null"}]},
        "daysAtGate": {"type": ["integer", "null"]},
        "canEdit": {"type": "boolean"},
        "canDecide": {"type": "boolean"},
    }
    return specs.object_answer(properties)
