"""Each fact is computed in one place and shown the same everywhere: initiation never
completes before it starts, a held steering committee was scheduled, a budget before approval
is not called approved, the next benefit review is the same on the realisation page as on the
status page and the portfolio, and the demo's finished projects say they are finished."""

import datetime as dt

import pytest
from django.test import Client
from django.utils import timezone

from charter.models import BusinessCase
from charter.services import sync_mirror
from governance import signals
from governance.models import User
from governance.permissions import caller_for
from status import services
from status.models import ProjectStatus, StatusReport
from tests.charter.conftest import closeout_record, complete_inputs
from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import WorkPackageFactory


@pytest.fixture
def arrange(cast):
    """The cast's business case in a state, the project mirror in sync."""

    def make(status: str, **fields) -> BusinessCase:
        values = {**complete_inputs(cast), "approval_status": status, **fields}
        case, _ = BusinessCase.objects.update_or_create(project=cast.project, defaults=values)
        sync_mirror(cast.project, case)
        cast.project.refresh_from_db()
        return case

    return make


def test_initiation_never_completes_before_it_starts(cast):
    approved = timezone.now()
    held = approved - dt.timedelta(days=3)
    signals.charter_approved.send(sender=None, project=cast.project, at=approved)
    signals.initiation_completed.send(sender=None, project=cast.project, at=held)
    status = ProjectStatus.objects.get()
    assert status.initiation_completed_at == status.initiation_started_at == approved


def test_a_committee_held_before_approval_completes_initiation_at_the_approval(cast):
    held = timezone.now() - dt.timedelta(days=10)
    approved = timezone.now() - dt.timedelta(days=2)
    signals.initiation_completed.send(sender=None, project=cast.project, at=held)
    signals.charter_approved.send(sender=None, project=cast.project, at=approved)
    status = ProjectStatus.objects.get()
    assert status.initiation_completed_at == status.initiation_started_at == approved


def test_a_held_committee_reads_as_scheduled_with_its_date(cast, arrange, client_for):
    held = timezone.now() - dt.timedelta(days=3)
    arrange("Approved", first_steerco_held_at=held, first_steerco_scheduled_for=None)
    checklist = {
        item["id"]: item
        for item in client_for(cast.lead)
        .get("/api/v1/projects/ALPHA/status")
        .json()["initiationChecklist"]
    }
    scheduled = checklist["firstSteercoScheduled"]
    assert scheduled["done"] is True
    assert "Not scheduled" not in scheduled["detail"]
    assert timezone.localdate(held).isoformat() in scheduled["detail"] or (
        timezone.localdate(held).strftime("%-d %b %Y") in scheduled["detail"]
    )


def test_the_realisation_page_shows_the_review_the_portfolio_flags(cast, arrange, client_for):
    started = timezone.now() - dt.timedelta(days=130)
    arrange(
        "InRealisation",
        close_out=closeout_record(),
        realisation_started_at=started,
        last_realisation_review_at=timezone.now() - dt.timedelta(days=100),
    )
    status = client_for(cast.lead).get("/api/v1/projects/ALPHA/status").json()
    review = status["realisationReview"]
    assert review["overdue"] is True
    due = dt.date.fromisoformat(review["dueOn"][:10])
    html = client_for(cast.viewer).get("/projects/ALPHA/charter/realisation/").content.decode()
    assert "Next review" in html
    assert due.strftime("%-d %b %Y") in html and "Overdue" in html


def test_a_budget_before_approval_is_not_called_approved(cast, arrange, client_for):
    arrange("Submitted")
    WorkPackageFactory(project=cast.project, budget=1000, budget_forecast=1000)
    services.status_update(caller=caller_for(cast.lead, cast.project), data={"phase": "Build"})
    client = client_for(cast.lead)
    client.post("/projects/ALPHA/status/reports/", {"title": "R1"})
    report = StatusReport.objects.get()
    client.post(
        f"/projects/ALPHA/status/reports/{report.pk}/publish/", {"revision": report.revision}
    )
    html = client.get(f"/projects/ALPHA/status/reports/{report.pk}/").content.decode()
    assert "Budget (not yet approved)" in html and "Approved budget" not in html
    set_governance_group(PMO_GROUP)
    pmo_html = client_for(cast.pmo).get("/portfolio/").content.decode()
    assert "not yet approved" in pmo_html


def test_the_demo_finished_projects_say_they_are_finished(demo):
    client = Client()
    client.force_login(User.objects.get(username="priya"))
    rows = {row["projectKey"]: row for row in client.get("/api/v1/portfolio").json()["items"]}
    for key, row in rows.items():
        if set(row["derived"].values()) == {"Blue"}:
            assert row["phase"] != "Initiation", key
            assert row["overallRag"] == "Blue", key
    for case in BusinessCase.objects.select_related("project"):
        status = ProjectStatus.objects.filter(project=case.project).first()
        if status and status.initiation_started_at and status.initiation_completed_at:
            assert status.initiation_completed_at >= status.initiation_started_at
    # Each project has its own risks and change requests, raised over the last weeks.
    from registers.models import ChangeRequest, Risk

    top_risks = {
        key: set(Risk.objects.filter(project__key=key).values_list("title", flat=True))
        for key in ("APOLLO", "BRIDGE", "CEDAR", "EMBER")
    }
    for key, titles in top_risks.items():
        others = set().union(*(t for k, t in top_risks.items() if k != key))
        assert titles - others, key  # something of its own
    summaries = [
        set(ChangeRequest.objects.filter(project__key=key).values_list("summary", flat=True))
        for key in ("APOLLO", "CEDAR")
    ]
    assert summaries[0] != summaries[1]
    ages = {
        (timezone.now() - created).days
        for created in ChangeRequest.objects.values_list("created_at", flat=True)
    }
    assert len(ages) > 5
