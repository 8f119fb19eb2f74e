"""Every row of the lifecycle table (docs/product.md section 2), through the JSON API: allowed for
the right person in the right state (the state moves, the act is audited), refused for the
wrong person (403) and in the wrong state (409), and a refused act changes nothing."""

import json

import pytest
from django.utils import timezone

from charter.acts import ACTS
from charter.models import BusinessCase
from governance.models import AuditEntry
from tests.charter.conftest import closeout_record

NOTE = {"section": "outcome", "ask": "Quantify the outcome.", "severity": "Significant"}
CLOSEOUT_NOTE = {"section": "lessons", "ask": "Say what you learned.", "severity": "Minor"}


def started():
    return {"close_out": closeout_record()}


def handed_over(cast):
    return {"close_out": closeout_record(owner=cast.viewer)}


def amendment(cast=None):
    """An approved case re-opened for amendment (version 2; approved once)."""
    return {"version": 2, "approved_at": timezone.now()}


# act, from state, extra fields (fn of cast), allowed actor, body, next state, audit kind,
# wrong actor, wrong state
ROWS = [
    ("draft", "Exploring", None, "lead", {}, "Draft", "charter.drafting_started", "viewer",
     "Draft"),
    ("submit", "Draft", None, "editor", {}, "Submitted", "charter.submitted", "sponsor",
     "Approved"),
    ("submit", "Exploring", None, "lead", {}, "Submitted", "charter.submitted", "viewer",
     "Submitted"),
    ("return", "Submitted", None, "sponsor", {"returnNotes": [NOTE]}, "Draft",
     "charter.returned", "lead", "Draft"),
    ("approve", "Submitted", None, "sponsor", {"approvalComment": "Go"}, "Approved",
     "charter.approved", "editor", "Draft"),
    ("reopen", "Approved", None, "editor", {"summary": "Widen scope", "reason": "New market"},
     "Draft", "charter.reopened", "sponsor", "Submitted"),
    ("archive", "Exploring", None, "lead", {"reason": "Not pursued"}, "Archived",
     "charter.archived", "sponsor", "Approved"),
    ("archive", "Submitted", None, "editor", {"reason": "Withdrawn"}, "Archived",
     "charter.archived", "viewer", "Closed"),
    ("kill", "Approved", None, "sponsor", {"reason": "Market gone"}, "Archived",
     "charter.killed", "lead", "Draft"),
    ("kill", "Draft", amendment, "sponsor", {"reason": "Market gone"}, "Archived",
     "charter.killed", "editor", "Closed"),
    ("kill", "Submitted", amendment, "sponsor", {"reason": "Market gone"}, "Archived",
     "charter.killed", "viewer", "Exploring"),
    ("closeout-start", "Approved", None, "editor", {}, "Approved", "closeout.started",
     "sponsor", "Closed"),
    ("closeout-submit", "Approved", lambda c: started(), "lead", {}, "ClosingSubmitted",
     "closeout.submitted", "viewer", "Closed"),
    ("closeout-return", "ClosingSubmitted", lambda c: started(), "sponsor",
     {"returnNotes": [CLOSEOUT_NOTE]}, "Approved", "closeout.returned", "editor", "Approved"),
    ("close", "ClosingSubmitted", lambda c: started(), "sponsor", {}, "Closed",
     "charter.closed", "lead", "Approved"),
    ("handover-acknowledge", "Closed", handed_over, "viewer", {}, "Closed",
     "closeout.handover_acknowledged", "editor", "Approved"),
    ("handover-escalate", "InRealisation", handed_over, "editor", {"reason": "No budget"},
     "InRealisation", "closeout.handover_escalated", "viewer", "Approved"),
    ("realisation-start", "Closed", None, "sponsor", {}, "InRealisation",
     "realisation.started", "viewer", "Approved"),
    ("realisation-start", "Closed", None, "editor", {}, "InRealisation",
     "realisation.started", "site_admin", "InRealisation"),
    ("realisation-review", "InRealisation", None, "editor",
     {"note": "On track", "confidence": "Modest"}, "InRealisation", "realisation.reviewed",
     "viewer", "Closed"),
    ("kpi-resolve", "InRealisation", None, "sponsor",
     {"resolvedValue": "82%", "met": True, "notes": ""}, "InRealisation",
     "realisation.kpi_resolved", "viewer", "Realised"),
    ("verdict", "InRealisation", None, "sponsor",
     {"verdict": "Realised", "returnRealised": "Savings of 1.2m a year"}, "Realised",
     "realisation.realised", "lead", "Closed"),
    ("verdict", "InRealisation", None, "sponsor",
     {"verdict": "NotRealised", "realisationLessons": "Adoption was never owned."},
     "NotRealised", "realisation.not_realised", "editor", "Realised"),
    ("maintenance-start", "Realised", None, "editor", {}, "InMaintenance",
     "maintenance.started", "sponsor", "InRealisation"),
    ("maintenance-start", "NotRealised", None, "lead", {}, "InMaintenance",
     "maintenance.started", "viewer", "Closed"),
    ("maintenance-retire", "InMaintenance", None, "editor", {}, "InMaintenance",
     "maintenance.retired", "sponsor", "Realised"),
    ("steerco-schedule", "Approved", None, "editor", {"scheduledFor": "2026-03-02"},
     "Approved", "charter.steerco_scheduled", "viewer", "Closed"),
    ("steerco-confirm", "Approved", None, "lead", {}, "Approved",
     "charter.steerco_confirmed", "sponsor", "Draft"),
]  # fmt: skip
IDS = [f"{r[0]}-from-{r[1]}-by-{r[3]}" for r in ROWS]


