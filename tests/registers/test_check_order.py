"""A refused register write is refused for the most basic reason first: 401, then 404 (not
viewable), then 403 (may not do this), then 409 (frozen registers, a made decision, a decided
change), then 412 (stale), and only then 422 (the body). Every write is sent an invalid body
as a viewer, on frozen registers, on a decided record and with a stale revision; each refusal
changes nothing."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from governance.models import AuditEntry
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from tests.factories import ChangeRequestFactory, DecisionFactory, RiskFactory, WorkPackageFactory

API = "/api/v1/projects/ALPHA"
PAGES = "/projects/ALPHA/registers"
HX = {"HTTP_HX_REQUEST": "true"}
BAD_FILE = b"title,colour\nA,red\n"  # an unknown column refuses the file (422)


@pytest.fixture
def world(cast):
    """One record of each register: a materialised risk, a pending decision and a proposed
    change the sponsor approves, at revision 1."""
    return {
        "wp": WorkPackageFactory(project=cast.project, name="Build"),
        "risk": RiskFactory(project=cast.project, title="Outage", materialised=True),
        "decision": DecisionFactory(project=cast.project, decision="Pick vendor"),
        "change": ChangeRequestFactory(
            project=cast.project, summary="More budget", proposer_account_id=cast.editor.account_id
        ),
    }


# (name, method, path, invalid body). Every body is refused with 422 when nothing else is
# wrong (test_each_invalid_body_alone_is_a_422 proves it).
WRITES = [
    ("wp-create", "POST", "/work-packages", {"name": "", "progress": 55}),
    ("wp-update", "PATCH", "/work-packages/{wp}", {"progress": 55}),
    ("wp-reorder", "POST", "/work-packages/reorder", {"ids": "everything"}),
    ("wp-link", "POST", "/work-packages/{wp}/links", {"issueKey": "not a key"}),
    ("risk-create", "POST", "/risks", {"title": "", "impact": 9}),
    ("risk-update", "PATCH", "/risks/{risk}", {"impact": 9}),
    ("risk-record-decision", "POST", "/risks/{risk}/record-decision", {"madeOn": "someday"}),
    ("decision-create", "POST", "/decisions", {"decision": ""}),
    ("decision-update", "PATCH", "/decisions/{decision}", {"madeOn": "someday"}),
    ("decision-note", "POST", "/decisions/{decision}/notes", {"text": ""}),
    ("change-create", "POST", "/changes", {"summary": ""}),
    ("change-update", "PATCH", "/changes/{change}", {"impactBudget": "lots"}),
    ("change-adjudicate", "POST", "/changes/{change}/adjudicate", {"outcome": "Maybe"}),
    ("import", "POST", "/risks/import", BAD_FILE),
]
ACTS_WITH_REVISION = {
    "wp-update",
    "wp-link",
    "risk-update",
    "decision-update",
    "decision-note",
    "change-update",
    "change-adjudicate",
}


def send(client: Client, auth: dict, world: dict, write: tuple, **headers):
    _, method, path, body = write
    path = API + path.format(**{name: record.pk for name, record in world.items()})
    if isinstance(body, bytes):
        upload = SimpleUploadedFile("bad.csv", body)
        return client.post(path, {"file": upload}, **auth, **headers)
    return client.generic(
        method, path, data=json.dumps(body), content_type="application/json", **auth, **headers
    )


def refused(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()["error"]
    assert body["code"] == code, body
    return body


def state() -> tuple:
    """Everything a refused write must leave as it was."""
    return (
        sorted(WorkPackage.objects.values_list("id", "revision")),
        sorted(Risk.objects.values_list("id", "revision")),
        sorted(Decision.objects.values_list("id", "revision")),
        sorted(ChangeRequest.objects.values_list("id", "revision")),
        AuditEntry.objects.count(),
    )


def ids(writes):
    return [w[0] for w in writes]


@pytest.mark.parametrize("write", WRITES, ids=ids(WRITES))
def test_each_invalid_body_alone_is_a_422(cast, bearer, world, write):
    user = cast.sponsor if "adjudicate" in write[0] else cast.lead
    refused(send(Client(), bearer(user), world, write), 422, "validation")


@pytest.mark.parametrize("write", WRITES, ids=ids(WRITES))
def test_invalid_body_from_a_viewer_is_403(cast, bearer, world, write):
    auth = bearer(cast.viewer)
    before = state()
    refused(send(Client(), auth, world, write), 403, "forbidden")
    assert state() == before


@pytest.mark.parametrize("write", WRITES, ids=ids(WRITES))
def test_invalid_body_for_a_project_not_viewable_is_404(cast, bearer, world, write):
    refused(send(Client(), bearer(cast.outsider), world, write), 404, "not_found")


@pytest.mark.parametrize("write", WRITES, ids=ids(WRITES))
def test_invalid_body_without_credentials_is_401(cast, world, write):
    refused(send(Client(), {}, world, write), 401, "unauthenticated")


FROZEN = [w for w in WRITES if w[0] != "decision-note"]  # notes are allowed on frozen registers


@pytest.mark.parametrize("write", FROZEN, ids=ids(FROZEN))
def test_invalid_body_on_frozen_registers_is_409_frozen(cast, bearer, world, write):
    cast.project.approval_status = "Archived"
    cast.project.save()
    auth = bearer(cast.lead)
    before = state()
    refused(send(Client(), auth, world, write), 409, "frozen")
    assert state() == before


def test_a_viewer_on_frozen_registers_is_still_403(cast, bearer, world):
    cast.project.approval_status = "Closed"
    cast.project.save()
    for write in WRITES:
        refused(send(Client(), bearer(cast.viewer), world, write), 403, "forbidden")


def test_invalid_body_on_a_decided_change_is_409_conflict(cast, bearer, world):
    change = world["change"]
    change.status = "Approved"
    change.save()
    lead, sponsor = bearer(cast.lead), bearer(cast.sponsor)
    before = state()
    update, adjudicate = (w for w in WRITES if w[0] in ("change-update", "change-adjudicate"))
    refused(send(Client(), lead, world, update), 409, "conflict")
    for auth in (lead, sponsor):  # the one who may withdraw, the one who decides
        refused(send(Client(), auth, world, adjudicate), 409, "conflict")
    assert state() == before


def test_rejecting_a_decided_change_without_a_reason_is_409_not_422(cast, bearer, world):
    change = world["change"]
    change.status = "Withdrawn"
    change.save()
    response = Client().post(
        f"{API}/changes/{change.pk}/adjudicate",
        {"outcome": "Rejected", "decisionComment": ""},
        content_type="application/json",
        **bearer(cast.sponsor),
    )
    refused(response, 409, "conflict")


def test_invalid_body_on_a_made_decision_is_409_conflict(cast, bearer, world):
    decision = world["decision"]
    decision.made_on = "2026-01-05"
    decision.save()
    auth = bearer(cast.editor)
    before = state()
    write = next(w for w in WRITES if w[0] == "decision-update")
    refused(send(Client(), auth, world, write), 409, "conflict")
    assert state() == before


STALE = [w for w in WRITES if w[0] in ACTS_WITH_REVISION]


@pytest.mark.parametrize("write", STALE, ids=ids(STALE))
def test_invalid_body_with_a_stale_revision_is_412(cast, bearer, world, write):
    auth = bearer(cast.sponsor if "adjudicate" in write[0] else cast.lead)
    before = state()
    refused(send(Client(), auth, world, write, HTTP_IF_MATCH='"7"'), 412, "stale")
    assert state() == before


def test_adjudication_checks_the_outcome_after_who_may_act(cast, bearer, world):
    """The editor may withdraw but not approve: an approval is 403, a made-up outcome 422,
    and on frozen registers the made-up outcome is 409 while the approval stays 403."""
    path = f"{API}/changes/{world['change'].pk}/adjudicate"
    auth = bearer(cast.lead)

    def adjudicate(outcome):
        return Client().post(path, {"outcome": outcome}, content_type="application/json", **auth)

    refused(adjudicate("Approved"), 403, "forbidden")
    body = refused(adjudicate(["Approved"]), 422, "validation")
    assert set(body["fields"]) == {"outcome"}
    cast.project.approval_status = "Archived"
    cast.project.save()
    refused(adjudicate("Approved"), 403, "forbidden")
    refused(adjudicate("Maybe"), 409, "frozen")


def test_adjudication_names_every_offending_field(cast, bearer, world):
    response = Client().post(
        f"{API}/changes/{world['change'].pk}/adjudicate",
        {"outcome": "Maybe", "decisionComment": "x" * 2001},
        content_type="application/json",
        **bearer(cast.sponsor),
    )
    body = refused(response, 422, "validation")
    assert set(body["fields"]) == {"outcome", "decisionComment"}


def test_note_on_an_unknown_decision_is_404_whatever_the_text(cast, bearer, world):
    response = Client().post(
        f"{API}/decisions/00000000-0000-0000-0000-000000000000/notes",
        {"text": ""},
        content_type="application/json",
        **bearer(cast.lead),
    )
    refused(response, 404, "not_found")


def test_import_of_an_unknown_register_is_404_even_for_a_viewer(cast, bearer):
    upload = SimpleUploadedFile("bad.csv", BAD_FILE)
    response = Client().post(f"{API}/ledgers/import", {"file": upload}, **bearer(cast.viewer))
    refused(response, 404, "not_found")


# --- the pages -------------------------------------------------------------------------------


def test_page_import_of_a_bad_file_into_frozen_registers_is_409(cast, client_for):
    cast.project.approval_status = "Archived"
    cast.project.save()
    client = client_for(cast.lead)
    for upload in (SimpleUploadedFile("bad.csv", BAD_FILE), None):
        data = {"file": upload} if upload else {}
        response = client.post(f"{PAGES}/risks/import/", data)
        assert response.status_code == 409
        assert "frozen" in response.content.decode()
    assert not Risk.objects.exists()


def test_page_import_of_a_bad_file_by_a_viewer_is_403(cast, client_for):
    response = client_for(cast.viewer).post(
        f"{PAGES}/risks/import/", {"file": SimpleUploadedFile("bad.csv", BAD_FILE)}
    )
    assert response.status_code == 403


def test_page_move_with_a_bad_direction_checks_freeze_first(cast, client_for, world):
    path = f"{PAGES}/work-packages/{world['wp'].pk}/move/"
    lead = client_for(cast.lead)
    assert lead.post(path, {"direction": "sideways"}, **HX).status_code == 422
    assert client_for(cast.viewer).post(path, {"direction": "sideways"}, **HX).status_code == 403
    cast.project.approval_status = "Archived"
    cast.project.save()
    assert lead.post(path, {"direction": "sideways"}, **HX).status_code == 409


def test_page_adjudication_with_a_bad_outcome_on_frozen_registers_is_409(cast, client_for, world):
    cast.project.approval_status = "Archived"
    cast.project.save()
    path = f"{PAGES}/changes/{world['change'].pk}/adjudicate/"
    response = client_for(cast.sponsor).post(path, {"outcome": "Maybe"}, **HX)
    assert response.status_code == 409
    assert ChangeRequest.objects.get().status == "Proposed"


def test_page_adjudication_with_a_bad_outcome_on_a_decided_change_is_409(cast, client_for, world):
    change = world["change"]
    change.status = "Rejected"
    change.save()
    path = f"{PAGES}/changes/{change.pk}/adjudicate/"
    response = client_for(cast.sponsor).post(path, {"outcome": "Maybe"}, **HX)
    assert response.status_code == 409
    assert "can no longer be decided" in response.content.decode()


def test_page_empty_note_is_422_for_an_editor_and_403_for_a_viewer(cast, client_for, world):
    path = f"{PAGES}/decisions/{world['decision'].pk}/notes/"
    assert client_for(cast.lead).post(path, {"text": ""}, **HX).status_code == 422
    assert client_for(cast.viewer).post(path, {"text": ""}, **HX).status_code == 403
