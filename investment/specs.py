"""The declarations of investment decisions' bodies (governance.specs): a model version and
its criteria, a score, a scenario and the board's choice. The API's body schemas and the
services' first checks are read from here; the services keep the stateful rules."""

import itertools
from decimal import Decimal
from typing import Annotated, Any

from pydantic import Field

from governance import cleaning, specs
from governance.cleaning import FieldErrors
from investment.criteria import CATALOGUE, SOURCES
from investment.models import NAME_MAX, PERSON, POINTS, TEXT_MAX

CRITERIA_MAX = 20
KEYS_MAX = 1000
WEIGHT_MAX = 100
KEY_MAX = 64
YEAR_MIN, YEAR_MAX = 2000, 2100

RequiredName = Annotated[str | None, specs.Text(NAME_MAX, required=True), specs.RequiredOnCreate()]
RequiredProse = Annotated[str | None, specs.Text(TEXT_MAX, required=True), specs.RequiredOnCreate()]
Prose = Annotated[str | None, specs.Text(TEXT_MAX)]


def _refused(errors: FieldErrors) -> specs.Refusals:
    return {(k if k.startswith("[") or not k else f".{k}"): v for k, v in errors.items()}


def clean_points(raw: Any) -> tuple[list[str] | None, specs.Refusals]:
    """The words for each point of the scale: five short texts, 1 first."""
    message = f"Give {POINTS} short texts: the words for 1 to {POINTS}."
    if not isinstance(raw, list) or len(raw) != POINTS:
        return None, {"": [message]}
    return cleaning.required_texts(raw, max_length=NAME_MAX)


def clean_thresholds(raw: Any) -> tuple[list[float] | None, specs.Refusals]:
    """Four ascending numbers (null: the data source's defaults)."""
    if raw is None:
        return None, {}
    message = "Give four ascending numbers: where the figure passes to 2, 3, 4 and 5 points."
    if not isinstance(raw, list) or len(raw) != POINTS - 1:
        return None, {"": [message]}
    numbers: list[Decimal] = []
    for index, item in enumerate(raw):
        number, error = cleaning.signed_number(item)
        if error or number is None:
            return None, {f"[{index}]": [error or message]}
        numbers.append(number)
    if any(b <= a for a, b in itertools.pairwise(numbers)):
        return None, {"": [message]}
    return [float(n) for n in numbers], {}


def clean_key(raw: Any) -> tuple[str | None, str | None]:
    value, error = cleaning.text(raw, max_length=KEY_MAX, required=True)
    if error:
        return None, error
    if not value.replace("_", "").replace("-", "").isascii() or not all(
        ch.isalnum() or ch in "_-" for ch in value
    ):
        return None, "Use letters, digits, '-' and '_' only."
    return value, None


class CriterionSpec(specs.Spec):
    """One criterion of a model version."""

    noun = "criterion"

    key: Annotated[
        str | None,
        specs.Checked(
            clean_key, {"type": "string", "maxLength": KEY_MAX, "pattern": "^[A-Za-z0-9_-]+$"}
        ),
        specs.RequiredOnCreate(),
    ] = Field(None, title="Key")
    name: RequiredName = Field(None, title="Name")
    measures: Prose = Field(None, title="What it measures")
    points: Annotated[
        list[str] | None,
        specs.Checked(
            clean_points,
            cleaning.required_texts_schema(NAME_MAX, min_items=POINTS, max_items=POINTS),
        ),
        specs.RequiredOnCreate(),
    ] = Field(None, title="Words for each point (1 to 5)")
    weight: Annotated[
        int | None, specs.BoundedInteger(low=1, high=WEIGHT_MAX), specs.RequiredOnCreate()
    ] = Field(None, title="Weight")
    source: Annotated[str | None, specs.RequiredChoice(SOURCES), specs.RequiredOnCreate()] = Field(
        None, title="Source", description="person, or a data source key of the catalogue."
    )
    thresholds: Annotated[
        list[float] | None,
        specs.Checked(
            clean_thresholds,
            {"type": ["array", "null"], "items": {"type": "number"}, "minItems": 4, "maxItems": 4},
        ),
    ] = Field(None, title="Thresholds (data criteria)")


