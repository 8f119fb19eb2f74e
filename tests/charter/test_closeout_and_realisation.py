"""Close-out: editing, the completeness check on submission, closure, the BAU handover;
realisation: the append-only review log, KPI resolution, maintenance; steering minutes."""

import datetime as dt
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from charter.models import BusinessCase
from governance import signals
from governance.models import AuditEntry
from governance.wiki.local.models import LocalWikiPage
from registers.models import SteeringMinutes
from tests.charter.conftest import closeout_record
from tests.factories import (
    ChangeRequestFactory,
    DecisionFactory,
    RiskFactory,
    SteeringMinutesFactory,
    WorkPackageFactory,
)

CHARTER = "/api/v1/projects/ALPHA/charter"


def act(client, headers, name, body=None):
    return client.post(
        f"{CHARTER}/{name}", data=json.dumps(body or {}), content_type="application/json", **headers
    )


def patch_closeout(client, headers, body, **extra):
    return client.patch(
        f"{CHARTER}/closeout",
        data=json.dumps(body),
        content_type="application/json",
        **headers,
        **extra,
    )


@pytest.fixture
def registers(cast):
    """One row of each kind a close-out must dispose of, and rows it need not."""
    p = cast.project
    return {
        "wp": WorkPackageFactory(project=p, name="Build"),
        "open_risk": RiskFactory(project=p, title="Vendor", status="Open"),
        "opportunity": RiskFactory(project=p, title="Reuse", direction="Opportunity"),
        "closed_risk": RiskFactory(project=p, title="Old", status="Closed"),
        "pending": DecisionFactory(project=p, decision="Pick a vendor"),
        "made": DecisionFactory(project=p, decision="Go", made_on=dt.date(2026, 1, 1)),
        "proposed": ChangeRequestFactory(project=p, summary="Add SSO"),
        "awaiting": ChangeRequestFactory(
            project=p, summary="New scope", status="Approved", dimensions=["Scope"]
        ),
        "variation": ChangeRequestFactory(
            project=p, summary="More budget", status="Approved", dimensions=["Budget"]
        ),
        "rejected": ChangeRequestFactory(project=p, summary="No", status="Rejected"),
    }


def test_closeout_start_creates_the_record(cast, arrange, client, bearer):
    arrange("Approved")
    body = act(client, bearer(cast.editor), "closeout-start").json()
    close_out = body["closeOut"]
    assert close_out["startedAt"] and close_out["submittedAt"] is None
    assert close_out["bauHandover"]["state"] == "Pending"
    assert close_out["scopeDispositions"] == {}
    assert act(client, bearer(cast.editor), "closeout-start").status_code == 409


def test_closeout_is_edited_only_while_open(cast, arrange, client, bearer):
    arrange("Approved")
    assert patch_closeout(client, bearer(cast.lead), {"commentary": "x"}).status_code == 409
    arrange("Approved", close_out=closeout_record())
    assert patch_closeout(client, bearer(cast.viewer), {"commentary": "x"}).status_code == 403
    response = patch_closeout(client, bearer(cast.lead), {"commentary": "x"})
    assert response.status_code == 200 and response.json()["closeOut"]["commentary"] == "x"
    arrange("ClosingSubmitted", close_out=closeout_record())
    assert patch_closeout(client, bearer(cast.lead), {"commentary": "y"}).status_code == 409


