"""Every derived value of project status at its thresholds (just below, at, just above), with
its drivers (docs/product.md section 3). The derivations are tested through the loader (the
rows it reads by name, the figures `status.derive` computes from them), on the path of a
project's own status and on the portfolio's path at once (they must agree)."""

import datetime as dt
import itertools
import uuid
from decimal import Decimal

import pytest
from django.conf import settings
from django.utils import timezone

from charter.models import BusinessCase
from governance.labels import label
from governance.models import SiteSettings
from governance.services import site_settings_update
from registers.derive import approved_variations
from registers.models import ChangeRequest, Risk
from status import derive, selectors
from status.models import ProjectStatus
from tests.factories import (
    BusinessCaseFactory,
    ChangeRequestFactory,
    DecisionFactory,
    ProjectFactory,
    RiskFactory,
    UserFactory,
    WorkPackageFactory,
)

NOW = timezone.now()
TODAY = timezone.localdate(NOW)
TH = dict(settings.RAG_THRESHOLDS)
END = dt.date(2026, 9, 30)


@pytest.fixture
def project(db):
    return ProjectFactory()


def view_of(project, now=None) -> derive.StatusView:
    """The project's status on its own page, checked equal to its portfolio row."""
    detail = selectors.view_for(project, now=now)
    bulk = selectors.views_for([project], now=now)[project.pk]
    for key in ("cost", "schedule", "scope", "risk"):
        assert bulk.dimensions[key].rag == detail.dimensions[key].rag
        assert bulk.dimensions[key].summary == detail.dimensions[key].summary
        assert bulk.dimensions[key].figures == detail.dimensions[key].figures
    assert bulk.figures == detail.figures
    assert bulk.effective == detail.effective
    return detail


def dimension(project, key, now=None) -> derive.Dimension:
    return view_of(project, now).dimensions[key]


def package(project, **fields):
    values = {
        "planned_start_date": None,
        "planned_end_date": None,
        "budget": None,
    }
    values.update(fields)
    return WorkPackageFactory(project=project, **values)


def change(project, *, age_days=1, **fields):
    created = ChangeRequestFactory(project=project, **fields)
    ChangeRequest.objects.filter(pk=created.pk).update(created_at=NOW - dt.timedelta(days=age_days))
    return created


def approve(project):
    project.approval_status = "Approved"
    project.save(update_fields=["approval_status"])


# --- cost ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("eac", "expected"),
    [
        ("1049.99", "Green"),  # just below 5 %
        ("1050", "Green"),  # at 5 %
        ("1050.01", "Amber"),  # just above 5 %
        ("1099.99", "Amber"),
        ("1100", "Amber"),  # at 10 %
        ("1100.01", "Red"),
        ("800", "Green"),  # under budget
    ],
)
def test_cost_rag_at_its_thresholds(project, eac, expected):
    package(project, budget=Decimal(1000), budget_forecast=Decimal(eac))
    assert dimension(project, "cost").rag == expected


def test_cost_drivers_name_the_figures_and_the_packages_over_budget(project):
    package(
        project,
        name="Build",
        budget=Decimal(600),
        budget_baseline=Decimal(600),
        budget_forecast=Decimal(800),
    )
    package(
        project,
        name="Test",
        budget=Decimal(400),
        budget_baseline=Decimal(400),
        budget_forecast=Decimal(400),
    )
    result = dimension(project, "cost")
    assert result.rag == "Red"
    assert result.summary == (
        "The forecast (EAC) EUR\u00a01,200 is 20% over the approved budget of EUR\u00a01,000, "
        "above the Amber line at 10%."
    )
    assert [d.text for d in result.drivers] == [
        "Build is forecast at EUR\u00a0800, EUR\u00a0200 over its baseline of EUR\u00a0600."
    ]
    assert result.figures["overrunPct"] == Decimal("20.00")


def test_cost_eac_falls_back_to_budget_and_revised_forecast_replaces_it(project):
    package(project, budget=Decimal(500))
    package(project, budget=Decimal(500), budget_forecast=Decimal(560))
    assert dimension(project, "cost").figures["eac"] == Decimal(1060)
    ProjectStatus.objects.create(project=project, revised_forecast=Decimal(1000))
    revised = dimension(project, "cost")
    assert revised.figures["eac"] == Decimal(1000)
    assert revised.rag == "Green"
    assert revised.summary == (
        "The revised forecast (EAC) EUR\u00a01,000 matches the budget (not yet approved) "
        "of EUR\u00a01,000, within the Green line at 5%."
    )
    assert "replaces the work packages' forecast EUR\u00a01,060" in revised.drivers[0].text


