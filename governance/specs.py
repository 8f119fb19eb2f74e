"""Declarations: one pydantic model per resource, its fields typed by the input conventions
of `governance.cleaning` (each rule keeps its messages and its coercions exactly), and what
every door derives from it: the OpenAPI body schema, the agent's tool schema, labels and
choices, the writable and read-only field lists, validation into a partial, snapshots.

A field is declared as

    residual_likelihood: Annotated[int | None, BoundedInteger(low=1, high=5)] = Field(
        None, title="Residual likelihood"
    )

The python name is the model attribute it writes (`residual_likelihood`); the API name is
its camelCase (`residualLikelihood`, or an explicit `alias`); the title is the label people
read. `ReadOnly()` declares a field the API answers but ignores when sent back;
`RequiredOnCreate()` one a create refuses absent. Services take the validated partial
(`validate`) and keep only the cross-field and stateful rules."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Annotated, Any, ClassVar, TypeVar, cast

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError, core_schema

from governance import cleaning
from governance.cleaning import FieldErrors

JsonSchema = dict[str, Any]
Refusals = dict[str, list[str]]  # path suffix ("" for the field itself) -> messages
REFUSED = "refused"  # the pydantic error type every rule raises
REQUIRED_MESSAGE = "This field is required."
UNKNOWN_MESSAGE = "Unknown field."
SIGNED_AMOUNT_DESCRIPTION = (
    f"A signed amount (a saving is negative): at most 2 decimal places, at most "
    f"{cleaning.MAX_AMOUNT} either way; blank is null; anything else, and a comma that could "
    "be a decimal comma (12,5), is refused (422)."
)
# The years the accepted dates span (1900..2199), or blank (read as null): what a date's
# format cannot say. The document's format says the rest (a real day of a real month).
DATE_PATTERN = r"^$|^[ \t\r\n]*(19|2[01])[0-9]{2}-[0-9]{2}-[0-9]{2}[ \t\r\n]*$"
# An http or https URL (`cleaning.http_url`), spaces around it trimmed.
HTTP_URL_PATTERN = "^[ \t\r\n]*[Hh][Tt][Tt][Pp][Ss]?://[^ \t\r\n]"
# An amount as text: at most 16 digits before the point and 2 after, or blank.
AMOUNT_PATTERN = r"^[ \t\r\n]*(-?[0-9]{1,16}(\.[0-9]{1,2})?)?[ \t\r\n]*$"
DATE_SCHEMA: JsonSchema = {
    "type": ["string", "null"],
    "format": "date",
    "pattern": DATE_PATTERN,
    "description": (
        f"Between {cleaning.DATE_MIN} and {cleaning.DATE_MAX}; any other date is refused (422)."
    ),
}


# --- field rules -----------------------------------------------------------------------------


class Rule:
    """Metadata of an `Annotated` field: `check` is the validation (any input in, the stored
    value out, or refusals), `schema` what the OpenAPI document says of it. The inner type is
    not validated again: the rule decides."""

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        raise NotImplementedError

    def schema(self) -> JsonSchema:
        return {}

    def answer_schema(self) -> JsonSchema:
        """What the API answers in the field (the response schema): what it takes, unless
        the rule stores something it does not take (a lenient fallback)."""
        return self.schema()

    def choices(self) -> tuple[str, ...] | None:
        return None

    def initial(self) -> Any:
        """What a new record holds when the field is not sent (an add form starts there)."""
        return None

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.with_info_plain_validator_function(self._validate)

    def __get_pydantic_json_schema__(self, schema: Any, handler: Any) -> JsonSchema:
        return dict(self.schema())

    def _validate(self, value: Any, info: core_schema.ValidationInfo) -> Any:
        context = info.context if isinstance(info.context, Mapping) else {}
        field = context.get("field") or (to_camel(info.field_name) if info.field_name else None)
        cleaned, refusals = self.check(value, field)
        if refusals:
            first = next(iter(refusals.values()))[0]
            raise PydanticCustomError(REFUSED, "{message}", {"message": first, "fields": refusals})
        return cleaned


def _one(result: tuple[Any, cleaning.Error]) -> tuple[Any, Refusals]:
    value, error = result
    return value, ({"": [error]} if error else {})


@dataclass(frozen=True)
class Text(Rule):
    """`cleaning.text`: trimmed, capped (refused over), no control characters; `required`
    refuses blank. `nullable` documents the null the JSON body may send (read as empty)."""

    max_length: int
    required: bool = False
    nullable: bool = False

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        return _one(cleaning.text(value, max_length=self.max_length, required=self.required))

    def schema(self) -> JsonSchema:
        if self.required:
            return cleaning.required_text_schema(self.max_length)
        kind = ["string", "null"] if self.nullable else "string"
        return {"type": kind, "maxLength": self.max_length}


@dataclass(frozen=True)
class OptionalText(Rule):
    """`cleaning.optional_text`: like Text, blank becomes null."""

    max_length: int

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        return _one(cleaning.optional_text(value, max_length=self.max_length))

    def schema(self) -> JsonSchema:
        return {"type": ["string", "null"], "maxLength": self.max_length}


@dataclass(frozen=True)
class NullableNumber(Rule):
    """The spec's lenient nullable number (`cleaning.nullable_number`): what it coerces is
    noted under the field's API name (`cleaning.noting_coercions`)."""

    places: int = 2

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        return _one(cleaning.nullable_number(value, places=self.places, field=field))

    def schema(self) -> JsonSchema:
        return cleaning.nullable_number_schema(self.places)

    def answer_schema(self) -> JsonSchema:
        # Whatever was sent, what is stored is a number or null (the money convention).
        return {**MONEY_ANSWER, "description": MONEY_DESCRIPTION}