def test_completeness_check_names_every_row_without_a_disposition(
    cast, arrange, client, bearer, registers
):
    case = arrange("Approved", close_out=closeout_record())
    response = act(client, bearer(cast.lead), "closeout-submit")
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation"
    r = registers
    assert set(error["fields"]) == {
        f"scopeDispositions.{r['wp'].pk}",
        f"rioDispositions.{r['open_risk'].pk}",
        f"rioDispositions.{r['opportunity'].pk}",
        f"pendingDispositions.decisions.{r['pending'].pk}",
        f"pendingDispositions.changes.{r['proposed'].pk}",
        f"pendingDispositions.changes.{r['awaiting'].pk}",
    }
    assert {m["name"] for m in error["missing"]} == {
        "Build",
        "Vendor",
        "Reuse",
        "Pick a vendor",
        "Add SSO",
        "New scope",
    }
    stored = BusinessCase.objects.get(pk=case.pk)
    assert stored.approval_status == "Approved" and stored.revision == case.revision

    response = patch_closeout(
        client,
        bearer(cast.lead),
        {
            "scopeDispositions": {str(r["wp"].pk): {"disposition": "DeliveredReduced", "note": ""}},
            "rioDispositions": {
                str(r["open_risk"].pk): {"disposition": "TransferredToBau"},
                str(r["opportunity"].pk): {"disposition": "Pursued"},
            },
            "pendingDispositions": {
                "decisions": {str(r["pending"].pk): {"disposition": "DeferredToBau"}},
                "changes": {str(r["proposed"].pk): {"disposition": "Withdrawn"}},
            },
        },
    )
    assert response.status_code == 200, response.content
    response = act(client, bearer(cast.lead), "closeout-submit")
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {
        f"pendingDispositions.changes.{r['awaiting'].pk}"
    }
    patch_closeout(
        client,
        bearer(cast.lead),
        {
            "pendingDispositions": {
                "changes": {str(r["awaiting"].pk): {"disposition": "ApprovedAsShipped"}}
            }
        },
    )
    response = act(client, bearer(cast.lead), "closeout-submit")
    assert response.status_code == 200
    body = response.json()
    assert body["approvalStatus"] == "ClosingSubmitted" and body["closeOut"]["submittedAt"]
    assert body["registersFrozen"] is True


def test_dispositions_are_validated_merged_and_removed(cast, arrange, client, bearer, registers):
    arrange("Approved", close_out=closeout_record())
    wp, risk = registers["wp"], registers["open_risk"]
    response = patch_closeout(
        client,
        bearer(cast.lead),
        {
            "scopeDispositions": {
                str(wp.pk): {"disposition": "Lost"},
                "not-a-row": {"disposition": "Dropped"},
                str(risk.pk): {"disposition": "Dropped"},  # a risk is not a work package
            },
            "rioDispositions": {str(risk.pk): {"disposition": "Closed", "note": "x" * 2001}},
            "lessons": {"worked": "y" * 2001, "favourite": "z"},
            "asBuiltEndDate": "31/12/2026",
            "startedAt": "2020-01-01T00:00:00Z",  # read-only: ignored
        },
    )
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {
        f"scopeDispositions.{wp.pk}.disposition",
        "scopeDispositions.not-a-row",
        f"scopeDispositions.{risk.pk}",
        f"rioDispositions.{risk.pk}.note",
        "lessons.worked",
        "lessons.favourite",
        "asBuiltEndDate",
    }
    patch_closeout(
        client,
        bearer(cast.lead),
        {"scopeDispositions": {str(wp.pk): {"disposition": "Dropped", "note": "Descoped"}}},
    )
    patch_closeout(client, bearer(cast.lead), {"lessons": {"worked": "Demos"}})
    body = patch_closeout(client, bearer(cast.lead), {"lessons": {"differently": "Earlier"}}).json()
    assert body["closeOut"]["scopeDispositions"] == {
        str(wp.pk): {"disposition": "Dropped", "note": "Descoped"}
    }
    assert body["closeOut"]["lessons"] == {
        "worked": "Demos",
        "differently": "Earlier",
        "nextSponsor": "",
    }
    body = patch_closeout(
        client, bearer(cast.lead), {"scopeDispositions": {str(wp.pk): None}}
    ).json()
    assert body["closeOut"]["scopeDispositions"] == {}