def test_cost_approved_budget_is_the_baseline_after_approval_plus_approved_variations(project):
    package(
        project, budget=Decimal(1300), budget_baseline=Decimal(1000), budget_forecast=Decimal(1150)
    )
    # Added after approval: no baseline, so it adds to the forecast, not the approved budget.
    package(project, name="Extra", budget=Decimal(100), budget_forecast=Decimal(100))
    change(project, status="Approved", dimensions=["Budget"], impact_budget=Decimal(200))
    change(project, status="Proposed", dimensions=["Budget"], impact_budget=Decimal(999))
    change(project, status="Rejected", dimensions=["Budget"], impact_budget=Decimal(999))
    result = dimension(project, "cost")
    assert result.figures["approvedBudget"] == Decimal(1200)
    assert result.figures["eac"] == Decimal(1250)
    assert result.rag == "Green"  # +4.17 %
    assert result.summary == (
        "The forecast (EAC) EUR\u00a01,250 is 4.2% over the approved budget of EUR\u00a01,200 "
        "(EUR\u00a01,000 plus EUR\u00a0200 of approved changes), within the Green line at 5%."
    )
    assert result.drivers[-1].text == "1 approved change adds EUR\u00a0200 to the budget."


def test_a_plan_baseline_makes_the_budget_baseline_the_approved_budget(project):
    package(project, budget=Decimal(1000), budget_forecast=Decimal(1000))
    BusinessCaseFactory(project=project, plan_baseline={"version": 1, "workPackages": {}})
    result = dimension(project, "cost")
    assert result.rag == "None"  # approved, but no package carries a baseline
    assert "No approved budget" in result.summary


def test_cost_is_none_when_there_is_nothing_to_judge(project):
    assert dimension(project, "cost").rag == "None"
    package(project, name="Unbudgeted")
    assert dimension(project, "cost").rag == "None"
    package(project, budget=Decimal(0), budget_forecast=Decimal(50))
    assert "No approved budget" in dimension(project, "cost").summary


# --- schedule -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("slip", "expected"),
    [(-1, "Green"), (0, "Green"), (1, "Amber"), (13, "Amber"), (14, "Amber"), (15, "Red")],
)
def test_schedule_rag_at_its_thresholds(project, slip, expected):
    package(project, planned_end_date=END, forecast_end_date=END + dt.timedelta(days=slip))
    result = dimension(project, "schedule")
    assert result.rag == expected
    assert result.figures["slipDays"] == slip


def test_a_blocked_package_makes_schedule_at_least_amber(project):
    package(
        project, name="Build", planned_end_date=END, forecast_end_date=END - dt.timedelta(days=5)
    )
    assert dimension(project, "schedule").rag == "Green"
    package(project, name="Integration", status="Blocked", planned_end_date=END)
    result = dimension(project, "schedule")
    assert result.rag == "Amber"
    assert "Integration is blocked." in [d.text for d in result.drivers]
    assert result.summary.endswith(" 1 work package is blocked.")


def test_blocked_without_dates_is_amber(project):
    package(project, name="X", status="Blocked")
    assert dimension(project, "schedule").rag == "Amber"


def test_approved_schedule_variations_move_the_baseline(project):
    package(project, planned_end_date=END, forecast_end_date=END + dt.timedelta(days=20))
    change(project, status="Approved", dimensions=["Schedule"], impact_schedule_days=10)
    change(project, status="Proposed", dimensions=["Schedule"], impact_schedule_days=100)
    result = dimension(project, "schedule")
    assert result.figures["slipDays"] == 10
    assert result.rag == "Amber"


