"""The declarations of the business case (governance.specs): the case as the API answers it
(what an editor writes in Exploring or Draft, and every field the lifecycle keeps), the
close-out and its lessons, and the realisation record. Each field once, with its rule, its
label and its choices; the body schemas, the writable and read-only lists, the stored fields
the audit diffs, the approved version's thesis and the labels are read from here. The
services keep the stateful rules: seats and steering members asked of the tracker, links of
the wiki, the financial case merged onto the stored one, dispositions of the project's own
register rows, the BAU owner."""

import uuid
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field
from pydantic.config import JsonDict

from charter import finance
from charter.models import (
    APPROVAL_STATUSES,
    CHANGE_SATURATIONS,
    CLOSEOUT_RETURN_NOTE_SECTIONS,
    CONFIDENCES,
    PENDING_DISPOSITIONS,
    RETURN_NOTE_SECTIONS,
    RIO_DISPOSITIONS,
    SCOPE_DISPOSITIONS,
    SEVERITIES,
    TERMINAL_DISPOSITIONS,
)
from governance import specs
from governance.cleaning import (
    FieldErrors,
    boolean,
    known_object,
    required_text_schema,
    signed_number,
    text,
)
from governance.links import LABEL_MAX
from governance.models import PERCENT_SCHEMA, clean_percent
from governance.wiki import TEMPLATE_KINDS
from registers.models import NAME_MAX
from registers.specs import SEAT_SCHEMA

TEXT_MAX = 2000
THEME_MAX = 200
PRINCIPLE_MAX = 200
PRINCIPLES_MAX = 20
BR_OWNER_MAX = 200
KPI_VALUE_MAX = 200
PAGE_ID_MAX = 64
ACCOUNT_ID_MAX = 128  # governance.cleaning.account_id
# The templates a supporting link is made from (minutes come from the minutes form).
LINK_TEMPLATE_KINDS = ("boardPaper", "lessons")

# A supporting link (governance.links.clean_link): a URL, or an object with its URL; a wiki
# link ('confluence') with a pageId may leave the URL out (the page's is taken).
_LINK_PROPERTIES = {
    "id": {"type": "string", "maxLength": 64},
    "label": {"type": "string"},
    "url": {"type": "string", "format": "uri", "pattern": specs.HTTP_URL_PATTERN},
    "type": {"enum": ["confluence", "link"]},
    "pageId": {"type": "string"},
    "spaceKey": {"type": "string"},
    "templateKind": {"enum": list(TEMPLATE_KINDS)},
}
LINKS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": _LINK_PROPERTIES,
        "additionalProperties": False,  # clean_link refuses any other member
        "anyOf": [
            {"required": ["url"]},
            {
                "properties": {
                    "type": {"const": "confluence"},
                    "pageId": {"type": "string", "minLength": 1},
                },
                "required": ["type", "pageId"],
            },
        ],
    },
}


def _members(names: Any) -> dict[str, Any]:
    return {name: {} for name in names}


