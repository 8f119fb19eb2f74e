"""Change requests through their services: validation, roles, immutability once decided,
frozen registers, stale writes, audit."""

import pytest

from governance.errors import Conflict, Forbidden, Frozen, NotFound, Stale, ValidationFailed
from governance.models import AuditEntry
from governance.permissions import caller_for
from registers.models import ChangeRequest
from registers.services import change_adjudicate, change_create, change_delete, change_update
from tests.factories import ChangeRequestFactory, ProjectFactory, WorkPackageFactory


def as_(user, project):
    return caller_for(user, project)


def raise_change(cast, imported=False, **data):
    return change_create(
        caller=as_(cast.lead, cast.project), data={"summary": "Add SSO", **data}, imported=imported
    )


def fields_of(excinfo):
    return set(excinfo.value.fields)


def test_create_defaults_and_audit(cast):
    change = raise_change(cast, reason="Users asked", impactScope="Add single sign-on")
    assert change.status == "Proposed"
    assert change.proposer_account_id == cast.lead.account_id
    assert change.created_by_account_id == cast.lead.account_id
    assert change.dimensions == ["Scope"]  # inferred from the scope prose
    entry = AuditEntry.objects.get(kind="change.created")
    assert entry.target_id == str(change.pk) and entry.changes["summary"]["after"] == "Add SSO"


def test_every_bad_field_is_named_and_nothing_is_saved(cast):
    with pytest.raises(ValidationFailed) as excinfo:
        change_create(
            caller=as_(cast.lead, cast.project),
            data={
                "summary": "x" * 201,
                "reason": "y" * 2001,
                "dimensions": ["Scope", "Cost"],
                "impactBudget": "lots",
                "impactScheduleDays": 2.5,
                "approverAccountId": "nobody",
                "targetWorkPackageId": "not-a-uuid",
                "colour": "blue",
            },
        )
    assert fields_of(excinfo) == {
        "summary",
        "reason",
        "dimensions[1]",
        "impactBudget",
        "impactScheduleDays",
        "approverAccountId",
        "targetWorkPackageId",
        "colour",
    }
    assert not ChangeRequest.objects.exists()
    assert not AuditEntry.objects.filter(kind__startswith="change.").exists()


def test_summary_is_required_and_trimmed(cast):
    with pytest.raises(ValidationFailed) as excinfo:
        change_create(caller=as_(cast.lead, cast.project), data={"summary": "   "})
    assert fields_of(excinfo) == {"summary"}
    assert raise_change(cast, summary="  Padded  ").summary == "Padded"


def test_dimensions_deduplicated_and_signed_impacts_kept(cast):
    change = raise_change(
        cast,
        dimensions=["Budget", "Budget", "Schedule"],
        impactBudget="-1500.5",
        impactScheduleDays="-3",
    )
    assert change.dimensions == ["Budget", "Schedule"]
    assert str(change.impact_budget) == "-1500.50" and change.impact_schedule_days == -3


def test_target_work_package_must_belong_to_the_project(cast):
    elsewhere = WorkPackageFactory(project=ProjectFactory(lead=cast.outsider))
    with pytest.raises(ValidationFailed) as excinfo:
        raise_change(cast, targetWorkPackageId=str(elsewhere.pk))
    assert fields_of(excinfo) == {"targetWorkPackageId"}
    own = WorkPackageFactory(project=cast.project)
    assert raise_change(cast, targetWorkPackageId=str(own.pk)).target_work_package_id == own.pk


def test_approver_seat_takes_the_tracker_name_or_an_external_person(cast):
    change = raise_change(
        cast, approverSeat={"accountId": cast.viewer.account_id, "displayName": "Forged"}
    )
    assert change.approver_seat["displayName"] == "Vera Viewer"
    external = raise_change(
        cast, approverSeat={"displayName": "Audit Board", "email": "board@example.com"}
    )
    assert external.approver_seat == {
        "accountId": None,
        "displayName": "Audit Board",
        "email": "board@example.com",
    }
    with pytest.raises(ValidationFailed) as excinfo:
        raise_change(cast, approverSeat={"displayName": "", "email": "x"})
    assert fields_of(excinfo) == {"approverSeat.displayName"}


