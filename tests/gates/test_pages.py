"""The stage plan's page: what each role sees and may do (the lead and the editors keep the
plan and request the review, the sponsor decides, viewers read, outsiders get 404), the
criteria with their figures and the rows behind them, refusals in words keeping what was
typed, and the empty state."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from gates import selectors, services
from gates.models import GateReview, Stage
from governance.models import Notification
from registers.models import Decision
from tests.factories import WorkPackageFactory
from tests.gates_support import caller, case_in, make_plan, make_running, unmet_named


def url(cast, name="gates:plan", *args):
    return reverse(name, args=[cast.project.key, *args])


@pytest.fixture
def running(cast):
    return make_running(cast)


@pytest.mark.django_db
def test_the_empty_state_offers_the_default_stages_to_the_lead_only(cast, client_for):
    case_in(cast, "Draft")
    page = client_for(cast.lead).get(url(cast)).content.decode()
    assert "no stage plan yet" in page
    assert "Create from the site&#x27;s default stages" in page or "default stages" in page
    viewer = client_for(cast.viewer).get(url(cast)).content.decode()
    assert "no stage plan yet" in viewer and "gates/create" not in viewer
    assert "stages/create/" not in viewer
    response = client_for(cast.lead).post(url(cast, "gates:plan-create"))
    assert response.status_code == 302
    assert selectors.stages(cast.project)[0].name == "Initiation"


@pytest.mark.parametrize("who", ["lead", "editor", "viewer", "sponsor", "pmo"])
def test_every_member_reads_the_plan_and_its_criteria(cast, client_for, running, who):
    response = client_for(getattr(cast, who)).get(url(cast))
    assert response.status_code == 200
    page = response.content.decode()
    assert "Initiation" in page and "Exit criteria" in page
    assert "Met" in page or "Not met" in page
    editing = "Save the stage plan" in page or "frozen-because" in page
    assert editing == (who in ("lead", "editor"))
    assert ("Request the gate review" in page) == (who in ("lead", "editor"))


def test_an_outsider_sees_nothing(cast, client_for, running):
    assert client_for(cast.outsider).get(url(cast)).status_code == 404
    response = client_for(cast.outsider).post(url(cast, "gates:review-request"))
    assert response.status_code == 404
    assert not GateReview.objects.exists()


def test_the_approved_plan_is_frozen_with_its_reason(cast, client_for, running):
    page = client_for(cast.lead).get(url(cast)).content.decode()
    assert 'id="frozen-because"' in page and "approved change request" in page


def test_the_rows_behind_a_criterion_link_to_the_register(cast, client_for, running):
    stage = selectors.current_stage(cast.project)
    wp = WorkPackageFactory(project=cast.project, name="Vendor pick", status="InProgress")
    from gates.models import StagePackage

    StagePackage.objects.create(stage=stage, work_package=wp)
    page = client_for(cast.viewer).get(url(cast)).content.decode()
    assert reverse("registers:wp-detail", args=[cast.project.key, wp.pk]) in page
    assert "neither complete nor re-planned" in page


def test_the_lead_requests_the_viewer_cannot(cast, client_for, running):
    response = client_for(cast.viewer).post(url(cast, "gates:review-request"), {"lessons": "x"})
    assert response.status_code == 403
    assert "Only the Project Lead" in response.content.decode()
    response = client_for(cast.lead).post(url(cast, "gates:review-request"), {"lessons": "Early."})
    assert response.status_code == 302
    review = GateReview.objects.get()
    assert review.report["lessons"] == "Early."
    assert Notification.objects.filter(recipient_account_id=cast.sponsor.account_id).exists()
    page = client_for(cast.sponsor).get(url(cast)).content.decode()
    assert "Record the decision" in page and "End-stage report" in page
    lead_page = client_for(cast.lead).get(url(cast)).content.decode()
    assert "Record the decision" not in lead_page


def test_a_go_without_naming_unmet_criteria_is_refused_keeping_what_was_typed(
    cast, client_for, running
):
    services.gate_review_request(caller=caller(cast, cast.lead), data={})
    named = unmet_named(cast)
    assert named, "the first gate has unmet criteria in the cast"
    sponsor = client_for(cast.sponsor)
    body = {"outcome": "Go", "comment": "Onwards, carefully."}
    response = sponsor.post(url(cast, "gates:review-decide"), body)
    assert response.status_code == 422
    page = response.content.decode()
    assert "Not named" in page and "Onwards, carefully." in page and "Nothing was decided" in page
    body.update({f"unmet-{n['kind']}-{n['key']}": "The board accepts it." for n in named})
    response = sponsor.post(url(cast, "gates:review-decide"), body)
    assert response.status_code == 302
    review = GateReview.objects.get()
    assert review.outcome == "Go" and len(review.unmet_named) == len(named)
    assert Decision.objects.filter(pk=review.decision_id, made_on__isnull=False).exists()
    page = client_for(cast.viewer).get(url(cast)).content.decode()
    assert "Initiation gate: Go" in page and "The board accepts it." in page


def test_a_hold_needs_its_date_and_the_lead_cannot_decide(cast, client_for, running):
    services.gate_review_request(caller=caller(cast, cast.lead), data={})
    response = client_for(cast.lead).post(url(cast, "gates:review-decide"), {"outcome": "Hold"})
    assert response.status_code == 403
    sponsor = client_for(cast.sponsor)
    response = sponsor.post(url(cast, "gates:review-decide"), {"outcome": "Hold"})
    assert response.status_code == 422
    assert "date to come back" in response.content.decode()
    later = (timezone.localdate() + dt.timedelta(days=14)).isoformat()
    response = sponsor.post(
        url(cast, "gates:review-decide"), {"outcome": "Hold", "holdUntil": later}
    )
    assert response.status_code == 302
    assert GateReview.objects.get().hold_until.isoformat() == later


def test_dismiss_needs_a_reason_and_add_names_a_criterion(cast, client_for, running):
    stage = selectors.current_stage(cast.project)
    record = stage.criteria.filter(kind="exit").first()
    lead = client_for(cast.lead)
    dismiss = url(cast, "gates:criterion-dismiss", stage.pk, record.pk)
    response = lead.post(dismiss, {"reason": ""})
    assert response.status_code == 422
    response = lead.post(dismiss, {"reason": "Not relevant for a pilot."})
    assert response.status_code == 302
    record.refresh_from_db()
    assert record.dismissal_reason == "Not relevant for a pilot."
    assert client_for(cast.viewer).post(dismiss, {"reason": "x"}).status_code == 403
    add = url(cast, "gates:criterion-add", stage.pk)
    response = lead.post(add, {"criterion": "documentsLinked:exit", "parameter": "nonsense"})
    assert response.status_code == 422
    assert "nonsense" in response.content.decode()
    response = lead.post(add, {"criterion": "documentsLinked:exit", "parameter": ""})
    assert response.status_code == 302
    assert stage.criteria.filter(key="documentsLinked").exists()


def test_the_plan_edit_names_the_refusal_on_its_row(cast, client_for):
    stages = make_plan(cast)
    lead = client_for(cast.lead)
    body = {"count": str(len(stages) + 1)}
    for i, s in enumerate(stages):
        body.update({f"s{i}-id": str(s.pk), f"s{i}-name": s.name, f"s{i}-order": str(i + 1)})
    body.update({"s1-plannedStart": "2027-03-01", "s1-plannedEnd": "2027-01-01"})
    body.update({f"s{len(stages)}-name": "Hypercare", f"s{len(stages)}-order": "99"})
    response = lead.post(url(cast, "gates:plan-edit"), body)
    assert response.status_code == 422
    page = response.content.decode()
    assert "planned end is before the planned start" in page and "Hypercare" in page
    body["s1-plannedEnd"] = "2027-04-30"
    body["s0-remove"] = "on"
    assert lead.post(url(cast, "gates:plan-edit"), body).status_code == 302
    names = [s.name for s in Stage.objects.filter(project=cast.project).order_by("position")]
    assert names == ["Design", "Build", "Transition", "Hypercare"]


def test_the_steering_pack_has_the_stage_section(cast, client_for, running):
    services.gate_review_request(caller=caller(cast, cast.lead), data={})
    lead = client_for(cast.lead)
    response = lead.post(reverse("status:report-create", args=[cast.project.key]), {})
    assert response.status_code in (200, 302)
    from status.models import StatusReport

    report = StatusReport.objects.get(project=cast.project)
    page = lead.get(reverse("status:report", args=[cast.project.key, report.pk])).content.decode()
    assert "Stage and gate" in page and "Stage under way: <strong>Initiation</strong>" in page
    assert "awaits the sponsor&#x27;s decision" in page or "awaits the sponsor's decision" in page
    assert "No gate decided yet." in page