def clean_criteria(raw: Any) -> tuple[list[dict[str, Any]] | None, specs.Refusals]:
    """1 to CRITERIA_MAX criteria (`CriterionSpec`), keys unique; a person's criterion takes
    no thresholds; a data criterion without thresholds takes its source's defaults."""
    if not isinstance(raw, list) or not raw:
        return None, {"": ["Give at least one criterion."]}
    if len(raw) > CRITERIA_MAX:
        return None, {"": [f"At most {CRITERIA_MAX} criteria (this has {len(raw)})."]}
    found, cleaned, keys = FieldErrors(), [], set()
    for index, item in enumerate(raw):
        where = f"[{index}]"
        if not isinstance(item, dict):
            found.add(where, "Must be an object {key, name, measures, points, weight, source}.")
            continue
        errors = FieldErrors()
        partial, _ = specs.validate(CriterionSpec, item, creating=True, errors=errors)
        for path, messages in errors.items():
            for message in messages:
                found.add(f"{where}.{path}", message)
        key = getattr(partial, "key", None)
        if key is not None and key in keys:
            found.add(f"{where}.key", f"{key} appears twice.")
        keys.add(key)
        if errors:
            continue
        value = {api: getattr(partial, f.name) for api, f in specs.fields(CriterionSpec).items()}
        if value["source"] == PERSON and value["thresholds"] is not None:
            found.add(f"{where}.thresholds", "A criterion a person scores takes no thresholds.")
        if value["source"] != PERSON and value["thresholds"] is None:
            value["thresholds"] = [float(t) for t in CATALOGUE[value["source"]].thresholds]
        value["measures"] = value["measures"] or ""
        cleaned.append(value)
    return (None, dict(found)) if found else (cleaned, {})


class ModelVersionSpec(specs.Spec):
    """A new version of the scoring model: why, and its whole list of criteria."""

    noun = "scoring model version"

    why: RequiredProse = Field(None, title="Why")
    criteria: Annotated[
        list[dict[str, Any]] | None,
        specs.Checked(
            clean_criteria,
            {
                "type": "array",
                "minItems": 1,
                "maxItems": CRITERIA_MAX,
                "items": {
                    "type": "object",
                    "properties": specs.properties(CriterionSpec),
                    "required": specs.required_on_create(CriterionSpec),
                },
            },
        ),
        specs.RequiredOnCreate(),
    ] = Field(None, title="Criteria")


class ScoreSpec(specs.Spec):
    """A person's score of a proposal against one criterion of the model in force."""

    noun = "score"

    criterion: Annotated[
        str | None,
        specs.Checked(clean_key, {"type": "string", "maxLength": KEY_MAX}),
        specs.RequiredOnCreate(),
    ] = Field(None, title="Criterion")
    value: Annotated[
        int | None, specs.BoundedInteger(low=1, high=POINTS), specs.RequiredOnCreate()
    ] = Field(None, title="Points (1 to 5)")
    reason: RequiredProse = Field(None, title="Reason")


def clean_budget_by_year(raw: Any) -> tuple[dict[str, float] | None, specs.Refusals]:
    """{"2027": amount, ...}: years YEAR_MIN..YEAR_MAX, amounts 0 or more."""
    if raw in (None, {}):
        return {}, {}
    if not isinstance(raw, dict):
        return None, {"": ['Must be an object {"2027": amount, ...}.']}
    found = FieldErrors()
    cleaned_years: dict[str, float] = {}
    for year, amount in raw.items():
        where = f".{year}" if isinstance(year, str) and year.isascii() else ""
        number_of_year = cleaning.whole_number(year) if isinstance(year, str) else None
        if (
            len(str(year)) != 4
            or number_of_year is None
            or not YEAR_MIN <= number_of_year <= YEAR_MAX
        ):
            found.add(where, f'A year from {YEAR_MIN} to {YEAR_MAX}, as text: "2027".')
            continue
        number, error = cleaning.signed_number(amount)
        if error or number is None or number < 0:
            found.add(where, error or "An amount of 0 or more is required.")
            continue
        cleaned_years[year] = float(number)
    return (None, dict(found)) if found else (dict(sorted(cleaned_years.items())), {})