def test_schedule_measures_against_the_approved_plan_baseline(project):
    planned = package(
        project,
        name="Work package 1",
        planned_end_date=dt.date(2026, 12, 31),
        forecast_end_date=dt.date(2026, 12, 31),
    )
    BusinessCaseFactory(
        project=project,
        plan_baseline={
            "version": 2,
            "approvedAt": "2026-01-10T10:00:00+00:00",
            "workPackages": {
                str(planned.pk): {
                    "budget": 10,
                    "plannedStartDate": "2026-01-01",
                    "plannedEndDate": "2026-12-01",
                },
                str(uuid.uuid4()): {"budget": 5, "plannedEndDate": "2026-11-01"},
            },
            "totalBudget": 15,
        },
    )
    result = dimension(project, "schedule")
    assert result.figures["slipDays"] == 30
    assert result.rag == "Red"
    assert result.summary == (
        "The forecast end 31 Dec 2026 is 30 days later than the end of the approved plan "
        "(version 2), 1 Dec 2026, and Work package 1 is 30 days late."
    )


def test_schedule_before_approval_uses_the_latest_planned_end_and_legacy_locks(project):
    package(project, name="A", planned_end_date=dt.date(2026, 5, 1))
    package(
        project,
        name="B",
        planned_end_date=dt.date(2026, 6, 1),
        forecast_end_date=dt.date(2026, 6, 5),
    )
    result = dimension(project, "schedule")
    assert result.figures["baselineSource"] == "current plan (no approved baseline yet)"
    assert result.figures["slipDays"] == 4
    legacy = ProjectFactory()
    package(
        legacy,
        name="A",
        planned_end_date=dt.date(2026, 5, 1),
        forecast_end_date=dt.date(2026, 5, 11),
        planned_dates_baseline_locked_at=NOW,
    )
    package(legacy, name="Later", planned_end_date=dt.date(2026, 5, 8))
    result = dimension(legacy, "schedule")
    assert result.figures["baselineSource"] == "locked legacy baseline"
    assert result.figures["slipDays"] == 10


def test_schedule_is_none_without_dates(project):
    package(project, budget=Decimal(5))
    assert dimension(project, "schedule").rag == "None"


# --- scope ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("waited", "expected"), [(0, "Amber"), (29, "Amber"), (30, "Amber"), (31, "Red")]
)
def test_scope_rag_at_its_threshold(project, waited, expected):
    package(project)
    change(project, dimensions=["Scope"], age_days=waited)
    result = dimension(project, "scope", now=NOW)
    assert result.rag == expected
    assert result.figures["oldestWaitDays"] == waited


@pytest.mark.parametrize(
    ("waited", "expected", "days"),
    [(30 - 1 / 24, "Amber", 29), (30 + 1 / 24, "Red", 30), (30 + 23 / 24, "Red", 30)],
)
def test_scope_turns_red_as_soon_as_the_threshold_has_passed(project, waited, expected, days):
    """ "More than 30 days" is measured from the moment the change was raised, not in whole
    calendar days (an hour past 30 days is more than 30 days)."""
    package(project)
    change(project, dimensions=["Scope"], age_days=waited)
    result = dimension(project, "scope", now=NOW)
    assert (result.rag, result.figures["oldestWaitDays"]) == (expected, days)
    if expected == "Red":
        assert "waited more than 30 days" in result.summary


def test_scope_counts_proposed_and_awaiting_application_scope_changes_only(project):
    package(project)
    change(
        project,
        status="Approved",
        dimensions=["Scope"],
        application_record={"kind": "charter", "ref": 2},
        age_days=90,
    )  # Applied
    change(project, status="Proposed", dimensions=["Budget"], age_days=90)  # not Scope
    change(project, status="Approved", dimensions=["Quality"], age_days=90)  # not Scope
    change(project, status="Rejected", dimensions=["Scope"], age_days=90)
    assert dimension(project, "scope").rag == "Green"
    change(
        project,
        summary="Add reporting",
        status="Approved",
        dimensions=["Scope", "Budget"],
        age_days=3,
    )
    result = dimension(project, "scope")
    assert result.rag == "Amber"
    assert [d.text for d in result.drivers] == [
        "Add reporting is approved and awaits application; raised 3 days ago."
    ]


def test_scope_as_of_a_past_date_ignores_changes_raised_later(project):
    package(project)
    change(project, dimensions=["Scope"], age_days=5)
    assert dimension(project, "scope", now=NOW - dt.timedelta(days=10)).rag == "Green"


