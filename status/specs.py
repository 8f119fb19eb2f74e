"""The declarations of the project status and of a status report (governance.specs): each
field once, with its rule, its label and its choices. The API's body schemas, the agent's
tool schemas, the form's fields, the labels, the writable and read-only lists and the audit
snapshot are read from here; the services keep only the stateful rules."""

import json
from decimal import Decimal
from typing import Annotated, Any

from pydantic import Field

from charter.models import APPROVAL_STATUSES
from charter.specs import TolerancesSpec
from governance import specs
from governance.cleaning import refusals, required_texts, required_texts_schema
from governance.models import BR_CADENCES, RAG_CHOICES
from status import earned_value
from status.models import (
    CONFIDENCES,
    DIMENSIONS,
    EXCEPTION_DECISIONS,
    EXCEPTION_STATES,
    PHASE_MAX,
    REPORT_STATES,
    REPORT_TITLE_MAX,
    REPORTING_CADENCES,
    SETTLING_ACTS,
    STATUS_REASON_MAX,
    TEXT_MAX,
)

# projectMetrics is passed through as given; this only keeps one status from growing unbounded.
PROJECT_METRICS_MAX_CHARS = 50_000
COMMENTARY_MESSAGE = "Must be an object {keyMessages, keyRisks, decisionsRequired}."
OVERRIDE_DESCRIPTION = "Red, Amber, Green, Blue, None; anything else becomes null (use derived)."
REASON_DESCRIPTION = f"Trimmed and clamped to {STATUS_REASON_MAX} characters."


def clamp_reason(value: Any) -> tuple[str, str | None]:
    """A status reason line: trimmed and clamped to STATUS_REASON_MAX (the spec's one lenient
    length rule); an empty string (or null) clears it."""
    if value is None:
        return "", None
    if not isinstance(value, str):
        return "", "Must be text."
    return value.strip()[:STATUS_REASON_MAX].rstrip(), None


class Override(specs.Lenient):
    """A RAG override: the spec's lenient enum (anything else is null: use the derived RAG).
    Any value is taken, so the document names no type."""

    def schema(self) -> specs.JsonSchema:
        return {"description": OVERRIDE_DESCRIPTION}


Reason = Annotated[
    str | None, specs.Checked(clamp_reason, {"type": "string", "description": REASON_DESCRIPTION})
]
Rag = Override(tuple(RAG_CHOICES), fallback=None)


class CommentarySpec(specs.Spec):
    """The status' structured commentary: three texts."""

    noun = "structured commentary"

    key_messages: Annotated[str | None, specs.Text(TEXT_MAX)] = Field(None, title="Key messages")
    key_risks: Annotated[str | None, specs.Text(TEXT_MAX)] = Field(None, title="Key risks")
    decisions_required: Annotated[str | None, specs.Text(TEXT_MAX)] = Field(
        None, title="Decisions required"
    )


COMMENTARY_KEYS = specs.writable(CommentarySpec)


def clean_commentary(value: Any) -> tuple[dict[str, Any] | None, str | specs.Refusals | None]:
    """Empty (null, "", {}) or three empty texts is null; else all three texts."""
    if value in (None, "", {}):
        return None, None
    if not isinstance(value, dict):
        return None, COMMENTARY_MESSAGE
    partial, errors = specs.validate(CommentarySpec, value)
    if errors:
        return None, {f".{path}": messages for path, messages in errors.items()}
    cleaned = {api: getattr(partial, field.name) for api, field in _commentary_sent(partial)}
    if not any(cleaned.values()):
        return None, None
    return {key: cleaned.get(key, "") for key in COMMENTARY_KEYS}, None


def _commentary_sent(partial: CommentarySpec) -> list[tuple[str, specs.Declared]]:
    return [
        (api, field)
        for api, field in specs.fields(CommentarySpec).items()
        if field.name in partial.model_fields_set
    ]


