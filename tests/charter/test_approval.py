"""Approval freezes the baselines; the amendment flow end to end (re-open with a raised or a
cited change, approval at version 2 stamping the change); the registers freeze."""

import datetime as dt
import json
from decimal import Decimal

import pytest

from charter.models import ApprovedVersion, BusinessCase
from governance import signals
from governance.errors import Frozen
from governance.models import AuditEntry
from registers.derive import change_application_state
from registers.models import ChangeRequest, WorkPackage
from registers.services import change_adjudicate, change_create
from tests.factories import ChangeRequestFactory, ProjectFactory, WorkPackageFactory


def act(client, headers, name, body=None, **extra):
    return client.post(
        f"/api/v1/projects/ALPHA/charter/{name}",
        data=json.dumps(body or {}),
        content_type="application/json",
        **headers,
        **extra,
    )


@pytest.fixture
def packages(cast):
    return [
        WorkPackageFactory(
            project=cast.project,
            name="Design",
            budget=Decimal("1000.50"),
            planned_start_date=dt.date(2026, 1, 1),
            planned_end_date=dt.date(2026, 3, 31),
        ),
        WorkPackageFactory(
            project=cast.project,
            name="Build",
            budget=Decimal("4000"),
            planned_start_date=dt.date(2026, 4, 1),
            planned_end_date=None,
        ),
        WorkPackageFactory(project=cast.project, name="Unbudgeted", budget=None),
    ]


def test_approve_freezes_every_budget_baseline_and_writes_the_plan_baseline(
    cast, arrange, client, bearer, packages
):
    other = WorkPackageFactory(project=ProjectFactory(lead=cast.outsider), budget=Decimal(7))
    arrange("Submitted")
    received = []

    def receiver(sender, project, at, **kwargs):
        received.append((project.key, at))

    signals.charter_approved.connect(receiver)
    try:
        response = act(
            client,
            bearer(cast.sponsor),
            "approve",
            {"approvalComment": "Go", "approvalRationale": "Strong return"},
        )
    finally:
        signals.charter_approved.disconnect(receiver)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["approvedByAccountId"] == cast.sponsor.account_id
    assert body["approvalComment"] == "Go" and body["approvalRationale"] == "Strong return"
    design, build, unbudgeted = (WorkPackage.objects.get(pk=p.pk) for p in packages)
    assert design.budget_baseline == Decimal("1000.50") and design.revision == 2
    assert build.budget_baseline == Decimal("4000") and build.revision == 2
    assert unbudgeted.budget_baseline is None and unbudgeted.revision == 1  # nothing changed
    other.refresh_from_db()
    assert other.budget_baseline is None
    assert AuditEntry.objects.filter(kind="work_package.baselined").count() == 2
    assert body["planBaseline"] == {
        "version": 1,
        "approvedAt": body["approvedAt"],
        "workPackages": {
            str(design.pk): {
                "budget": 1000.5,
                "plannedStartDate": "2026-01-01",
                "plannedEndDate": "2026-03-31",
            },
            str(build.pk): {
                "budget": 4000,
                "plannedStartDate": "2026-04-01",
                "plannedEndDate": None,
            },
            str(unbudgeted.pk): {
                "budget": None,
                "plannedStartDate": "2026-01-01",
                "plannedEndDate": "2026-06-30",
            },
        },
        "totalBudget": 5000.5,
        "totalBenefit": None,  # the financial case states no total benefit
        "carriedChanges": [],  # no approved change stands on top of the plan
    }
    assert received and received[0][0] == "ALPHA"
    assert [v["version"] for v in body["approvedVersions"]] == [1]
    assert body["approvedVersions"][0]["approvedByAccountId"] == cast.sponsor.account_id


def test_the_baseline_stays_when_the_budget_moves_later(cast, arrange, client, bearer, packages):
    arrange("Submitted")
    act(client, bearer(cast.sponsor), "approve")
    WorkPackage.objects.filter(pk=packages[0].pk).update(budget=Decimal("9999"))
    design = WorkPackage.objects.get(pk=packages[0].pk)
    assert design.budget_baseline == Decimal("1000.50")
    plan = BusinessCase.objects.get().plan_baseline
    assert plan["workPackages"][str(design.pk)]["budget"] == 1000.5


