"""Risks and opportunities through their services: enums per direction, scores, Accept
stamping, the Record-decision act, roles, freeze, stale writes."""

import pytest

from governance.errors import Conflict, Forbidden, Frozen, Stale, ValidationFailed
from governance.models import AuditEntry
from governance.permissions import caller_for
from registers.models import Decision, Risk
from registers.services import risk_create, risk_delete, risk_record_decision, risk_update
from tests.factories import RiskFactory


def lead(cast):
    return caller_for(cast.lead, cast.project)


def create(cast, **data):
    return risk_create(caller=lead(cast), data={"title": "Vendor slips", **data})


def update(cast, risk, **data):
    return risk_update(caller=lead(cast), risk_id=risk.pk, data=data)


def refused(excinfo):
    return set(excinfo.value.fields)


def test_defaults_and_audit(cast):
    risk = create(cast)
    assert (risk.status, risk.direction, risk.materialised, risk.treatment) == (
        "Open",
        "Risk",
        False,
        None,
    )
    assert risk.imported is False and risk.updated_by_account_id == cast.lead.account_id
    assert AuditEntry.objects.get(kind="risk.created").target_id == str(risk.pk)


def test_every_bad_field_is_named_and_nothing_is_saved(cast):
    with pytest.raises(ValidationFailed) as excinfo:
        risk_create(
            caller=lead(cast),
            data={
                "title": "t" * 201,
                "description": "d" * 2001,
                "mitigation": "m" * 2001,
                "direction": "Sideways",
                "impact": 0,
                "likelihood": 6,
                "residualImpact": 2.5,
                "residualLikelihood": "high",
                "materialised": "perhaps",
                "ownerAccountId": "nobody",
                "severity": 3,
            },
        )
    assert refused(excinfo) == {
        "title",
        "description",
        "mitigation",
        "direction",
        "impact",
        "likelihood",
        "residualImpact",
        "residualLikelihood",
        "materialised",
        "ownerAccountId",
        "severity",
    }
    assert not Risk.objects.exists()


def test_title_is_required(cast):
    with pytest.raises(ValidationFailed) as excinfo:
        risk_create(caller=lead(cast), data={"title": "  "})
    assert refused(excinfo) == {"title"}


@pytest.mark.parametrize(
    ("sent", "stored"),
    [("Closed", "Closed"), ("closed", "Open"), ("Whatever", "Open"), (None, "Open")],
)
def test_anything_not_closed_is_open(cast, sent, stored):
    assert create(cast, status=sent).status == stored


def test_scores_one_to_five_or_null_and_derived_score(cast):
    risk = create(cast, impact=4, likelihood=5)
    assert (risk.score, risk.inherent_score) == (20, 20)
    risk = update(cast, risk, residualImpact=2, residualLikelihood=3)
    assert (risk.score, risk.inherent_score) == (6, 20)
    risk = update(cast, risk, impact="", residualImpact=None)
    assert (risk.impact, risk.residual_impact) == (None, None)


def test_treatment_must_belong_to_the_direction(cast):
    assert create(cast, treatment="Mitigate").treatment == "Mitigate"
    with pytest.raises(ValidationFailed) as excinfo:
        create(cast, treatment="Pursue")
    assert refused(excinfo) == {"treatment"}
    opportunity = create(cast, direction="Opportunity", treatment="Enhance")
    with pytest.raises(ValidationFailed) as excinfo:
        update(cast, opportunity, direction="Risk")  # Enhance is not a treatment of a Risk
    assert refused(excinfo) == {"treatment"}
    assert update(cast, opportunity, direction="Risk", treatment="Avoid").treatment == "Avoid"
    assert update(cast, opportunity, treatment="").treatment is None


def test_materialised_is_forced_false_for_an_opportunity(cast):
    assert create(cast, direction="Opportunity", materialised=True).materialised is False
    risk = create(cast, materialised=True)
    assert risk.materialised is True
    assert update(cast, risk, direction="Opportunity").materialised is False


def test_first_move_to_accept_stamps_who_when_and_the_mitigation(cast):
    risk = create(cast, mitigation="Live with it: low cost")
    editor = caller_for(cast.editor, cast.project)
    risk = risk_update(caller=editor, risk_id=risk.pk, data={"treatment": "Accept"})
    assert risk.accepted_by_account_id == cast.editor.account_id
    assert risk.acceptance_rationale == "Live with it: low cost"
    first_at = risk.accepted_at
    assert first_at is not None
    risk = update(cast, risk, treatment="Mitigate", mitigation="Changed plan")
    risk = update(cast, risk, treatment="Accept")
    assert (risk.accepted_by_account_id, risk.accepted_at, risk.acceptance_rationale) == (
        cast.editor.account_id,
        first_at,
        "Live with it: low cost",
    )
    stamped = create(cast, treatment="Accept", mitigation="Accepted at birth")
    assert stamped.acceptance_rationale == "Accepted at birth"