def clean_metrics(value: Any) -> tuple[Any, specs.Refusals | str | None]:
    """Any JSON, stored as given; no text a field refuses at any depth, and not too large."""
    refused = refusals({"projectMetrics": value})
    if refused:
        return None, {
            path.removeprefix("projectMetrics"): [message]
            for path, message in sorted(refused.items())
        }
    try:
        size = len(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return None, "Must be JSON."
    if size > PROJECT_METRICS_MAX_CHARS:
        return None, f"At most {PROJECT_METRICS_MAX_CHARS} characters of JSON (this has {size})."
    return value, None


COMMENTARY_SCHEMA = {
    "type": ["object", "null"],
    "properties": specs.properties(CommentarySpec),
    "additionalProperties": False,
}
# --- what the status answers in its read-only fields (the response schema) -------------------

_MONEY = specs.MONEY_ANSWER
_NUMBER = specs.NUMBER_OR_NULL_SCHEMA
_INTEGER = specs.INTEGER_OR_NULL_SCHEMA
_STRING: specs.JsonSchema = {"type": "string"}
_RAG: specs.JsonSchema = specs.enum_answer(RAG_CHOICES)
RAGS_SCHEMA = specs.object_answer(
    {f"{key}Rag": _RAG for key in DIMENSIONS},
    description="The RAG of each dimension: cost, schedule, scope, risk.",
)
DRIVER_SCHEMA = specs.object_answer(
    {
        "text": _STRING,
        "type": {**specs.TEXT_OR_NULL_SCHEMA, "description": "The kind of record it points at."},
        "id": {**specs.TEXT_OR_NULL_SCHEMA, "description": "The record's id."},
    }
)
DIMENSION_SCHEMA = specs.object_answer(
    {
        "rag": _RAG,
        "summary": _STRING,
        "figures": {
            "type": "object",
            "additionalProperties": True,
            "description": "The figures the RAG was derived from (by dimension).",
        },
        "drivers": {"type": "array", "items": DRIVER_SCHEMA},
    }
)
DRIVERS_SCHEMA = specs.object_answer({f"{key}Rag": DIMENSION_SCHEMA for key in DIMENSIONS})
# A portfolio row's drivers: each dimension's RAG, summary and figures, without the rows.
DRIVER_SUMMARIES_SCHEMA = specs.object_answer(
    {
        f"{key}Rag": {**DIMENSION_SCHEMA, "required": ["rag", "summary", "figures"]}
        for key in DIMENSIONS
    }
)
FIGURES_SCHEMA = specs.object_answer(
    {
        "approvedBudget": _MONEY,
        "eac": _MONEY,
        "costOverrunPct": _NUMBER,
        "scheduleSlipDays": _INTEGER,
        "topRiskScore": _INTEGER,
        "pendingDecisions": {"type": "integer"},
        "changesAwaitingApplication": {"type": "integer"},
        "adoptionGap": {"type": "boolean"},
        "theme": _STRING,
        "version": {"type": "integer"},
    },
    optional=["eac"],
)
BENEFIT_SCHEMA = specs.object_answer(
    {
        "approvedBenefit": _MONEY,
        "forecastBenefit": _MONEY,
        "benefitShortfallPct": _NUMBER,
        "approvedRecorded": {"type": "boolean"},
        "summary": _STRING,
    },
    optional=["approvedRecorded", "summary"],
)
THRESHOLDS_SCHEMA: specs.JsonSchema = {
    "type": "object",
    "description": "The thresholds the RAGs are derived with (the site's, or this project's).",
    "additionalProperties": {"type": "number"},
}
CHECKLIST_ITEM_SCHEMA = specs.object_answer(
    {
        "id": _STRING,
        "label": _STRING,
        "done": {"type": "boolean"},
        "detail": _STRING,
        "dismissedAt": specs.MOMENT_SCHEMA,
    }
)
REALISATION_REVIEW_SCHEMA = specs.object_answer(
    {
        "cadence": specs.enum_answer(BR_CADENCES, nullable=True),
        "cadenceSource": specs.TEXT_OR_NULL_SCHEMA,
        "lastReviewAt": specs.MOMENT_SCHEMA,
        "startedAt": specs.MOMENT_SCHEMA,
        "dueOn": specs.DAY_SCHEMA,
        "overdue": {"type": "boolean"},
    },
    nullable=True,
    optional=["cadence", "cadenceSource", "lastReviewAt", "startedAt", "dueOn", "overdue"],
)


def _earned_value_properties() -> dict[str, specs.JsonSchema]:
    """Each figure (status.earned_value.FIGURES): money or an index, null when not given."""
    found: dict[str, specs.JsonSchema] = {}
    for key, (abbreviation, name, formula) in earned_value.FIGURES.items():
        kind = _MONEY if key in earned_value.MONEY_KEYS else _NUMBER
        found[key] = {
            **kind,
            "description": f"{abbreviation}, {name.lower()}: {formula}. Null when not given.",
        }
    return found


EARNED_VALUE_MISSING = {
    "type": "array",
    "description": "Why a figure is not given: the input missing, in words, and the packages.",
    "items": specs.object_answer(
        {
            "input": specs.enum_answer(["baseline", "phasing", "progress", "actuals"]),
            "text": _STRING,
            "packages": {"type": "array", "items": _STRING},
        },
        optional=["packages"],
    ),
}
EARNED_VALUE_PACKAGE = specs.object_answer(
    {
        "id": _STRING,
        "name": _STRING,
        **_earned_value_properties(),
        "missing": EARNED_VALUE_MISSING,
        "counted": {"type": "integer"},
        "notCounted": specs.TEXTS_SCHEMA,
    },
    optional=["notCounted"],
)
EARNED_VALUE_SCHEMA = specs.object_answer(
    {
        **_earned_value_properties(),
        "missing": EARNED_VALUE_MISSING,
        "counted": {"type": "integer", "description": "The work packages counted."},
        "notCounted": {
            **specs.TEXTS_SCHEMA,
            "description": "The packages without a baseline budget (absent when none).",
        },
        "readings": {
            "type": "object",
            "description": "Each figure in words, or why it is not given.",
            "properties": {key: _STRING for key in earned_value.FIGURES},
            "additionalProperties": _STRING,
        },
        "workPackages": {"type": "array", "items": EARNED_VALUE_PACKAGE},
        "estimatesCompared": {
            **specs.TEXT_OR_NULL_SCHEMA,
            "description": "How the cost-performance estimate differs from figures.eac, in "
            "words (null when either is not given).",
        },
    },
    nullable=True,
    optional=["notCounted", "readings", "workPackages", "estimatesCompared"],
    description="The project's earned value (docs/product.md, Earned value).",
)


class StatusSpec(specs.Spec):
    """The project status (one per project): what an editor writes, and what the
    representation answers besides (ignored when sent back)."""

    noun = "project status"

    overall_rag: Annotated[str | None, specs.OneOf(tuple(RAG_CHOICES), default="None")] = Field(
        None, title="Overall RAG"
    )
    overall_reason: Reason = Field(None, title="Overall reason")
    phase: Annotated[str | None, specs.Text(PHASE_MAX)] = Field(None, title="Phase")
    reporting_cadence: Annotated[str | None, specs.RequiredChoice(tuple(REPORTING_CADENCES))] = (
        Field(None, title="Reporting cadence")
    )
    outcome_confidence: Annotated[str | None, specs.OneOf(tuple(CONFIDENCES))] = Field(
        None, title="Outcome confidence"
    )
    adoption_confidence: Annotated[str | None, specs.OneOf(tuple(CONFIDENCES))] = Field(
        None, title="Adoption confidence"
    )
    confidence_reason: Reason = Field(None, title="Confidence reason")
    cost_rag_override: Annotated[str | None, Rag, specs.SiteLabel()] = Field(
        None, title="Cost override"
    )
    cost_rag_override_reason: Annotated[Reason, specs.SiteLabel()] = Field(
        None, title="Cost commentary"
    )
    schedule_rag_override: Annotated[str | None, Rag, specs.SiteLabel()] = Field(
        None, title="Schedule override"
    )
    schedule_rag_override_reason: Annotated[Reason, specs.SiteLabel()] = Field(
        None, title="Schedule commentary"
    )
    scope_rag_override: Annotated[str | None, Rag, specs.SiteLabel()] = Field(
        None, title="Scope override"
    )
    scope_rag_override_reason: Annotated[Reason, specs.SiteLabel()] = Field(
        None, title="Scope commentary"
    )
    risk_rag_override: Annotated[str | None, Rag, specs.SiteLabel()] = Field(
        None, title="Risk override"
    )
    revised_forecast: Annotated[Decimal | None, specs.NullableNumber(), specs.SiteLabel()] = Field(
        None, title="Revised forecast (EAC)"
    )
    pm_key_message: Annotated[str | None, specs.Text(TEXT_MAX), specs.SiteLabel()] = Field(
        None, title="Steering key message"
    )
    br_cadence: Annotated[str | None, specs.OneOf(tuple(BR_CADENCES)), specs.SiteLabel()] = Field(
        None, title="Benefit review cadence"
    )
    structured_commentary: Annotated[
        dict[str, Any] | None, specs.Checked(clean_commentary, COMMENTARY_SCHEMA)
    ] = Field(None, title="Structured commentary")
    project_metrics: Annotated[
        Any,
        specs.Checked(
            clean_metrics,
            {"description": "Any JSON, stored as given."},
            answered={**specs.ANY_JSON_SCHEMA, "description": "Any JSON, stored as given."},
        ),
    ] = Field(None, title="Project metrics")

    # Answered, never written from a body.
    project_key: specs.Identifier = None
    last_updated_at: specs.Moment = None
    last_updated_by_account_id: Annotated[specs.AnsweredAccount, specs.SiteLabel()] = Field(
        None, title="Last updated by"
    )
    initiation_started_at: specs.Moment = None
    initiation_completed_at: specs.Moment = None
    initiation_dismissals: Annotated[
        Any,
        specs.ReadOnly(
            {
                "type": "object",
                "additionalProperties": specs.MOMENT_SCHEMA,
                "description": "Checklist item id -> when it was dismissed.",
            }
        ),
    ] = None
    # Derived on read (status.derive.StatusView), each by its one function.
    derived: Annotated[Any, specs.ReadOnly(RAGS_SCHEMA), specs.Derived()] = None
    effective: Annotated[Any, specs.ReadOnly(RAGS_SCHEMA), specs.Derived()] = None
    drivers: Annotated[Any, specs.ReadOnly(DRIVERS_SCHEMA), specs.Derived()] = None
    stale: Annotated[specs.AnsweredFlag, specs.Derived()] = None
    next_update_due_at: Annotated[specs.Moment, specs.Derived()] = None
    initiation_checklist: Annotated[
        Any,
        specs.ReadOnly({"type": "array", "items": CHECKLIST_ITEM_SCHEMA}),
        specs.Derived("checklist"),
    ] = None
    realisation_review: Annotated[
        Any, specs.ReadOnly(REALISATION_REVIEW_SCHEMA), specs.Derived()
    ] = None
    approval_status: Annotated[
        Any,
        specs.ReadOnly(specs.enum_answer(APPROVAL_STATUSES)),
        specs.Derived("facts.approval_status"),
    ] = None
    figures: Annotated[Any, specs.ReadOnly(FIGURES_SCHEMA), specs.Derived()] = Field(
        None,
        description="The portfolio figures of the project: approvedBudget; eac, the estimate at "
        "completion (the project manager's revisedForecast, else the work packages' forecasts: "
        "the cost RAG judges it); costOverrunPct; scheduleSlipDays; topRiskScore, the highest "
        "open risk score (residual where assessed, else inherent); pendingDecisions; "
        "changesAwaitingApplication; adoptionGap; theme; version.",
    )
    benefit: Annotated[Any, specs.ReadOnly(BENEFIT_SCHEMA), specs.Derived()] = None
    thresholds: Annotated[Any, specs.ReadOnly(THRESHOLDS_SCHEMA), specs.Derived()] = None
    revision: Annotated[specs.Revision, specs.Derived("status.revision")] = None
    earned_value: Annotated[
        Any, specs.ReadOnly(EARNED_VALUE_SCHEMA), specs.Derived("earned_value_body")
    ] = Field(
        None,
        description="Earned value: bac, pv, ev, ac, cv, sv, cpi, spi, costPerformanceEstimate "
        "(BAC / CPI: not the estimate at completion, which is figures.eac), atypicalEstimate "
        "(AC + (BAC - EV)), vac (BAC - costPerformanceEstimate), tcpi; missing, readings, "
        "workPackages; estimatesCompared, how the cost-performance estimate differs from "
        "figures.eac in words.",
    )


class StatusReportSpec(specs.Spec):
    """A status report: an editor writes the title and the key messages of a draft."""

    noun = "status report"

    title: Annotated[str | None, specs.Text(REPORT_TITLE_MAX, required=True)] = Field(
        None, title="Title"
    )
    key_messages: Annotated[str | None, specs.Text(TEXT_MAX)] = Field(None, title="Key messages")

    id: specs.AnsweredText = None
    project_key: specs.Identifier = None
    state: Annotated[Any, specs.ReadOnly(specs.enum_answer(REPORT_STATES))] = None
    created_at: specs.Moment = None
    created_by_account_id: specs.AnsweredAccount = None
    updated_at: specs.Moment = None
    published_at: specs.Moment = None
    published_by_account_id: specs.AnsweredAccount = None
    overall_rag: Annotated[Any, specs.ReadOnly(specs.enum_answer(RAG_CHOICES, nullable=True))] = (
        None
    )
    effective: Annotated[
        Any, specs.ReadOnly({**RAGS_SCHEMA, "type": ["object", "null"], "required": []})
    ] = None
    snapshot: Annotated[
        Any,
        specs.ReadOnly(
            {
                "type": ["object", "null"],
                "additionalProperties": True,
                "description": "A published report's frozen status and steering pack "
                "(`status`, `pack`), as it was (null on a draft).",
            }
        ),
    ] = None
    revision: specs.Revision = None


def _null_when_empty(rule: specs.Rule | None) -> bool:
    if isinstance(rule, Override | specs.NullableNumber):
        return True
    return type(rule) is specs.OneOf and rule.default is None


# The form's fields: one input each (the commentary's three texts and the metrics' JSON are
# read apart). A select whose empty option means null (use the derived value, the site
# default, "not set") sends null: the fields whose rule reads null as nothing chosen.
FORM_FIELDS = [
    api
    for api in specs.writable(StatusSpec)
    if api not in ("structuredCommentary", "projectMetrics")
]
NULL_WHEN_EMPTY = [
    api for api in FORM_FIELDS if _null_when_empty(specs.fields(StatusSpec)[api].rule)
]


# --- the exception report and the sponsor's decision (status.exceptions) --------------------

OPTIONS_MAX = 10
OPTIONS_MESSAGE = "Give at least one option, as a list of short texts."


def clean_options(raw: Any) -> tuple[list[str] | None, specs.Refusals]:
    """The options the lead sets out: a list of 1 to OPTIONS_MAX texts, blanks refused."""
    if not isinstance(raw, list) or not raw:
        return None, {"": [OPTIONS_MESSAGE]}
    if len(raw) > OPTIONS_MAX:
        return None, {"": [f"At most {OPTIONS_MAX} options (this has {len(raw)})."]}
    return required_texts(raw, max_length=TEXT_MAX)


RequiredProse = Annotated[str | None, specs.Text(TEXT_MAX, required=True), specs.RequiredOnCreate()]


class ExceptionReportSpec(specs.Spec):
    """The Project Lead's exception report: why the project went beyond its tolerances, what
    follows, the options (at least one) and the recommendation; with the exception plan's
    figures (the budget and the days it adds), which become a change request to the sponsor."""

    noun = "exception report"

    cause: RequiredProse = Field(None, title="Cause")
    consequences: RequiredProse = Field(None, title="Consequences")
    options: Annotated[
        list[str] | None,
        specs.Checked(
            clean_options, required_texts_schema(TEXT_MAX, min_items=1, max_items=OPTIONS_MAX)
        ),
        specs.RequiredOnCreate(),
    ] = Field(None, title="Options")
    recommendation: RequiredProse = Field(None, title="Recommendation")
    plan_budget: Annotated[Decimal | None, specs.SignedAmount()] = Field(
        None, title="Exception plan: budget added"
    )
    plan_schedule_days: Annotated[int | None, specs.ScheduleDays()] = Field(
        None, title="Exception plan: days added"
    )


EXCEPTION_DECISION_CHOICES = ("AcceptPlan", "Kill")


class ExceptionDecisionSpec(specs.Spec):
    """The sponsor's decision on an exception: accept the exception plan (its change request
    is approved), or kill the project (the business case's Kill act, with the comment as its
    reason)."""

    noun = "exception decision"

    decision: Annotated[
        str | None, specs.RequiredChoice(EXCEPTION_DECISION_CHOICES), specs.RequiredOnCreate()
    ] = Field(None, title="Decision")
    comment: Annotated[str | None, specs.Text(TEXT_MAX)] = Field(None, title="Comment")


# --- the exception's answers (status.exceptions.to_dict and project_exception) ---------------

# The tolerances a crossing names (status.exceptions.Crossing).
CROSSING_TOLERANCES = ("time", "costPercent", "costAmount", "benefitPercent")
_TEXT: specs.JsonSchema = {"type": "string"}
_TEXT_OR_NULL: specs.JsonSchema = {"type": ["string", "null"]}
_FIGURE: specs.JsonSchema = {"type": ["number", "integer", "string", "null"]}
_MOMENT_OR_NULL: specs.JsonSchema = {"type": ["string", "null"], "format": "date-time"}
CROSSING_SCHEMA: specs.JsonSchema = {
    "type": "object",
    "properties": {
        "tolerance": {"type": "string", "enum": list(CROSSING_TOLERANCES)},
        "figure": _FIGURE,
        "limit": _FIGURE,
        "summary": _TEXT,
    },
    "required": ["tolerance", "figure", "limit", "summary"],
}
_EXCEPTION_RECORD_PROPERTIES: specs.JsonSchema = {
    "id": _TEXT,
    "state": {"type": "string", "enum": list(EXCEPTION_STATES)},
    "openedAt": {"type": "string", "format": "date-time"},
    "ageDays": {"type": "integer"},
    "crossed": {"type": "array", "items": CROSSING_SCHEMA},
    "withinTolerance": {"type": "boolean"},
    "events": {"type": "array", "items": {"type": "object", "additionalProperties": True}},
    "report": {"type": ["object", "null"], "additionalProperties": True},
    "decision": {"type": ["string", "null"], "enum": [*EXCEPTION_DECISIONS, None]},
    "decisionComment": _TEXT_OR_NULL,
    "decidedAt": _MOMENT_OR_NULL,
    "decidedByAccountId": _TEXT_OR_NULL,
    "settledByAct": {"type": ["string", "null"], "enum": [*SETTLING_ACTS, None]},
    "settledAt": _MOMENT_OR_NULL,
    "settledByAccountId": _TEXT_OR_NULL,
    "changeRequestId": _TEXT_OR_NULL,
    "revision": {"type": "integer"},
}
EXCEPTION_RECORD_SCHEMA: specs.JsonSchema = {
    "type": "object",
    "properties": _EXCEPTION_RECORD_PROPERTIES,
    "required": list(_EXCEPTION_RECORD_PROPERTIES),
}


def exception_view_schema(record: specs.JsonSchema) -> specs.JsonSchema:
    """The project's tolerances, the figures beyond them and its undecided exception
    (`record`, or null): what `project_exception` answers."""
    return {
        "type": "object",
        "properties": {
            "projectKey": _TEXT,
            "tolerances": {
                "type": "object",
                "properties": {name: _FIGURE for name in specs.fields(TolerancesSpec)},
            },
            "beyondTolerance": {"type": "boolean"},
            "crossed": {"type": "array", "items": CROSSING_SCHEMA},
            "inException": {"type": "boolean"},
            "exception": {"anyOf": [record, {"type": "null"}]},
        },
        "required": ["projectKey", "tolerances", "beyondTolerance", "crossed", "inException"],
    }
