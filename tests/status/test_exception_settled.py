"""Every end settles its exception: the business case's Kill, Archive and Close acts (taken on
the business case itself, through its page or its JSON API) settle the project's undecided
exception naming the act, withdraw its exception plan's Proposed change request with a reason,
and drop it from every queue: the sponsor's Waiting for me, the portfolio's in-exception flag
and filter (page and API), the status page's banner, the exception page's decision buttons,
the exception API and the assistant's exception action. The sponsor's own Kill decision on
the exception stays Decided (not settled twice)."""

import datetime as dt
import json
from decimal import Decimal

import pytest
from django.utils import timezone

from charter.models import BusinessCase
from charter.services import charter_approve
from governance.models import AuditEntry, Notification, Project
from governance.tracker.local import scripting
from registers.models import ChangeRequest
from registers.services import change_create, work_package_update
from status import exceptions
from status.models import ProjectException
from tests.agent.conftest import EVERYONE, use_group
from tests.charter.conftest import closeout_record
from tests.factories import WorkPackageFactory

END = dt.date(2026, 6, 30)
REPORT = {
    "cause": "The supplier delivered the platform late.",
    "consequences": "Go-live moves by a month.",
    "options": ["Accept the delay", "Stop the project"],
    "recommendation": "Accept the delay and the extra cost.",
    "planScheduleDays": 30,
    "planBudget": 200,
}
LABELS = {"kill": "Kill", "archive": "Archive", "close": "Close"}


@pytest.fixture(autouse=True)
def group(cast):
    scripting.ensure_group(EVERYONE, members=["lead", "editor", "viewer", "sponsor", "pmo"])
    use_group(EVERYONE)


@pytest.fixture
def wp(cast):
    return WorkPackageFactory(
        project=cast.project,
        name="Build",
        budget=Decimal("1000"),
        planned_start_date=dt.date(2026, 1, 1),
        planned_end_date=END,
    )


def reported_exception(cast, arrange, as_, wp) -> ProjectException:
    """Approved with a 10-day tolerance, 30 days late: in exception, reported with a plan
    (a Proposed change request to the sponsor)."""
    arrange("Submitted")
    charter_approve(caller=as_(cast.sponsor), data={"toleranceDays": 10})
    wp.refresh_from_db()
    work_package_update(
        caller=as_(cast.lead),
        wp_id=wp.pk,
        data={"forecastEndDate": (END + dt.timedelta(days=30)).isoformat()},
    )
    return exceptions.exception_report(caller=as_(cast.lead), data=REPORT)


def in_exception_for(act, cast, arrange, as_, wp) -> tuple[ProjectException, object]:
    """The project in exception, its case where `act` may end it; who takes the act."""
    if act == "kill":
        return reported_exception(cast, arrange, as_, wp), cast.sponsor
    if act == "close":
        record = reported_exception(cast, arrange, as_, wp)
        arrange("ClosingSubmitted", close_out=closeout_record())
        return record, cast.sponsor
    # Archive: a case never approved whose delivery runs against a legacy baseline (packages
    # with a budgetBaseline) can be in exception; the editor archives it.
    arrange("Draft")
    now = timezone.now()
    change = change_create(
        caller=as_(cast.lead),
        data={"summary": "Exception plan for ALPHA", "impactBudget": 200},
    )
    record = ProjectException.objects.create(
        project=cast.project,
        opened_at=now - dt.timedelta(days=3),
        crossed=[{"tolerance": "time", "figure": 30, "limit": 10, "summary": "30 days late."}],
        state="Reported",
        reported_at=now,
        reported_by_account_id=cast.lead.account_id,
        change_request=change,
        events=[{"at": now.isoformat(), "kind": "opened", "text": "30 days late."}],
    )
    Project.objects.filter(pk=cast.project.pk).update(exception_opened_at=record.opened_at)
    return record, cast.lead