def clean_keys(raw: Any) -> tuple[list[str] | None, specs.Refusals]:
    """Project keys, each once, at most KEYS_MAX."""
    if raw in (None, ""):
        return [], {}
    if not isinstance(raw, list):
        return None, {"": ["Must be a list of project keys."]}
    if len(raw) > KEYS_MAX:
        return None, {"": [f"At most {KEYS_MAX} projects (this has {len(raw)})."]}
    found, keys = FieldErrors(), []
    for index, item in enumerate(raw):
        key, error = cleaning.project_key(item)
        if error or key is None:
            found.add(f"[{index}]", error or "A project key is required.")
        elif key not in keys:
            keys.append(key)
    return (None, dict(found)) if found else (keys, {})


KEYS_SCHEMA = {"type": "array", "items": {"type": "string"}, "maxItems": KEYS_MAX}


class ScenarioSpec(specs.Spec):
    """A scenario: a named selection over proposals and running projects within a budget."""

    noun = "scenario"

    name: RequiredName = Field(None, title="Name")
    notes: Prose = Field(None, title="Notes")
    budget_by_year: Annotated[
        dict[str, float] | None,
        specs.Checked(
            clean_budget_by_year,
            {
                "type": ["object", "null"],
                "additionalProperties": {"type": ["number", "string"]},
                "description": 'Budget per calendar year: {"2027": amount}.',
            },
        ),
    ] = Field(None, title="Budget per year")
    budget_total: Annotated[Decimal | None, specs.SignedAmount()] = Field(
        None, title="Budget in total"
    )
    selection: Annotated[list[str] | None, specs.Checked(clean_keys, KEYS_SCHEMA)] = Field(
        None, title="Selection", description="Project keys; empty: every proposal."
    )
    must_haves: Annotated[list[str] | None, specs.Checked(clean_keys, KEYS_SCHEMA)] = Field(
        None, title="Must-haves"
    )


def clean_minutes(raw: Any) -> tuple[dict[str, Any] | None, specs.Refusals]:
    """The minutes of the board's meeting: {title, url?, pageId?}, title required."""
    if not isinstance(raw, dict):
        return None, {"": ["Must be an object {title, url, pageId}: the board's minutes."]}
    found = FieldErrors()
    for key in raw:
        if key not in ("title", "url", "pageId"):
            found.add(f".{key}", "Unknown field.")
    title, error = cleaning.text(raw.get("title"), max_length=NAME_MAX, required=True)
    if error:
        found.add(".title", error)
    ref: dict[str, Any] = {"title": title}
    if raw.get("url") not in (None, ""):
        ref["url"], error = cleaning.http_url(raw["url"])
        if error:
            found.add(".url", error)
    page, error = cleaning.optional_text(raw.get("pageId"), max_length=KEY_MAX)
    if error:
        found.add(".pageId", error)
    elif page:
        ref["pageId"] = page
    return (None, dict(found)) if found else (ref, {})


class ChoiceSpec(specs.Spec):
    """The board's choice of a scenario: a made decision of the portfolio decision log."""

    noun = "portfolio decision"

    decision: Annotated[str | None, specs.Text(NAME_MAX)] = Field(
        None, title="Decision", description="Default: Prioritise the proposals of scenario X."
    )
    rationale: Prose = Field(None, title="Rationale")
    made_on: Annotated[Any, specs.IsoDate(description="Default: today; never in the future.")] = (
        Field(None, title="Made on")
    )
    minutes_ref: Annotated[
        dict[str, Any] | None,
        specs.Checked(
            clean_minutes,
            {
                "type": "object",
                "properties": {
                    "title": cleaning.required_text_schema(NAME_MAX),
                    "url": {"type": ["string", "null"]},
                    "pageId": {"type": ["string", "null"], "maxLength": KEY_MAX},
                },
                "required": ["title"],
            },
        ),
        specs.RequiredOnCreate(),
    ] = Field(None, title="Minutes")
    expected_keys: Annotated[list[str] | None, specs.Checked(clean_keys, KEYS_SCHEMA)] = Field(
        None,
        title="Expected proposals",
        description=(
            "The project keys the caller expects the choice to prioritise (as last read); "
            "when sent and the proposals above the line differ now, 409 and nothing recorded."
        ),
    )


