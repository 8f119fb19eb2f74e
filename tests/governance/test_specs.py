"""The declarations' base (governance.specs): every field rule answers what its cleaning
function answers, message for message and coercion for coercion, and the derivations read
one declaration."""

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any

import pytest
from pydantic import Field

from governance import cleaning, specs

HOSTILE = [
    None,
    "",
    "   ",
    "12,5",
    "1,234.5",
    "1,234",
    "-3",
    "7",
    "2.555",
    "abc",
    "\x00",
    "a\x1fb",
    "\ud800",
    "x" * 300,
    "1e999999999",
    "NaN",
    float("nan"),
    True,
    [],
    {},
    3,
    3.5,
    "2024-02-30",
    "2024-02-03",
    "9999-12-31",
    "2024-13",
    "2024-05",
    "Closed",
    "Risk",
]


class Sample(specs.Spec):
    title: Annotated[str | None, specs.Text(200, required=True), specs.RequiredOnCreate()] = Field(
        None, title="Title"
    )
    notes: Annotated[str | None, specs.Text(20)] = Field(None, title="Notes")
    kind: Annotated[str | None, specs.OptionalText(20)] = None
    budget: Annotated[Decimal | None, specs.NullableNumber()] = Field(None, title="Budget")
    saving: Annotated[Decimal | None, specs.SignedAmount()] = None
    days: Annotated[int | None, specs.ScheduleDays()] = None
    order: Annotated[int | None, specs.SignedInteger()] = None
    score: Annotated[int | None, specs.BoundedInteger(low=1, high=5)] = None
    progress: Annotated[int | None, specs.BoundedInteger(low=0, high=100, step=10)] = None
    day: Annotated[dt.date | None, specs.IsoDate()] = None
    month: Annotated[str | None, specs.IsoMonth()] = None
    direction: Annotated[str | None, specs.OneOf(("Risk", "Opportunity"), default="Risk")] = None
    state: Annotated[str | None, specs.Lenient(("Open", "Closed"), fallback="Open")] = None
    flag: Annotated[bool | None, specs.Boolean()] = None
    owner_account_id: Annotated[str | None, specs.AccountId()] = Field(None, title="Owner")
    url: Annotated[str | None, specs.HttpUrl()] = None
    created_at: Annotated[Any, specs.ReadOnly()] = Field(None, title="Created")


CLEANERS = {
    "title": lambda v: cleaning.text(v, max_length=200, required=True),
    "notes": lambda v: cleaning.text(v, max_length=20),
    "kind": lambda v: cleaning.optional_text(v, max_length=20),
    "budget": lambda v: cleaning.nullable_number(v, field="budget"),
    "saving": cleaning.signed_number,
    "days": cleaning.schedule_days,
    "order": cleaning.signed_integer,
    "score": lambda v: cleaning.bounded_integer(v, low=1, high=5),
    "progress": lambda v: cleaning.bounded_integer(v, low=0, high=100, step=10),
    "day": cleaning.iso_date,
    "month": cleaning.iso_month,
    "direction": lambda v: cleaning.enum(v, ["Risk", "Opportunity"], default="Risk"),
    "state": lambda v: (cleaning.coerce_enum(v, ["Open", "Closed"], fallback="Open"), None),
    "flag": cleaning.boolean,
    "ownerAccountId": cleaning.account_id,
    "url": cleaning.http_url,
}


def _same(a: Any, b: Any) -> bool:
    return a == b or (a != a and b != b)  # NaN never reaches a field, but be exact


@pytest.mark.parametrize("api", sorted(CLEANERS))
@pytest.mark.parametrize("value", HOSTILE, ids=repr)
def test_each_rule_answers_as_its_cleaning_function(api, value):
    with cleaning.noting_coercions() as expected_notes:
        expected, error = CLEANERS[api](value)
    with cleaning.noting_coercions() as notes:
        partial, errors = specs.validate(Sample, {api: value})
    if error:
        assert dict(errors) == {api: [error]}
        assert partial.model_fields_set == set()
    else:
        assert not errors
        name = specs.fields(Sample)[api].name
        assert _same(getattr(partial, name), expected)
        assert partial.model_fields_set == {name}
    assert list(notes) == list(expected_notes)


def test_unknown_refused_read_only_ignored_required_on_create():
    partial, errors = specs.validate(Sample, {"createdAt": "x", "bogus": 1}, creating=True)
    assert dict(errors) == {"bogus": ["Unknown field."], "title": ["This field is required."]}
    assert partial.model_fields_set == set()
    _, errors = specs.validate(Sample, {"notes": "n"})
    assert not errors  # a patch needs nothing


def test_a_composite_names_its_members():
    def pairs(value: Any) -> tuple[Any, specs.Refusals]:
        bad = {f"[{i}].period": ["Bad."] for i, item in enumerate(value) if item != "ok"}
        return value, bad

    class Composite(specs.Spec):
        entries: Annotated[list | None, specs.Checked(pairs, {"type": "array"})] = None

    _, errors = specs.validate(Composite, {"entries": ["ok", "no", "no"]})
    assert dict(errors) == {"entries[1].period": ["Bad."], "entries[2].period": ["Bad."]}


def test_derivations_read_the_declaration():
    assert specs.writable(Sample)[:2] == ["title", "notes"]
    assert "ownerAccountId" in specs.writable(Sample)
    assert specs.read_only(Sample) == ["createdAt"]
    assert specs.labels(Sample)["ownerAccountId"] == "Owner"
    assert specs.choices(Sample, "direction") == ("Risk", "Opportunity")
    assert specs.choices(Sample, "notes") == ()
    properties, required = specs.body(Sample, creating=True)
    assert required == ["title"]
    # A read-only field is in the body too: taken and ignored when sent back, as it says.
    assert properties["createdAt"]["readOnly"] is True
    assert specs.ignored(Sample, creating=True) == ["createdAt"]
    assert properties["title"]["minLength"] == 1
    assert properties["budget"]["description"] == cleaning.nullable_number_schema()["description"]
    assert properties["progress"]["multipleOf"] == 10
    assert properties["direction"]["enum"] == ["Risk", "Opportunity", None, ""]
    tool = specs.tool_schema(
        Sample,
        ["title", "score"],
        extra={"projectKey": {"type": "string"}},
        required=["projectKey"],
        creating=True,
    )
    assert list(tool["properties"]) == ["projectKey", "title", "score"]
    assert tool["required"] == ["projectKey", "title"]

    class Row:
        title, notes, kind, budget = "T", "", None, Decimal("12.50")
        day = dt.date(2024, 2, 3)

    row = Row()
    assert specs.to_dict(Sample, row, ["title", "budget", "day"]) == {
        "title": "T",
        "budget": 12.5,
        "day": "2024-02-03",
    }
    assert specs.snapshot(Sample, row, ["budget"]) == {"budget": Decimal("12.50")}