def test_bau_owner_is_mirrored_and_acknowledges(cast, arrange, client, bearer):
    arrange("Approved", close_out=closeout_record())
    response = patch_closeout(
        client, bearer(cast.lead), {"bauHandover": {"ownerAccountId": cast.viewer.account_id}}
    )
    handover = response.json()["closeOut"]["bauHandover"]
    assert handover["ownerDisplayName"] == "Vera Viewer" and handover["state"] == "Pending"
    cast.project.refresh_from_db()
    assert cast.project.bau_owner_account_id == cast.viewer.account_id
    assert act(client, bearer(cast.viewer), "handover-acknowledge").status_code == 409  # not closed
    BusinessCase.objects.filter(project=cast.project).update(approval_status="Closed")
    assert act(client, bearer(cast.lead), "handover-acknowledge").status_code == 403
    assert act(client, bearer(cast.editor), "handover-escalate", {"reason": " "}).status_code == 422
    response = act(client, bearer(cast.editor), "handover-escalate", {"reason": "No budget"})
    handover = response.json()["closeOut"]["bauHandover"]
    assert handover["state"] == "Escalated" and handover["escalationReason"] == "No budget"
    assert act(client, bearer(cast.editor), "handover-escalate", {"reason": "x"}).status_code == 409
    response = act(client, bearer(cast.viewer), "handover-acknowledge")
    handover = response.json()["closeOut"]["bauHandover"]
    assert handover["state"] == "Acknowledged"
    assert handover["acknowledgedByAccountId"] == cast.viewer.account_id
    assert act(client, bearer(cast.viewer), "handover-acknowledge").status_code == 409


def test_close_stamps_closed_at_and_by(cast, arrange, client, bearer):
    arrange("ClosingSubmitted", close_out=closeout_record())
    body = act(client, bearer(cast.sponsor), "close").json()
    assert body["approvalStatus"] == "Closed" and body["closedAt"]
    assert body["closedByAccountId"] == cast.sponsor.account_id


def test_closeout_return_appends_closeout_notes(cast, arrange, client, bearer):
    arrange("ClosingSubmitted", close_out=closeout_record())
    bad = act(
        client,
        bearer(cast.sponsor),
        "closeout-return",
        {"returnNotes": [{"section": "outcome", "ask": "x", "severity": "Minor"}]},
    )
    assert bad.status_code == 422  # 'outcome' is a business-case section, not a close-out one
    body = act(
        client,
        bearer(cast.sponsor),
        "closeout-return",
        {"returnNotes": [{"section": "lessons", "ask": "Deeper", "severity": "Blocker"}]},
    ).json()
    assert body["approvalStatus"] == "Approved"
    assert [n["ask"] for n in body["closeOutReturnNotes"]] == ["Deeper"]
    assert body["returnNotes"] == []


def test_return_needs_at_least_one_valid_note(cast, arrange, client, bearer):
    arrange("Submitted")
    for body in (
        {},
        {"returnNotes": []},
        {"returnNotes": [{"section": "nope", "ask": "", "severity": "Huge"}]},
    ):
        response = act(client, bearer(cast.sponsor), "return", body)
        assert response.status_code == 422
    response = act(
        client,
        bearer(cast.sponsor),
        "return",
        {"returnNotes": [{"section": "nope", "ask": "", "severity": "Huge"}]},
    )
    assert set(response.json()["error"]["fields"]) == {
        "returnNotes[0].section",
        "returnNotes[0].ask",
        "returnNotes[0].severity",
    }
    assert BusinessCase.objects.get().approval_status == "Submitted"


# --- realisation -----------------------------------------------------------------------------


def test_reviews_are_appended_never_replaced(cast, arrange, client, bearer):
    arrange("InRealisation")
    act(
        client,
        bearer(cast.editor),
        "realisation-review",
        {"note": "Slow start", "confidence": "Low"},
    )
    body = act(
        client, bearer(cast.sponsor), "realisation-review", {"note": "Better", "confidence": "High"}
    ).json()
    reviews = body["realisationReviews"]
    assert [(r["note"], r["confidence"]) for r in reviews] == [
        ("Slow start", "Low"),
        ("Better", "High"),
    ]
    assert reviews[1]["byAccountId"] == cast.sponsor.account_id and reviews[1]["id"]
    assert body["realisationConfidence"] == "High"
    assert body["lastRealisationReviewAt"] == reviews[1]["at"]
    response = act(
        client, bearer(cast.editor), "realisation-review", {"note": "", "confidence": "Sure"}
    )
    assert set(response.json()["error"]["fields"]) == {"note", "confidence"}