def test_only_editors_raise_edit_and_delete(cast):
    change = raise_change(cast)
    for user in (cast.viewer, cast.sponsor, cast.site_admin):
        with pytest.raises(Forbidden):
            change_create(caller=as_(user, cast.project), data={"summary": "x"})
        with pytest.raises(Forbidden):
            change_update(
                caller=as_(user, cast.project), change_id=change.pk, data={"summary": "x"}
            )
        with pytest.raises(Forbidden):
            change_delete(caller=as_(user, cast.project), change_id=change.pk)
    change_update(
        caller=as_(cast.editor, cast.project), change_id=change.pk, data={"summary": "Edited"}
    )
    assert ChangeRequest.objects.get().summary == "Edited"


def test_sponsor_approves_when_no_approver_is_named(cast):
    change = raise_change(cast, impactBudget=500)
    with pytest.raises(Forbidden):
        change_adjudicate(
            caller=as_(cast.lead, cast.project), change_id=change.pk, outcome="Approved"
        )
    decided = change_adjudicate(
        caller=as_(cast.sponsor, cast.project),
        change_id=change.pk,
        outcome="Approved",
        decision_comment="Fine",
    )
    assert (decided.status, decided.decided_by_account_id, decided.decision_comment) == (
        "Approved",
        cast.sponsor.account_id,
        "Fine",
    )
    assert decided.decided_at is not None
    assert AuditEntry.objects.filter(kind="change.approved", target_id=str(change.pk)).exists()


def test_named_approver_decides_instead_of_the_sponsor(cast):
    change = raise_change(cast, approverAccountId=cast.viewer.account_id)
    with pytest.raises(Forbidden):
        change_adjudicate(
            caller=as_(cast.sponsor, cast.project), change_id=change.pk, outcome="Approved"
        )
    change_adjudicate(
        caller=as_(cast.viewer, cast.project), change_id=change.pk, outcome="Approved"
    )


def test_rejecting_needs_a_reason(cast):
    change = raise_change(cast)
    with pytest.raises(ValidationFailed) as excinfo:
        change_adjudicate(
            caller=as_(cast.sponsor, cast.project), change_id=change.pk, outcome="Rejected"
        )
    assert fields_of(excinfo) == {"decisionComment"}
    assert ChangeRequest.objects.get().status == "Proposed"
    change_adjudicate(
        caller=as_(cast.sponsor, cast.project),
        change_id=change.pk,
        outcome="Rejected",
        decision_comment="No budget",
    )
    assert ChangeRequest.objects.get().status == "Rejected"


def test_withdrawn_by_the_proposer_or_an_editor_only(cast):
    # Only an import of past changes names a proposer other than the raiser.
    change = raise_change(cast, imported=True, proposerAccountId=cast.viewer.account_id)
    with pytest.raises(Forbidden):
        change_adjudicate(
            caller=as_(cast.sponsor, cast.project), change_id=change.pk, outcome="Withdrawn"
        )
    change_adjudicate(
        caller=as_(cast.viewer, cast.project), change_id=change.pk, outcome="Withdrawn"
    )
    assert ChangeRequest.objects.get().status == "Withdrawn"
    other = raise_change(cast)
    change_adjudicate(
        caller=as_(cast.editor, cast.project), change_id=other.pk, outcome="Withdrawn"
    )


def test_decided_changes_are_immutable(cast):
    change = raise_change(cast)
    change_adjudicate(
        caller=as_(cast.sponsor, cast.project), change_id=change.pk, outcome="Approved"
    )
    with pytest.raises(Conflict):
        change_update(
            caller=as_(cast.lead, cast.project), change_id=change.pk, data={"summary": "Later"}
        )
    with pytest.raises(Conflict):
        change_delete(caller=as_(cast.lead, cast.project), change_id=change.pk)
    with pytest.raises(Conflict):
        change_adjudicate(
            caller=as_(cast.sponsor, cast.project),
            change_id=change.pk,
            outcome="Rejected",
            decision_comment="x",
        )
    assert ChangeRequest.objects.get().status == "Approved"


def test_status_and_application_record_cannot_be_written(cast):
    change = raise_change(
        cast, applicationRecord={"kind": "charter", "ref": 9}, applicationState="Applied"
    )
    assert change.application_record is None
    with pytest.raises(ValidationFailed) as excinfo:
        change_update(
            caller=as_(cast.lead, cast.project), change_id=change.pk, data={"status": "Approved"}
        )
    assert fields_of(excinfo) == {"status"}