def test_acceptance_stamps_cannot_be_written_by_a_client(cast):
    risk = create(
        cast, acceptedByAccountId="x", acceptedAt="2020-01-01", acceptanceRationale="y", score=25
    )
    assert (risk.accepted_by_account_id, risk.accepted_at, risk.acceptance_rationale) == (
        None,
        None,
        "",
    )


def test_record_decision_on_a_materialised_risk(cast):
    risk = create(
        cast, materialised=True, description="The vendor is late", mitigation="Second vendor"
    )
    decision = risk_record_decision(caller=lead(cast), risk_id=risk.pk)
    assert (decision.decision, decision.decision_notes, decision.rationale) == (
        "Vendor slips",
        "The vendor is late",
        "Second vendor",
    )
    assert decision.risk_id == decision.treated_risk_id == str(risk.pk)
    assert decision.made_on is None and decision.status == "Proposed"
    other = risk_record_decision(
        caller=lead(cast),
        risk_id=risk.pk,
        data={"decision": "Switch vendor", "madeOn": "2026-01-05"},
    )
    assert other.decision == "Switch vendor" and str(other.made_on) == "2026-01-05"
    assert (
        AuditEntry.objects.filter(kind="risk.decision_recorded", target_id=str(risk.pk)).count()
        == 2
    )


def test_record_decision_refused_for_a_risk_that_has_not_materialised(cast):
    for risk in (create(cast), create(cast, direction="Opportunity", materialised=True)):
        with pytest.raises(Conflict):
            risk_record_decision(caller=lead(cast), risk_id=risk.pk)
    assert not Decision.objects.exists()


def test_record_decision_validates_the_overrides(cast):
    risk = create(cast, materialised=True)
    with pytest.raises(ValidationFailed) as excinfo:
        risk_record_decision(
            caller=lead(cast), risk_id=risk.pk, data={"decision": "", "riskId": "x"}
        )
    assert refused(excinfo) == {"decision"}


def test_only_editors_write_and_frozen_registers_refuse(cast):
    risk = create(cast, materialised=True)
    viewer = caller_for(cast.viewer, cast.project)
    for act in (
        lambda: risk_create(caller=viewer, data={"title": "x"}),
        lambda: risk_update(caller=viewer, risk_id=risk.pk, data={"title": "x"}),
        lambda: risk_delete(caller=viewer, risk_id=risk.pk),
        lambda: risk_record_decision(caller=viewer, risk_id=risk.pk),
    ):
        with pytest.raises(Forbidden):
            act()
    cast.project.approval_status = "ClosingSubmitted"
    cast.project.save()
    for act in (
        lambda: risk_create(caller=lead(cast), data={"title": "x"}),
        lambda: risk_update(caller=lead(cast), risk_id=risk.pk, data={"title": "x"}),
        lambda: risk_delete(caller=lead(cast), risk_id=risk.pk),
        lambda: risk_record_decision(caller=lead(cast), risk_id=risk.pk),
    ):
        with pytest.raises(Frozen):
            act()


def test_stale_revision_is_refused(cast):
    risk = create(cast)
    risk_update(caller=lead(cast), risk_id=risk.pk, data={"impact": 2}, expected_revision=1)
    with pytest.raises(Stale):
        risk_update(caller=lead(cast), risk_id=risk.pk, data={"impact": 3}, expected_revision=1)
    assert Risk.objects.get().impact == 2


def test_delete_is_audited_and_treating_decisions_keep_their_provenance(cast):
    risk = RiskFactory(project=cast.project, materialised=True)
    decision = risk_record_decision(caller=lead(cast), risk_id=risk.pk)
    risk_delete(caller=lead(cast), risk_id=risk.pk)
    assert not Risk.objects.exists()
    decision.refresh_from_db()
    assert decision.treated_risk_id == str(risk.pk)
    assert AuditEntry.objects.get(kind="risk.deleted").changes["title"]["before"] == risk.title


@pytest.mark.parametrize("value", [{}, [], 0, False])
def test_a_treatment_that_is_not_text_is_refused_not_cleared(cast, value):
    with pytest.raises(ValidationFailed) as excinfo:
        create(cast, treatment=value)
    assert refused(excinfo) == {"treatment"}
    assert create(cast, treatment="").treatment is None
    assert create(cast, treatment=None).treatment is None