def test_kpi_resolution(cast, arrange, client, bearer):
    arrange("InRealisation")
    assert (
        act(client, bearer(cast.editor), "kpi-resolve", {"resolvedValue": "80%"}).status_code == 422
    )
    body = act(
        client,
        bearer(cast.editor),
        "kpi-resolve",
        {"resolvedValue": "80%", "met": True, "notes": "Q3"},
    ).json()
    kpi = body["kpiResolution"]
    assert kpi["met"] is True and kpi["resolvedValue"] == "80%" and kpi["notes"] == "Q3"
    assert kpi["resolvedBy"] == cast.editor.account_id and kpi["resolvedAt"]


def test_realisation_record_and_maintenance(cast, arrange, client, bearer):
    arrange("Closed")
    body = act(client, bearer(cast.sponsor), "realisation-start").json()
    assert body["realisationStartedAt"]
    response = client.patch(
        f"{CHARTER}/realisation",
        data=json.dumps(
            {
                "realisationDate": "2027-06-30",
                "brOwner": "Head of Ops",
                "realisationSummary": "On track",
            }
        ),
        content_type="application/json",
        **bearer(cast.sponsor),
    )
    assert response.status_code == 200
    assert response.json()["realisationDate"] == "2027-06-30"
    assert (
        client.patch(
            f"{CHARTER}/realisation",
            data='{"realisationDate": "soon"}',
            content_type="application/json",
            **bearer(cast.sponsor),
        ).status_code
        == 422
    )
    arrange("Realised")
    body = act(client, bearer(cast.lead), "maintenance-start").json()
    assert body["approvalStatus"] == "InMaintenance" and body["maintenanceStartedAt"]
    body = act(client, bearer(cast.lead), "maintenance-retire").json()
    assert body["approvalStatus"] == "InMaintenance" and body["maintenanceRetiredAt"]
    assert act(client, bearer(cast.lead), "maintenance-retire").status_code == 409


# --- steering minutes ------------------------------------------------------------------------

MINUTES = "/api/v1/projects/ALPHA/minutes"


def post_minutes(client, headers, body):
    return client.post(MINUTES, data=json.dumps(body), content_type="application/json", **headers)


def test_first_minutes_complete_initiation(cast, arrange, client, bearer):
    arrange("Approved", approved_at=timezone.now())
    received = []

    def receiver(sender, project, at, **kwargs):
        received.append(at)

    signals.initiation_completed.connect(receiver)
    try:
        response = post_minutes(
            client,
            bearer(cast.editor),
            {
                "title": "Steerco 1",
                "url": "https://wiki.example.com/steerco-1",
                "heldOn": "2026-02-03",
                "attendees": [cast.sponsor.account_id, cast.lead.account_id],
            },
        )
        assert response.status_code == 201, response.content
        minutes = response.json()
        assert minutes["heldOn"] == "2026-02-03" and minutes["id"]
        assert minutes["attendees"] == [cast.sponsor.account_id, cast.lead.account_id]
        assert "pageId" not in minutes
        case = BusinessCase.objects.get()
        assert case.first_steerco_held_at.date() == dt.date(2026, 2, 3)
        assert case.first_steerco_attendees == [cast.sponsor.account_id, cast.lead.account_id]
        assert len(received) == 1
        post_minutes(
            client,
            bearer(cast.editor),
            {"title": "Steerco 2", "url": "https://wiki.example.com/2", "heldOn": "2026-03-03"},
        )
        assert len(received) == 1  # only the first minutes complete initiation
    finally:
        signals.initiation_completed.disconnect(receiver)
    assert BusinessCase.objects.get().first_steerco_held_at.date() == dt.date(2026, 2, 3)
    assert AuditEntry.objects.filter(kind="minutes.recorded").count() == 2
    listed = client.get(MINUTES, **bearer(cast.viewer)).json()
    assert [m["title"] for m in listed] == ["Steerco 2", "Steerco 1"]