def take(act, door, who, cast, client, bearer, client_for):
    reason = {} if act == "close" else {"reason": "No longer worth doing."}
    if door == "api":
        response = client.post(
            f"/api/v1/projects/ALPHA/charter/{act}",
            data=json.dumps(reason),
            content_type="application/json",
            **bearer(who),
        )
        assert response.status_code == 200, response.content
        return
    case = BusinessCase.objects.get(project=cast.project)
    page = "closeout" if act == "close" else "case"
    response = client_for(who).post(
        f"/projects/ALPHA/charter/acts/{act}/",
        {"page": page, "revision": case.revision, **reason},
    )
    assert response.status_code == 302, response.content


def agent(client_for, who, name, arguments):
    response = client_for(who).post(
        f"/api/v1/agent/actions/{name}",
        data=json.dumps({"arguments": arguments}),
        content_type="application/json",
    )
    return response


@pytest.mark.parametrize("door", ["page", "api"])
@pytest.mark.parametrize("act", ["kill", "archive", "close"])
def test_every_end_settles_the_exception_and_drops_it_from_every_queue(
    act, door, cast, arrange, as_, wp, client, bearer, client_for
):
    record, who = in_exception_for(act, cast, arrange, as_, wp)
    change_id = record.change_request_id
    sponsor = client_for(cast.sponsor)
    assert "Exception plan for ALPHA" in sponsor.get("/waiting/").content.decode()
    Notification.objects.create(
        recipient_account_id=cast.sponsor.account_id,
        kind="project_exception",
        dedupe_key=f"project_exception:{record.pk}:{cast.sponsor.account_id}-test",
        subject="ALPHA: beyond tolerance, in exception",
        project_key="ALPHA",
    )

    take(act, door, who, cast, client, bearer, client_for)

    # Settled, naming the act; audited.
    record.refresh_from_db()
    assert record.state == "Settled" and record.settled_by_act == act
    assert record.settled_by_account_id == who.account_id and record.settled_at
    last = record.events[-1]
    assert last["kind"] == "settled" and last["act"] == act
    assert f"Settled by the business case's {LABELS[act]} act" in last["text"]
    entry = AuditEntry.objects.get(kind="exception.settled")
    assert entry.changes["settledByAct"]["after"] == act
    assert entry.actor_account_id == who.account_id
    # Its plan's change request withdrawn, with the reason.
    change = ChangeRequest.objects.get(pk=change_id)
    assert change.status == "Withdrawn"
    assert f"its {LABELS[act]} act" in change.decision_comment
    if act != "close":
        assert "No longer worth doing." in change.decision_comment
    # Out of every queue: the sponsor's, the notifications, the portfolio, the banner.
    assert "Exception plan for ALPHA" not in sponsor.get("/waiting/").content.decode()
    assert not Notification.objects.filter(kind="project_exception", read_at=None).exists()
    rows = client_for(cast.pmo).get("/api/v1/portfolio").json()["items"]
    row = next(r for r in rows if r["projectKey"] == "ALPHA")
    assert row["inException"] is False and row["exceptionAgeDays"] is None
    filtered = client_for(cast.pmo).get("/api/v1/portfolio?exception=1").json()["items"]
    assert [r["projectKey"] for r in filtered] == []
    assert "In exception</span>" not in client_for(cast.pmo).get("/portfolio/").content.decode()
    assert "In exception since" not in sponsor.get("/projects/ALPHA/status/").content.decode()
    # The exception page: not in exception, no decision buttons, the settlement in history.
    page = sponsor.get("/projects/ALPHA/status/exception/").content.decode()
    assert "This project is not in exception." in page
    assert "Accept the exception plan" not in page and "Kill the project" not in page
    assert f"Settled by the business case&#x27;s {LABELS[act]} act" in page
    # The exception API answers it settled; a decision finds no open exception (404).
    answer = client.get("/api/v1/projects/ALPHA/exception", **bearer(cast.viewer)).json()
    assert answer["inException"] is False and answer["exception"] is None
    history = client.get("/api/v1/projects/ALPHA/exceptions", **bearer(cast.viewer)).json()
    assert history["items"][0]["state"] == "Settled"
    assert history["items"][0]["settledByAct"] == act
    refused = client.post(
        "/api/v1/projects/ALPHA/exception/decision",
        data=json.dumps({"decision": "AcceptPlan"}),
        content_type="application/json",
        **bearer(cast.sponsor),
    )
    assert refused.status_code == 404
    # The assistant's exception action says the same.
    read = agent(client_for, cast.viewer, "project_exception", {"projectKey": "ALPHA"})
    assert read.status_code == 200, read.content
    body = read.json()
    body = body.get("result", body)
    assert body["inException"] is False and body["exception"] is None
    decided = agent(
        client_for,
        cast.sponsor,
        "decide_project_exception",
        {"projectKey": "ALPHA", "decision": "Kill", "comment": "Again."},
    )
    assert decided.status_code == 404
    # Nothing opens it again: the case no longer runs against its plan.
    exceptions.check_all(timezone.now())
    assert not ProjectException.objects.filter(state__in=["Open", "Reported"]).exists()