def test_amendment_end_to_end(cast, arrange, client, bearer, packages):
    arrange("Submitted")
    act(client, bearer(cast.sponsor), "approve")

    # Re-opening without a reason for the raised change is refused and changes nothing.
    response = act(client, bearer(cast.editor), "reopen", {"summary": "Widen scope"})
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {"reason"}
    assert not ChangeRequest.objects.exists()
    assert BusinessCase.objects.get().version == 1

    response = act(
        client, bearer(cast.editor), "reopen", {"summary": "Widen scope", "reason": "New market"}
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["approvalStatus"] == "Draft" and body["version"] == 2
    change = ChangeRequest.objects.get()
    assert body["amendmentEnabledByChangeId"] == str(change.pk)
    assert change.status == "Proposed" and change.reason == "New market"
    assert change.summary == "Widen scope"
    assert change.approver_seat["accountId"] == cast.sponsor.account_id  # routed to the sponsor
    assert change.proposer_account_id == cast.editor.account_id
    # ...and stays routed there: the editor cannot name someone else (or themselves).
    for body in ({"approverAccountId": cast.editor.account_id}, {"approverSeat": None}):
        response = client.patch(
            f"/api/v1/projects/ALPHA/changes/{change.pk}",
            data=json.dumps(body),
            content_type="application/json",
            **bearer(cast.editor),
        )
        assert response.status_code == 422, response.content
    change.refresh_from_db()
    assert change.approver_locked and change.approver_account_id is None
    assert change.approver_seat["accountId"] == cast.sponsor.account_id
    entry = AuditEntry.objects.get(kind="charter.reopened")
    assert entry.changes["enablingChange"]["after"]["id"] == str(change.pk)
    assert entry.changes["version"] == {"before": 1, "after": 2}

    # The amended case goes through submission again; approval waits for the change.
    assert act(client, bearer(cast.editor), "submit").status_code == 200
    response = act(client, bearer(cast.sponsor), "approve")
    assert response.status_code == 409
    assert "Proposed" in response.json()["error"]["message"]
    assert BusinessCase.objects.get().approval_status == "Submitted"

    sponsor = cast.sponsor
    cast.project.refresh_from_db()
    from governance.permissions import caller_for

    change_adjudicate(
        caller=caller_for(sponsor, cast.project), change_id=change.pk, outcome="Approved"
    )
    change.refresh_from_db()
    assert change_application_state(change) == "AwaitingApplication"

    response = act(client, bearer(cast.sponsor), "approve", {"approvalComment": "v2 ok"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["approvalStatus"] == "Approved" and body["version"] == 2
    assert body["planBaseline"]["version"] == 2
    change.refresh_from_db()
    assert change.application_record == {
        "kind": "charter",
        "ref": 2,
        "at": body["approvedAt"],
        "by": cast.sponsor.account_id,
    }
    assert change_application_state(change) == "Applied"
    assert AuditEntry.objects.filter(kind="change.applied", target_id=str(change.pk)).exists()
    versions = ApprovedVersion.objects.filter(business_case__project=cast.project)
    assert [(v.version, v.enabling_change_id) for v in versions] == [
        (2, str(change.pk)),
        (1, None),
    ]
    assert [v["version"] for v in body["approvedVersions"]] == [2, 1]


def _awaiting_change(cast, **fields):
    return ChangeRequestFactory(
        project=cast.project,
        status="Approved",
        dimensions=fields.pop("dimensions", ["Scope"]),
        **fields,
    )


def test_reopen_citing_an_approved_change_awaiting_application(cast, arrange, client, bearer):
    arrange("Approved")
    change = _awaiting_change(cast)
    response = act(client, bearer(cast.lead), "reopen", {"changeId": str(change.pk)})
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 2 and body["amendmentEnabledByChangeId"] == str(change.pk)
    assert ChangeRequest.objects.count() == 1  # nothing raised
    assert (
        AuditEntry.objects.get(kind="charter.reopened").changes["enablingChange"]["after"]["raised"]
        is False
    )


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "Proposed"},
        {"status": "Rejected"},
        {"dimensions": ["Budget"]},  # a variation: applied by its approval
        {"application_record": {"kind": "charter", "ref": 1, "at": "x", "by": "y"}},
    ],
)
def test_only_a_change_awaiting_application_can_be_cited(fields, cast, arrange, client, bearer):
    case = arrange("Approved")
    change = ChangeRequestFactory(
        project=cast.project,
        status=fields.get("status", "Approved"),
        dimensions=fields.get("dimensions", ["Scope"]),
        application_record=fields.get("application_record"),
    )
    response = act(client, bearer(cast.lead), "reopen", {"changeId": str(change.pk)})
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {"changeId"}
    stored = BusinessCase.objects.get(pk=case.pk)
    assert stored.version == 1 and stored.approval_status == "Approved"