def test_minutes_are_validated(cast, client, bearer):
    tomorrow = (timezone.localdate() + dt.timedelta(days=1)).isoformat()
    response = post_minutes(
        client,
        bearer(cast.lead),
        {"title": "", "heldOn": tomorrow, "url": "javascript:x", "attendees": ["ghost"]},
    )
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) == {"title", "heldOn", "url", "attendees[0]"}
    assert (
        post_minutes(client, bearer(cast.lead), {"title": "x", "heldOn": "2026-01-01"}).status_code
        == 422
    )
    assert post_minutes(client, bearer(cast.viewer), {"title": "x"}).status_code == 403
    for held_on in ({}, {"heldOn": None}, {"heldOn": ""}):
        response = post_minutes(client, bearer(cast.lead), {"createFromTemplate": True, **held_on})
        assert response.status_code == 422
        assert response.json()["error"]["fields"] == {"heldOn": ["This field is required."]}
    assert not SteeringMinutes.objects.exists()


def test_minutes_from_the_template_or_a_wiki_page(cast, client, bearer, settings):
    response = post_minutes(
        client, bearer(cast.lead), {"heldOn": "2026-01-10", "createFromTemplate": True}
    )
    assert response.status_code == 201, response.content
    page = LocalWikiPage.objects.get()
    assert page.labels == [settings.WIKI_PMO_LABEL, "governance-steering-minutes"]
    minutes = response.json()
    assert minutes["pageId"] == str(page.pk) and minutes["url"].endswith(f"/wiki/pages/{page.pk}/")
    response = post_minutes(
        client, bearer(cast.lead), {"heldOn": "2026-01-11", "pageId": str(page.pk)}
    )
    assert response.status_code == 201 and response.json()["title"] == page.title
    response = post_minutes(client, bearer(cast.lead), {"heldOn": "2026-01-11", "pageId": "424242"})
    assert response.status_code == 422


def test_steerco_confirm_completes_initiation_once(cast, arrange, client, bearer):
    arrange("Approved")
    response = act(
        client, bearer(cast.lead), "steerco-confirm", {"attendees": [cast.sponsor.account_id]}
    )
    body = response.json()
    assert body["firstSteercoHeldAt"] and body["firstSteercoAttendees"] == [cast.sponsor.account_id]
    assert act(client, bearer(cast.lead), "steerco-confirm").status_code == 409


def test_minutes_list_runs_a_constant_number_of_queries(cast, client, bearer):
    headers = bearer(cast.viewer)

    def count():
        with CaptureQueriesContext(connection) as queries:
            assert client.get(MINUTES, **headers).status_code == 200
        return len(queries)

    SteeringMinutesFactory(project=cast.project)
    count()  # warm-up: the token's last use and the people cache
    one = count()
    for _ in range(40):
        SteeringMinutesFactory(project=cast.project, attendees=[cast.lead.account_id])
    assert count() == one


def test_minutes_before_approval_complete_initiation_at_approval(cast, arrange, client, bearer):
    arrange("Draft")
    events = []

    def started(sender, project, at, **kwargs):
        events.append("started")

    def completed(sender, project, at, **kwargs):
        events.append("completed")

    signals.charter_approved.connect(started)
    signals.initiation_completed.connect(completed)
    try:
        post_minutes(
            client,
            bearer(cast.lead),
            {"title": "Review", "url": "https://wiki.example.com/r", "heldOn": "2026-01-05"},
        )
        assert BusinessCase.objects.get().first_steerco_held_at is not None
        assert events == []  # initiation has not started: nothing to complete yet
        assert act(client, bearer(cast.lead), "submit").status_code == 200
        assert act(client, bearer(cast.sponsor), "approve").status_code == 200
        assert events == ["started", "completed"]
    finally:
        signals.charter_approved.disconnect(started)
        signals.initiation_completed.disconnect(completed)
