"""A comma that could be a decimal comma is never guessed: "12,5" was stored as 125. Plain
thousands groupings are read. The spec's nullable numbers follow the document (the second
"Facts that agree everywhere" round replaced the first round's refusal there): empty, negative
or non-numeric ("12,5" included) becomes null, more decimal places are rounded half-even, and
each coercion is said in `warnings` and kept in the audit entry. The other numbers still
refuse an ambiguous comma."""

import json
from decimal import Decimal

import pytest
from django.test import Client

from governance import cleaning, pageinput
from governance.models import AuditEntry
from registers.models import WorkPackage
from tests.factories import WorkPackageFactory

BASE = "/api/v1/projects/ALPHA"


@pytest.mark.parametrize("value", ["12,5", "1,234", "12,50", "1,234,56", "0,5", "+3,5"])
def test_ambiguous_commas_are_never_guessed(value):
    assert cleaning.nullable_number(value) == (None, None)  # non-numeric: null
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


def test_the_api_stores_an_ambiguous_budget_as_null_and_says_so(cast, bearer):
    client, auth = Client(), bearer(cast.lead)

    def create(budget):
        body = json.dumps({"name": f"Build {budget}", "budget": budget})
        return client.post(BASE + "/work-packages", body, "application/json", **auth)

    response = create("12,5")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["budget"] is None
    assert body["warnings"] == [
        {
            "field": "budget",
            "received": "12,5",
            "stored": None,
            "message": cleaning.NOT_A_NUMBER_NOTE,
        }
    ]
    plain = create("1,234.50").json()
    assert plain["budget"] == 1234.5 and "warnings" not in plain
    assert create("lots").json()["budget"] is None  # non-numeric: null, as the spec says


# --- nullable numbers follow the document in the API, and say what they did -----------------


@pytest.mark.parametrize(
    ("sent", "stored", "message"),
    [
        (12.345, 12.34, "More than 2 decimal places: rounded half-even to 12.34."),
        (12.355, 12.36, "More than 2 decimal places: rounded half-even to 12.36."),
        ("0.125", 0.12, "More than 2 decimal places: rounded half-even to 0.12."),
        ("12,5", None, cleaning.NOT_A_NUMBER_NOTE),
        ("n/a", None, cleaning.NOT_A_NUMBER_NOTE),
        (-5, None, cleaning.NEGATIVE_NOTE),
    ],
)
def test_a_coerced_nullable_number_answers_its_warning_and_audits_what_was_sent(
    cast, bearer, sent, stored, message
):
    client, auth = Client(), bearer(cast.lead)
    wp = WorkPackageFactory(project=cast.project, budget=None)
    response = client.patch(
        f"{BASE}/work-packages/{wp.pk}",
        json.dumps({"budgetForecast": sent, "commentary": "Re-planned"}),
        "application/json",
        **auth,
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["budgetForecast"] == stored
    assert body["warnings"] == [
        {"field": "budgetForecast", "received": sent, "stored": stored, "message": message}
    ]
    wp.refresh_from_db()
    assert wp.budget_forecast == (None if stored is None else Decimal(str(stored)))
    entry = AuditEntry.objects.filter(kind="work_package.updated").get()
    assert entry.changes["received"] == {"budgetForecast": sent}


def test_rounding_is_half_even_at_the_column_precision():
    assert cleaning.nullable_number("0.125") == (Decimal("0.12"), None)
    assert cleaning.nullable_number("0.135") == (Decimal("0.14"), None)
    assert cleaning.nullable_number(Decimal("1.005")) == (Decimal("1.00"), None)


def test_a_number_past_the_column_is_still_refused(cast, bearer):
    response = Client().post(
        BASE + "/work-packages",
        json.dumps({"name": "Huge", "budget": 10**16}),
        "application/json",
        **bearer(cast.lead),
    )
    assert response.status_code == 422
    assert response.json()["error"]["fields"]["budget"] == [cleaning.TOO_LARGE_MESSAGE]
    assert not WorkPackage.objects.exists()


def test_the_status_revised_forecast_and_the_agent_say_their_coercions(cast, bearer):
    client, auth = Client(), bearer(cast.lead)
    response = client.patch(
        BASE + "/status", json.dumps({"revisedForecast": "12,5"}), "application/json", **auth
    )
    assert response.status_code == 200, response.content
    assert response.json()["revisedForecast"] is None
    assert [w["field"] for w in response.json()["warnings"]] == ["revisedForecast"]


def test_a_clean_write_carries_no_warnings(cast, bearer):
    response = Client().post(
        BASE + "/work-packages",
        json.dumps({"name": "Build", "budget": 12.5}),
        "application/json",
        **bearer(cast.lead),
    )
    assert response.status_code == 201 and "warnings" not in response.json()
    assert not AuditEntry.objects.filter(changes__has_key="received").exists()


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        # A point before three digits could group thousands: read as the importer reads it.
        ("12.345", "a point here could group thousands or mark decimals"),
        ("12,000.505", pageinput.TOO_PRECISE),
        ("1000.001", pageinput.TOO_PRECISE),
    ],
)
def test_the_page_form_refuses_more_decimal_places_next_to_the_field(cast, client_for, typed, said):
    response = client_for(cast.lead).post(
        "/projects/ALPHA/registers/work-packages/",
        {"name": "Build", "budget": typed, "status": "Not Started"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    assert said in response.content.decode()
    assert not WorkPackage.objects.exists()


@pytest.mark.parametrize(
    ("typed", "stored"),
    [("€18,500", "18500.00"), ("18 500 EUR", "18500.00"), ("EUR 1,250.50", "1250.50")],
)
def test_a_page_form_takes_an_amount_as_the_importer_does(cast, client_for, typed, stored):
    """`€18,500` was refused on the change form and accepted by the import: both read an
    amount the one way (`governance.spreadsheet_values.money`)."""
    from registers.models import ChangeRequest

    answer = client_for(cast.lead).post(
        "/projects/ALPHA/registers/changes/",
        {"summary": "Extra licences", "impactBudget": typed, "reason": "Growth"},
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 201, answer.content.decode()[:500]
    assert str(ChangeRequest.objects.get().impact_budget) == stored


def test_a_page_form_refuses_another_currency_by_name(cast, client_for):
    answer = client_for(cast.lead).post(
        "/projects/ALPHA/registers/changes/",
        {"summary": "Extra licences", "impactBudget": "$18,500", "reason": "Growth"},
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 422
    assert "not this site&#x27;s currency (EUR)" in answer.content.decode()
