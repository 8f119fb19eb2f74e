"""The assistant and the stage gates: every viewer reads the stage plan, the Project Lead
(and the editors) request the gate review, the sponsor alone decides (offered to sponsors
only, marked as not undoable), through the catalogue's runner with the services' own
refusals in words and the gates in the house order."""

import pytest

from agent import catalogue
from agent.mcp_server import tool_for
from gates.models import GateReview
from governance.errors import Conflict, Forbidden, NotFound, Stale, ValidationFailed
from governance.models import AuditEntry
from registers.models import Decision
from tests.agent.conftest import EVERYONE, use_group
from tests.gates_support import make_running, unmet_named

pytestmark = pytest.mark.django_db


def run(user, name, arguments):
    ctx = catalogue.Context(request=catalogue.request_for(user), client="test")
    return catalogue.run(ctx, name, arguments)


@pytest.fixture
def running(cast):
    from governance.tracker.local import scripting

    make_running(cast)
    scripting.ensure_group(
        EVERYONE, members=["lead", "editor", "viewer", "sponsor", "outsider", "site_admin"]
    )
    use_group(EVERYONE)
    return cast


KEY = {"projectKey": "ALPHA"}


def test_every_viewer_reads_the_plan_and_the_outsider_sees_nothing(running):
    cast = running
    for who in (cast.lead, cast.viewer, cast.sponsor):
        answer = run(who, "stage_plan", KEY)
        assert answer["stages"][0]["name"] == "Initiation"
        assert answer["currentStageId"] and answer["link"].endswith("/stages/")
        assert all("met" in c for s in answer["stages"] for c in s["criteria"])
    with pytest.raises(NotFound):
        run(cast.outsider, "stage_plan", KEY)


def test_the_lead_requests_and_the_sponsor_decides_with_the_unmet_named(running):
    cast = running
    with pytest.raises(Forbidden, match="request a gate review"):
        run(cast.viewer, "request_gate_review", KEY)
    with pytest.raises(Forbidden):
        run(cast.sponsor, "request_gate_review", KEY)
    asked = run(cast.lead, "request_gate_review", {**KEY, "lessons": "Earlier tests."})
    assert asked["done"] == "gate_review.requested" and asked["state"] == "Requested"
    assert asked["report"]["lessons"] == "Earlier tests."
    with pytest.raises(Conflict, match="awaits the sponsor's decision already"):
        run(cast.lead, "request_gate_review", KEY)
    with pytest.raises(Forbidden, match="Only the sponsor decides"):
        run(cast.lead, "decide_gate_review", {**KEY, "outcome": "Go"})
    with pytest.raises(ValidationFailed) as refused:
        run(cast.sponsor, "decide_gate_review", {**KEY, "outcome": "Go"})
    assert "Not named" in refused.value.fields["unmetCriteria"][0]
    with pytest.raises(Stale):
        run(cast.sponsor, "decide_gate_review", {**KEY, "outcome": "Go", "expectedRevision": 9})
    decided = run(
        cast.sponsor,
        "decide_gate_review",
        {**KEY, "outcome": "Go", "unmetCriteria": unmet_named(cast), "expectedRevision": 1},
    )
    assert decided["done"] == "gate_review.decided" and decided["outcome"] == "Go"
    assert decided["currentStage"] == "Design"
    assert Decision.objects.get(pk=decided["decisionId"]).made_on is not None
    assert AuditEntry.objects.filter(kind="gate_review.decided", channel="agent").exists()
    with pytest.raises(NotFound, match="No gate review awaits"):
        run(cast.sponsor, "decide_gate_review", {**KEY, "outcome": "Go"})


def test_a_refused_body_comes_after_the_gates(running):
    cast = running
    # No review waiting: 404 before the body's 422.
    with pytest.raises(NotFound):
        run(cast.sponsor, "decide_gate_review", {**KEY, "outcome": "Maybe"})
    run(cast.lead, "request_gate_review", KEY)
    with pytest.raises(Forbidden):
        run(cast.viewer, "decide_gate_review", {**KEY, "outcome": "Maybe"})
    with pytest.raises(ValidationFailed):
        run(cast.sponsor, "decide_gate_review", {**KEY, "outcome": "Maybe"})
    with pytest.raises(ValidationFailed) as refused:
        run(cast.sponsor, "decide_gate_review", {**KEY, "outcome": "Hold"})
    assert "date to come back" in refused.value.fields["holdUntil"][0]
    assert GateReview.objects.get().state == "Requested"


def test_the_decision_is_offered_to_sponsors_only_and_marked_not_undoable(running):
    cast = running
    for who, offered in ((cast.sponsor, True), (cast.viewer, False), (cast.lead, False)):
        names = {a.name for a in catalogue.available(catalogue.request_for(who))}
        assert ("decide_gate_review" in names) is offered, who
        assert "stage_plan" in names
        assert ("request_gate_review" in names) is (who == cast.lead)
    hints = tool_for(catalogue.get("decide_gate_review")).annotations
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
        False,
        True,
        False,
    )


def test_waiting_for_me_lists_the_gate_review_for_the_sponsor(running):
    cast = running
    run(cast.lead, "request_gate_review", KEY)
    waiting = run(cast.sponsor, "waiting_for_me", {})
    assert [(g["projectKey"], g["act"]) for g in waiting["gateReviews"]] == [("ALPHA", "decide")]
    assert run(cast.lead, "waiting_for_me", {})["gateReviews"] == []