@dataclass(frozen=True)
class SignedAmount(Rule):
    """`cleaning.signed_number`: a signed amount, refused rather than coerced."""

    places: int = 2

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        return _one(cleaning.signed_number(value, places=self.places))

    def schema(self) -> JsonSchema:
        limit = 1e15  # within MAX_AMOUNT, where a float still holds cents
        return {
            "anyOf": [
                {"type": "number", "minimum": -limit, "maximum": limit, "multipleOf": 0.01},
                {"type": "string", "pattern": AMOUNT_PATTERN},
                {"type": "null"},
            ],
            "description": SIGNED_AMOUNT_DESCRIPTION,
        }


class Cleaned(Rule):
    """A rule that is one `cleaning` function of the value alone (`clean`) and a schema that
    does not change (`fixed`), both declared by the subclass."""

    clean: ClassVar[Callable[[Any], tuple[Any, cleaning.Error]]]
    fixed: ClassVar[JsonSchema]

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        return _one(type(self).clean(value))

    def schema(self) -> JsonSchema:
        return dict(self.fixed)


@dataclass(frozen=True)
class SignedInteger(Cleaned):
    """`cleaning.signed_integer`: a whole number either way, or null when blank."""

    clean = cleaning.signed_integer
    fixed = {"type": ["integer", "null"]}


@dataclass(frozen=True)
class ScheduleDays(Cleaned):
    """`cleaning.schedule_days`: a delta in days within the accepted dates' span."""

    clean = cleaning.schedule_days
    fixed = {
        "type": ["integer", "null"],
        "minimum": -cleaning.SCHEDULE_DAYS_MAX,
        "maximum": cleaning.SCHEDULE_DAYS_MAX,
    }


@dataclass(frozen=True)
class BoundedInteger(Rule):
    """`cleaning.bounded_integer`: in [low, high] on the step, refused never rounded."""

    low: int
    high: int
    step: int = 1

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        return _one(cleaning.bounded_integer(value, low=self.low, high=self.high, step=self.step))

    def schema(self) -> JsonSchema:
        schema: JsonSchema = {"type": ["integer", "null"], "minimum": self.low}
        schema["maximum"] = self.high
        if self.step != 1:
            schema["multipleOf"] = self.step
        return schema


@dataclass(frozen=True)
class IsoDate(Rule):
    """`cleaning.iso_date`: YYYY-MM-DD within the accepted dates, or null when blank.
    `description` replaces the document's default one."""

    description: str | None = None
    required: bool = False  # documents a date the service refuses blank (never null)

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        return _one(cleaning.iso_date(value))

    def schema(self) -> JsonSchema:
        schema = dict(DATE_SCHEMA)
        if self.required:
            schema.update(type="string", pattern=DATE_PATTERN.removeprefix("^$|"))
        if self.description:
            schema["description"] = self.description
        return schema