def test_a_change_of_another_project_cannot_be_cited(cast, arrange, client, bearer):
    arrange("Approved")
    elsewhere = ChangeRequestFactory(
        project=ProjectFactory(lead=cast.outsider), status="Approved", dimensions=["Scope"]
    )
    response = act(client, bearer(cast.lead), "reopen", {"changeId": str(elsewhere.pk)})
    assert response.status_code == 422


def test_a_rejected_enabling_change_can_be_replaced_without_a_new_version(
    cast, arrange, client, bearer
):
    rejected = ChangeRequestFactory(project=cast.project, status="Rejected")
    arrange("Draft", version=2, amendment_enabled_by_change_id=str(rejected.pk))
    replacement = _awaiting_change(cast)
    response = act(client, bearer(cast.lead), "reopen", {"changeId": str(replacement.pk)})
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == 2 and body["amendmentEnabledByChangeId"] == str(replacement.pk)


def test_a_live_amendment_cannot_be_reopened_again(cast, arrange, client, bearer):
    proposed = ChangeRequestFactory(project=cast.project, status="Proposed")
    arrange("Draft", version=2, amendment_enabled_by_change_id=str(proposed.pk))
    response = act(client, bearer(cast.lead), "reopen", {"summary": "x", "reason": "y"})
    assert response.status_code == 409


def test_reopen_is_refused_once_close_out_started(cast, arrange, client, bearer):
    from tests.charter.conftest import closeout_record

    arrange("Approved", close_out=closeout_record())
    response = act(client, bearer(cast.lead), "reopen", {"summary": "x", "reason": "y"})
    assert response.status_code == 409
    assert not ChangeRequest.objects.exists()


@pytest.mark.parametrize(
    ("status", "frozen"),
    [
        ("Exploring", False),
        ("Draft", False),
        ("Submitted", False),
        ("Approved", False),
        ("ClosingSubmitted", True),
        ("Closed", True),
        ("InRealisation", True),
        ("Realised", True),
        ("NotRealised", True),
        ("InMaintenance", True),
        ("Archived", True),
    ],
)
def test_registers_freeze_from_close_out_onward_and_when_archived(
    status, frozen, cast, arrange, client, bearer
):
    arrange(status)
    assert (
        client.get("/api/v1/projects/ALPHA/charter", **bearer(cast.viewer)).json()[
            "registersFrozen"
        ]
        is frozen
    )
    from governance.permissions import caller_for

    cast.project.refresh_from_db()
    caller = caller_for(cast.lead, cast.project)
    if frozen:
        with pytest.raises(Frozen):
            change_create(caller=caller, data={"summary": "Late change"})
    else:
        change_create(caller=caller, data={"summary": "Change"})