def test_every_act_of_the_table_has_a_row():
    assert {row[0] for row in ROWS} == set(ACTS)


def post(client, bearer_headers, act, body, **headers):
    return client.post(
        f"/api/v1/projects/ALPHA/charter/{act}",
        data=json.dumps(body),
        content_type="application/json",
        **bearer_headers,
        **headers,
    )


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_allowed(row, cast, arrange, client, bearer):
    act, state, fields, actor, body, after, kind, _, _ = row
    case = arrange(state, **(fields(cast) if fields else {}))
    response = post(
        client, bearer(getattr(cast, actor)), act, body, HTTP_IF_MATCH=f'"{case.revision}"'
    )
    assert response.status_code == 200, response.content
    assert response.json()["approvalStatus"] == after
    assert response["ETag"] == f'"{case.revision + 1}"'
    stored = BusinessCase.objects.get(pk=case.pk)
    assert stored.approval_status == after
    assert stored.revision == case.revision + 1
    cast.project.refresh_from_db()
    assert cast.project.approval_status == after  # the kernel mirror moved with it
    entry = AuditEntry.objects.filter(kind=kind).get()
    assert entry.actor_account_id == getattr(cast, actor).account_id
    assert entry.target_type == "businessCase" and entry.project_key == "ALPHA"


def _unchanged(case):
    stored = BusinessCase.objects.get(pk=case.pk)
    assert stored.revision == case.revision
    assert stored.approval_status == case.approval_status
    assert not AuditEntry.objects.filter(target_type="businessCase").exists()


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_wrong_person_is_403(row, cast, arrange, client, bearer):
    act, state, fields, _, body, _, _, wrong_actor, _ = row
    case = arrange(state, **(fields(cast) if fields else {}))
    response = post(client, bearer(getattr(cast, wrong_actor)), act, body)
    assert response.status_code == 403, response.content
    assert response.json()["error"]["code"] == "forbidden"
    _unchanged(case)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_wrong_state_is_409(row, cast, arrange, client, bearer):
    act, _, fields, actor, body, _, _, _, wrong_state = row
    case = arrange(wrong_state, **(fields(cast) if fields else {}))
    response = post(client, bearer(getattr(cast, actor)), act, body)
    assert response.status_code == 409, response.content
    assert response.json()["error"]["code"] == "conflict"
    _unchanged(case)


def test_outsider_cannot_see_the_case_at_all(cast, arrange, client, bearer):
    case = arrange("Submitted")
    response = post(client, bearer(cast.outsider), "approve", {})
    assert response.status_code == 404
    _unchanged(case)


def test_site_admin_is_not_an_editor(cast, arrange, client, bearer):
    case = arrange("Draft")
    assert post(client, bearer(cast.site_admin), "submit", {}).status_code == 403
    _unchanged(case)


def test_stale_if_match_is_412_and_changes_nothing(cast, arrange, client, bearer):
    case = arrange("Draft")
    response = post(client, bearer(cast.lead), "submit", {}, HTTP_IF_MATCH='"999"')
    assert response.status_code == 412 and response.json()["error"]["code"] == "stale"
    _unchanged(case)