def test_the_sponsors_kill_decision_is_decided_not_settled_again(cast, arrange, as_, wp):
    reported_exception(cast, arrange, as_, wp)
    record = exceptions.exception_decide(
        caller=as_(cast.sponsor), data={"decision": "Kill", "comment": "No longer viable."}
    )
    record.refresh_from_db()
    assert record.state == "Decided" and record.decision == "Kill"
    assert record.settled_by_act == ""
    assert [e["kind"] for e in record.events][-1] == "decided"
    assert not AuditEntry.objects.filter(kind="exception.settled").exists()
    case = BusinessCase.objects.get(project=cast.project)
    assert case.approval_status == "Archived" and case.terminal_disposition == "killed"
    change = ChangeRequest.objects.get(pk=record.change_request_id)
    assert change.status == "Withdrawn"


def test_an_end_without_an_exception_settles_nothing(cast, arrange, as_, wp, client, bearer):
    arrange("Submitted")
    charter_approve(caller=as_(cast.sponsor), data={"toleranceDays": 10})
    response = client.post(
        "/api/v1/projects/ALPHA/charter/kill",
        data=json.dumps({"reason": "Stop."}),
        content_type="application/json",
        **bearer(cast.sponsor),
    )
    assert response.status_code == 200, response.content
    assert not ProjectException.objects.exists()
    assert not AuditEntry.objects.filter(kind="exception.settled").exists()


def test_the_migration_settles_the_exceptions_of_projects_already_ended(cast, arrange, as_):
    """Exceptions left open by Kill, Archive or Close taken before ends settled them: the
    migration settles each one naming the act, withdraws its plan's change and clears the
    project's flag; a project still running keeps its exception."""
    import importlib

    from django.apps import apps

    migration = importlib.import_module("status.migrations.0005_exception_settled")
    arrange("Approved")
    change = change_create(caller=as_(cast.lead), data={"summary": "Exception plan for ALPHA"})
    arrange(
        "Archived",
        terminal_disposition="killed",
        archived_at=timezone.now(),
        archived_by_account_id=cast.sponsor.account_id,
        archive_reason="Stopped.",
    )
    record = ProjectException.objects.create(
        project=cast.project,
        opened_at=timezone.now() - dt.timedelta(days=40),
        state="Reported",
        change_request=change,
    )
    Project.objects.filter(pk=cast.project.pk).update(exception_opened_at=record.opened_at)
    migration.settle_ended(apps, None)
    record.refresh_from_db()
    assert (record.state, record.settled_by_act) == ("Settled", "kill")
    assert record.settled_by_account_id == cast.sponsor.account_id
    assert "Kill act" in record.events[-1]["text"]
    change.refresh_from_db()
    assert change.status == "Withdrawn" and "killed" in change.decision_comment
    assert Project.objects.get(pk=cast.project.pk).exception_opened_at is None
    assert AuditEntry.objects.filter(kind="exception.settled").count() == 1
    # Run again: nothing more to settle.
    migration.settle_ended(apps, None)
    assert AuditEntry.objects.filter(kind="exception.settled").count() == 1
