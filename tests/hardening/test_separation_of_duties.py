"""Nobody approves their own work: the lead and editors cannot hold the decision-authority
seat; the submitter of a case cannot approve, return or kill it; a change's proposer is the
caller (only a bulk import records another); an editor must be able to browse the project,
and the sponsor cannot be nominated editor."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from charter import acts
from charter.models import BusinessCase
from charter.services.thesis import DUTIES_MESSAGES
from governance.models import EditorNomination
from governance.tracker.local import scripting
from registers.models import ChangeRequest
from registers.services.changes import PROPOSER_MESSAGE
from tests.charter.conftest import complete_inputs, seat  # noqa: F401 (fixtures below)
from tests.factories import UserFactory

BASE = "/api/v1/projects/ALPHA"


@pytest.fixture
def send(bearer):
    def call(user, method, path, body=None, **headers):
        client = Client()
        auth = bearer(user)
        if method == "GET":
            return client.get(BASE + path, **auth, **headers)
        return client.generic(
            method,
            BASE + path,
            json.dumps(body or {}),
            content_type="application/json",
            **auth,
            **headers,
        )

    return call


def _case(cast, status="Draft", **fields):
    from charter.services import sync_mirror

    values = {**complete_inputs(cast), "approval_status": status, **fields}
    case, _ = BusinessCase.objects.update_or_create(project=cast.project, defaults=values)
    sync_mirror(cast.project, case)
    cast.project.refresh_from_db()
    return case


# --- 6. the decision authority is neither the lead nor an editor ---------------------------


@pytest.mark.parametrize(("role", "message"), [("lead", "lead"), ("editor", "editor")])
def test_the_lead_and_editors_cannot_take_the_decision_authority_seat(cast, send, role, message):
    _case(cast, "Draft", decision_authority=None)
    person = getattr(cast, role)
    response = send(
        cast.lead, "PATCH", "/charter", {"decisionAuthority": {"accountId": person.account_id}}
    )
    assert response.status_code == 422, response.content
    assert response.json()["error"]["fields"]["decisionAuthority"] == [DUTIES_MESSAGES[message]]
    assert BusinessCase.objects.get().decision_authority is None
    ok = send(
        cast.lead,
        "PATCH",
        "/charter",
        {"decisionAuthority": {"accountId": cast.sponsor.account_id}},
    )
    assert ok.status_code == 200, ok.content


def test_the_submitter_may_not_approve_return_or_kill(cast, send):
    """A sponsor who is also nominated editor (legacy data) submits: deciding is refused."""
    _case(cast, "Draft")
    EditorNomination.objects.create(project=cast.project, account_id=cast.sponsor.account_id)
    submitted = send(cast.sponsor, "POST", "/charter/submit")
    assert submitted.status_code == 200, submitted.content
    case = BusinessCase.objects.get()
    assert case.submitted_by_account_id == cast.sponsor.account_id
    assert "approve" not in submitted.json()["availableActs"]
    notes = {"returnNotes": [{"section": "thesis", "ask": "More", "severity": "Minor"}]}
    for act, body in (("approve", {}), ("return", notes), ("kill", {"reason": "Stop"})):
        response = send(cast.sponsor, "POST", f"/charter/{act}", body)
        assert response.status_code == 403, (act, response.content)
        assert response.json()["error"]["message"] == acts.OWN_WORK_MESSAGE.format(act=act)
    assert BusinessCase.objects.get().approval_status == "Submitted"


def test_a_sponsor_who_did_not_submit_still_approves(cast, send):
    _case(cast, "Draft")
    assert send(cast.lead, "POST", "/charter/submit").status_code == 200
    assert BusinessCase.objects.get().submitted_by_account_id == cast.lead.account_id
    response = send(cast.sponsor, "POST", "/charter/approve")
    assert response.status_code == 200, response.content


# --- 7. the proposer of a change is the caller ---------------------------------------------


def test_a_client_supplied_proposer_is_refused(cast, send):
    response = send(
        cast.lead,
        "POST",
        "/changes",
        {"summary": "More scope", "proposerAccountId": cast.viewer.account_id},
    )
    assert response.status_code == 422, response.content
    assert response.json()["error"]["fields"]["proposerAccountId"] == [PROPOSER_MESSAGE]
    assert not ChangeRequest.objects.exists()
    mine = send(cast.lead, "POST", "/changes", {"summary": "More scope"})
    assert mine.json()["proposerAccountId"] == cast.lead.account_id


def test_the_approver_is_not_the_proposer_for_real(cast, send):
    """Before, naming someone else as proposer let the caller name themselves approver."""
    response = send(
        cast.lead,
        "POST",
        "/changes",
        {
            "summary": "Self-approved",
            "proposerAccountId": cast.editor.account_id,
            "approverAccountId": cast.lead.account_id,
        },
    )
    assert response.status_code == 422
    response = send(
        cast.lead,
        "POST",
        "/changes",
        {"summary": "Self-approved", "approverAccountId": cast.lead.account_id},
    )
    assert response.status_code == 422
    assert "approverAccountId" in response.json()["error"]["fields"]


def test_a_bulk_import_records_the_proposer_with_the_imported_flag(cast, bearer):
    content = f"summary,proposerAccountId\nPast change,{cast.viewer.account_id}\n".encode()
    response = Client().post(
        BASE + "/changes/import",
        {"file": SimpleUploadedFile("changes.csv", content)},
        **bearer(cast.lead),
    )
    assert response.status_code == 201, response.content
    change = ChangeRequest.objects.get()
    assert change.proposer_account_id == cast.viewer.account_id and change.imported


# --- 8. an editor can browse the project, and is not its sponsor ----------------------------


def test_a_lead_cannot_nominate_someone_who_cannot_browse_the_project(cast, send):
    stranger = UserFactory(username="stranger", display_name="Stan Stranger")
    response = send(
        cast.lead,
        "PUT",
        "/editors",
        {"accountIds": [cast.editor.account_id, stranger.account_id]},
    )
    assert response.status_code == 422, response.content
    message = response.json()["error"]["fields"]["accountIds[1]"][0]
    assert "Stan Stranger cannot browse ALPHA" in message
    assert list(EditorNomination.objects.values_list("account_id", flat=True)) == [
        cast.editor.account_id
    ]
    scripting.ensure_project("ALPHA", name="Alpha programme", lead="lead", browsers=["stranger"])
    response = send(
        cast.lead, "PUT", "/editors", {"accountIds": [cast.editor.account_id, stranger.account_id]}
    )
    assert response.status_code == 200, response.content


def test_a_lead_cannot_nominate_the_sponsor_as_editor(cast, send):
    response = send(cast.lead, "PUT", "/editors", {"accountIds": [cast.sponsor.account_id]})
    assert response.status_code == 422, response.content
    assert "decision authority" in response.json()["error"]["fields"]["accountIds[0]"][0]