def test_scope_is_none_with_no_packages_and_no_changes(project):
    assert dimension(project, "scope").rag == "None"
    package(project)
    assert dimension(project, "scope").rag == "Green"


# --- risk -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("impact", "likelihood", "expected"),
    [
        (2, 3, "Green"),  # 6: the attainable score just below 8
        (2, 4, "Amber"),  # 8
        (3, 3, "Amber"),  # 9
        (3, 4, "Amber"),  # 12: just below 15
        (3, 5, "Red"),  # 15
        (4, 4, "Red"),  # 16
    ],
)
def test_risk_rag_at_its_thresholds(project, impact, likelihood, expected):
    RiskFactory(project=project, impact=impact, likelihood=likelihood)
    assert dimension(project, "risk").rag == expected


@pytest.mark.parametrize(("score", "expected"), [(9, "Green"), (10, "Amber"), (12, "Amber")])
def test_risk_amber_threshold_is_inclusive_at_any_setting(project, score, expected):
    admin = UserFactory(admin=True)
    site_settings_update(
        actor=admin, data={"ragThresholds": {"riskAmberMinScore": 10, "riskRedMinScore": 20}}
    )
    impact, likelihood = {9: (3, 3), 10: (2, 5), 12: (3, 4)}[score]
    RiskFactory(project=project, impact=impact, likelihood=likelihood)
    assert dimension(project, "risk").rag == expected


def test_risk_uses_residual_scores_and_ignores_closed_items_and_opportunities(project):
    RiskFactory(
        project=project,
        title="Treated",
        impact=5,
        likelihood=5,
        residual_impact=2,
        residual_likelihood=2,
    )
    RiskFactory(project=project, status="Closed", impact=5, likelihood=5)
    RiskFactory(project=project, direction="Opportunity", impact=5, likelihood=5)
    result = dimension(project, "risk")
    assert result.rag == "Green"
    assert result.figures["topScore"] == 4


def test_a_materialised_risk_without_a_treating_decision_is_red(project):
    issue = RiskFactory(
        project=project, title="Supplier failed", materialised=True, impact=1, likelihood=1
    )
    result = dimension(project, "risk")
    assert result.rag == "Red"
    assert result.drivers[0].text == "Supplier failed has happened and has no treating decision."
    DecisionFactory(project=project, treated_risk_id=str(issue.pk))
    assert dimension(project, "risk").rag == "Green"


def test_a_risk_with_only_residual_scores_is_judged_without_an_inherent_one(project):
    RiskFactory(
        project=project,
        title="Residual only",
        impact=None,
        likelihood=None,
        residual_impact=1,
        residual_likelihood=2,
    )
    RiskFactory(
        project=project,
        title="Held",
        impact=4,
        likelihood=4,
        residual_impact=1,
        residual_likelihood=2,
    )
    result = dimension(project, "risk")
    assert result.rag == "Green"
    # Only the risk its treatment holds down out of a zone is named; the other has no
    # inherent score to have been held from.
    assert [d.text for d in result.drivers] == [
        "Held: residual score 2 (inherent 16); its treatment holds it below 8."
    ]


def test_risk_is_none_without_open_risks(project):
    assert dimension(project, "risk").rag == "None"
    RiskFactory(project=project, status="Closed", impact=5, likelihood=5)
    assert dimension(project, "risk").rag == "None"


def test_risk_summary_counts_the_bands(project):
    RiskFactory(project=project, title="A", impact=4, likelihood=4)
    RiskFactory(project=project, title="B", impact=3, likelihood=3)
    RiskFactory(project=project, title="C", impact=None, likelihood=None)
    result = dimension(project, "risk")
    assert result.summary == (
        "3 open risks; the highest residual score is 16 (residual where assessed, else "
        "inherent). 1 scores 15 or more. 1 scores from 8 to below 15. 1 is not scored."
    )
    assert [d.text for d in result.drivers] == [
        "A: inherent score 16 (no residual assessed).",
        "B: inherent score 9 (no residual assessed).",
    ]


# --- Blue, effective, thresholds from settings ------------------------------------------------