def test_bad_outcome_is_refused(cast):
    change = raise_change(cast)
    with pytest.raises(ValidationFailed):
        change_adjudicate(
            caller=as_(cast.sponsor, cast.project), change_id=change.pk, outcome="Maybe"
        )


def test_frozen_registers_refuse_every_change_write(cast):
    change = raise_change(cast)
    cast.project.approval_status = "ClosingSubmitted"
    cast.project.save()
    project = cast.project
    with pytest.raises(Frozen):
        change_create(caller=as_(cast.lead, project), data={"summary": "x"})
    with pytest.raises(Frozen):
        change_update(caller=as_(cast.lead, project), change_id=change.pk, data={"summary": "x"})
    with pytest.raises(Frozen):
        change_delete(caller=as_(cast.lead, project), change_id=change.pk)
    with pytest.raises(Frozen):
        change_adjudicate(
            caller=as_(cast.sponsor, project), change_id=change.pk, outcome="Approved"
        )


def test_stale_revision_is_refused(cast):
    change = raise_change(cast)
    change_update(
        caller=as_(cast.lead, cast.project),
        change_id=change.pk,
        data={"reason": "first"},
        expected_revision=1,
    )
    with pytest.raises(Stale):
        change_update(
            caller=as_(cast.editor, cast.project),
            change_id=change.pk,
            data={"reason": "second"},
            expected_revision=1,
        )
    assert ChangeRequest.objects.get().reason == "first"


def test_unknown_or_foreign_change_is_not_found(cast):
    foreign = ChangeRequestFactory(project=ProjectFactory(lead=cast.outsider))
    with pytest.raises(NotFound):
        change_update(caller=as_(cast.lead, cast.project), change_id=foreign.pk, data={})
    with pytest.raises(NotFound):
        change_delete(caller=as_(cast.lead, cast.project), change_id="nope")


def test_delete_while_proposed_is_audited(cast):
    change = raise_change(cast)
    change_delete(caller=as_(cast.lead, cast.project), change_id=change.pk)
    assert not ChangeRequest.objects.exists()
    assert AuditEntry.objects.get(kind="change.deleted").changes["summary"]["before"] == "Add SSO"


def test_proposer_is_recorded_when_raised_and_not_edited(cast):
    change = raise_change(cast, imported=True, proposerAccountId=cast.viewer.account_id)
    assert change.proposer_account_id == cast.viewer.account_id
    with pytest.raises(ValidationFailed) as excinfo:
        change_update(
            caller=as_(cast.lead, cast.project),
            change_id=change.pk,
            data={"proposerAccountId": cast.editor.account_id},
        )
    assert fields_of(excinfo) == {"proposerAccountId"}
    # Sending the stored value back (a client echoing the representation) is fine.
    change_update(
        caller=as_(cast.lead, cast.project),
        change_id=change.pk,
        data={"proposerAccountId": cast.viewer.account_id, "reason": "echo"},
    )


def test_the_proposer_cannot_be_the_approver(cast):
    with pytest.raises(ValidationFailed) as excinfo:
        raise_change(cast, approverAccountId=cast.lead.account_id)
    assert fields_of(excinfo) == {"approverAccountId"}
    change = raise_change(cast)
    with pytest.raises(ValidationFailed) as excinfo:
        change_update(
            caller=as_(cast.lead, cast.project),
            change_id=change.pk,
            data={"approverSeat": {"accountId": cast.lead.account_id}},
        )
    assert fields_of(excinfo) == {"approverSeat"}


def test_a_locked_approver_cannot_be_changed(cast):
    change = change_create(
        caller=as_(cast.editor, cast.project),
        data={"summary": "Amend", "approverSeat": {"accountId": cast.sponsor.account_id}},
        approver_locked=True,
    )
    for data in (
        {"approverAccountId": cast.viewer.account_id},
        {"approverSeat": {"accountId": cast.viewer.account_id}},
        {"approverSeat": None},
    ):
        with pytest.raises(ValidationFailed):
            change_update(caller=as_(cast.editor, cast.project), change_id=change.pk, data=data)
    change_update(
        caller=as_(cast.editor, cast.project), change_id=change.pk, data={"reason": "Still fine"}
    )
    change.refresh_from_db()
    assert change.approver_seat["accountId"] == cast.sponsor.account_id
    assert change.reason == "Still fine"
