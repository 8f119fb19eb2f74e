"""adoptionGap and the read-time fallbacks of the business case."""

import pytest

from charter.derive import (
    adoption_gap,
    adoption_gap_fields,
    change_saturation,
    outcome,
    terminal_disposition,
)
from charter.models import BusinessCase

COMPLETE = {
    "adoption_affected": "Branch staff",
    "adoption_kpi": "80% weekly active by Q3",
    "change_saturation": "Modest",
    "adoption_owner": {"accountId": "abc", "displayName": "A", "avatarUrl": ""},
}


def case(**overrides):
    return BusinessCase(**{**COMPLETE, **overrides})


def test_complete_inputs_have_no_gap():
    assert adoption_gap(case()) is False


@pytest.mark.parametrize(
    ("overrides", "missing"),
    [
        ({"adoption_affected": "  "}, ["adoptionAffected"]),
        ({"adoption_kpi": ""}, ["adoptionKpi"]),
        ({"change_saturation": ""}, ["changeSaturation"]),
        ({"change_saturation": "Unknown"}, ["changeSaturation"]),
        ({"change_saturation": "Extreme"}, ["changeSaturation"]),
        ({"adoption_owner": None}, ["adoptionOwner"]),
        ({"adoption_owner": {"displayName": "Ext", "email": ""}}, ["adoptionOwner"]),
        ({"adoption_owner": {"displayName": "Ext", "email": "not-an-address"}}, ["adoptionOwner"]),
    ],
)
def test_each_missing_input_opens_the_gap(overrides, missing):
    assert adoption_gap_fields(case(**overrides)) == missing
    assert adoption_gap(case(**overrides)) is True


def test_external_owner_with_an_address_is_actionable():
    assert (
        adoption_gap(case(adoption_owner={"displayName": "Ext", "email": "ext@example.com"}))
        is False
    )


def test_read_fallbacks():
    assert change_saturation("None") == "None"
    assert change_saturation(None) == "Unknown"
    assert outcome(BusinessCase(objectives="Legacy objective")) == "Legacy objective"
    assert outcome(BusinessCase(outcome="New", objectives="Legacy")) == "New"
    assert terminal_disposition(BusinessCase(approval_status="Archived")) == "archived"
    assert (
        terminal_disposition(
            BusinessCase(approval_status="Archived", terminal_disposition="killed")
        )
        == "killed"
    )
    assert terminal_disposition(BusinessCase(approval_status="Draft")) is None
