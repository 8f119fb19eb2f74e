"""My projects as a lead's week, and a project's overview: each project's RAG and what waits
for whom, the "mine only" filter, and the overview's status, budget, dates and top risks."""

import datetime as dt
from decimal import Decimal

from charter.models import BusinessCase
from governance.permissions import caller_for
from status import overview
from status.models import ProjectException
from tests.factories import DecisionFactory, ProjectFactory, RiskFactory, WorkPackageFactory

TODAY = dt.date(2026, 11, 28)


def _waiting(
    cast, user, row, *, approval="Approved", exception=None, reported_by="", events=(), by=""
):
    project = cast.project
    project.approval_status = approval
    caller = caller_for(user, project)
    record = None
    if exception:
        record = ProjectException(
            project=project,
            state=exception,
            reported_by_account_id=reported_by,
            events=list(events),
        )
    case = BusinessCase(project=project, approval_status=approval, submitted_by_account_id=by)
    return [
        (w.text, w.who)
        for w in overview.waiting_items(
            project, caller, row, exception=record, case=case, today=TODAY
        )
    ]


def test_nothing_waits_on_a_quiet_project(cast):
    assert _waiting(cast, cast.lead, {}) == []


def test_a_submitted_case_waits_for_the_sponsor_and_says_so_to_each(cast):
    text = "Business case submitted: approve or return it"
    assert _waiting(cast, cast.sponsor, {}, approval="Submitted") == [(text, "you")]
    assert _waiting(cast, cast.lead, {}, approval="Submitted") == [(text, "the sponsor")]


def test_nobody_is_told_to_approve_their_own_submission(cast):
    mine = _waiting(cast, cast.sponsor, {}, approval="Submitted", by=cast.sponsor.account_id)
    assert mine == [("Business case submitted: approve or return it", "the sponsor")]


def test_a_question_on_the_exception_report_waits_for_the_lead(cast):
    asked = [{"kind": "reported"}, {"kind": "asked", "text": "Which supplier?"}]
    text = "The sponsor asked for more on the exception report: answer in a new report"
    assert _waiting(cast, cast.lead, {}, exception="Reported", events=asked) == [(text, "you")]
    assert _waiting(cast, cast.sponsor, {}, exception="Reported", events=asked) == [
        (text, "the Project Lead")
    ]
    # The sponsor who wrote the report does not decide it.
    own = _waiting(
        cast, cast.sponsor, {}, exception="Reported", reported_by=cast.sponsor.account_id
    )
    assert own == [("Exception report waits for a decision", "the sponsor")]


def test_an_exception_waits_for_the_lead_then_the_sponsor(cast):
    assert _waiting(cast, cast.lead, {}, exception="Open") == [
        ("In exception: write the exception report", "you")
    ]
    assert _waiting(cast, cast.lead, {}, exception="Reported") == [
        ("Exception report waits for a decision", "the sponsor")
    ]
    assert _waiting(cast, cast.sponsor, {}, exception="Reported") == [
        ("Exception report waits for a decision", "you")
    ]


def test_the_stored_row_says_what_else_waits(cast):
    row = {
        "stale": True,
        "nextUpdateDueAt": "2026-11-20T09:00:00+00:00",
        "pendingDecisions": 2,
        "changesAwaitingApplication": 1,
        "drivers": {"scheduleRag": {"figures": {"latePackages": 3}}},
        "realisationReviewDueOn": "2026-11-01",
        "realisationReviewOverdue": True,
    }
    assert _waiting(cast, cast.editor, row) == [
        ("Status update overdue (due 20 Nov 2026)", "you"),
        ("2 decisions pending", "their owners"),
        ("1 approved change to apply to the plan", "the Project Lead"),
        ("3 work packages late against baseline", "you"),
        ("Benefits review overdue (due 1 Nov 2026)", "you"),
    ]
    # The sponsor may record the benefits review too.
    assert ("Benefits review overdue (due 1 Nov 2026)", "you") in _waiting(cast, cast.sponsor, row)
    # A viewer reads who acts: never "you".
    assert all(who != "you" for _, who in _waiting(cast, cast.viewer, row))


def test_frozen_registers_wait_for_nobody(cast):
    row = {
        "pendingDecisions": 2,
        "changesAwaitingApplication": 1,
        "drivers": {"scheduleRag": {"figures": {"latePackages": 3}}},
    }
    assert _waiting(cast, cast.lead, row, approval="Closed") == []
    assert len(_waiting(cast, cast.lead, row, approval="Approved")) == 3


def test_due_soon_is_said_before_it_is_overdue(cast):
    soon = {"stale": False, "nextUpdateDueAt": "2026-12-02T09:00:00+00:00"}
    later = {"stale": False, "nextUpdateDueAt": "2027-01-20T09:00:00+00:00"}
    assert _waiting(cast, cast.lead, soon) == [("Status update due 2 Dec 2026", "you")]
    assert _waiting(cast, cast.lead, later) == []


def test_my_projects_shows_role_rag_and_what_waits(cast, client_for):
    DecisionFactory(project=cast.project)  # pending: made_on empty
    page = client_for(cast.lead).get("/").content.decode()
    assert "Alpha programme" in page and "Project Lead" in page
    assert "Overall:" in page and "Schedule:" in page
    assert "1 decision pending" in page and "?state=Pending" in page
    assert "You lead, edit or sponsor 1 project" in page


