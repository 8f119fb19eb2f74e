"""Nobody approves their own work: the lead and editors cannot hold the decision-authority
seat; the submitter of a case cannot approve, return or kill it; a change may be recorded on
behalf of a proposer who can browse the project, and neither its recorder nor its proposer
(nor the lead or an editor) decides it; an editor must be able to browse the project, and
the sponsor cannot be nominated editor."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from charter import acts
from charter.models import BusinessCase
from charter.services.thesis import DUTIES_MESSAGES
from governance.models import EditorNomination
from governance.permissions import caller_for
from governance.tracker.local import scripting
from registers.models import ChangeRequest
from registers.services.changes import (
    APPROVER_MESSAGES,
    DECIDER_REFUSALS,
    PROPOSER_MESSAGE,
    adjudication_rights,
)
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


# --- 7, 11, 12. a change's proposer and recorder do not decide it ---------------------------


def _import_changes(bearer, user, header: str, row: str):
    content = f"{header}\n{row}\n".encode()
    return Client().post(
        BASE + "/changes/import",
        {"file": SimpleUploadedFile("changes.csv", content)},
        **bearer(user),
    )


def test_a_change_is_recorded_on_behalf_of_a_proposer_who_can_browse_the_project(cast, send):
    response = send(
        cast.lead,
        "POST",
        "/changes",
        {"summary": "More scope", "proposerAccountId": cast.viewer.account_id},
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["proposerAccountId"] == cast.viewer.account_id
    assert body["createdByAccountId"] == cast.lead.account_id
    mine = send(cast.editor, "POST", "/changes", {"summary": "Less scope"})
    assert mine.json()["proposerAccountId"] == cast.editor.account_id


def test_a_proposer_who_cannot_browse_the_project_is_refused(cast, send, bearer):
    stranger = UserFactory(username="stranger", display_name="Stan Stranger")
    response = send(
        cast.lead,
        "POST",
        "/changes",
        {"summary": "More scope", "proposerAccountId": stranger.account_id},
    )
    assert response.status_code == 422, response.content
    assert response.json()["error"]["fields"]["proposerAccountId"] == [
        PROPOSER_MESSAGE.format(key="ALPHA")
    ]
    imported = _import_changes(
        bearer, cast.lead, "summary,proposerAccountId", f"Past change,{stranger.account_id}"
    )
    assert imported.status_code == 422, imported.content
    assert [r["field"] for r in imported.json()["error"]["rows"]] == ["proposerAccountId"]
    assert not ChangeRequest.objects.exists()


def test_a_bulk_import_records_the_proposer_with_the_imported_flag(cast, bearer):
    response = _import_changes(
        bearer, cast.lead, "summary,proposerAccountId", f"Past change,{cast.viewer.account_id}"
    )
    assert response.status_code == 201, response.content
    change = ChangeRequest.objects.get()
    assert change.proposer_account_id == cast.viewer.account_id and change.imported
    assert change.created_by_account_id == cast.lead.account_id


@pytest.mark.parametrize(
    ("recorder", "proposer", "approver", "duty"),
    [
        ("lead", "viewer", "lead", "recorded"),  # the import of the issue: herself as approver
        ("lead", "viewer", "viewer", "proposed"),
        ("lead", None, "lead", "proposed"),
        ("editor", "viewer", "lead", "lead"),
        ("lead", "viewer", "editor", "editor"),  # an editor the lead nominated: refused
    ],
)
@pytest.mark.parametrize("way", ["api", "import"])
def test_the_approver_named_is_not_the_recorder_the_proposer_the_lead_or_an_editor(
    cast, send, bearer, way, recorder, proposer, approver, duty
):
    data = {"summary": "Self-approved", "approverAccountId": getattr(cast, approver).account_id}
    if proposer:
        data["proposerAccountId"] = getattr(cast, proposer).account_id
    if way == "api":
        response = send(getattr(cast, recorder), "POST", "/changes", data)
        assert response.status_code == 422, response.content
        assert response.json()["error"]["fields"]["approverAccountId"] == [APPROVER_MESSAGES[duty]]
    else:
        response = _import_changes(
            bearer, getattr(cast, recorder), ",".join(data), ",".join(data.values())
        )
        assert response.status_code == 422, response.content
        rows = response.json()["error"]["rows"]
        assert [(r["field"], r["message"]) for r in rows] == [
            ("approverAccountId", APPROVER_MESSAGES[duty])
        ]
    assert not ChangeRequest.objects.exists()


def _recorded(cast, recorder, proposer, **fields) -> ChangeRequest:
    """A change as an earlier release let it be stored (its approver unchecked)."""
    return ChangeRequest.objects.create(
        project=cast.project,
        summary="Self-approved",
        created_by_account_id=recorder.account_id,
        proposer_account_id=proposer.account_id,
        imported=True,
        **fields,
    )


@pytest.mark.parametrize(
    ("decider", "recorder", "proposer", "duty"),
    [
        ("lead", "lead", "viewer", "recorded"),  # the issue: imported, then approved (200)
        ("viewer", "lead", "viewer", "proposed"),
        ("sponsor", "lead", "sponsor", "proposed"),  # routed to the sponsor by default
        ("editor", "lead", "viewer", "editor"),
    ],
)
def test_the_recorder_proposer_lead_and_editors_may_not_decide_a_change(
    cast, send, decider, recorder, proposer, duty
):
    person = getattr(cast, decider)
    named = {} if decider == "sponsor" else {"approver_account_id": person.account_id}
    change = _recorded(cast, getattr(cast, recorder), getattr(cast, proposer), **named)
    notes = {"decisionComment": "No"}
    for outcome in ("Approved", "Rejected"):
        response = send(
            person, "POST", f"/changes/{change.pk}/adjudicate", {"outcome": outcome, **notes}
        )
        assert response.status_code == 403, (outcome, response.content)
        message = response.json()["error"]["message"]
        assert message.startswith(DECIDER_REFUSALS[duty]), message
        assert "nobody approves their own work" in message
    change.refresh_from_db()
    assert change.status == "Proposed"
    assert adjudication_rights(caller_for(person, cast.project), change)[0] is False


def test_a_proposer_who_is_named_approver_may_still_withdraw(cast, send):
    change = _recorded(cast, cast.lead, cast.viewer, approver_account_id=cast.viewer.account_id)
    response = send(
        cast.viewer, "POST", f"/changes/{change.pk}/adjudicate", {"outcome": "Withdrawn"}
    )
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "Withdrawn"


def test_a_named_approver_independent_of_the_change_decides_it(cast, send):
    created = send(
        cast.lead,
        "POST",
        "/changes",
        {
            "summary": "More scope",
            "proposerAccountId": cast.editor.account_id,
            "approverAccountId": cast.viewer.account_id,
        },
    )
    assert created.status_code == 201, created.content
    change_id = created.json()["id"]
    response = send(
        cast.viewer, "POST", f"/changes/{change_id}/adjudicate", {"outcome": "Approved"}
    )
    assert response.status_code == 200, response.content


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


def test_the_add_change_page_records_a_named_proposer(cast, client_for):
    client = client_for(cast.lead)
    pages = "/projects/ALPHA/registers/changes/"
    form = client.get(pages + "new/", HTTP_HX_REQUEST="true").content.decode()
    assert 'name="proposerAccountId"' in form and "— you —" in form
    refused = client.post(
        pages,
        {"summary": "More scope", "approverAccountId": cast.lead.account_id},
        HTTP_HX_REQUEST="true",
    )
    assert refused.status_code == 422
    assert APPROVER_MESSAGES["proposed"] in refused.content.decode()
    saved = client.post(
        pages,
        {"summary": "More scope", "proposerAccountId": cast.viewer.account_id},
        HTTP_HX_REQUEST="true",
    )
    assert saved.status_code == 201, saved.content
    change = ChangeRequest.objects.get()
    assert (change.proposer_account_id, change.created_by_account_id) == (
        cast.viewer.account_id,
        cast.lead.account_id,
    )
    edit = client.get(f"{pages}{change.pk}/edit/", HTTP_HX_REQUEST="true").content.decode()
    assert 'name="proposerAccountId"' not in edit


def test_a_change_proposed_by_the_sponsor_is_not_routed_to_them(cast, send):
    from governance.models import Notification

    created = send(
        cast.lead,
        "POST",
        "/changes",
        {"summary": "Sponsor's idea", "proposerAccountId": cast.sponsor.account_id},
    )
    assert created.status_code == 201, created.content
    assert not Notification.objects.filter(kind="change_routed").exists()
    send(cast.lead, "POST", "/changes", {"summary": "Lead's idea"})
    routed = Notification.objects.filter(kind="change_routed")
    assert list(routed.values_list("recipient_account_id", flat=True)) == [cast.sponsor.account_id]