@pytest.mark.parametrize(
    "approval", ["Closed", "InRealisation", "Realised", "NotRealised", "InMaintenance"]
)
def test_every_dimension_is_blue_from_closed_onward(project, approval):
    project.approval_status = approval
    project.save()
    package(project, budget=Decimal(10), budget_forecast=Decimal(99))
    view = view_of(project)
    assert view.derived == {
        "costRag": "Blue",
        "scheduleRag": "Blue",
        "scopeRag": "Blue",
        "riskRag": "Blue",
    }
    assert view.dimensions["cost"].summary.startswith(
        f"The business case is {label(approval).lower()}: delivery is over."
    )


def test_every_dimension_is_blue_when_all_packages_are_complete(project):
    package(project, status="Complete", budget=Decimal(5))
    package(project, status="Complete")
    assert set(view_of(project).derived.values()) == {"Blue"}
    package(project, status="In Progress")
    assert "Blue" not in view_of(project).derived.values()


def test_effective_is_the_override_when_set_else_derived(project):
    package(project, budget=Decimal(100), budget_forecast=Decimal(200))
    RiskFactory(project=project, impact=5, likelihood=5)
    # A stored value outside the enum (written before validation existed) reads as null.
    ProjectStatus.objects.create(
        project=project, cost_rag_override="Green", risk_rag_override="Purple"
    )
    view = view_of(project)
    assert view.derived["costRag"] == "Red"
    assert view.effective["costRag"] == "Green"
    assert view.effective["riskRag"] == "Red"


def test_thresholds_come_from_site_settings_over_the_defaults(project):
    package(project, budget=Decimal(1000), budget_forecast=Decimal(1070))
    assert view_of(project).derived["costRag"] == "Amber"
    site_settings_update(
        actor=UserFactory(admin=True), data={"ragThresholds": {"costGreenMaxPct": 7}}
    )
    view = view_of(project)
    assert view.derived["costRag"] == "Green"
    assert view.thresholds["costGreenMaxPct"] == 7
    assert SiteSettings.load().rag_thresholds == {"costGreenMaxPct": 7}


# --- staleness --------------------------------------------------------------------------------


@pytest.mark.parametrize(("cadence", "days"), [("Daily", 1), ("Weekly", 7), ("Monthly", 31)])
def test_staleness_against_the_reporting_cadence(cadence, days):
    period = dt.timedelta(days=days)
    second = dt.timedelta(seconds=1)
    for age, stale in ((period - second, False), (period, False), (period + second, True)):
        status = ProjectStatus(reporting_cadence=cadence, last_updated_at=NOW - age)
        assert derive.is_stale(status, NOW) is stale, (cadence, age)


def test_a_status_never_updated_is_stale():
    assert derive.is_stale(ProjectStatus(), NOW) is True
    assert derive.next_update_due(ProjectStatus()) is None


def test_staleness_through_the_loader(project):
    ProjectStatus.objects.create(
        project=project,
        reporting_cadence="Weekly",
        last_updated_at=NOW - dt.timedelta(days=7, seconds=1),
    )
    assert view_of(project, now=NOW).stale is True
    assert view_of(project, now=NOW - dt.timedelta(seconds=2)).stale is False


# --- realisation review -----------------------------------------------------------------------


def review_of(
    project, *, cadence=None, default="Quarterly", last=None, started=None, approval="InRealisation"
):
    project.approval_status = approval
    project.save()
    BusinessCase.objects.update_or_create(
        project=project,
        defaults={"last_realisation_review_at": last, "realisation_started_at": started},
    )
    ProjectStatus.objects.update_or_create(project=project, defaults={"br_cadence": cadence})
    site = SiteSettings.load()
    site.br_cadence_default = default
    site.save()
    return view_of(project).realisation_review


def test_review_due_from_the_last_review_plus_the_site_default_cadence(project):
    review = review_of(
        project,
        last=dt.datetime(2026, 3, 15, 9, tzinfo=dt.UTC),
        started=dt.datetime(2026, 1, 2, tzinfo=dt.UTC),
    )
    assert review["dueOn"] == dt.date(2026, 6, 15)
    assert (review["cadence"], review["cadenceSource"]) == ("Quarterly", "site")


