"""A comma that could be a decimal comma is refused (422), never guessed: "12,5" was stored as
125. Plain thousands groupings are read, and the spec's nullable-number coercions are kept
exactly (empty, negative or non-numeric becomes null)."""

import json
from decimal import Decimal

import pytest
from django.test import Client

from governance import cleaning
from registers.models import WorkPackage

BASE = "/api/v1/projects/ALPHA"


@pytest.mark.parametrize("value", ["12,5", "1,234", "12,50", "1,234,56", "0,5", "+3,5"])
def test_ambiguous_commas_are_refused(value):
    assert cleaning.nullable_number(value) == (None, cleaning.AMBIGUOUS_MESSAGE)
    assert cleaning.signed_number(value) == (None, cleaning.AMBIGUOUS_MESSAGE)
    assert cleaning.signed_integer(value) == (None, cleaning.AMBIGUOUS_MESSAGE)
    assert cleaning.bounded_integer(value, low=0, high=10**9)[1] == cleaning.AMBIGUOUS_MESSAGE


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1,234.5", Decimal("1234.50")),
        ("1,234,567", Decimal("1234567.00")),
        ("12.5", Decimal("12.50")),
        ("1234", Decimal("1234.00")),
        (7, Decimal("7.00")),
    ],
)
def test_unambiguous_numbers_are_read(value, expected):
    assert cleaning.nullable_number(value) == (expected, None)


@pytest.mark.parametrize("value", ["", "   ", None, "-3", -3, "abc", "n/a", {}, [], "-12,5"])
def test_the_spec_nullable_number_coercions_are_kept(value):
    """Empty, negative or non-numeric becomes null, without an error."""
    assert cleaning.nullable_number(value) == (None, None)


def test_the_api_refuses_an_ambiguous_budget_naming_the_field(cast, bearer):
    client, auth = Client(), bearer(cast.lead)

    def create(budget):
        body = json.dumps({"name": f"Build {budget}", "budget": budget})
        return client.post(BASE + "/work-packages", body, "application/json", **auth)

    response = create("12,5")
    assert response.status_code == 422, response.content
    assert response.json()["error"]["fields"]["budget"] == [cleaning.AMBIGUOUS_MESSAGE]
    assert not WorkPackage.objects.exists()
    assert create("1,234.50").json()["budget"] == 1234.5
    assert create("lots").json()["budget"] is None  # non-numeric: null, as the spec says