def test_mine_only_keeps_what_the_person_leads_edits_or_sponsors(cast, client_for):
    ProjectFactory(key="BETA", name="Beta read only", browsers=[cast.lead])
    everything = client_for(cast.lead).get("/").content.decode()
    assert "Alpha programme" in everything and "Beta read only" in everything
    mine = client_for(cast.lead).get("/?mine=1").content.decode()
    assert "Alpha programme" in mine and "Beta read only" not in mine
    assert 'name="mine" value="1" checked' in mine
    viewer = client_for(cast.viewer).get("/?mine=1").content.decode()
    assert "You lead, edit or sponsor no project" in viewer
    assert "Show every project you can read" in viewer


def test_the_pager_keeps_mine_only(cast, client_for):
    for n in range(101):
        ProjectFactory(key=f"P{n:03d}", name=f"Project {n}", lead=cast.lead)
    page = client_for(cast.lead).get("/?mine=1").content.decode()
    assert "mine=1&amp;cursor=" in page


def test_overview_shows_status_budget_dates_risks_and_what_waits(cast, client_for):
    WorkPackageFactory(
        project=cast.project,
        budget=Decimal("1000.00"),
        budget_actual=Decimal("250.00"),
        planned_end_date=dt.date(2026, 6, 30),
    )
    RiskFactory(project=cast.project, title="Supplier fails", impact=5, likelihood=4)
    RiskFactory(project=cast.project, title="Minor slip", impact=1, likelihood=2)
    RiskFactory(project=cast.project, title="Closed one", impact=5, likelihood=5, status="Closed")
    DecisionFactory(project=cast.project)
    page = client_for(cast.viewer).get("/projects/ALPHA/").content.decode()
    for heading in ("Status", "What waits for whom", "Budget", "Dates", "Top risks", "People"):
        assert f">{heading}</h2>" in page
    assert "Forecast (EAC)</dt><dd>EUR\xa01,000" in page
    assert "Actual cost recorded</dt><dd>EUR\xa0250" in page
    assert "Forecast end" in page and "30 Jun 2026" in page
    assert page.index("Supplier fails") < page.index("Minor slip")
    assert "Closed one" not in page
    assert '1 decision pending</a><span class="who">waits for their owners' in page


def test_overview_of_an_empty_project_says_what_is_missing(cast, client_for):
    page = client_for(cast.lead).get("/projects/ALPHA/").content.decode()
    assert "No budget figures yet" in page
    assert "No open risks recorded." in page
    # A project that never reported waits for its first status update.
    assert "Status update overdue</a>" in page
    assert "waits for you" in page


def test_overview_never_says_on_time_while_a_package_is_late(cast, client_for):
    WorkPackageFactory(
        project=cast.project,
        planned_end_date=dt.date(2026, 6, 30),
        forecast_end_date=dt.date(2026, 7, 10),
    )
    WorkPackageFactory(project=cast.project, planned_end_date=dt.date(2026, 9, 30))
    page = client_for(cast.lead).get("/projects/ALPHA/").content.decode()
    dates = page[page.index('id="dates-h"') : page.index('id="risks-h"')]
    assert "On time" not in dates
    # The project's end is within its plan; the late package sets the slip, as on the status.
    assert "<dt>Slip</dt><dd>10 days late</dd>" in dates


def test_the_overview_survives_approved_changes_beyond_the_calendar(cast, client_for):
    """Approved schedule changes can add up past year 9999: the approved end is clamped, never
    a server error."""
    from unittest import mock

    from status import derive

    WorkPackageFactory(project=cast.project, planned_end_date=dt.date(2199, 12, 1))
    real = derive.derive_schedule

    def far(facts, thresholds):
        dimension = real(facts, thresholds)
        dimension.figures["approvedVariationDays"] = 27 * 109_572
        return dimension

    with mock.patch.object(derive, "derive_schedule", far):
        answer = client_for(cast.lead).get("/projects/ALPHA/")
    assert answer.status_code == 200
    from governance import cleaning, formatting

    assert (
        f"<dt>Approved end</dt><dd>{formatting.day(cleaning.DATE_MAX)}" in answer.content.decode()
    )


def test_the_overview_shows_the_status_pages_figures_by_their_names(cast, client_for):
    """One name, one figure: the overview's approved budget, forecast (EAC) and slip are the
    project's stored row's (the portfolio's, the API's, the status page's)."""
    from governance import formatting
    from status import health, selectors

    WorkPackageFactory(
        project=cast.project,
        budget=Decimal("1000.00"),
        budget_forecast=Decimal("1250.00"),
        planned_end_date=dt.date(2026, 6, 30),
        forecast_end_date=dt.date(2026, 7, 20),
    )
    row = health.portfolio_values(selectors.view_for(cast.project))
    page = client_for(cast.viewer).get("/projects/ALPHA/").content.decode()
    assert f"<dt>Approved budget</dt><dd>{formatting.money(row['approvedBudget'])}" in page
    assert f"<dt>Forecast (EAC)</dt><dd>{formatting.money(row['eac'])}" in page
    assert f"<dt>Slip</dt><dd>{row['scheduleSlipDays']} days late" in page