@dataclass(frozen=True)
class IsoMonth(Cleaned):
    """`cleaning.iso_month`: YYYY-MM within the accepted dates."""

    clean = cleaning.iso_month
    fixed = {"type": "string", "pattern": "^\\d{4}-\\d{2}$"}


@dataclass(frozen=True)
class OneOf(Rule):
    """`cleaning.enum`: one of the choices; null or empty text is the default (or null)."""

    values: tuple[str, ...]
    default: str | None = None

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        return _one(cleaning.enum(value, self.values, default=self.default))

    def schema(self) -> JsonSchema:
        return cleaning.enum_schema(self.values)

    def choices(self) -> tuple[str, ...]:
        return self.values

    def initial(self) -> Any:
        return self.default


@dataclass(frozen=True)
class Lenient(Rule):
    """The spec's lenient enum (`cleaning.coerce_enum`): anything else is the fallback."""

    values: tuple[str, ...]
    fallback: str | None

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        return cleaning.coerce_enum(value, self.values, fallback=self.fallback), {}

    def schema(self) -> JsonSchema:
        return {"enum": list(self.values)}

    def answer_schema(self) -> JsonSchema:
        # Anything else is kept as the fallback: the API answers it too.
        return {"enum": list(dict.fromkeys([*self.values, self.fallback]))}

    def choices(self) -> tuple[str, ...]:
        return self.values

    def initial(self) -> Any:
        return self.fallback


@dataclass(frozen=True)
class Boolean(Cleaned):
    """`cleaning.boolean`: true or false, with the forms' and spreadsheets' spellings."""

    clean = cleaning.boolean
    fixed = {"type": "boolean"}


@dataclass(frozen=True)
class AccountId(Cleaned):
    """`cleaning.account_id`: a tracker accountId or null. Whether the tracker knows the
    person is stateful: the service asks (`registers.services.common.clean_people`)."""

    clean = cleaning.account_id
    fixed = {"type": ["string", "null"]}


@dataclass(frozen=True)
class HttpUrl(Cleaned):
    """`cleaning.http_url`: an http or https URL."""

    clean = cleaning.http_url
    fixed = {"type": "string", "format": "uri"}


@dataclass(frozen=True)
class Checked(Rule):
    """A field a function checks: `clean(value) -> (value, error)` for one message, or
    `(value, {suffix: [messages]})` for a composite value whose members are named (a suffix
    such as "[3].period"). For rules with no cleaning function of their own."""

    clean: Callable[[Any], tuple[Any, cleaning.Error | Refusals]]
    json_schema: Mapping[str, Any]
    values: tuple[str, ...] | None = None
    answered: Mapping[str, Any] | None = None  # what the API answers, when not what it takes

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        cleaned, error = self.clean(value)
        if isinstance(error, str):
            return cleaned, {"": [error]}
        return cleaned, dict(error or {})

    def schema(self) -> JsonSchema:
        return dict(self.json_schema)

    def answer_schema(self) -> JsonSchema:
        return dict(self.answered) if self.answered is not None else self.schema()

    def choices(self) -> tuple[str, ...] | None:
        return self.values


@dataclass(frozen=True)
class Passed(Rule):
    """Taken as sent: the service checks it against stored state (a link to a record of the
    project, a tracker issue, a seat). `values` documents a closed set."""

    json_schema: Mapping[str, Any]
    values: tuple[str, ...] | None = None
    answered: Mapping[str, Any] | None = None  # what the API answers, when not what it takes

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        return value, {}

    def answer_schema(self) -> JsonSchema:
        return dict(self.answered) if self.answered is not None else self.schema()

    def schema(self) -> JsonSchema:
        return dict(self.json_schema)

    def choices(self) -> tuple[str, ...] | None:
        return self.values


@dataclass(frozen=True)
class RequiredChoice(OneOf):
    """`cleaning.enum` with no default: null or empty text is refused too (a cadence)."""

    def check(self, value: Any, field: str | None) -> tuple[Any, Refusals]:
        chosen, error = cleaning.enum(value, self.values)
        if error or chosen is None:
            return None, {"": [error or f"Must be one of: {', '.join(self.values)}."]}
        return chosen, {}

    def schema(self) -> JsonSchema:
        return {"enum": list(self.values)}


