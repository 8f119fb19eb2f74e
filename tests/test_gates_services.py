"""Stage gates, the services: the plan from the site's defaults, approval starting the first
stage (the status' phase follows), the lead's request with the end-stage report, and the
sponsor's decisions (Go, Hold, Recycle, Stop), each a made, immutable entry of the decision
log; going through with unmet criteria names each with a reason."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from gates import selectors, services
from gates.models import GateReview, Stage
from governance.errors import Conflict, Forbidden, NotFound, ValidationFailed
from governance.models import AuditEntry, Notification
from registers.models import Decision
from registers.services import decision_update
from status.models import ProjectStatus
from tests.factories import WorkPackageFactory
from tests.gates_support import caller, case_in, make_plan, make_running, unmet_named


@pytest.fixture
def plan(cast):
    return make_plan(cast)


@pytest.fixture
def running(cast):
    return make_running(cast)


@pytest.fixture
def as_(cast):
    return lambda user: caller(cast, user)


def test_the_plan_is_made_from_the_site_defaults_with_default_criteria(cast, plan):
    assert [s.name for s in plan] == ["Initiation", "Design", "Build", "Transition"]
    assert all(s.state == "Planned" for s in plan)
    keys = {(c.key, c.kind) for c in plan[0].criteria.all()}
    assert ("businessCaseApproved", "entry") in keys
    assert ("noOpenException", "exit") in keys
    assert ("documentsLinked", "exit") not in keys
    assert AuditEntry.objects.filter(kind="stage_plan.created").count() == 1


def test_approval_starts_the_first_stage_and_the_phase_follows(cast, running):
    assert selectors.current_stage(cast.project).name == "Initiation"
    assert ProjectStatus.objects.get(project=cast.project).phase == "Initiation"


def test_go_with_unmet_criteria_is_refused_without_names_and_recorded_with_them(cast, as_, running):
    review = services.gate_review_request(caller=as_(cast.lead), data={"lessons": "Plan earlier."})
    assert review.report["stage"]["name"] == "Initiation"
    assert review.report["lessons"] == "Plan earlier."
    assert Notification.objects.filter(
        kind="gate_review", recipient_account_id=cast.sponsor.account_id
    ).exists()
    named = unmet_named(cast)
    assert named  # the first steering committee was not held
    with pytest.raises(ValidationFailed) as refused:
        services.gate_review_decide(caller=as_(cast.sponsor), data={"outcome": "Go"})
    assert "Not named" in refused.value.fields["unmetCriteria"][0]
    with pytest.raises(Forbidden):
        services.gate_review_decide(caller=as_(cast.lead), data={"outcome": "Go"})
    review = services.gate_review_decide(
        caller=as_(cast.sponsor), data={"outcome": "Go", "unmetCriteria": named}
    )
    assert review.outcome == "Go" and review.unmet_named == named
    decision = review.decision
    assert decision.made_on == timezone.localdate()
    assert decision.made_by_account_id == cast.sponsor.account_id
    assert selectors.current_stage(cast.project).name == "Design"
    assert ProjectStatus.objects.get(project=cast.project).phase == "Design"
    with pytest.raises(Conflict):
        decision_update(caller=as_(cast.lead), decision_id=decision.pk, data={"decision": "No"})


def test_hold_needs_a_date_and_recycle_keeps_the_stage(cast, as_, running):
    services.gate_review_request(caller=as_(cast.lead))
    with pytest.raises(ValidationFailed):
        services.gate_review_decide(caller=as_(cast.sponsor), data={"outcome": "Hold"})
    later = (timezone.localdate() + dt.timedelta(days=14)).isoformat()
    review = services.gate_review_decide(
        caller=as_(cast.sponsor), data={"outcome": "Hold", "holdUntil": later}
    )
    assert review.hold_until.isoformat() == later
    assert selectors.current_stage(cast.project).name == "Initiation"
    with pytest.raises(Conflict, match="on hold until"):  # not before the date to come back
        services.gate_review_request(caller=as_(cast.lead))
    GateReview.objects.filter(pk=review.pk).update(hold_until=timezone.localdate())
    services.gate_review_request(caller=as_(cast.lead))
    services.gate_review_decide(caller=as_(cast.sponsor), data={"outcome": "Recycle"})
    assert selectors.current_stage(cast.project).name == "Initiation"
    assert Decision.objects.filter(project=cast.project).exclude(made_on=None).count() == 2


def test_stop_takes_the_kill_act(cast, as_, running):
    services.gate_review_request(caller=as_(cast.lead))
    with pytest.raises(ValidationFailed):
        services.gate_review_decide(caller=as_(cast.sponsor), data={"outcome": "Stop"})
    services.gate_review_decide(
        caller=as_(cast.sponsor), data={"outcome": "Stop", "comment": "The market moved."}
    )
    cast.project.refresh_from_db()
    assert cast.project.approval_status == "Archived"
    assert cast.project.business_case.terminal_disposition == "killed"
    assert Stage.objects.get(project=cast.project, position=1).state == "Stopped"


def test_the_plan_is_frozen_after_approval(cast, as_, running):
    with pytest.raises(Conflict) as frozen:
        services.stage_plan_update(caller=as_(cast.lead), data={"stages": [{"name": "X"}]})
    assert "approved change request" in str(frozen.value)


def test_stage_tolerances_stay_within_the_projects(cast, as_, plan):
    case_in(cast, "Draft", tolerance_days=5, tolerance_cost_percent=Decimal("10"))
    wp = WorkPackageFactory(project=cast.project)
    body = {
        "stages": [
            {"id": str(plan[0].pk), "name": "Start", "toleranceDays": 6},
            {"id": str(plan[1].pk), "name": "Design", "toleranceCostPercent": 11},
        ]
    }
    with pytest.raises(ValidationFailed) as refused:
        services.stage_plan_update(caller=as_(cast.lead), data=body)
    assert set(refused.value.fields) == {
        "stages[0].toleranceDays",
        "stages[1].toleranceCostPercent",
    }
    body["stages"][0].update(toleranceDays=5, workPackageIds=[str(wp.pk)])
    body["stages"][1]["toleranceCostPercent"] = 10
    services.stage_plan_update(caller=as_(cast.lead), data=body)
    assert [s.name for s in selectors.stages(cast.project)] == ["Start", "Design"]
    assert selectors.package_ids(selectors.stages(cast.project)[0]) == {wp.pk}
    with pytest.raises(Forbidden):
        services.stage_plan_update(caller=as_(cast.viewer), data=body)
    # A stage added, the package moved into it, the dates checked.
    body["stages"][0]["workPackageIds"] = []
    body["stages"].append(
        {"name": "Pilot", "plannedStart": "2026-03-01", "plannedEnd": "2026-02-01"}
    )
    with pytest.raises(ValidationFailed) as refused:
        services.stage_plan_update(caller=as_(cast.lead), data=body)
    assert set(refused.value.fields) == {"stages[2].plannedEnd"}
    body["stages"][2].update(plannedEnd="2026-04-30", workPackageIds=[str(wp.pk)])
    services.stage_plan_update(caller=as_(cast.lead), data=body)
    stages = selectors.stages(cast.project)
    assert [s.name for s in stages] == ["Start", "Design", "Pilot"]
    assert selectors.package_ids(stages[2]) == {wp.pk}
    assert selectors.package_ids(stages[0]) == set()
    assert stages[2].criteria.filter(kind="exit").exists()


def test_no_review_to_decide_is_not_found(cast, as_, running):
    with pytest.raises(NotFound):
        services.gate_review_decide(caller=as_(cast.sponsor), data={"outcome": "Go"})
    assert not GateReview.objects.exists()


def test_the_review_waits_for_the_sponsor_and_shows_in_the_queue(cast, as_, running, client_for):
    review = services.gate_review_request(caller=as_(cast.lead))
    rows = [(cast.project, as_(cast.sponsor))]
    found = selectors.awaiting(rows)
    assert [(a.act, a.review.pk) for a in found] == [("decide", review.pk)]
    assert selectors.awaiting([(cast.project, as_(cast.viewer))]) == []
    assert selectors.days_at_gate(cast.project) == 0
    facts = selectors.gate_facts([cast.project.pk])[cast.project.pk]
    assert (facts.stage, facts.position, facts.stages, facts.days_at_gate) == (
        "Initiation",
        1,
        4,
        0,
    )
    page = client_for(cast.sponsor).get("/waiting/")
    assert page.status_code == 200
    assert f"gate-review-{review.pk}" in page.content.decode()


def test_the_audit_log_reads_the_gate_entries_in_words(cast, as_, running):
    from governance.audit_text import describe

    services.gate_review_request(caller=as_(cast.lead))
    entries = list(AuditEntry.objects.filter(kind__startswith="gate_review").order_by("pk"))
    lines = describe(entries)
    assert lines[0].sentence == "Lena Lead requested gate review “Initiation gate”"


def test_one_review_waits_at_a_time_and_go_at_the_last_gate_finishes_the_plan(cast, as_, running):
    lead, sponsor = as_(cast.lead), as_(cast.sponsor)
    services.gate_review_request(caller=lead)
    with pytest.raises(Conflict):
        services.gate_review_request(caller=lead)
    for _ in range(4):
        if selectors.open_review(cast.project) is None:
            services.gate_review_request(caller=lead)
        data = {"outcome": "Go", "unmetCriteria": unmet_named(cast)}
        services.gate_review_decide(caller=sponsor, data=data)
    assert selectors.current_stage(cast.project) is None
    assert [s.state for s in selectors.stages(cast.project)] == ["Done"] * 4
    assert ProjectStatus.objects.get(project=cast.project).phase == "Transition"
    with pytest.raises(Conflict):
        services.gate_review_request(caller=lead)
    assert Decision.objects.filter(project=cast.project).exclude(made_on=None).count() == 4


def test_a_hold_comes_back_to_the_lead_on_its_date(cast, as_, running):
    services.gate_review_request(caller=as_(cast.lead))
    later = timezone.localdate() + dt.timedelta(days=7)
    services.gate_review_decide(
        caller=as_(cast.sponsor), data={"outcome": "Hold", "holdUntil": later.isoformat()}
    )
    rows = [(cast.project, as_(cast.lead))]
    assert selectors.awaiting(rows) == []
    then = timezone.now() + dt.timedelta(days=7)
    found = selectors.awaiting(rows, now=then)
    assert [a.act for a in found] == ["request"]


def test_the_default_stages_are_seeded_and_administered(cast, client_for):
    page = client_for(cast.site_admin).get("/admin/gates/defaultstage/")
    assert page.status_code == 200
    text = page.content.decode()
    assert all(name in text for name in ("Initiation", "Design", "Build", "Transition"))
    assert client_for(cast.lead).get("/admin/gates/defaultstage/").status_code == 302