def test_review_due_from_realisation_start_and_the_project_override(project):
    started = dt.datetime(2026, 1, 31, 9, tzinfo=dt.UTC)
    assert review_of(project, cadence="Monthly", started=started)["dueOn"] == dt.date(2026, 2, 28)
    assert review_of(project, cadence="Annual", started=started)["dueOn"] == dt.date(2027, 1, 31)
    by_site = review_of(project, default="Monthly", started=started)
    assert (by_site["dueOn"], by_site["cadenceSource"]) == (dt.date(2026, 2, 28), "site")


def test_the_realisation_page_asks_the_status_app_by_a_plain_call(project):
    """The charter's realisation page calls `charter.reviews.next_review`, which the status
    app answers (set in its AppConfig.ready()) with the status page's own computation."""
    from charter import reviews

    started = dt.datetime(2026, 1, 31, 9, tzinfo=dt.UTC)
    shown = review_of(project, cadence="Monthly", started=started)
    case = BusinessCase.objects.get(project=project)
    case.approval_status = "InRealisation"
    assert reviews.next_review(project, case) == shown
    assert reviews.next_review(project, case)["dueOn"] == dt.date(2026, 2, 28)


@pytest.mark.parametrize(("due_offset", "overdue"), [(-1, True), (0, False), (1, False)])
def test_review_is_overdue_the_day_after_it_is_due(project, due_offset, overdue):
    due = TODAY + dt.timedelta(days=due_offset)
    last = dt.datetime.combine(due.replace(year=due.year - 1), dt.time(12), dt.UTC)
    review = review_of(project, cadence="Annual", last=last)
    assert review["dueOn"] == due
    assert review["overdue"] is overdue


def test_no_review_is_due_outside_realisation(project):
    started = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert review_of(project, started=started, approval="Realised")["dueOn"] is None
    assert review_of(project, approval="InRealisation")["dueOn"] is None


# --- initiation checklist ----------------------------------------------------------------------


def checklist(project) -> dict[str, dict]:
    return {item["id"]: item for item in view_of(project).checklist}


def test_initiation_checklist_follows_the_data(project):
    assert {k: v["done"] for k, v in checklist(project).items()} == dict.fromkeys(
        derive.CHECKLIST_IDS, False
    )
    seat = {"accountId": "a", "displayName": "A", "avatarUrl": ""}
    BusinessCaseFactory(
        project=project,
        decision_authority=seat,
        project_manager=seat,
        steering_committee=[{"id": "1", "accountId": "a", "role": "Chair"}],
        first_steerco_scheduled_for=dt.date(2026, 2, 1),
        first_steerco_held_at=NOW,
    )
    package(
        project, planned_start_date=dt.date(2026, 1, 1), planned_end_date=END, budget=Decimal(0)
    )
    RiskFactory(project=project, status="Closed")
    approve(project)
    assert all(item["done"] for item in checklist(project).values())
    package(project, name="No dates")
    item = checklist(project)["workPackagesPlanned"]
    assert item["done"] is False
    assert item["detail"] == "1 work package without planned dates or a budget: No dates"


def test_dismissed_items_keep_their_timestamp(project):
    ProjectStatus.objects.create(
        project=project, initiation_dismissals={"risksIdentified": "2026-05-01T10:00:00+00:00"}
    )
    items = checklist(project)
    assert items["risksIdentified"]["dismissedAt"] == "2026-05-01T10:00:00+00:00"
    assert items["sponsorNamed"]["dismissedAt"] is None


# --- the stored risk score -------------------------------------------------------------------


def _risk_score(impact, likelihood, residual_impact, residual_likelihood):
    """The rule as the product states it (docs/product.md), to check the stored column by."""
    if residual_impact and residual_likelihood:
        return residual_impact * residual_likelihood
    if impact and likelihood:
        return impact * likelihood
    return None


def test_the_stored_risk_score_is_the_products_rule_for_every_input(project):
    values = [None, 1, 2, 3, 4, 5]
    Risk.objects.bulk_create(
        [
            Risk(
                project=project,
                title=f"{i}{lk}{ri}{rl}",
                impact=i,
                likelihood=lk,
                residual_impact=ri,
                residual_likelihood=rl,
            )
            for i, lk, ri, rl in itertools.product(values, repeat=4)
        ]
    )
    rows = Risk.objects.values(
        "impact", "likelihood", "residual_impact", "residual_likelihood", "score"
    )
    assert len(rows) == 6**4
    for row in rows:
        expected = _risk_score(
            row["impact"], row["likelihood"], row["residual_impact"], row["residual_likelihood"]
        )
        assert row["score"] == expected