# --- the answers (investment.api) ------------------------------------------------------------

_TEXT: specs.JsonSchema = {"type": "string"}
_TEXT_OR_NULL: specs.JsonSchema = {"type": ["string", "null"]}
_INT: specs.JsonSchema = {"type": "integer"}
_INT_OR_NULL: specs.JsonSchema = {"type": ["integer", "null"]}
_BOOL: specs.JsonSchema = {"type": "boolean"}
_NUMBER_OR_NULL: specs.JsonSchema = {"type": ["number", "null"]}
_MONEY = specs.MONEY_ANSWER
_MOMENT: specs.JsonSchema = {"type": "string", "format": "date-time"}
_MOMENT_OR_NULL: specs.JsonSchema = {"type": ["string", "null"], "format": "date-time"}
_BY_YEAR: specs.JsonSchema = {"type": "object", "additionalProperties": _MONEY}


def _object(properties: specs.JsonSchema) -> specs.JsonSchema:
    return {"type": "object", "properties": properties, "required": list(properties)}


CRITERION_ANSWER = _object(
    {
        "key": _TEXT,
        "name": _TEXT,
        "measures": _TEXT,
        "points": {"type": "array", "items": _TEXT},
        "weight": _INT,
        "source": {"type": "string", "enum": list(SOURCES)},
        "thresholds": {"type": ["array", "null"], "items": {"type": "number"}},
    }
)
VERSION_ANSWER = _object(
    {
        "number": _INT,
        "why": _TEXT,
        "createdAt": _MOMENT,
        "createdByAccountId": _TEXT,
        "criteria": {"type": "array", "items": CRITERION_ANSWER},
    }
)
DATA_SOURCE_ANSWER = _object(
    {
        "key": _TEXT,
        "label": _TEXT,
        "unit": _TEXT,
        "higherIsBetter": _BOOL,
        "defaultThresholds": {"type": "array", "items": {"type": "number"}},
    }
)
CRITERION_POINTS_ANSWER = _object(
    {
        "key": _TEXT,
        "name": _TEXT,
        "source": _TEXT,
        "weight": _INT,
        "value": _INT_OR_NULL,
        "figure": _NUMBER_OR_NULL,
        "reason": _TEXT_OR_NULL,
        "scoredByAccountId": _TEXT_OR_NULL,
        "scoredAt": _MOMENT_OR_NULL,
        "scoreId": _INT_OR_NULL,
    }
)
PROPOSAL_ANSWER = _object(
    {
        "projectKey": _TEXT,
        "projectName": _TEXT,
        "approvalStatus": _TEXT_OR_NULL,
        "modelVersion": _INT_OR_NULL,
        "currentModelVersion": _INT_OR_NULL,
        "scoredUnderOlderVersion": _BOOL,
        "total": _NUMBER_OR_NULL,
        "complete": _BOOL,
        "rank": _INT_OR_NULL,
        "criteria": {"type": "array", "items": CRITERION_POINTS_ANSWER},
    }
)
PRIORITISED_ANSWER = _object({"scenarioName": _TEXT, "decisionId": _TEXT, "at": _MOMENT})
SCORE_ANSWER = _object(
    {
        "id": _INT,
        "criterion": _TEXT,
        "modelVersion": _INT,
        "value": _INT,
        "reason": _TEXT,
        "scoredByAccountId": _TEXT,
        "scoredAt": _MOMENT,
        "supersededBy": _INT_OR_NULL,
    }
)
SCENARIO_ANSWER = _object(
    {
        "id": _TEXT,
        "name": _TEXT,
        "notes": _TEXT,
        "budgetByYear": _BY_YEAR,
        "budgetTotal": _MONEY,
        "selection": {"type": "array", "items": _TEXT},
        "mustHaves": {"type": "array", "items": _TEXT},
        "copyOf": _TEXT_OR_NULL,
        "chosen": _BOOL,
        "createdAt": _MOMENT,
        "createdByAccountId": _TEXT,
        "updatedAt": _MOMENT,
        "updatedByAccountId": _TEXT,
        "revision": _INT,
    }
)
ROW_ANSWER = _object(
    {
        "projectKey": _TEXT,
        "projectName": _TEXT,
        "approvalStatus": _TEXT_OR_NULL,
        "proposal": _BOOL,
        "rank": _INT_OR_NULL,
        "total": _NUMBER_OR_NULL,
        "complete": _BOOL,
        "modelVersion": _INT_OR_NULL,
        "scoredUnderOlderVersion": _BOOL,
        "mustHave": _BOOL,
        "aboveLine": _BOOL,
        "costByYear": _BY_YEAR,
        "unphasedCost": _MONEY,
        "cost": _MONEY,
        "benefit": _MONEY,
        "fitsByYear": {"type": "object", "additionalProperties": _BOOL},
        "fitsTotal": {"type": ["boolean", "null"]},
    }
)
TOTALS_ANSWER = _object(
    {
        "costByYear": _BY_YEAR,
        "cost": _MONEY,
        "benefit": _MONEY,
        "score": _NUMBER_OR_NULL,
        "projects": _INT,
        "budgetByYear": _BY_YEAR,
        "budgetTotal": _MONEY,
        "overBudgetYears": {"type": "array", "items": _TEXT},
    }
)
EVALUATION_PROPERTIES: specs.JsonSchema = {
    "rows": {"type": "array", "items": ROW_ANSWER},
    "cutAfter": _INT,
    "totals": TOTALS_ANSWER,
}
MOVE_ANSWER = _object(
    {
        "projectKey": _TEXT,
        "direction": {"type": "string", "enum": ["in", "out"]},
        "joins": {"type": "array", "items": _TEXT},
        "leaves": {"type": "array", "items": _TEXT},
        "before": TOTALS_ANSWER,
        "after": TOTALS_ANSWER,
    }
)
COMPARED_ANSWER = _object(
    {
        "id": _TEXT,
        "name": _TEXT,
        "revision": _INT,
        **EVALUATION_PROPERTIES,
    }
)
COMPARISON_ANSWER = _object(
    {
        "scenarios": {"type": "array", "items": COMPARED_ANSWER},
        "projects": {
            "type": "array",
            "items": _object(
                {
                    "projectKey": _TEXT,
                    "projectName": _TEXT,
                    "aboveLine": {"type": "array", "items": {"type": ["boolean", "null"]}},
                    "differs": _BOOL,
                }
            ),
        },
    }
)
MINUTES_ANSWER = _object({"title": _TEXT, "url": _TEXT_OR_NULL, "pageId": _TEXT_OR_NULL})
DECISION_ANSWER = _object(
    {
        "id": _TEXT,
        "decision": _TEXT,
        "rationale": _TEXT,
        "state": {"type": "string", "enum": ["Made"]},
        "madeOn": {"type": "string", "format": "date"},
        "madeByAccountId": _TEXT,
        "minutesRef": MINUTES_ANSWER,
        "scenarioId": _TEXT,
        "scenarioName": _TEXT,
        "scenarioRevision": _INT,
        "proposals": {
            "type": "array",
            "items": _object(
                {
                    "projectKey": _TEXT,
                    "projectName": _TEXT,
                    "rank": _INT_OR_NULL,
                    "total": _NUMBER_OR_NULL,
                    "modelVersion": _INT_OR_NULL,
                    "mustHave": _BOOL,
                }
            ),
        },
        "proposalsHidden": _INT,
        "figures": TOTALS_ANSWER,
        "createdAt": _MOMENT,
    }
)
