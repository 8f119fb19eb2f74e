"""Derived register values (docs/product.md section 3, the spec's application-state table)."""

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import pytest

from registers.derive import (
    application_state,
    approved_variations,
    change_dimensions,
    change_is_open,
    decision_can_be_recorded,
    decision_is_editable,
    decision_state,
    infer_dimensions,
    schedule_variance_days,
)
from registers.models import ChangeRequest, Decision, Risk
from tests.factories import ChangeRequestFactory, RiskFactory


def test_decision_state_follows_made_on():
    assert decision_state(None) == "Pending"
    assert decision_state(dt.date(2026, 3, 1)) == "Made"


def test_only_a_pending_decision_is_editable():
    assert decision_is_editable(Decision(made_on=None)) is True
    assert decision_is_editable(Decision(made_on=dt.date(2026, 3, 1))) is False


@pytest.mark.parametrize(
    ("direction", "materialised", "expected"),
    [("Risk", True, True), ("Risk", False, False), ("Opportunity", True, False)],
)
def test_a_decision_is_recorded_only_for_a_materialised_risk(direction, materialised, expected):
    risk = Risk(direction=direction, materialised=materialised)
    assert decision_can_be_recorded(risk) is expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [("Proposed", True), ("Approved", False), ("Rejected", False), ("Withdrawn", False)],
)
def test_a_change_is_open_only_while_proposed(status, expected):
    assert change_is_open(ChangeRequest(status=status)) is expected


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ((3, 4, None, None), 12),
        ((3, 4, 2, 2), 4),
        ((3, 4, 2, None), 12),  # residual only when both are set
        ((None, 4, None, None), None),
        ((5, 5, 5, 5), 25),
    ],
)
def test_risk_score(db, scores, expected):
    """The score is the risk's generated column: the database computes it on every write."""
    impact, likelihood, residual_impact, residual_likelihood = scores
    risk = RiskFactory(
        impact=impact,
        likelihood=likelihood,
        residual_impact=residual_impact,
        residual_likelihood=residual_likelihood,
    )
    assert risk.score == expected  # returned by the insert
    assert Risk.objects.get(pk=risk.pk).score == expected
    risk.residual_impact, risk.residual_likelihood = 1, 1
    risk.save()
    assert risk.score == 1  # read again after an update
    assert risk.inherent_score == (impact * likelihood if impact and likelihood else None)


@pytest.mark.parametrize(
    ("scope", "budget", "days", "expected"),
    [
        ("Add a module", None, None, ["Scope"]),
        ("", Decimal("500"), None, ["Budget"]),
        ("", Decimal("-500"), 10, ["Budget", "Schedule"]),
        ("  ", Decimal("0"), 0, []),
        ("Adds X", Decimal("1"), -3, ["Scope", "Budget", "Schedule"]),
    ],
)
def test_dimensions_are_inferred_from_the_impacts_until_chosen(scope, budget, days, expected):
    impacts = {"impact_scope": scope, "impact_budget": budget, "impact_schedule_days": days}
    assert infer_dimensions(**impacts) == expected
    unchosen = SimpleNamespace(dimensions=["Quality"], dimensions_chosen=False, **impacts)
    assert change_dimensions(unchosen) == expected
    chosen = SimpleNamespace(dimensions=["Quality"], dimensions_chosen=True, **impacts)
    assert change_dimensions(chosen) == ["Quality"]


@pytest.mark.parametrize(
    ("status", "dimensions", "record", "expected"),
    [
        ("Proposed", ["Scope"], None, "Proposed"),
        ("Rejected", ["Budget"], None, "Rejected"),
        ("Withdrawn", [], None, "Withdrawn"),
        ("Approved", ["Budget"], None, "Applied"),
        ("Approved", ["Schedule"], None, "Applied"),
        ("Approved", ["Budget", "Schedule"], None, "Applied"),
        ("Approved", ["Budget", "Scope"], None, "AwaitingApplication"),
        ("Approved", ["Quality"], None, "AwaitingApplication"),
        ("Approved", ["Other"], None, "AwaitingApplication"),
        ("Approved", [], None, "AwaitingApplication"),
        ("Approved", ["Scope"], {"kind": "charter", "ref": 2}, "Applied"),
    ],
)
def test_application_state_table(status, dimensions, record, expected):
    assert application_state(status, dimensions, record) == expected


def test_approved_variations_sum_only_approved_changes(db):
    change = ChangeRequestFactory(
        status="Approved",
        dimensions=["Budget", "Schedule"],
        impact_budget=Decimal("100.50"),
        impact_schedule_days=5,
    )
    project = change.project
    ChangeRequestFactory(
        project=project,
        status="Approved",
        dimensions=["Budget", "Schedule"],
        impact_budget=Decimal("-20"),
        impact_schedule_days=-2,
    )
    ChangeRequestFactory(
        project=project, status="Proposed", impact_budget=Decimal("999"), impact_schedule_days=99
    )
    ChangeRequestFactory(project=project, status="Rejected", impact_budget=Decimal("999"))
    assert approved_variations(project) == (Decimal("80.50"), 3)


def test_schedule_variance():
    assert schedule_variance_days(dt.date(2026, 1, 10), dt.date(2026, 1, 20)) == 10
    assert schedule_variance_days(dt.date(2026, 1, 10), dt.date(2026, 1, 5)) == -5
    assert schedule_variance_days(None, dt.date(2026, 1, 5)) is None