def test_unknown_body_field_is_refused(cast, arrange, client, bearer):
    case = arrange("Submitted")
    response = post(client, bearer(cast.sponsor), "approve", {"approvedBy": "me"})
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {"approvedBy"}
    _unchanged(case)


@pytest.mark.parametrize(
    ("act", "state", "actor"),
    [("archive", "Draft", "lead"), ("kill", "Approved", "sponsor")],
)
def test_archive_and_kill_need_a_reason(act, state, actor, cast, arrange, client, bearer):
    case = arrange(state)
    response = post(client, bearer(getattr(cast, actor)), act, {"reason": "  "})
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {"reason"}
    _unchanged(case)


def test_archive_records_its_metadata(cast, arrange, client, bearer):
    arrange("Submitted")
    body = post(client, bearer(cast.lead), "archive", {"reason": "Parked"}).json()
    assert body["terminalDisposition"] == "archived"
    assert body["archivedFromStatus"] == "Submitted"
    assert body["archivedByAccountId"] == cast.lead.account_id
    assert body["archiveReason"] == "Parked" and body["archivedAt"]
    assert body["registersFrozen"] is True


def test_kill_records_killed(cast, arrange, client, bearer):
    arrange("Approved")
    body = post(client, bearer(cast.sponsor), "kill", {"reason": "Stop"}).json()
    assert body["terminalDisposition"] == "killed" and body["archivedFromStatus"] == "Approved"


def test_older_archived_records_read_as_archived(cast, arrange, client, bearer):
    arrange("Archived", terminal_disposition=None)
    body = client.get("/api/v1/projects/ALPHA/charter", **bearer(cast.viewer)).json()
    assert body["terminalDisposition"] == "archived"


def test_unknown_act_is_404(cast, arrange, client, bearer):
    arrange("Draft")
    assert post(client, bearer(cast.lead), "teleport", {}).status_code == 404


# --- archive is for a case never approved; kill stops an approved one, amendment or not ------


@pytest.mark.parametrize("state", ["Draft", "Submitted"])
def test_an_amendment_cannot_be_archived_it_is_killed(state, cast, arrange, client, bearer):
    case = arrange(state, **amendment())
    response = post(client, bearer(cast.lead), "archive", {"reason": "Not worth it"})
    assert response.status_code == 409, response.content
    assert "Kill" in response.json()["error"]["message"]
    _unchanged(case)
    lead_acts = client.get("/api/v1/projects/ALPHA/charter", **bearer(cast.lead)).json()
    assert "archive" not in lead_acts["availableActs"]
    sponsor_acts = client.get("/api/v1/projects/ALPHA/charter", **bearer(cast.sponsor)).json()
    assert "kill" in sponsor_acts["availableActs"]


def test_an_approval_stamp_alone_makes_it_a_kill(cast, arrange, client, bearer):
    """Even at version 1 (an older record), a case approved once is not 'explored, not
    pursued'."""
    case = arrange("Draft", approved_at=timezone.now())
    assert post(client, bearer(cast.lead), "archive", {"reason": "x"}).status_code == 409
    _unchanged(case)


@pytest.mark.parametrize("state", ["Draft", "Submitted"])
def test_a_case_never_approved_cannot_be_killed(state, cast, arrange, client, bearer):
    case = arrange(state)
    response = post(client, bearer(cast.sponsor), "kill", {"reason": "Stop"})
    assert response.status_code == 409
    assert "Archive" in response.json()["error"]["message"]
    _unchanged(case)


def test_killing_an_amendment_records_killed(cast, arrange, client, bearer):
    arrange("Submitted", **amendment())
    body = post(client, bearer(cast.sponsor), "kill", {"reason": "Stop"}).json()
    assert body["terminalDisposition"] == "killed"
    assert body["archivedFromStatus"] == "Submitted"
    assert body["archivedByAccountId"] == cast.sponsor.account_id
    assert body["registersFrozen"] is True


def test_the_kernels_frozen_states_are_the_charters_closed_or_later_and_two_more():
    """The kernel freezes registers without importing the charter: its set is held here to the
    charter's one declaration of the closed-or-later states."""
    from charter.derive import CLOSED_OR_LATER
    from charter.models import APPROVAL_STATUSES
    from governance.models import FROZEN_APPROVAL_STATUSES

    assert CLOSED_OR_LATER | {"ClosingSubmitted", "Archived"} == FROZEN_APPROVAL_STATUSES
    assert set(FROZEN_APPROVAL_STATUSES) <= set(APPROVAL_STATUSES)
