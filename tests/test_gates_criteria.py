"""Stage gates, the criteria catalogue: each criterion met and not met from the project's
data (never ticked by hand), with the figure and the rows behind it."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from charter.models import BusinessCase
from gates import criteria, selectors, services
from gates.models import Stage, StagePackage
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from status import selectors as status_selectors
from status.models import ProjectException
from tests.factories import WorkPackageFactory
from tests.gates_support import caller, case_in, make_running

END = dt.date(2026, 6, 30)


@pytest.fixture
def wp(cast):
    return WorkPackageFactory(
        project=cast.project,
        name="Platform",
        budget=Decimal("1000"),
        planned_start_date=dt.date(2026, 1, 1),
        planned_end_date=END,
    )


@pytest.fixture
def stage(cast, wp):
    make_running(cast)
    first = selectors.current_stage(cast.project)
    StagePackage.objects.create(stage=first, work_package=wp)
    return first


def judge(cast, key, parameter=None, stage=None):
    stage = stage or selectors.current_stage(cast.project)
    stage.refresh_from_db()
    ctx = selectors.context(stage, status_selectors.view_for(cast.project))
    return criteria.evaluate(ctx, key, parameter)


def test_the_catalogue_declares_the_eight_criteria_once():
    assert set(criteria.CATALOGUE) == {
        "businessCaseApproved",
        "noOpenException",
        "highRisksTreated",
        "withinStageTolerance",
        "noStalePendingDecision",
        "packagesComplete",
        "firstSteercoHeld",
        "documentsLinked",
    }
    days = criteria.CATALOGUE["highRisksTreated"]
    assert days.describe(14).endswith("within 14 days.")
    assert criteria.clean_parameter(days, 0)[1]
    assert criteria.clean_parameter(criteria.CATALOGUE["documentsLinked"], "nope")[1]


def test_business_case_approved_at_its_current_version(cast, stage):
    result = judge(cast, "businessCaseApproved")
    assert result.met and result.figure == 1
    case_in(cast, "Draft", version=2)
    result = judge(cast, "businessCaseApproved")
    assert not result.met and result.rows[0]["approvalStatus"] == "Draft"


def test_no_open_exception(cast, stage):
    assert judge(cast, "noOpenException").met
    record = ProjectException.objects.create(project=cast.project, opened_at=timezone.now())
    result = judge(cast, "noOpenException")
    assert not result.met and result.rows[0]["id"] == str(record.pk)


def test_high_risks_treated_and_reviewed_within_n_days(cast, stage):
    Risk.objects.create(project=cast.project, title="Low", impact=2, likelihood=2)
    assert judge(cast, "highRisksTreated", 30).met
    risk = Risk.objects.create(project=cast.project, title="Vendor", impact=5, likelihood=4)
    result = judge(cast, "highRisksTreated", 30)
    assert not result.met and result.figure == 1
    assert result.rows[0]["title"] == "Vendor" and result.rows[0]["why"] == "no treatment"
    Risk.objects.filter(pk=risk.pk).update(treatment="Mitigate")
    assert judge(cast, "highRisksTreated", 30).met
    old = timezone.now() - dt.timedelta(days=40)
    Risk.objects.filter(pk=risk.pk).update(updated_at=old)
    result = judge(cast, "highRisksTreated", 30)
    assert not result.met and result.rows[0]["why"] == "not reviewed in 30 days"
    assert judge(cast, "highRisksTreated", 60).met


def test_within_stage_tolerance_schedule_and_cost(cast, stage, wp):
    Stage.objects.filter(pk=stage.pk).update(tolerance_days=5, tolerance_cost_percent=10)
    assert judge(cast, "withinStageTolerance").met
    WorkPackage.objects.filter(pk=wp.pk).update(forecast_end_date=END + dt.timedelta(days=9))
    result = judge(cast, "withinStageTolerance")
    assert not result.met and result.figure["slipDays"] == 9
    assert result.rows[0]["name"] == "Platform"
    WorkPackage.objects.filter(pk=wp.pk).update(
        forecast_end_date=END + dt.timedelta(days=3), budget_forecast=Decimal("1200")
    )
    result = judge(cast, "withinStageTolerance")
    assert not result.met and result.figure["costOverPercent"] == 20
    assert "cost 20% over against 10%" in result.summary
    WorkPackage.objects.filter(pk=wp.pk).update(budget_forecast=Decimal("1050"))
    assert judge(cast, "withinStageTolerance").met


def test_no_decision_pending_beyond_n_days(cast, stage):
    assert judge(cast, "noStalePendingDecision", 30).met
    decision = Decision.objects.create(project=cast.project, decision="Which vendor")
    assert judge(cast, "noStalePendingDecision", 30).met
    Decision.objects.filter(pk=decision.pk).update(
        created_at=timezone.now() - dt.timedelta(days=31)
    )
    result = judge(cast, "noStalePendingDecision", 30)
    assert not result.met and result.rows[0]["decision"] == "Which vendor"
    Decision.objects.filter(pk=decision.pk).update(made_on=timezone.localdate())
    assert judge(cast, "noStalePendingDecision", 30).met


def test_the_stage_packages_complete_or_replanned(cast, stage, wp):
    result = judge(cast, "packagesComplete")
    assert not result.met and result.rows[0]["status"] == wp.status
    ChangeRequest.objects.create(
        project=cast.project, summary="Move it", status="Approved", target_work_package_id=wp.pk
    )
    assert judge(cast, "packagesComplete").met
    ChangeRequest.objects.all().delete()
    WorkPackage.objects.filter(pk=wp.pk).update(status="Complete")
    assert judge(cast, "packagesComplete").met


def test_the_first_steering_committee_held(cast, stage):
    assert not judge(cast, "firstSteercoHeld").met
    BusinessCase.objects.filter(project=cast.project).update(first_steerco_held_at=timezone.now())
    result = judge(cast, "firstSteercoHeld")
    assert result.met and result.figure == timezone.localdate().isoformat()


def test_a_supporting_document_of_the_named_kind_linked(cast, stage):
    assert not judge(cast, "documentsLinked", "lessons").met
    link = {"id": "1", "label": "Lessons", "url": "https://x.test/l", "type": "link"}
    BusinessCase.objects.filter(project=cast.project).update(
        supporting_links=[{**link, "templateKind": "lessons"}]
    )
    result = judge(cast, "documentsLinked", "lessons")
    assert result.met and result.rows[0]["url"] == "https://x.test/l"
    assert not judge(cast, "documentsLinked", "boardPaper").met


def test_the_lead_adds_and_dismisses_criteria_and_the_plan_shows_them(cast, stage):
    lead = caller(cast, cast.lead)
    services.criterion_add(
        caller=lead, stage_id=stage.pk, data={"key": "documentsLinked", "parameter": "lessons"}
    )
    plan = selectors.plan_answer(cast.project, lead)
    first = plan["stages"][0]
    added = next(c for c in first["criteria"] if c["key"] == "documentsLinked")
    assert added["met"] is False and added["addedByAccountId"] == cast.lead.account_id
    services.criterion_dismiss(
        caller=lead, stage_id=stage.pk, criterion_id=added["id"], data={"reason": "No wiki."}
    )
    plan = selectors.plan_answer(cast.project, lead)
    shown = next(c for c in plan["stages"][0]["criteria"] if c["key"] == "documentsLinked")
    assert shown["dismissed"] and shown["met"] is None and shown["dismissalReason"] == "No wiki."


def test_the_end_stage_report_stores_the_stage_figures_as_json(cast, stage, wp):
    Stage.objects.filter(pk=stage.pk).update(tolerance_days=5, tolerance_cost_percent=10)
    WorkPackage.objects.filter(pk=wp.pk).update(
        forecast_end_date=END + dt.timedelta(days=2), budget_forecast=Decimal("1105")
    )
    review = services.gate_review_request(caller=caller(cast, cast.lead), data={})
    review.refresh_from_db()
    tolerance = review.report["tolerance"]
    assert tolerance["costOverPercent"] == 10.5 and tolerance["slipDays"] == 2
    assert review.report["delivered"]["workPackages"][0]["name"] == "Platform"
    answer = selectors.plan_answer(cast.project)
    assert answer["stages"][0]["figures"]["costOverPercent"] == 10.5
    judged = next(c for c in answer["stages"][0]["criteria"] if c["key"] == "withinStageTolerance")
    assert judged["met"] is False and "10.5% over against 10%" in judged["summary"]
