"""The registers' declarations: one model per resource (work package, risk, decision,
change request). The API's bodies, the agent's tools, the page forms, the services' partials,
snapshots and writable lists, the labels and the choices are all read from here
(`governance.specs`). The rules that need stored state or several fields at once stay in
the services."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any

from pydantic import Field

from governance import cleaning, specs
from governance.cleaning import FieldErrors
from governance.models import RAG_CHOICES
from governance.specs import (
    HTTP_URL_PATTERN,
    Account,
    AccountId,
    ApiOnly,
    Audited,
    Boolean,
    BoundedInteger,
    Checked,
    CreateOnly,
    Identifier,
    IsoDate,
    Lenient,
    Moment,
    NotStored,
    NullableNumber,
    OneOf,
    OptionalText,
    Passed,
    ReadOnly,
    Refusals,
    RefusedWhenChanged,
    RequiredOnCreate,
    Revision,
    ScheduleDays,
    SignedAmount,
    SiteLabel,
    Spec,
    Text,
)
from governance.wiki import TEMPLATE_KINDS
from registers.derive import BASIS_BASELINE, BASIS_NO_BASELINE, BASIS_PLANNED
from registers.models import (
    APPLICATION_STATES,
    CHANGE_DIMENSIONS,
    CHANGE_STATUSES,
    DECISION_STATES,
    NAME_MAX,
    RISK_DIRECTIONS,
    RISK_STATUSES,
    RISK_TREATMENTS,
    TEXT_MAX,
    WP_STATUSES,
)

STRING: dict[str, Any] = {"type": "string"}
# A tracker issue key (ABC-12), any case, spaces around it trimmed.
ISSUE_KEY_SCHEMA: dict[str, Any] = {
    "type": "string",
    "pattern": r"^[ \t\r\n]*[A-Za-z][A-Za-z0-9_]*-[1-9][0-9]*[ \t\r\n]*$",
}
NULL_STRING: dict[str, Any] = {"type": ["string", "null"]}
SORT_ORDER_MAX = 2_000_000_000
CREATE_ID = "On create only; generated when absent, empty or null."
TREATMENTS = tuple(t for choices in RISK_TREATMENTS.values() for t in choices)


# --- the rules of composite fields -----------------------------------------------------------


def clean_phasing(value: Any) -> tuple[list[dict[str, Any]] | None, Refusals]:
    """Entries {period: 'YYYY-MM', amount}. One malformed entry refuses the whole array; each
    is named (budgetPhasing[3].period)."""
    errors = FieldErrors()
    if value is None:
        return None, {}
    if not isinstance(value, list):
        return None, {"": ["Must be a list of {period: 'YYYY-MM', amount}."]}
    entries, periods = [], set()
    for index, item in enumerate(value):
        name = f"[{index}]"
        if not isinstance(item, dict):
            errors.add(name, "Must be an entry {period: 'YYYY-MM', amount}.")
            continue
        for key in item:
            if key not in ("period", "amount"):
                errors.add(f"{name}.{key}", "Unknown field: an entry has period and amount only.")
        period, error = cleaning.iso_month(item.get("period"))
        if error:
            errors.add(f"{name}.period", error)
        elif period in periods:
            errors.add(f"{name}.period", f"{period} appears twice.")
        periods.add(period)
        amount, error = cleaning.signed_number(item.get("amount"))
        if error or amount is None:
            errors.add(f"{name}.amount", error or "An amount is required.")
        elif amount < 0:
            errors.add(f"{name}.amount", "Must not be negative.")
        else:
            entries.append({"period": period, "amount": cleaning.decimal_to_json(amount)})
    return (None if errors else entries), dict(errors)


def clean_sort_order(value: Any) -> tuple[int | None, cleaning.Error]:
    number, error = cleaning.signed_integer(value)
    if not error and number is not None and abs(number) > SORT_ORDER_MAX:
        error = f"Must be between -{SORT_ORDER_MAX} and {SORT_ORDER_MAX}."
    return (None if error else number), error


def clean_dimensions(value: Any) -> tuple[list[str] | None, Refusals]:
    """A list drawn from the dimensions, each once (null is the empty list)."""
    if value is None:
        value = []
    if not isinstance(value, list):
        return None, {"": [f"Must be a list drawn from: {', '.join(CHANGE_DIMENSIONS)}."]}
    errors = FieldErrors()
    dimensions: list[str] = []
    for index, item in enumerate(value):
        if item not in CHANGE_DIMENSIONS:
            errors.add(f"[{index}]", f"Must be one of: {', '.join(CHANGE_DIMENSIONS)}.")
        elif item not in dimensions:
            dimensions.append(item)
    return (None if errors else dimensions), dict(errors)


def clean_treatment(value: Any) -> tuple[Any, cleaning.Error]:
    """Only null or empty text clears it; anything else is a treatment the service checks
    against the direction."""
    return (None if value in (None, "") else value), None


# A month within the accepted dates (1900-01..2199-12).
MONTH_PATTERN = "^(19|2[01])[0-9]{2}-(0[1-9]|1[0-2])$"
PHASING_SCHEMA: dict[str, Any] = {
    "type": ["array", "null"],
    "items": {
        "type": "object",
        "properties": {
            "period": {"type": "string", "pattern": MONTH_PATTERN},
            "amount": {"type": "number", "minimum": 0, "maximum": 1e15, "multipleOf": 0.01},
        },
        "required": ["period", "amount"],
        "additionalProperties": False,
    },
}
LINKS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {
            "id": STRING,
            "label": STRING,
            "url": {"type": "string", "format": "uri", "pattern": HTTP_URL_PATTERN},
            "type": {"enum": ["confluence", "link"]},
            "pageId": STRING,
            "spaceKey": STRING,
            "templateKind": {"enum": [*TEMPLATE_KINDS, None, ""]},
        },
        "required": ["url"],
        "additionalProperties": False,
    },
}
# A seat (governance.seats.clean_seats): empty, a tracker accountId (as text or an object),
# or an external person named in words, with an e-mail address or none.
SEAT_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "null"},
        {"type": "string", "description": "a tracker accountId"},
        {"type": "object", "maxProperties": 0},
        {
            "type": "object",
            "properties": {"accountId": cleaning.required_text_schema(128)},
            "required": ["accountId"],
        },
        {
            "type": "object",
            "properties": {
                "accountId": {"enum": [None, ""]},
                "displayName": cleaning.required_text_schema(NAME_MAX),
                "email": {"anyOf": [{"type": "string", "format": "email"}, {"enum": [None, ""]}]},
            },
            "required": ["displayName"],
        },
    ]
}
MINUTES_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {"id": STRING},
    "description": "One of the project's steering minutes, by id.",
}

Name = Annotated[str | None, Text(NAME_MAX, required=True), RequiredOnCreate()]
LongText = Annotated[str | None, Text(TEXT_MAX)]
Person = Annotated[str | None, AccountId(), Account()]
Day = Annotated[dt.date | None, IsoDate()]
Money = Annotated[Decimal | None, NullableNumber()]
Score = Annotated[int | None, BoundedInteger(low=1, high=5)]
# What the registers answer in their read-only fields (the response schema).
TextOrNull = specs.AnsweredTextOrNull
By = specs.AnsweredAccount
Flag = specs.AnsweredFlag
Imported = Annotated[
    Any, ReadOnly({"type": "boolean", "description": "Present (true) only on imported rows."})
]
DECISION_NOTE_SCHEMA: dict[str, Any] = specs.object_answer(
    {
        "id": STRING,
        "text": STRING,
        "authorAccountId": specs.ACCOUNT_SCHEMA,
        "at": {"type": "string", "format": "date-time"},
    }
)
APPLICATION_RECORD_SCHEMA: dict[str, Any] = {
    "type": ["object", "null"],
    "description": (
        "How an Approved change was applied: kind 'charter' (the business case's amendment, "
        "ref its version) or 'baseline' (the plan baseline moved), when and by whom."
    ),
    "properties": {
        "kind": STRING,
        "ref": {"type": ["integer", "string", "null"]},
        "at": {"type": ["string", "null"], "format": "date-time"},
        "by": specs.ACCOUNT_SCHEMA,
    },
    "additionalProperties": True,
}


class WorkPackageSpec(Spec):
    noun = "work package"

    id: Annotated[
        Any,
        Passed(
            {
                "anyOf": [{"type": "string", "format": "uuid"}, {"enum": ["", None]}],
                "description": CREATE_ID,
            }
        ),
        CreateOnly(),
    ] = Field(None, title="Id")
    name: Annotated[Name, SiteLabel()] = Field(None, title="Name", examples=["Site survey"])
    type: Annotated[str | None, OptionalText(NAME_MAX)] = Field(
        None, title="Type", examples=["Discovery"]
    )
    owner_account_id: Annotated[Person, SiteLabel()] = Field(None, title="Owner")
    status: Annotated[str | None, OneOf(tuple(WP_STATUSES), default="Not Started")] = Field(
        None, title="Status", examples=["Not Started"]
    )
    rag: Annotated[str | None, OneOf(tuple(RAG_CHOICES), default="None"), SiteLabel()] = Field(
        None, title="RAG", examples=["Green"]
    )
    progress: Annotated[int | None, BoundedInteger(low=0, high=100, step=10)] = Field(
        None, title="Progress", examples=[0]
    )
    planned_start_date: Day = Field(None, title="Planned start", examples=["2027-01-04"])
    planned_end_date: Day = Field(None, title="Planned end", examples=["2027-02-26"])
    actual_start_date: Day = Field(None, title="Actual start")
    actual_end_date: Day = Field(None, title="Actual end")
    forecast_start_date: Day = Field(None, title="Forecast start")
    forecast_end_date: Day = Field(None, title="Forecast end")
    budget: Money = Field(None, title="Budget", examples=[130500])
    budget_forecast: Annotated[Money, SiteLabel()] = Field(None, title="Forecast spend")
    budget_actual: Annotated[Money, SiteLabel()] = Field(None, title="Actual spend")
    budget_phasing: Annotated[
        list[dict[str, Any]] | None, Checked(clean_phasing, PHASING_SCHEMA), SiteLabel()
    ] = Field(
        None,
        title="Budget phasing",
        description='JSON, as the export writes it: [{"period": "2027-01", "amount": 12000}]',
    )
    commentary: Annotated[str | None, OptionalText(TEXT_MAX)] = Field(
        None, title="Commentary", examples=["Replace this row with your own."]
    )
    actual_end: Annotated[
        dt.date | None,
        IsoDate(description="Alias mirror of actualEndDate."),
        ApiOnly(),
        NotStored(),
    ] = Field(None, title="Actual end")
    linked_issue_keys: Annotated[
        Any, Passed({"type": ["array", "null"], "items": ISSUE_KEY_SCHEMA}), ApiOnly(), SiteLabel()
    ] = Field(None, title="Linked issues", description="Issue keys separated by commas.")
    sort_order: Annotated[
        int | None, Checked(clean_sort_order, {"type": ["integer", "null"]}), ApiOnly(), SiteLabel()
    ] = Field(None, title="Position")
    # Answered, and ignored when sent back.
    project_key: Identifier = None
    budget_baseline: Annotated[specs.AnsweredMoney, SiteLabel()] = Field(
        None, title="Baseline budget"
    )
    budget_baseline_locked_at: Moment = None
    planned_dates_baseline_locked_at: Moment = None
    created_at: Moment = None
    updated_at: Moment = None
    updated_by_account_id: By = None
    schedule_variance_days: Annotated[
        Any,
        ReadOnly(
            {
                "type": ["integer", "null"],
                "description": "Days late (positive) or early (negative); null without dates.",
            }
        ),
    ] = None
    schedule_variance_basis: Annotated[
        Any, ReadOnly(specs.enum_answer([BASIS_BASELINE, BASIS_PLANNED, BASIS_NO_BASELINE]))
    ] = None
    baseline_start_date: specs.AnsweredDay = None
    baseline_end_date: specs.AnsweredDay = None
    broken_issue_keys: Annotated[
        Any,
        ReadOnly(
            {
                "type": "object",
                "additionalProperties": STRING,
                "description": "Issue key -> why it is broken (deleted, moved to OTHER-7).",
            }
        ),
    ] = None
    revision: Revision = None


class RiskSpec(Spec):
    noun = "risk"

    title: Name = Field(None, title="Title", examples=["Supplier delivers late"])
    description: LongText = Field(
        None, title="Description", examples=["The main supplier has missed two dates this year."]
    )
    owner_account_id: Annotated[Person, SiteLabel()] = Field(None, title="Owner")
    status: Annotated[str | None, Lenient(tuple(RISK_STATUSES), fallback="Open")] = Field(
        None, title="Status", examples=["Open"]
    )
    direction: Annotated[str | None, OneOf(tuple(RISK_DIRECTIONS), default="Risk")] = Field(
        None, title="Direction", examples=["Risk"]
    )
    materialised: Annotated[bool | None, Boolean()] = Field(None, title="Materialised")
    impact: Score = Field(None, title="Impact", examples=[4])
    likelihood: Score = Field(None, title="Likelihood", examples=[3])
    residual_impact: Score = Field(None, title="Residual impact")
    residual_likelihood: Score = Field(None, title="Residual likelihood")
    treatment: Annotated[
        str | None, Checked(clean_treatment, {"enum": [None, *TREATMENTS]}, TREATMENTS)
    ] = Field(None, title="Treatment", examples=["Mitigate"])
    mitigation: LongText = Field(
        None,
        title="Mitigation / treatment plan",
        examples=["Order the long-lead items in the first month."],
    )
    # Answered, and ignored when sent back.
    id: Identifier = None
    project_key: Identifier = None
    accepted_by_account_id: Annotated[By, Audited(), SiteLabel(), Account()] = Field(
        None, title="Accepted by"
    )
    accepted_at: Annotated[Moment, Audited()] = None
    acceptance_rationale: Annotated[TextOrNull, Audited()] = None
    created_at: Moment = None
    updated_at: Moment = None
    updated_by_account_id: By = None
    imported: Imported = None
    score: Annotated[
        Any,
        ReadOnly(
            {
                "type": ["integer", "null"],
                "description": "The residual score, the one the risk RAG judges: "
                "residualImpact x residualLikelihood when both are set, else the inherent "
                "impact x likelihood; null when neither pair is set. The inherent score is "
                "impact x likelihood.",
            }
        ),
    ] = None
    treating_decision_ids: Annotated[Any, ReadOnly(specs.TEXTS_SCHEMA)] = None
    revision: Revision = None


class DecisionSpec(Spec):
    noun = "decision"

    decision: Name = Field(None, title="Decision", examples=["Use the existing data centre"])
    decision_notes: LongText = Field(
        None, title="Notes on the decision", examples=["Replace this row with your own."]
    )
    made_on: Day = Field(None, title="Made on", examples=["2026-01-15"])
    made_by_account_id: Annotated[Person, SiteLabel()] = Field(None, title="Made by")
    rationale: LongText = Field(
        None, title="Rationale", examples=["Cheaper than a new lease and ready now."]
    )
    minutes_ref: Annotated[Any, Passed(MINUTES_SCHEMA), SiteLabel()] = Field(
        None, title="Steering minutes"
    )
    evidence_links: Annotated[Any, Passed(LINKS_SCHEMA)] = Field(
        None,
        title="Evidence links",
        description="JSON, as the export writes it, or links separated by spaces.",
    )
    # Legacy fields stay readable and are never written; notes are server-written; riskId
    # and treatedRiskId are set only by the Risks register's Record-decision act.
    id: Identifier = None
    project_key: Identifier = None
    recorded_by: Annotated[By, Account()] = None
    owner_account_id: By = None
    approver_account_id: By = None
    approver_seat: Annotated[Any, ReadOnly(SEAT_SCHEMA)] = None
    risk_id: Annotated[TextOrNull, Audited()] = None
    treated_risk_id: Annotated[TextOrNull, Audited()] = None
    notes: Annotated[Any, ReadOnly({"type": "array", "items": DECISION_NOTE_SCHEMA})] = None
    status: TextOrNull = None
    decided_at: Moment = None
    decided_by_account_id: By = None
    created_at: Moment = None
    created_by_account_id: By = None
    updated_at: Moment = None
    imported: Imported = None
    state: Annotated[Any, ReadOnly(specs.enum_answer(DECISION_STATES))] = None
    revision: Revision = None


class ChangeSpec(Spec):
    noun = "change request"

    summary: Name = Field(None, title="Summary", examples=["Add the second loading bay"])
    reason: LongText = Field(
        None, title="Reason", examples=["Deliveries doubled after the merger."]
    )
    dimensions: Annotated[
        list[str] | None,
        Checked(
            clean_dimensions,
            {"type": ["array", "null"], "items": {"enum": CHANGE_DIMENSIONS}},
            tuple(CHANGE_DIMENSIONS),
        ),
    ] = Field(
        None,
        title="Dimensions",
        examples=["Scope, Budget"],
        description="Several, separated by commas.",
    )
    impact_schedule_days: Annotated[int | None, ScheduleDays(), SiteLabel()] = Field(
        None, title="Schedule impact (days)", examples=[10]
    )
    impact_budget: Annotated[Decimal | None, SignedAmount(), SiteLabel()] = Field(
        None, title="Budget impact", examples=[45000]
    )
    impact_scope: Annotated[LongText, SiteLabel()] = Field(
        None, title="Scope impact", examples=["One more bay in phase two."]
    )
    impact_quality_other: Annotated[LongText, SiteLabel()] = Field(
        None, title="Quality / other impact"
    )
    target_work_package_id: Annotated[Any, Passed(NULL_STRING), SiteLabel()] = Field(
        None, title="Work package"
    )
    # Checked by the service: the proposer is named once, when the change is raised.
    proposer_account_id: Annotated[Any, Passed(NULL_STRING), SiteLabel(), Account()] = Field(
        None, title="Proposer"
    )
    approver_account_id: Annotated[Person, SiteLabel()] = Field(None, title="Approver")
    approver_seat: Annotated[Any, Passed(SEAT_SCHEMA), ApiOnly()] = Field(
        None, title="Approver seat"
    )
    # Answered, and ignored when sent back.
    id: Identifier = None
    project_key: Identifier = None
    status: Annotated[
        Any, ReadOnly(specs.enum_answer(CHANGE_STATUSES)), Audited(), RefusedWhenChanged()
    ] = None
    decided_at: Annotated[Moment, Audited()] = None
    decided_by_account_id: Annotated[By, Audited(), SiteLabel(), Account()] = Field(
        None, title="Decided by"
    )
    decision_comment: Annotated[TextOrNull, Audited()] = None
    created_at: Moment = None
    created_by_account_id: By = None
    updated_at: Moment = None
    imported: Imported = None
    application_record: Annotated[Any, ReadOnly(APPLICATION_RECORD_SCHEMA)] = None
    application_state: Annotated[Any, ReadOnly(specs.enum_answer(APPLICATION_STATES))] = None
    approver_locked: Flag = None
    dimensions_chosen: Annotated[Flag, Audited()] = None
    impact_timeline: Annotated[
        Any, ReadOnly({"type": ["string", "null"], "description": "Legacy; always empty."})
    ] = None
    revision: Revision = None


# The page slug of each register -> its declaration.
SPECS: dict[str, type[Spec]] = {
    "work-packages": WorkPackageSpec,
    "risks": RiskSpec,
    "decisions": DecisionSpec,
    "changes": ChangeSpec,
}


# The fields an import's preview lists of each row it would create (API names): what a
# person checks first (registers.services.imports).
PREVIEW_FIELDS: dict[str, list[str]] = {
    "work-packages": [
        "name",
        "status",
        "progress",
        "plannedStartDate",
        "plannedEndDate",
        "budget",
    ],
    "risks": ["title", "status", "impact", "likelihood"],
    "decisions": ["decision", "madeOn"],
    "changes": ["summary", "impactScheduleDays", "impactBudget"],
}
