"""Stage gates through the API: who may do what (lead, editor, sponsor, viewer, outsider),
the plan frozen after approval except in an amendment an approved change request opened,
and the sponsor's decision through the API (the made decision shows in the register)."""

import json

import pytest
from django.utils import timezone

from gates import selectors
from gates.models import GateReview
from registers.models import ChangeRequest, Decision
from tests.gates_support import case_in, make_plan, make_running, unmet_named

BASE = "/api/v1/projects/ALPHA"


@pytest.fixture
def api(cast, bearer):
    from django.test import Client

    def send(user, method, path, body=None):
        auth = bearer(user)
        client = Client()
        if method == "GET":
            return client.get(BASE + path, **auth)
        data = json.dumps(body if body is not None else {})
        return client.generic(method, BASE + path, data, content_type="application/json", **auth)

    return send


def test_reading_the_plan_viewer_reads_outsider_does_not_see(cast, api):
    make_plan(cast)
    answer = api(cast.viewer, "GET", "/stages")
    assert answer.status_code == 200
    body = answer.json()
    assert [s["name"] for s in body["stages"]] == ["Initiation", "Design", "Build", "Transition"]
    assert body["editable"] and not body["canEdit"]
    assert body["stages"][0]["criteria"][0]["summary"]
    assert api(cast.outsider, "GET", "/stages").status_code == 404
    assert api(cast.outsider, "GET", "/gate-reviews").status_code == 404


def test_the_lead_and_editor_edit_the_plan_the_viewer_and_sponsor_may_not(cast, api):
    case_in(cast, "Draft")
    assert api(cast.viewer, "POST", "/stages").status_code == 403
    assert api(cast.sponsor, "POST", "/stages").status_code == 403
    assert api(cast.editor, "POST", "/stages").status_code == 201
    assert api(cast.lead, "POST", "/stages").status_code == 409  # a plan exists
    stages = selectors.stages(cast.project)
    body = {"stages": [{"id": str(s.pk), "name": f"{s.name}!"} for s in stages[:3]]}
    assert api(cast.viewer, "PUT", "/stages", body).status_code == 403
    answer = api(cast.lead, "PUT", "/stages", body)
    assert answer.status_code == 200, answer.content
    assert [s["name"] for s in answer.json()["stages"]] == ["Initiation!", "Design!", "Build!"]
    assert api(cast.outsider, "PUT", "/stages", body).status_code == 404


def test_the_plan_is_frozen_after_approval_but_in_an_approved_amendment(cast, api):
    make_running(cast)
    stages = selectors.stages(cast.project)
    body = {"stages": [{"id": str(s.pk), "name": s.name} for s in stages]}
    body["stages"][1]["name"] = "Detailed design"
    answer = api(cast.lead, "PUT", "/stages", body)
    assert answer.status_code == 409
    assert "approved change request" in answer.json()["error"]["message"]
    change = ChangeRequest.objects.create(
        project=cast.project, summary="Re-plan", status="Proposed"
    )
    case_in(cast, "Draft", version=2, amendment_enabled_by_change_id=str(change.pk))
    assert api(cast.lead, "PUT", "/stages", body).status_code == 409
    ChangeRequest.objects.filter(pk=change.pk).update(status="Approved")
    answer = api(cast.lead, "PUT", "/stages", body)
    assert answer.status_code == 200, answer.content
    assert answer.json()["stages"][1]["name"] == "Detailed design"
    assert answer.json()["stages"][0]["state"] == "Current"


def test_request_and_decide_through_the_api(cast, api):
    make_running(cast)
    assert api(cast.viewer, "POST", "/gate-reviews").status_code == 403
    assert api(cast.sponsor, "POST", "/gate-reviews").status_code == 403
    answer = api(cast.lead, "POST", "/gate-reviews", {"lessons": "Start the design earlier."})
    assert answer.status_code == 201, answer.content
    assert answer.json()["openReview"]["report"]["lessons"] == "Start the design earlier."
    assert api(cast.sponsor, "GET", "/stages").json()["canDecide"]
    for user in (cast.lead, cast.editor, cast.viewer):
        assert api(user, "POST", "/gate-reviews/decision", {"outcome": "Go"}).status_code == 403
    assert api(cast.outsider, "POST", "/gate-reviews/decision", {}).status_code == 404
    refused = api(cast.sponsor, "POST", "/gate-reviews/decision", {"outcome": "Go"})
    assert refused.status_code == 422
    assert "Not named" in refused.json()["error"]["fields"]["unmetCriteria"][0]
    named = unmet_named(cast, "The board accepts it.")
    answer = api(
        cast.sponsor, "POST", "/gate-reviews/decision", {"outcome": "Go", "unmetCriteria": named}
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["stages"][1]["state"] == "Current"
    review = GateReview.objects.get()
    assert review.unmet_named == named
    decision = Decision.objects.get(pk=review.decision_id)
    assert "The board accepts it." in decision.decision_notes
    listed = api(cast.viewer, "GET", "/decisions").json()
    rows = listed["items"] if isinstance(listed, dict) else listed
    assert any(row["id"] == str(decision.pk) and row["state"] == "Made" for row in rows)
    changed = api(cast.lead, "PATCH", f"/decisions/{decision.pk}", {"decision": "Other"})
    assert changed.status_code == 409
    history = api(cast.viewer, "GET", "/gate-reviews").json()["items"]
    assert history[0]["outcome"] == "Go" and history[0]["decisionId"] == str(decision.pk)


def test_the_sponsor_does_not_decide_a_review_they_requested(cast, api):
    make_running(cast)
    GateReview.objects.create(
        stage=selectors.current_stage(cast.project),
        requested_at=timezone.now(),
        requested_by_account_id=cast.sponsor.account_id,
    )
    answer = api(cast.sponsor, "POST", "/gate-reviews/decision", {"outcome": "Recycle"})
    assert answer.status_code == 403
    assert "not one they requested" in answer.json()["error"]["message"]