def test_closeout_submission_freezes_the_registers_through_the_mirror(
    cast, arrange, client, bearer
):
    from tests.charter.conftest import closeout_record

    arrange("Approved", close_out=closeout_record())
    assert act(client, bearer(cast.lead), "closeout-submit").status_code == 200
    cast.project.refresh_from_db()
    assert cast.project.registers_frozen
    assert cast.project.approval_status == "ClosingSubmitted"
    assert (
        act(
            client,
            bearer(cast.sponsor),
            "closeout-return",
            {"returnNotes": [{"section": "general", "ask": "More", "severity": "Minor"}]},
        ).status_code
        == 200
    )
    cast.project.refresh_from_db()
    assert not cast.project.registers_frozen


# --- stopping an amendment: kill, and its Proposed enabling change is withdrawn --------------


def test_killing_an_amendment_withdraws_its_proposed_change(cast, arrange, client, bearer):
    arrange("Submitted")
    act(client, bearer(cast.sponsor), "approve")
    act(client, bearer(cast.editor), "reopen", {"summary": "Widen scope", "reason": "New market"})
    change = ChangeRequest.objects.get()
    assert change.status == "Proposed"
    # The editor may not archive what was approved: 409, pointing to Kill; nothing moves.
    response = act(client, bearer(cast.editor), "archive", {"reason": "Not worth it"})
    assert response.status_code == 409 and "Kill" in response.json()["error"]["message"]
    change.refresh_from_db()
    assert change.status == "Proposed"
    # A kill refused for its body withdraws nothing either.
    assert act(client, bearer(cast.sponsor), "kill", {"reason": " "}).status_code == 422
    change.refresh_from_db()
    assert change.status == "Proposed" and change.revision == 1

    response = act(client, bearer(cast.sponsor), "kill", {"reason": "The market has gone."})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["approvalStatus"] == "Archived" and body["terminalDisposition"] == "killed"
    assert body["archivedFromStatus"] == "Draft" and body["registersFrozen"] is True
    change.refresh_from_db()
    assert change.status == "Withdrawn"
    assert change.decided_by_account_id == cast.sponsor.account_id
    assert change.decided_at is not None
    assert "killed" in change.decision_comment
    assert "The market has gone." in change.decision_comment
    assert change.revision == 2
    assert change_application_state(change) == "Withdrawn"
    withdrawn = AuditEntry.objects.get(kind="change.withdrawn")
    assert withdrawn.target_type == "changeRequest" and withdrawn.target_id == str(change.pk)
    assert withdrawn.actor_account_id == cast.sponsor.account_id
    assert withdrawn.changes["status"] == {"before": "Proposed", "after": "Withdrawn"}
    killed = AuditEntry.objects.get(kind="charter.killed")
    assert killed.changes["withdrawnChange"] == {"before": None, "after": str(change.pk)}
    # Nothing is left pending in the frozen register.
    assert not ChangeRequest.objects.filter(project=cast.project, status="Proposed").exists()


def test_killing_an_amendment_keeps_an_approved_enabling_change(cast, arrange, client, bearer):
    change = _awaiting_change(cast)
    arrange(
        "Draft",
        version=2,
        approved_at=dt.datetime(2026, 1, 5, tzinfo=dt.UTC),
        amendment_enabled_by_change_id=str(change.pk),
    )
    response = act(client, bearer(cast.sponsor), "kill", {"reason": "Stop"})
    assert response.status_code == 200, response.content
    change.refresh_from_db()
    assert change.status == "Approved" and change.revision == 1
    assert not AuditEntry.objects.filter(kind="change.withdrawn").exists()
    assert "withdrawnChange" not in AuditEntry.objects.get(kind="charter.killed").changes


def test_archiving_withdraws_a_proposed_enabling_change_too(cast, arrange, client, bearer):
    """Archive shares the rule (an older record may carry an enabling change on a case never
    approved): nothing is left Proposed behind a frozen register."""
    change = ChangeRequestFactory(project=cast.project, status="Proposed")
    arrange("Draft", amendment_enabled_by_change_id=str(change.pk))
    response = act(client, bearer(cast.lead), "archive", {"reason": "Not pursued"})
    assert response.status_code == 200, response.content
    change.refresh_from_db()
    assert change.status == "Withdrawn" and change.decided_by_account_id == cast.lead.account_id
    assert "archived" in change.decision_comment