# The financial case's members at each level (charter.finance.clean refuses any other).
FINANCIAL_CASE_SCHEMA = {
    "type": "object",
    "properties": {
        **_members([m for m in finance.CASE_MEMBERS if m not in ("builtin", "attached")]),
        # A wiki page id (charter.finance.clean: optional text).
        "boardPaperPageId": {"type": ["string", "null"], "maxLength": 64},
        "builtin": {
            "type": ["object", "null"],
            "properties": _members(finance.BUILTIN_MEMBERS),
            "additionalProperties": False,
        },
        "attached": {
            "type": ["object", "null"],
            "properties": {
                **_members(finance.ATTACHED_MEMBERS),
                "pageId": {"type": ["string", "null"], "maxLength": 64},
            },
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}


ROLE_MAX = 100
STEERING_MAX = 30
_MEMBER_COMMON = {
    "id": {"type": "string", "maxLength": 64},
    "role": {"type": ["string", "null"], "maxLength": ROLE_MAX},
    "avatarUrl": {"type": ["string", "null"]},
}
# A steering committee member (charter.services.thesis.clean_steering): a tracker person (an
# accountId, as text or an object) or an external person named in words, with a role.
STEERING_MEMBER_SCHEMA = {
    "anyOf": [
        {"type": "string", "minLength": 1, "description": "a tracker accountId"},
        {
            "type": "object",
            "properties": {
                "accountId": required_text_schema(ACCOUNT_ID_MAX),
                "displayName": {"type": ["string", "null"]},
                "email": {"type": ["string", "null"]},
                **_MEMBER_COMMON,
            },
            "required": ["accountId"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {
                "accountId": {"enum": [None, ""]},
                "displayName": required_text_schema(NAME_MAX),
                "email": {"anyOf": [{"type": "string", "format": "email"}, {"enum": [None, ""]}]},
                **_MEMBER_COMMON,
            },
            "required": ["displayName"],
            "additionalProperties": False,
        },
    ]
}
_MONEY = specs.MONEY_ANSWER
_NUMBER = specs.NUMBER_OR_NULL_SCHEMA
_TEXT_OR_NULL = specs.TEXT_OR_NULL_SCHEMA
_MOMENT = specs.MOMENT_SCHEMA
# An object member the answer leaves open (any further members allowed), or null.
_OPEN_OBJECT_OR_NULL = {"type": ["object", "null"], "additionalProperties": True}


def _open_object(
    properties: dict[str, Any], *, nullable: bool = False, description: str = ""
) -> dict[str, Any]:
    """An object as answered with these members typed, none of them required, and any further
    members allowed (the stored JSON may carry more)."""
    schema: dict[str, Any] = {"type": ["object", "null"] if nullable else "object"}
    if description:
        schema["description"] = description
    return {**schema, "properties": properties, "additionalProperties": True}


# The financial figures that are amounts (the others: a rate, a percentage, years).
MONEY_FIGURES = ("totalCost", "totalBenefit", "npv")
# The financial case as answered (charter.finance.present): every member there, the mode read
# leniently, the builtin model's metrics recomputed on every read.
FINANCIAL_CASE_ANSWER = specs.object_answer(
    {
        "mode": specs.enum_answer(finance.FINANCIAL_MODES),
        "attached": specs.object_answer(
            {
                "label": {"type": "string"},
                "url": _TEXT_OR_NULL,
                "pageId": _TEXT_OR_NULL,
                **{
                    figure: _MONEY if figure in MONEY_FIGURES else _NUMBER
                    for figure in finance.HEADLINE_FIGURES
                },
            }
        ),
        "builtin": specs.object_answer(
            {
                "currency": {"type": "string"},
                "discountRatePct": {"type": "number"},
                "horizonYears": {"type": "integer"},
                "lines": {
                    "type": "array",
                    "items": specs.object_answer(
                        {"year": {"type": "integer"}, "cost": _MONEY, "benefit": _MONEY}
                    ),
                },
                "computed": specs.object_answer(
                    {
                        metric: _MONEY if metric in MONEY_FIGURES else _NUMBER
                        for metric in finance.METRICS
                    }
                ),
            }
        ),
        "boardPaperPageId": _TEXT_OR_NULL,
        "createdAt": _MOMENT,
        "updatedAt": _MOMENT,
    }
)
STEERING_MEMBER_ANSWER = _open_object(
    {
        "id": {"type": "string"},
        "accountId": specs.ACCOUNT_SCHEMA,
        "displayName": {"type": "string"},
        "role": {"type": "string"},
    }
)
RETURN_NOTE_ANSWER = specs.object_answer(
    {
        "id": {"type": "string"},
        "section": {"type": "string"},
        "ask": {"type": "string"},
        "severity": {"type": "string", "enum": list(SEVERITIES)},
        "addressed": {"type": "boolean"},
    },
    optional=["id", "addressed"],
)
APPROVED_VERSION_ANSWER = specs.object_answer(
    {
        "version": {"type": "integer"},
        "approvedAt": _MOMENT,
        "approvedByAccountId": specs.ACCOUNT_SCHEMA,
        "approvalComment": _TEXT_OR_NULL,
        "approvalRationale": _TEXT_OR_NULL,
        "enablingChangeId": _TEXT_OR_NULL,
    }
)
PLAN_BASELINE_ANSWER = _open_object(
    {
        "version": {"type": "integer"},
        "approvedAt": _MOMENT,
        "workPackages": {
            "type": "object",
            "additionalProperties": _open_object(
                {
                    "budget": _MONEY,
                    "plannedStartDate": specs.DAY_SCHEMA,
                    "plannedEndDate": specs.DAY_SCHEMA,
                }
            ),
        },
    },
    nullable=True,
    description=(
        "The plan approved with the case's version in force: each work package's budget and "
        "planned dates, by id."
    ),
)
CLOSE_OUT_ANSWER = _open_object(
    {
        "asBuiltOutcome": _TEXT_OR_NULL,
        "asBuiltReturn": _TEXT_OR_NULL,
        "asBuiltReturnValue": _MONEY,
        "asBuiltEndDate": specs.DAY_SCHEMA,
        "scopeDispositions": _OPEN_OBJECT_OR_NULL,
        "rioDispositions": _OPEN_OBJECT_OR_NULL,
        "pendingDispositions": _OPEN_OBJECT_OR_NULL,
        "lessons": _OPEN_OBJECT_OR_NULL,
        "bauHandover": _OPEN_OBJECT_OR_NULL,
        "commentary": _TEXT_OR_NULL,
        "startedAt": _MOMENT,
        "submittedAt": _MOMENT,
    },
    nullable=True,
    description=(
        "The close-out record once started: the as-built record, the dispositions of the "
        "register rows by id, the lessons, the BAU handover, when it started and was submitted."
    ),
)
KPI_RESOLUTION_ANSWER = _open_object(
    {
        "resolvedAt": _MOMENT,
        "resolvedBy": specs.ACCOUNT_SCHEMA,
        "resolvedValue": _TEXT_OR_NULL,
        "met": {"type": ["boolean", "null"]},
        "notes": _TEXT_OR_NULL,
    },
    nullable=True,
)
REALISATION_REVIEW_ANSWER = _open_object(
    {
        "id": {"type": "string"},
        "at": _MOMENT,
        "byAccountId": specs.ACCOUNT_SCHEMA,
        "note": {"type": "string"},
        "confidence": {"type": "string"},
        "benefitRealisedToDate": _MONEY,
    }
)


def clean_principles(raw: Any) -> tuple[list[str], specs.Refusals]:
    """A normalised list: one principle per entry (or per line of a text), trimmed, blanks
    dropped, repeats (ignoring case) dropped."""
    if raw is None:
        return [], {}
    if isinstance(raw, str):
        raw = raw.splitlines()
    if not isinstance(raw, list):
        return [], {"": ["Must be a list of short texts."]}
    errors = FieldErrors()
    result, seen = [], set()
    for index, item in enumerate(raw):
        value, error = text(item, max_length=PRINCIPLE_MAX)
        if error:
            errors.add(f"[{index}]", error)
            continue
        if value and value.casefold() not in seen:
            seen.add(value.casefold())
            result.append(value)
    if len(result) > PRINCIPLES_MAX:
        errors.add("", f"At most {PRINCIPLES_MAX} principles.")
    return result, dict(errors)


class Saturation(specs.Lenient):
    """The change saturation, lenient by the spec: blank is not set, anything outside the
    choices is kept as Unknown (not refused): the document names the choices and no type."""

    def schema(self) -> specs.JsonSchema:
        return {
            "description": f"{', '.join(self.values)}; anything else is kept as "
            f"{self.fallback}, blank as not set."
        }

    def check(self, value: Any, field: str | None) -> tuple[Any, specs.Refusals]:
        if value in (None, ""):
            return "", {}
        return (value if value in self.values else self.fallback), {}


Prose = Annotated[str | None, specs.Text(TEXT_MAX)]
# The page's section forms a field is edited in (the seats have pickers of their own).
THESIS_FORM: JsonDict = {"form": "thesis"}
ADOPTION_FORM: JsonDict = {"form": "adoption"}
Seat = Annotated[Any, specs.Passed(SEAT_SCHEMA)]


class CharterSpec(specs.Spec):
    """The business case. An editor writes the thesis, the adoption inputs, the seats, the
    steering committee, the supporting links and the financial case (Exploring or Draft);
    every other field is kept by the lifecycle acts and answered read-only."""

    noun = "business case"

    # Thesis
    business_problem: Prose = Field(None, title="Business problem", json_schema_extra=THESIS_FORM)
    outcome: Prose = Field(None, title="Outcome", json_schema_extra=THESIS_FORM)
    return_expected: Prose = Field(None, title="Return expected", json_schema_extra=THESIS_FORM)
    scope_in_bounds: Annotated[Prose, specs.SiteLabel()] = Field(
        None, title="In scope", json_schema_extra=THESIS_FORM
    )
    scope_boundaries: Annotated[Prose, specs.SiteLabel()] = Field(
        None, title="Out of scope (boundaries)", json_schema_extra=THESIS_FORM
    )
    theme: Annotated[str | None, specs.Text(THEME_MAX)] = Field(
        None, title="Theme", json_schema_extra=THESIS_FORM
    )
    design_principles: Annotated[
        list[str] | None,
        specs.Checked(clean_principles, {"type": "array", "items": {"type": "string"}}),
    ] = Field(None, title="Design principles", json_schema_extra=THESIS_FORM)
    supporting_links: Annotated[Any, specs.Passed(LINKS_SCHEMA)] = Field(
        None, title="Supporting links"
    )
    decision_authority: Annotated[Seat, specs.SiteLabel()] = Field(
        None, title="Sponsor (decision authority)"
    )
    project_manager: Seat = Field(None, title="Project manager")
    customer_rep: Annotated[Seat, specs.SiteLabel()] = Field(None, title="Customer representative")
    supplier_rep: Annotated[Seat, specs.SiteLabel()] = Field(None, title="Supplier representative")
    adoption_owner: Seat = Field(None, title="Adoption owner")
    steering_committee: Annotated[
        Any,
        specs.Passed(
            {"type": ["array", "null"], "items": STEERING_MEMBER_SCHEMA, "maxItems": STEERING_MAX},
            answered={"type": "array", "items": STEERING_MEMBER_ANSWER},
        ),
    ] = Field(None, title="Steering committee")
    financial_case: Annotated[
        Any, specs.Passed(FINANCIAL_CASE_SCHEMA, answered=FINANCIAL_CASE_ANSWER)
    ] = Field(None, title="Financial case")
    # Adoption inputs
    adoption_affected: Prose = Field(
        None, title="Adoption affected", json_schema_extra=ADOPTION_FORM
    )
    adoption_kpi: Prose = Field(None, title="Adoption KPI", json_schema_extra=ADOPTION_FORM)
    change_saturation: Annotated[
        str | None, Saturation(tuple(CHANGE_SATURATIONS), fallback="Unknown")
    ] = Field(None, title="Change saturation", json_schema_extra=ADOPTION_FORM)

    # Kept by the lifecycle acts (answered, ignored when sent back)
    project_key: specs.Identifier = None
    plan_baseline: Annotated[Any, specs.ReadOnly(PLAN_BASELINE_ANSWER)] = Field(
        None, title="Plan baseline"
    )
    updated_at: specs.Moment = None
    updated_by_account_id: specs.AnsweredAccount = None
    approval_status: Annotated[
        Any,
        specs.ReadOnly(specs.enum_answer(APPROVAL_STATUSES)),
        specs.SiteLabel(),
        specs.RefusedWhenChanged(),
    ] = Field(None, title="Business case state")
    version: Annotated[specs.AnsweredInteger, specs.RefusedWhenChanged()] = None
    submitted_at: specs.Moment = None
    approved_at: specs.Moment = None
    approved_by_account_id: Annotated[specs.AnsweredAccount, specs.SiteLabel()] = Field(
        None, title="Approved by"
    )
    approval_comment: specs.AnsweredTextOrNull = None
    approval_rationale: specs.AnsweredTextOrNull = None
    return_notes: Annotated[Any, specs.ReadOnly({"type": "array", "items": RETURN_NOTE_ANSWER})] = (
        None
    )
    returned_at: specs.Moment = None
    archived_at: specs.Moment = None
    archived_by_account_id: specs.AnsweredAccount = None
    archive_reason: specs.AnsweredTextOrNull = None
    archived_from_status: Annotated[
        Any, specs.ReadOnly(specs.enum_answer(APPROVAL_STATUSES, nullable=True))
    ] = None
    terminal_disposition: Annotated[
        Any, specs.ReadOnly(specs.enum_answer(TERMINAL_DISPOSITIONS, nullable=True))
    ] = None
    amendment_enabled_by_change_id: specs.AnsweredTextOrNull = None
    amendment_no_change_reason: specs.AnsweredTextOrNull = None
    tolerance_days: Annotated[Any, specs.ReadOnly(specs.INTEGER_OR_NULL_SCHEMA)] = None
    tolerance_cost_percent: Annotated[Any, specs.ReadOnly(specs.NUMBER_OR_NULL_SCHEMA)] = None
    tolerance_cost_amount: specs.AnsweredMoney = None
    tolerance_benefit_percent: Annotated[Any, specs.ReadOnly(specs.NUMBER_OR_NULL_SCHEMA)] = None
    first_steerco_scheduled_for: Annotated[specs.AnsweredDay, specs.SiteLabel()] = Field(
        None, title="First steering committee scheduled for"
    )
    first_steerco_held_at: Annotated[specs.Moment, specs.SiteLabel()] = Field(
        None, title="First steering committee held"
    )
    first_steerco_attendees: Annotated[
        Any,
        specs.ReadOnly({"type": ["array", "null"], "items": {"type": "string"}}),
        specs.SiteLabel(),
    ] = Field(None, title="First steering committee attendees")
    close_out: Annotated[Any, specs.ReadOnly(CLOSE_OUT_ANSWER), specs.SiteLabel()] = Field(
        None, title="Close-out"
    )
    closeout_return_notes: Annotated[
        Any, specs.ReadOnly({"type": "array", "items": RETURN_NOTE_ANSWER})
    ] = Field(None, alias="closeOutReturnNotes")
    closed_at: specs.Moment = None
    closed_by_account_id: specs.AnsweredAccount = None
    return_realised: specs.AnsweredTextOrNull = None
    realisation_summary: specs.AnsweredTextOrNull = None
    realisation_lessons: specs.AnsweredTextOrNull = None
    realisation_confidence: Annotated[Any, specs.ReadOnly(specs.enum_answer(CONFIDENCES))] = None
    realisation_date: Annotated[specs.AnsweredDay, specs.SiteLabel()] = Field(
        None, title="Measured by (date)"
    )
    kpi_resolution: Annotated[Any, specs.ReadOnly(KPI_RESOLUTION_ANSWER)] = None
    br_owner: Annotated[specs.AnsweredTextOrNull, specs.SiteLabel()] = Field(
        None, title="Benefits owner"
    )
    realisation_reviews: Annotated[
        Any, specs.ReadOnly({"type": "array", "items": REALISATION_REVIEW_ANSWER})
    ] = None
    realisation_started_at: specs.Moment = None
    realisation_decided_at: specs.Moment = None
    realisation_decided_by_account_id: specs.AnsweredAccount = None
    maintenance_started_at: specs.Moment = None
    maintenance_retired_at: specs.Moment = None
    last_realisation_review_at: specs.Moment = None
    # Derived on read
    adoption_gap: specs.AnsweredFlag = None
    registers_frozen: specs.AnsweredFlag = None
    approved_versions: Annotated[
        Any, specs.ReadOnly({"type": "array", "items": APPROVED_VERSION_ANSWER})
    ] = None
    available_acts: Annotated[
        Any,
        specs.ReadOnly(
            {
                "type": "array",
                "items": {"type": "string"},
                "description": "The acts the caller may take on the case now.",
            }
        ),
    ] = None
    revision: specs.Revision = None


# The stored fields (the audit diffs them): every declared field the business case keeps.
DERIVED = ["projectKey", "adoptionGap", "registersFrozen", "approvedVersions", "availableActs"]
STORED = [name for name in specs.fields(CharterSpec) if name not in [*DERIVED, "revision"]]
# The seats an editor fills: the declared fields the seat rule takes.
SEATS = [
    api
    for api, field in specs.fields(CharterSpec).items()
    if isinstance(field.rule, specs.Passed) and field.rule.json_schema is SEAT_SCHEMA
]
THESIS = specs.writable(CharterSpec)


def form_fields(form: JsonDict) -> list[str]:
    """The fields a section form of the business-case page edits, in declaration order."""
    declared = specs.fields(CharterSpec)
    return [
        api
        for api, field in declared.items()
        if CharterSpec.model_fields[field.name].json_schema_extra is form
    ]


# The two read-only fields a client might hope to move by editing: refused when changed.
MOVED_BY_ACTS = specs.refused_when_changed(CharterSpec)


class LessonsSpec(specs.Spec):
    """The close-out's lessons: merged per field."""

    noun = "lessons"

    worked: Prose = Field(None, title="What worked")
    differently: Prose = Field(None, title="What we would do differently")
    next_sponsor: Prose = Field(None, title="Advice for the next sponsor")


LESSONS = specs.writable(LessonsSpec)
LESSONS_MESSAGE = "Must be an object {worked, differently, nextSponsor}."


def clean_lessons(raw: Any) -> tuple[dict[str, Any] | None, specs.Refusals | str | None]:
    """The lessons sent: each a text; the service merges them onto the stored ones."""
    if not isinstance(raw, dict):
        return None, LESSONS_MESSAGE
    partial, errors = specs.validate(LessonsSpec, raw)
    if errors:
        return None, {f".{path}": messages for path, messages in errors.items()}
    declared = specs.fields(LessonsSpec)
    return {api: getattr(partial, declared[api].name) for api in LESSONS if api in raw}, None


def _dispositions(values: list[str]) -> specs.Passed:
    return specs.Passed({"type": "object"}, values=tuple(values))


class CloseoutSpec(specs.Spec):
    """The close-out while it is open: the as-built record, a disposition of every register
    row (merged per id; null removes one), the lessons (merged per field), the BAU owner."""

    noun = "close-out"

    as_built_outcome: Annotated[Prose, specs.SiteLabel()] = Field(None, title="As-built outcome")
    as_built_return: Annotated[Prose, specs.SiteLabel()] = Field(None, title="As-built return")
    as_built_return_value: Annotated[Any, specs.NullableNumber(), specs.SiteLabel()] = Field(
        None, title="Revised return"
    )
    as_built_end_date: Annotated[Any, specs.IsoDate(), specs.SiteLabel()] = Field(
        None, title="As-built end date"
    )
    scope_dispositions: Annotated[Any, _dispositions(SCOPE_DISPOSITIONS)] = Field(
        None, title="Scope dispositions"
    )
    rio_dispositions: Annotated[Any, _dispositions(RIO_DISPOSITIONS), specs.SiteLabel()] = Field(
        None, title="Risk and opportunity dispositions"
    )
    pending_dispositions: Annotated[Any, _dispositions(PENDING_DISPOSITIONS)] = Field(
        None, title="Pending dispositions"
    )
    lessons: Annotated[
        dict[str, Any] | None,
        specs.Checked(
            clean_lessons,
            {
                "type": "object",
                "properties": specs.properties(LessonsSpec),
                "additionalProperties": False,
            },
        ),
    ] = Field(None, title="Lessons")
    bau_handover: Annotated[
        Any,
        specs.Passed(
            {"type": "object", "properties": {"ownerAccountId": {"type": ["string", "null"]}}}
        ),
    ] = Field(None, title="BAU handover")
    commentary: Prose = Field(None, title="Commentary")

    started_at: specs.Moment = None
    submitted_at: specs.Moment = None


class RealisationSpec(specs.Spec):
    """The realisation record while InRealisation: summary, 'measured by' date, owner."""

    noun = "realisation record"

    realisation_summary: Prose = Field(None, title="Realisation summary")
    realisation_date: Annotated[Any, specs.IsoDate()] = Field(None, title="Measured by (date)")
    br_owner: Annotated[str | None, specs.OptionalText(BR_OWNER_MAX)] = Field(
        None, title="Benefits owner"
    )


# --- the bodies of the lifecycle acts that write the case's own fields ------------------------


TOLERANCE_DAYS_MAX = 3650


def clean_non_negative_amount(value: Any) -> tuple[Any, str | None]:
    """An amount not below 0 (a cost tolerance, the benefit realised so far): a signed amount's
    rule, blank is none."""
    number, error = signed_number(value)
    if error:
        return None, error
    if number is not None and number < 0:
        return None, "Must be 0 or more."
    return number, None


AMOUNT_SCHEMA: JsonDict = {"type": ["number", "null"], "minimum": 0}
NonNegativeAmount = Annotated[Any, specs.Checked(clean_non_negative_amount, AMOUNT_SCHEMA)]
TolerancePercent = Annotated[Any, specs.Checked(clean_percent, PERCENT_SCHEMA)]


class TolerancesSpec(specs.Spec):
    """The project tolerances the sponsor sets when approving (and may change through an
    amendment's approval): blank leaves a tolerance unset."""

    noun = "tolerances"

    tolerance_days: Annotated[
        Any, specs.BoundedInteger(0, TOLERANCE_DAYS_MAX), specs.SiteLabel()
    ] = Field(None, title="Time tolerance (days late)")
    tolerance_cost_percent: Annotated[TolerancePercent, specs.SiteLabel()] = Field(
        None, title="Cost tolerance (% over budget)"
    )
    tolerance_cost_amount: Annotated[NonNegativeAmount, specs.SiteLabel()] = Field(
        None, title="Cost tolerance (amount over budget)"
    )
    tolerance_benefit_percent: Annotated[TolerancePercent, specs.SiteLabel()] = Field(
        None, title="Benefit tolerance (% under the approved benefit)"
    )


TOLERANCES = specs.writable(TolerancesSpec)


class ApproveSpec(TolerancesSpec):
    """The sponsor's approval: a comment and a rationale, both optional, and the project's
    tolerances (each optional: one not sent keeps the value in force)."""

    noun = "approval"

    approval_comment: Prose = Field(None, title="Approval comment")
    approval_rationale: Prose = Field(None, title="Approval rationale")


VERDICTS = ("Realised", "NotRealised")


class Verdict(specs.RequiredChoice):
    """The sponsor's verdict: Realised or NotRealised, nothing else (and never blank)."""

    def check(self, value: Any, field: str | None) -> tuple[Any, specs.Refusals]:
        if value not in self.values:
            return None, {"": ["Must be Realised or NotRealised."]}
        return value, {}


class VerdictSpec(specs.Spec):
    """The sponsor's verdict on the benefits, with the realisation record's closing texts."""

    noun = "verdict"

    verdict: Annotated[str | None, Verdict(VERDICTS), specs.RequiredOnCreate()] = Field(
        None, title="Verdict"
    )
    return_realised: Prose = Field(None, title="Return realised")
    realisation_lessons: Prose = Field(None, title="Realisation lessons")
    realisation_summary: Prose = Field(None, title="Realisation summary")


class ReviewSpec(specs.Spec):
    """A benefit review: a note, the confidence now, and the benefit realised so far."""

    noun = "benefit review"

    note: Annotated[str | None, specs.Text(TEXT_MAX, required=True), specs.RequiredOnCreate()] = (
        Field(None, title="Note")
    )
    confidence: Annotated[
        str | None, specs.RequiredChoice(tuple(CONFIDENCES)), specs.RequiredOnCreate()
    ] = Field(None, title="Confidence")
    benefit_realised_to_date: NonNegativeAmount = Field(None, title="Benefit realised to date")


MET_MESSAGE = "Say whether the KPI was met (true or false)."


def clean_met(value: Any) -> tuple[Any, str | None]:
    """Whether the adoption KPI was met: true or false, never left blank."""
    if value is None or value == "":
        return None, MET_MESSAGE
    return boolean(value)


class KpiSpec(specs.Spec):
    """The adoption KPI's resolution: the value reached, whether it was met, notes."""

    noun = "KPI resolution"

    resolved_value: Annotated[str | None, specs.Text(KPI_VALUE_MAX)] = Field(
        None, title="Resolved value"
    )
    met: Annotated[
        bool | None, specs.Checked(clean_met, {"type": "boolean"}), specs.RequiredOnCreate()
    ] = Field(None, title="Met")
    notes: Prose = Field(None, title="Notes")


NOTE_KEYS = ("section", "ask", "severity", "id", "addressed")
NOTES_MESSAGE = "Give at least one note {section, ask, severity}."


def _clean_notes(sections: list[str]) -> Callable[[Any], tuple[Any, specs.Refusals]]:
    def clean(raw: Any) -> tuple[Any, specs.Refusals]:
        """Return notes {section, ask, severity}: at least one; every bad entry named. Each
        note kept gets a fresh id and starts not addressed."""
        if not isinstance(raw, list) or not raw:
            return None, {"": [NOTES_MESSAGE]}
        errors = FieldErrors()
        notes = []
        for index, item in enumerate(raw):
            where = f"[{index}]"
            if not known_object(item, NOTE_KEYS, errors, where, "section, ask, severity"):
                continue
            section = item.get("section")
            if section not in sections:
                errors.add(f"{where}.section", f"Must be one of: {', '.join(sections)}.")
            severity = item.get("severity")
            if severity not in SEVERITIES:
                errors.add(f"{where}.severity", f"Must be one of: {', '.join(SEVERITIES)}.")
            ask, error = text(item.get("ask"), max_length=TEXT_MAX, required=True)
            if error:
                errors.add(f"{where}.ask", error)
            notes.append(
                {
                    "id": str(uuid.uuid4()),
                    "section": section,
                    "ask": ask,
                    "severity": severity,
                    "addressed": False,
                }
            )
        return notes, dict(errors)

    return clean


def _notes_rule(sections: list[str]) -> specs.Checked:
    note = {
        "type": "object",
        "properties": {
            "section": {"enum": list(sections)},
            "ask": required_text_schema(TEXT_MAX),
            "severity": {"enum": list(SEVERITIES)},
            "id": {"type": "string"},
            "addressed": {"type": "boolean"},
        },
        "required": ["section", "ask", "severity"],
        "additionalProperties": False,
    }
    schema = {"type": "array", "minItems": 1, "items": note}
    return specs.Checked(_clean_notes(sections), schema)


class ReturnSpec(specs.Spec):
    """The sponsor's return of a submitted case: at least one note."""

    noun = "return"

    return_notes: Annotated[Any, _notes_rule(RETURN_NOTE_SECTIONS), specs.RequiredOnCreate()] = (
        Field(None, title="Return notes")
    )


class CloseoutReturnSpec(specs.Spec):
    """The sponsor's return of a submitted close-out: at least one note."""

    noun = "close-out return"

    return_notes: Annotated[
        Any, _notes_rule(CLOSEOUT_RETURN_NOTE_SECTIONS), specs.RequiredOnCreate()
    ] = Field(None, title="Return notes")


SUMMARY_MAX = 200


class ReopenSpec(specs.Spec):
    """Re-open for amendment: cite an Approved change awaiting application (changeId), or
    have one raised (summary, reason; the reason is then required: the service says so)."""

    noun = "re-opening"

    change_id: Annotated[
        Any,
        specs.Passed({"type": "string", "description": "an Approved change awaiting application"}),
    ] = Field(None, title="Enabling change")
    summary: Annotated[str | None, specs.Text(SUMMARY_MAX)] = Field(None, title="Summary")
    reason: Prose = Field(None, title="Reason")


def _required_reason(message: str) -> specs.Checked:
    """A reason that may not be left blank, refused in the act's own words."""

    def clean(value: Any) -> tuple[Any, str | None]:
        reason, error = text(value, max_length=TEXT_MAX)
        if error:
            return None, error
        return (reason, None) if reason else (None, message)

    return specs.Checked(clean, required_text_schema(TEXT_MAX))


class StopSpec(specs.Spec):
    """Archive or kill: why the case stops."""

    noun = "stop decision"

    reason: Annotated[
        str | None, _required_reason("A reason is required."), specs.RequiredOnCreate()
    ] = Field(None, title="Reason")


class EscalateSpec(specs.Spec):
    """Escalate the BAU handover: why."""

    noun = "escalation"

    reason: Annotated[
        str | None,
        _required_reason("A reason is required to escalate the handover."),
        specs.RequiredOnCreate(),
    ] = Field(None, title="Reason")


# Tracker accountIds; whether the tracker knows each is asked by the service.
Attendees = Annotated[
    Any,
    specs.Passed(
        {"type": ["array", "null"], "items": required_text_schema(ACCOUNT_ID_MAX)},
    ),
]


class SteercoScheduleSpec(specs.Spec):
    """The date the first steering committee is scheduled for (null clears it)."""

    noun = "steering committee schedule"

    scheduled_for: Annotated[Any, specs.IsoDate()] = Field(None, title="Scheduled for")


class SteercoConfirmSpec(specs.Spec):
    """The first steering committee held without minutes, with whom."""

    noun = "steering committee confirmation"

    attendees: Attendees = Field(None, title="Attendees")


# The minutes' address: an http or https URL, or none (a wiki page or the template instead).
MINUTES_URL_SCHEMA = {
    "type": ["string", "null"],
    "pattern": "^$|" + specs.HTTP_URL_PATTERN,
}


class MinutesSpec(specs.Spec):
    """Steering committee minutes: a wiki page (pageId), a URL, or a new page made from the
    template (createFromTemplate); heldOn is required (and not in the future: the service)."""

    noun = "minutes"

    title: Annotated[str | None, specs.Text(NAME_MAX)] = Field(None, title="Title")
    url: Annotated[Any, specs.Passed(MINUTES_URL_SCHEMA)] = Field(None, title="Minutes URL")
    page_id: Annotated[str | None, specs.OptionalText(PAGE_ID_MAX)] = Field(None, title="Wiki page")
    held_on: Annotated[Any, specs.IsoDate(required=True), specs.RequiredOnCreate()] = Field(
        None, title="Held on"
    )
    attendees: Attendees = Field(None, title="Attendees")
    create_from_template: Annotated[Any, specs.Passed({"type": "boolean"})] = Field(
        None, title="Create from the template"
    )

    id: specs.AnsweredText = None
    created_at: specs.Moment = None
    created_by_account_id: specs.AnsweredAccount = None


class LinkFromTemplateSpec(specs.Spec):
    """A supporting link to a new wiki page made from the board paper or lessons template."""

    noun = "page from a template"

    template_kind: Annotated[
        Any, specs.Passed({"enum": list(LINK_TEMPLATE_KINDS)}), specs.RequiredOnCreate()
    ] = Field(None, title="Template")
    title: Annotated[str | None, specs.Text(LABEL_MAX)] = Field(None, title="Title")


class ReturnNoteSpec(specs.Spec):
    """A return note marked addressed (or not)."""

    noun = "return note"

    addressed: Annotated[bool | None, specs.Boolean(), specs.RequiredOnCreate()] = Field(
        None, title="Addressed"
    )


# Act name -> the declaration of its body (an act absent here takes no body).
ACT_SPECS: dict[str, type[specs.Spec]] = {
    "return": ReturnSpec,
    "approve": ApproveSpec,
    "reopen": ReopenSpec,
    "archive": StopSpec,
    "kill": StopSpec,
    "closeout-return": CloseoutReturnSpec,
    "handover-escalate": EscalateSpec,
    "realisation-review": ReviewSpec,
    "kpi-resolve": KpiSpec,
    "verdict": VerdictSpec,
    "steerco-schedule": SteercoScheduleSpec,
    "steerco-confirm": SteercoConfirmSpec,
}