class ReadOnly:
    """Marker: answered by the API, ignored when a client sends it back, never validated.
    `schema`: what the API answers in it (the response schema); none said, any JSON value."""

    def __init__(self, schema: Mapping[str, Any] | None = None) -> None:
        self.schema: JsonSchema = dict(schema or {})


REVISION_SCHEMA: JsonSchema = {
    "type": "integer",
    "description": "The record's revision: its ETag, sent back as If-Match.",
}
MOMENT_SCHEMA: JsonSchema = {"type": ["string", "null"], "format": "date-time"}
ID_SCHEMA: JsonSchema = {"type": "string"}
ACCOUNT_SCHEMA: JsonSchema = {"type": ["string", "null"], "description": "A tracker accountId."}
# What the API answers in its read-only fields, typed for the response schema (OpenAPI 3.1:
# null is a type of the list). Money is a JSON number (an integer when whole), at most 2
# decimal places, null when not given (docs/api.md).
TEXT_SCHEMA: JsonSchema = {"type": "string"}
TEXT_OR_NULL_SCHEMA: JsonSchema = {"type": ["string", "null"]}
FLAG_SCHEMA: JsonSchema = {"type": "boolean"}
INTEGER_SCHEMA: JsonSchema = {"type": "integer"}
INTEGER_OR_NULL_SCHEMA: JsonSchema = {"type": ["integer", "null"]}
DAY_SCHEMA: JsonSchema = {"type": ["string", "null"], "format": "date"}
MONEY_DESCRIPTION = "Money: a JSON number, at most 2 decimal places; null when not given."
MONEY_ANSWER: JsonSchema = {"type": ["number", "null"], "description": MONEY_DESCRIPTION}
NUMBER_OR_NULL_SCHEMA: JsonSchema = {"type": ["number", "null"]}
TEXTS_SCHEMA: JsonSchema = {"type": "array", "items": TEXT_SCHEMA}
# Any JSON value, typed member by member (a free-form field: metrics, an action's result).
ANY_JSON_SCHEMA: JsonSchema = {
    "anyOf": [
        {"type": "string"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": {}},
        {"type": "object", "additionalProperties": True},
        {"type": "null"},
    ]
}


def enum_answer(values: Iterable[Any], *, nullable: bool = False) -> JsonSchema:
    """A closed set of texts as answered (null among them when `nullable`)."""
    found = list(dict.fromkeys(values))
    return {
        "type": ["string", "null"] if nullable else "string",
        "enum": [*found, None] if nullable else found,
    }


def object_answer(
    properties: Mapping[str, JsonSchema],
    *,
    nullable: bool = False,
    optional: Iterable[str] = (),
    description: str = "",
) -> JsonSchema:
    """An object as answered: its members typed, every one required but `optional`."""
    skipped = set(optional)
    schema: JsonSchema = {
        "type": ["object", "null"] if nullable else "object",
        "properties": dict(properties),
        "required": [name for name in properties if name not in skipped],
    }
    if description:
        schema["description"] = description
    return schema


# The server stamps most resources carry, typed for the response schema.
Revision = Annotated[Any, ReadOnly(REVISION_SCHEMA)]
Moment = Annotated[Any, ReadOnly(MOMENT_SCHEMA)]
Identifier = Annotated[Any, ReadOnly(ID_SCHEMA)]
AnsweredText = Annotated[Any, ReadOnly(TEXT_SCHEMA)]
AnsweredTextOrNull = Annotated[Any, ReadOnly(TEXT_OR_NULL_SCHEMA)]
AnsweredAccount = Annotated[Any, ReadOnly(ACCOUNT_SCHEMA)]
AnsweredFlag = Annotated[Any, ReadOnly(FLAG_SCHEMA)]
AnsweredInteger = Annotated[Any, ReadOnly(INTEGER_SCHEMA)]
AnsweredMoney = Annotated[Any, ReadOnly(MONEY_ANSWER)]
AnsweredDay = Annotated[Any, ReadOnly(DAY_SCHEMA)]


class RefusedWhenChanged:
    """Marker on a read-only field a client might hope to move by editing (a state the acts
    move): sent back with the stored value it is ignored, with another refused (422). The
    service compares (`refused_when_changed`); the document says it."""


class RequiredOnCreate:
    """Marker: a create without this field is refused as if it were sent empty."""


class CreateOnly:
    """Marker: written by a create only (a client-chosen id); ignored on a patch."""


class ApiOnly:
    """Marker: written through the API (and imports), not shown on the record's page form."""


class NotStored:
    """Marker: validated, never stored as such (an alias the service folds into another
    field): no snapshot, no `to_dict`."""


class Audited:
    """Marker on a read-only field: the audit snapshot keeps it (a server-written stamp)."""


@dataclass(frozen=True)
class Derived:
    """Marker on a read-only field: computed on read by the one function that derives it,
    found on the resource's view at `source` (a dotted attribute path; default: the field's
    model attribute). The representation reads it there (`derived_values`)."""

    source: str = ""


class Account:
    """Marker: the field holds a person's tracker accountId (exports name the person)."""


class SiteLabel:
    """Marker: the field's title is also how the rest of the site names it (messages, the
    audit log: `governance.labels`), not only its label on the record's page."""


class Spec(BaseModel):
    """A resource's declaration. Every field defaults to None and only the fields sent are
    set (`model_fields_set`): an instance is a partial, as a PATCH is."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        arbitrary_types_allowed=True,
        hide_input_in_errors=True,
    )
    # Said of the resource in messages and tool descriptions ("risk", "work package").
    noun: ClassVar[str] = "record"


SpecT = TypeVar("SpecT", bound=Spec)


@dataclass(frozen=True)
class Declared:
    """One declared field, as every derivation reads it."""

    name: str  # the model attribute
    api: str  # the camelCase API name
    label: str
    rule: Rule | None
    read_only: bool
    required_on_create: bool
    adapter: TypeAdapter[Any] | None
    markers: tuple[type, ...] = ()
    example: Any = None  # a value a person might write (an import template's example row)
    hint: str = ""  # how to write it in a file cell, where that is not plain
    answered: Mapping[str, Any] | None = None  # a read-only field's response schema

    def has(self, marker: type) -> bool:
        return marker in self.markers

    @property
    def choices(self) -> tuple[str, ...] | None:
        return self.rule.choices() if self.rule else None


def _declared(name: str, info: FieldInfo) -> Declared:
    metadata = list(info.metadata)
    rule = next((m for m in metadata if isinstance(m, Rule)), None)
    marker = next((m for m in metadata if isinstance(m, ReadOnly)), None)
    read_only = marker is not None
    return Declared(
        name=name,
        api=info.alias or to_camel(name),
        label=info.title or name.replace("_", " ").capitalize(),
        rule=rule,
        read_only=read_only,
        required_on_create=any(isinstance(m, RequiredOnCreate) for m in metadata),
        adapter=None if read_only or rule is None else _adapter(rule),
        markers=tuple(type(m) for m in metadata if not isinstance(m, Rule)),
        example=info.examples[0] if info.examples else None,
        hint=info.description or "",
        answered=marker.schema if marker is not None else None,
    )


def _adapter(rule: Rule) -> TypeAdapter[Any]:
    # An Annotated form is a type to pydantic, not to the type checker.
    return TypeAdapter(cast(type[Any], Annotated[Any, rule]))


@cache
def fields(spec: type[Spec]) -> dict[str, Declared]:
    """API name -> declared field, in declaration order."""
    found = [_declared(name, info) for name, info in spec.model_fields.items()]
    return {field.api: field for field in found}


def writable(spec: type[Spec]) -> list[str]:
    """The API names a client may write (on a patch: create-only fields are not)."""
    return [
        api
        for api, field in fields(spec).items()
        if not field.read_only and not field.has(CreateOnly)
    ]


def create_only(spec: type[Spec]) -> list[str]:
    return [api for api, field in fields(spec).items() if field.has(CreateOnly)]


def on_form(spec: type[Spec]) -> list[str]:
    """The fields the record's page form shows, in declaration order."""
    return [api for api in writable(spec) if not fields(spec)[api].has(ApiOnly)]


def site_labels(spec: type[Spec]) -> dict[str, str]:
    """API name -> label, for the fields the whole site names by their title."""
    return {api: field.label for api, field in fields(spec).items() if field.has(SiteLabel)}


def _initial(rule: Rule | None) -> Any:
    return rule.initial() if rule is not None else None


def initial(spec: type[Spec], names: Iterable[str] | None = None) -> dict[str, Any]:
    """API name -> what a new record starts with, for the fields whose rule says one."""
    declared = fields(spec)
    wanted = writable(spec) if names is None else list(names)
    found = {api: _initial(declared[api].rule) for api in wanted}
    return {api: value for api, value in found.items() if value is not None}


def with_marker(spec: type[Spec], marker: type) -> list[str]:
    """The API names carrying `marker` (the person fields...)."""
    return [api for api, field in fields(spec).items() if field.has(marker)]


def derived_values(spec: type[Spec], view: object) -> dict[str, Any]:
    """API name -> value, for each field declared `Derived`, read from `view` (a mapping
    answered as a plain dict), in declaration order."""
    found: dict[str, Any] = {}
    for api, field in fields(spec).items():
        marker = next(
            (m for m in spec.model_fields[field.name].metadata if isinstance(m, Derived)), None
        )
        if marker is None:
            continue
        value: Any = view
        for part in (marker.source or field.name).split("."):
            value = getattr(value, part)
        found[api] = dict(value) if isinstance(value, Mapping) else value
    return found


def json_kind(spec: type[Spec], api_name: str) -> str:
    """What a field's value is in JSON, from its schema: "list" (of plain values),
    "object" (an object, or a list of objects), or "" (a single plain value)."""
    rule = fields(spec)[api_name].rule
    schema = rule.schema() if rule else {}
    kinds = schema.get("type", [])
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "object" in kinds:
        return "object"
    if "array" in kinds:
        items = schema.get("items", {})
        return "object" if items.get("type") == "object" else "list"
    return ""


def with_rule(spec: type[Spec], kind: type[Rule] | tuple[type[Rule], ...]) -> list[str]:
    """The API names whose rule is of `kind` (the dates, the booleans...)."""
    return [api for api, field in fields(spec).items() if isinstance(field.rule, kind)]


def read_only(spec: type[Spec]) -> list[str]:
    """The API names answered and ignored when sent back."""
    return [api for api, field in fields(spec).items() if field.read_only]


def refused_when_changed(spec: type[Spec]) -> list[str]:
    """The read-only API names a body may send back only with the stored value."""
    return with_marker(spec, RefusedWhenChanged)


def required_on_create(spec: type[Spec]) -> list[str]:
    return [api for api, field in fields(spec).items() if field.required_on_create]


def labels(spec: type[Spec]) -> dict[str, str]:
    """API name -> the label people read."""
    return {api: field.label for api, field in fields(spec).items()}


def choices(spec: type[Spec], api_name: str) -> tuple[str, ...]:
    """The closed set of a field's values (empty when it has none)."""
    return fields(spec)[api_name].choices or ()


def examples(spec: type[Spec]) -> dict[str, Any]:
    """API name -> the declared example value, for the fields that have one."""
    return {api: f.example for api, f in fields(spec).items() if f.example is not None}


def hints(spec: type[Spec]) -> dict[str, str]:
    """API name -> how to write the field's value in a file cell, where it is not plain."""
    return {api: f.hint for api, f in fields(spec).items() if f.hint}


def cell_values(spec: type[Spec], api_name: str) -> list[str]:
    """The values one cell of the field may take, where the set is closed and small (its
    choices, a yes/no, a short integer scale); empty for a list-valued or open field."""
    rule = fields(spec)[api_name].rule
    if isinstance(rule, Boolean):
        return ["true", "false"]
    if isinstance(rule, BoundedInteger) and (rule.high - rule.low) // rule.step <= 20:
        return [str(n) for n in range(rule.low, rule.high + 1, rule.step)]
    if json_kind(spec, api_name) == "list":
        return []
    return list(dict.fromkeys(choices(spec, api_name)))


def attributes(spec: type[Spec], names: Iterable[str] | None = None) -> dict[str, str]:
    """API name -> model attribute, for the given names (default: every stored writable
    field, then the audited read-only ones)."""
    declared = fields(spec)
    if names is None:
        names = [a for a in writable(spec) if not declared[a].has(NotStored)]
        names += [a for a, f in declared.items() if f.read_only and f.has(Audited)]
    return {api: declared[api].name for api in names}


# --- validation ------------------------------------------------------------------------------


def _path(api: str, loc: Iterable[int | str]) -> str:
    path = api
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def add_refusals(errors: FieldErrors, api: str, exc: ValidationError) -> None:
    """Each error of a validation as the app's field errors: the rule's message under the
    field's API name (a composite's members under `field[3].member`); pydantic's own errors
    (missing, extra) in the app's words."""
    for error in exc.errors(include_url=False):
        context = error.get("ctx") or {}
        if error["type"] == REFUSED:
            for suffix, messages in context["fields"].items():
                for message in messages:
                    errors.add(api + suffix, message)
        elif error["type"] == "missing":
            errors.add(_path(api, error["loc"]), REQUIRED_MESSAGE)
        elif error["type"] == "extra_forbidden":
            errors.add(_path(api, error["loc"]), UNKNOWN_MESSAGE)
        else:
            errors.add(_path(api, error["loc"]), error["msg"])


def validate(
    spec: type[SpecT],
    data: Mapping[str, Any],
    *,
    creating: bool = False,
    errors: FieldErrors | None = None,
    ignore: Iterable[str] = (),
) -> tuple[SpecT, FieldErrors]:
    """The partial `data` describes: each field sent is checked by its rule (read-only ones
    are ignored, unknown ones refused), and on create a RequiredOnCreate field absent is
    checked as if sent empty. Every refusal is named in the errors (nothing is raised: the
    service adds its stateful refusals and raises once); the partial holds the fields that
    passed, `model_fields_set` naming them. `ignore`: extra names taken and not validated."""
    errors = FieldErrors() if errors is None else errors
    declared = fields(spec)
    skipped = set(ignore)
    for key in data:
        if key not in declared and key not in skipped:
            errors.add(key, UNKNOWN_MESSAGE)
    values: dict[str, Any] = {}
    for api, field in declared.items():
        if field.read_only or field.adapter is None or (field.has(CreateOnly) and not creating):
            continue
        if api in data:
            raw = data[api]
        elif creating and field.required_on_create:
            raw = None
        else:
            continue
        try:
            values[field.name] = field.adapter.validate_python(raw, context={"field": api})
        except ValidationError as exc:
            add_refusals(errors, api, exc)
    return _blank(spec).model_copy(update=values), errors


@cache
def _blank(spec: type[SpecT]) -> SpecT:
    """The partial holding no field, made once: `validate` copies it with the values that
    passed (a shallow copy, where `model_construct` works out every field's default again
    for each of an import's thousands of rows)."""
    return spec.model_construct(_fields_set=set())


def sent(partial: Spec) -> dict[str, Any]:
    """Model attribute -> value for each field the partial holds."""
    return {name: getattr(partial, name) for name in partial.model_fields_set}


def apply(partial: Spec, record: object, *, skip: Iterable[str] = ()) -> None:
    """Set each field the partial holds on `record` (by attribute), but those in `skip`."""
    skipped = set(skip)
    for name, value in sent(partial).items():
        if name not in skipped:
            setattr(record, name, value)


# --- derivations -----------------------------------------------------------------------------


def property_schema(spec: type[Spec], api_name: str) -> JsonSchema:
    """What the OpenAPI document says of one field: its rule's schema, titled by its label."""
    field = fields(spec)[api_name]
    schema = field.rule.schema() if field.rule else {}
    return {**schema, "title": field.label} if field.label else schema


def properties(spec: type[Spec], names: Iterable[str] | None = None) -> dict[str, JsonSchema]:
    """API name -> schema, for `names` (default: every field a create or a patch writes)."""
    declared = fields(spec)
    wanted = [a for a in declared if not declared[a].read_only] if names is None else list(names)
    return {api: property_schema(spec, api) for api in wanted}


IGNORED_DESCRIPTION = "Answered by the server; ignored when sent back (never refused)."
GUARDED_DESCRIPTION = (
    "Answered by the server; ignored when sent back with the stored value, refused (422) "
    "with another: it moves by its own operation, not by editing."
)


def ignored(spec: type[Spec], *, creating: bool) -> list[str]:
    """The API names a create (`creating`) or a patch takes and ignores: the read-only fields,
    and on a patch the create-only ones. With `writable`, the one rule of what a body may
    send back: the document says it (`readOnly`) and `validate` applies it."""
    declared = fields(spec)
    return [
        api
        for api, field in declared.items()
        if field.read_only or (not creating and field.has(CreateOnly))
    ]


def body(spec: type[Spec], *, creating: bool) -> tuple[dict[str, JsonSchema], list[str]]:
    """The request body of a create (`creating`) or a patch: properties and required names.
    What the body may send back and the server ignores is there too, marked `readOnly`: a
    client may send the whole representation it read."""
    props = properties(spec)
    skipped = ignored(spec, creating=creating)
    for api in skipped:
        guarded = fields(spec)[api].has(RefusedWhenChanged)
        props[api] = {
            **answer_schema(spec, api),
            "readOnly": True,
            "description": GUARDED_DESCRIPTION if guarded else IGNORED_DESCRIPTION,
        }
    return props, [a for a in (required_on_create(spec) if creating else []) if a not in skipped]


def answer_schema(spec: type[Spec], api_name: str) -> JsonSchema:
    """What the API answers in one field: a writable field its rule's schema, a read-only
    one its declared schema (any JSON value when none is declared), `readOnly`."""
    field = fields(spec)[api_name]
    if field.read_only:
        schema: JsonSchema = {**(field.answered or {}), "readOnly": True}
    else:
        schema = field.rule.answer_schema() if field.rule else {}
    return {**schema, "title": field.label} if field.label else schema


# What a successful write answers besides the resource when a lenient field coerced a value
# (`cleaning.noting_coercions`): one entry per coerced field. Absent when nothing was coerced.
WARNINGS_SCHEMA: JsonSchema = {
    "type": "array",
    "description": (
        "Present on a write's answer when a lenient field coerced what was sent: one entry "
        "per field (the value received, the value stored, why)."
    ),
    "items": {
        "type": "object",
        "properties": {
            "field": {"type": "string", "description": "The field's API name."},
            "received": {**ANY_JSON_SCHEMA, "description": "The value as sent."},
            "stored": {**ANY_JSON_SCHEMA, "description": "The value stored (null or a number)."},
            "message": {"type": "string"},
        },
        "required": ["field", "received", "stored", "message"],
    },
}


def response_schema(
    spec: type[Spec],
    names: Iterable[str] | None = None,
    *,
    optional: Iterable[str] = (),
    description: str = "",
) -> JsonSchema:
    """The resource as the API answers it (its serializer's dict): every declared field, or
    `names`, in declaration order, each with `answer_schema`; all required but `optional`
    (answered only on some records). Open: a write that coerced a value adds `warnings`."""
    wanted = list(fields(spec)) if names is None else list(names)
    schema: JsonSchema = {
        "type": "object",
        "properties": {
            **{api: answer_schema(spec, api) for api in wanted},
            "warnings": WARNINGS_SCHEMA,
        },
        "required": [api for api in wanted if api not in set(optional)],
    }
    if description:
        schema["description"] = description
    return schema


def tool_schema(
    spec: type[Spec],
    names: Iterable[str] | None = None,
    *,
    extra: Mapping[str, JsonSchema] | None = None,
    required: Iterable[str] = (),
    creating: bool = False,
    overrides: Mapping[str, JsonSchema] | None = None,
) -> JsonSchema:
    """An agent tool's input schema as a view of the declaration: `extra` properties first
    (projectKey, the record's id), then the chosen fields; `overrides` narrows a field's
    schema for the tool (a stricter view, never a wider one)."""
    props: dict[str, JsonSchema] = dict(extra or {})
    props.update(properties(spec, names))
    for api, schema in (overrides or {}).items():
        props[api] = dict(schema)
    wanted = [*required, *(required_on_create(spec) if creating else [])]
    return {"properties": props, "required": wanted}


def _json(value: Any) -> Any:
    if isinstance(value, Decimal):
        return cleaning.decimal_to_json(value)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def snapshot(spec: type[Spec], record: object, names: Iterable[str] | None = None) -> JsonSchema:
    """API name -> the record's stored value for `names` (default: every writable field):
    the audit entry's before and after."""
    found = {api: getattr(record, attr) for api, attr in attributes(spec, names).items()}
    return {api: list(v) if isinstance(v, list) else v for api, v in found.items()}


def to_dict(spec: type[Spec], record: object, names: Iterable[str] | None = None) -> JsonSchema:
    """Like `snapshot`, as JSON: dates in ISO form, money as numbers."""
    return {api: _json(value) for api, value in snapshot(spec, record, names).items()}
