"""Refusals found by review of the stage gates, each a scenario a lead or sponsor meets: a plan
saved from a form opened before someone else's change, a review asked for in close-out or
before a Hold's date, a criterion's days typed as other digits, a decision already taken; and
the project list's search folding case as `textsearch` does."""

import datetime as dt
import json

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from gates import selectors, services
from gates.models import GateReview, Stage
from governance.errors import Conflict, Forbidden, Frozen
from governance.models import Project
from tests.gates_support import caller, case_in, make_plan, make_running

BASE = "/api/v1/projects/ALPHA"


def url(cast, name="gates:plan", *args):
    return reverse(name, args=[cast.project.key, *args])


def _put(cast, bearer, user, body, if_match=None):
    headers = {**bearer(user), **({"HTTP_IF_MATCH": f'"{if_match}"'} if if_match else {})}
    return Client().generic(
        "PUT", BASE + "/stages", json.dumps(body), content_type="application/json", **headers
    )


def test_a_plan_saved_from_an_older_plan_is_refused_and_removes_nothing(cast, bearer):
    make_plan(cast)
    revision = Client().get(BASE + "/stages", **bearer(cast.lead)).json()["revision"]
    stages = selectors.stages(cast.project)
    # The editor adds a stage "Pilot" (the plan counts a save).
    added = [{"id": str(s.pk), "name": s.name} for s in stages] + [{"name": "Pilot"}]
    answer = _put(cast, bearer, cast.editor, {"stages": added}, revision)
    assert answer.status_code == 200, answer.content
    assert answer.json()["revision"] == revision + 1
    # The lead saves from what they read before: refused, Pilot kept with its criteria.
    renamed = [{"id": str(s.pk), "name": s.name} for s in stages]
    renamed[0]["name"] = "Kick-off"
    answer = _put(cast, bearer, cast.lead, {"stages": renamed}, revision)
    assert answer.status_code == 412
    names = [s.name for s in selectors.stages(cast.project)]
    assert names == ["Initiation", "Design", "Build", "Transition", "Pilot"]
    assert Stage.objects.get(project=cast.project, name="Pilot").criteria.exists()


def test_the_page_s_plan_form_refuses_a_stale_save_in_words(cast, client_for):
    make_plan(cast)
    page = client_for(cast.lead).get(url(cast)).content.decode()
    revision = selectors.plan_revision(cast.project)
    assert f'name="revision" value="{revision}"' in page
    stages = selectors.stages(cast.project)
    services.stage_plan_update(
        caller=caller(cast, cast.editor),
        data={"stages": [{"id": str(s.pk), "name": s.name} for s in stages] + [{"name": "Pilot"}]},
    )
    form = {
        "count": "1",
        "revision": str(revision),
        "s0-id": str(stages[0].pk),
        "s0-name": "Kick-off",
    }
    response = client_for(cast.lead).post(url(cast, "gates:plan-edit"), form)
    assert response.status_code == 412
    assert "changed since this form was opened" in response.content.decode()
    assert "Pilot" in [s.name for s in selectors.stages(cast.project)]


def test_no_review_is_asked_for_in_close_out(cast):
    make_running(cast)
    case_in(cast, "ClosingSubmitted")
    with pytest.raises(Frozen):
        services.gate_review_request(caller=caller(cast, cast.lead))
    assert not GateReview.objects.exists()


def test_the_request_button_shows_only_when_the_request_would_be_taken(cast, client_for):
    """The page shows 'Request the gate review' by the service's own refusal: not before a
    Hold's date nor in close-out, where the request would answer 409."""
    make_running(cast)
    lead = caller(cast, cast.lead)
    assert services.gate_review_refusal(lead) is None
    assert "Request the gate review" in client_for(cast.lead).get(url(cast)).content.decode()
    later = (timezone.localdate() + dt.timedelta(days=14)).isoformat()
    services.gate_review_request(caller=lead)
    services.gate_review_decide(
        caller=caller(cast, cast.sponsor), data={"outcome": "Hold", "holdUntil": later}
    )
    refusal = services.gate_review_refusal(caller(cast, cast.lead))
    assert isinstance(refusal, Conflict) and "on hold until" in refusal.message
    page = client_for(cast.lead).get(url(cast)).content.decode()
    assert "Request the gate review" not in page and "on hold until" in page
    GateReview.objects.update(hold_until=timezone.localdate())
    assert services.gate_review_refusal(caller(cast, cast.lead)) is None
    case_in(cast, "ClosingSubmitted")
    assert isinstance(services.gate_review_refusal(caller(cast, cast.lead)), Frozen)
    assert "Request the gate review" not in client_for(cast.lead).get(url(cast)).content.decode()
    assert isinstance(services.gate_review_refusal(caller(cast, cast.viewer)), Forbidden)


@pytest.mark.parametrize("typed", ["²", "٣", "9" * 5000, "-3", "1e3"])
def test_a_criterion_s_days_typed_otherwise_are_refused_in_words(cast, client_for, typed):
    stages = make_plan(cast)
    response = client_for(cast.lead).post(
        url(cast, "gates:criterion-add", stages[0].pk),
        {"criterion": "highRisksTreated:entry", "parameter": typed},
    )
    assert response.status_code == 422
    page = response.content.decode()
    assert "whole number of days" in page or "days" in page


def test_a_decision_already_taken_answers_in_words(cast, client_for):
    make_running(cast)
    services.gate_review_request(caller=caller(cast, cast.lead))
    services.gate_review_decide(caller=caller(cast, cast.sponsor), data={"outcome": "Recycle"})
    response = client_for(cast.sponsor).post(
        url(cast, "gates:review-decide"), {"outcome": "Recycle", "comment": "Again"}
    )
    assert response.status_code == 409
    assert "it was decided already" in response.content.decode()


@pytest.mark.parametrize(
    ("name", "query"),
    [("École numérique", "école"), ("École numérique", "ÉCOLE"), ("Straße works", "strasse")],
)
def test_the_project_list_s_search_folds_case_as_textsearch_does(cast, client_for, name, query):
    from governance.tracker.local.models import LocalProject

    LocalProject.objects.filter(key=cast.project.key).update(name=name)
    Project.objects.filter(pk=cast.project.pk).update(name=name)
    page = client_for(cast.lead).get("/", {"q": query}).content.decode()
    assert cast.project.key in page