def test_the_aggregated_variations_are_registers_approved_variations(project):
    change(
        project,
        status="Approved",
        dimensions=["Budget"],
        impact_budget=Decimal("250.50"),
        impact_schedule_days=4,
    )
    change(
        project,
        status="Approved",
        dimensions=["Schedule"],
        impact_budget=Decimal("-50"),
        impact_schedule_days=-10,
    )
    change(project, status="Proposed", impact_budget=Decimal(999))
    change(project, status="Rejected", impact_budget=Decimal(999))
    figures = view_of(project).facts.figures
    assert (figures.variation_budget, figures.variation_days) == approved_variations(project)
    assert approved_variations(project) == (Decimal("200.50"), -6)


def test_load_facts_runs_the_same_queries_for_one_project_or_many(db, django_assert_num_queries):
    def populate(project):
        for _ in range(3):
            WorkPackageFactory(project=project)
            risk = RiskFactory(project=project, materialised=True)
            DecisionFactory(project=project, treated_risk_id=str(risk.pk))
            ChangeRequestFactory(project=project)

    one = [ProjectFactory()]
    many = [ProjectFactory() for _ in range(8)]
    for project in [*one, *many]:
        populate(project)
    with django_assert_num_queries(6):
        selectors.load_facts(one, thresholds=TH, now=NOW)
    with django_assert_num_queries(6):
        loaded = selectors.load_facts(many, thresholds=TH, now=NOW)
    assert all(f.figures.packages == 3 and f.figures.open_risks == 3 for f in loaded.values())
    assert all(f.untreated == [] for f in loaded.values())


def test_a_late_package_behind_the_end_is_named_and_the_project_is_not_early(project):
    """APOLLO's shape: two packages late against their own ends while a later package holds
    the project's end, and an approved +10-day change moved that end. The project's end is
    within its target, but the worst package is 18 days beyond the approved 10: Red, and
    never "earlier"."""
    package(
        project,
        name="Build: core platform",
        planned_end_date=dt.date(2026, 6, 1),
        forecast_end_date=dt.date(2026, 6, 29),
    )
    package(
        project,
        name="Data migration",
        planned_end_date=dt.date(2026, 7, 1),
        forecast_end_date=dt.date(2026, 7, 8),
    )
    package(project, name="Go-live", planned_end_date=END, forecast_end_date=END)
    change(project, status="Approved", dimensions=["Schedule"], impact_schedule_days=10)
    result = dimension(project, "schedule")
    assert result.figures["endSlipDays"] == -10
    assert result.figures["worstPackageSlipDays"] == 28
    assert result.figures["latePackages"] == 2
    assert result.figures["slipDays"] == 18
    assert result.rag == "Red"
    assert result.summary == (
        "2 work packages are late (Build: core platform by 28 days, Data migration by 7 days), "
        "the worst 18 days beyond the 10 days of approved changes; the forecast end "
        "30 Sep 2026 is within the end of the current plan (no approved baseline yet), "
        "10 Oct 2026 (30 Sep 2026 plus 10 days of approved changes)."
    )
    assert "earlier" not in result.summary
    assert [d.text for d in result.drivers][:2] == [
        "Build: core platform is 28 days late: forecast to end on 29 Jun 2026, against its "
        "planned end 1 Jun 2026.",
        "Data migration is 7 days late: forecast to end on 8 Jul 2026, against its planned "
        "end 1 Jul 2026.",
    ]


def test_packages_late_within_the_approved_days_leave_the_slip_at_zero_not_early(project):
    package(
        project,
        name="Build",
        planned_end_date=dt.date(2026, 6, 1),
        forecast_end_date=dt.date(2026, 6, 8),
    )
    package(project, name="Go-live", planned_end_date=END, forecast_end_date=END)
    change(project, status="Approved", dimensions=["Schedule"], impact_schedule_days=10)
    result = dimension(project, "schedule")
    assert result.figures["slipDays"] == 0
    assert result.rag == "Green"
    assert result.summary.startswith(
        "Build is 7 days late, within the 10 days of approved changes; the forecast end "
    )
