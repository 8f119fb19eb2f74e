"""Write-back through the outbox against the Jira stand-in: Jira down for a while then up,
every issue ends showing the register's current value, nothing lost; a task whose worker
died comes back through its lease; dead tasks on the site admins' page with a retry."""

import datetime as dt

import pytest
from django.utils import timezone

from governance import outbox
from governance.models import AuditEntry, OutboundTask
from governance.permissions import caller_for
from governance.tracker.local import scripting
from governance.tracker.local.models import LocalIssue
from registers.services import (
    work_package_create,
    work_package_delete,
    work_package_link_issue,
    work_package_unlink_issue,
    work_package_update,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(cast, settings, fake_jira):
    for person in (cast.lead, cast.site_admin):
        fake_jira.grant(person)
    for n in range(1, 6):
        scripting.ensure_issue(f"ALPHA-{n}", summary=f"Epic {n}")
    settings.ATLASSIAN_RETRIES = 0
    return cast


def due_now():
    OutboundTask.objects.filter(state="pending").update(run_after=timezone.now())


def values() -> dict:
    return dict(LocalIssue.objects.values_list("key", "work_package"))


def test_jira_down_then_up_delivers_every_write_back_once_in_effect(
    world, fake_jira, settings, django_capture_on_commit_callbacks
):
    lead = caller_for(world.lead, world.project)
    # Linking asks Jira whether the issues exist: that happens first, while it answers; the
    # write-backs it queues have not run yet when Jira goes down.
    settings.OUTBOX_RUN_ON_COMMIT = False
    build = work_package_create(
        caller=lead, data={"name": "Build", "linkedIssueKeys": ["ALPHA-1", "ALPHA-2"]}
    )
    work_package_link_issue(caller=lead, wp_id=build.pk, issue_key="ALPHA-3")
    gone = work_package_create(
        caller=lead, data={"name": "Dropped", "linkedIssueKeys": ["ALPHA-4"]}
    )
    settings.OUTBOX_RUN_ON_COMMIT = True
    fake_jira.down = True
    with django_capture_on_commit_callbacks(execute=True):
        work_package_update(caller=lead, wp_id=build.pk, data={"name": "Build phase"})
    with django_capture_on_commit_callbacks(execute=True):
        work_package_unlink_issue(caller=lead, wp_id=build.pk, issue_key="ALPHA-1")
    with django_capture_on_commit_callbacks(execute=True):
        work_package_delete(caller=lead, wp_id=gone.pk)
    due_now()
    outbox.run_due()
    # Every register write stood; nothing reached Jira; every task waits for a retry.
    assert fake_jira.edits == []
    tasks = OutboundTask.objects.all()
    assert tasks.count() >= 4 and {t.state for t in tasks} == {"pending"}
    assert all("503" in t.last_error for t in tasks)

    due_now()
    assert outbox.run_due() == (0, tasks.count())  # the worker, while Jira is still down

    fake_jira.down = False
    due_now()
    ok, failed = outbox.run_due()
    assert failed == 0 and ok == tasks.count()
    assert set(OutboundTask.objects.values_list("state", flat=True)) == {"done"}
    assert {
        k: v for k, v in values().items() if k in {"ALPHA-1", "ALPHA-2", "ALPHA-3", "ALPHA-4"}
    } == {
        "ALPHA-1": None,
        "ALPHA-2": "Build phase",
        "ALPHA-3": "Build phase",
        "ALPHA-4": None,
    }
    # In effect once: each issue's last write is the register's value; no stale name won.
    last = {}
    for key, value in fake_jira.edits:
        last[key] = value
    assert last == {
        "ALPHA-1": None,
        "ALPHA-2": "Build phase",
        "ALPHA-3": "Build phase",
        "ALPHA-4": None,
    }
    assert "Build" not in last.values()
    # The field and its context were made once.
    assert fake_jira.field["created"] and len(fake_jira.field["contexts"]) == 1


def test_a_worker_killed_mid_task_is_recovered_through_the_lease(world, fake_jira, settings):
    lead = caller_for(world.lead, world.project)
    settings.OUTBOX_RUN_ON_COMMIT = False
    work_package_create(caller=lead, data={"name": "Build", "linkedIssueKeys": ["ALPHA-5"]})
    task = OutboundTask.objects.get()
    # A worker claimed it and died: running, with a lease that has now expired.
    OutboundTask.objects.filter(pk=task.pk).update(
        state="running", attempts=1, locked_until=timezone.now() - dt.timedelta(seconds=1)
    )
    assert outbox.run_due() == (1, 0)
    assert LocalIssue.objects.get(key="ALPHA-5").work_package == "Build"
    assert OutboundTask.objects.get().state == "done"


def test_a_live_lease_is_not_taken_over(world, fake_jira, settings):
    settings.OUTBOX_RUN_ON_COMMIT = False
    lead = caller_for(world.lead, world.project)
    work_package_create(caller=lead, data={"name": "Build", "linkedIssueKeys": ["ALPHA-5"]})
    OutboundTask.objects.update(
        state="running", attempts=1, locked_until=timezone.now() + dt.timedelta(minutes=5)
    )
    assert outbox.run_due() == (0, 0)


def test_dead_tasks_are_listed_for_site_admins_with_their_error_and_retried(
    world, fake_jira, settings, client_for, django_capture_on_commit_callbacks
):
    settings.OUTBOX_MAX_ATTEMPTS = 1
    settings.OUTBOX_RUN_ON_COMMIT = False
    lead = caller_for(world.lead, world.project)
    work_package_create(caller=lead, data={"name": "Build", "linkedIssueKeys": ["ALPHA-1"]})
    fake_jira.down = True
    due_now()
    outbox.run_due()
    task = OutboundTask.objects.get()
    assert task.state == "dead"

    assert client_for(world.lead).get("/outbox/").status_code == 403
    admin = client_for(world.site_admin)
    page = admin.get("/outbox/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Write the &#x27;Work Package&#x27; field on an issue" in text
    assert "Issue ALPHA-1" in text and "Stopped" in text and "HTTP 503" in text

    fake_jira.down = False
    settings.OUTBOX_RUN_ON_COMMIT = True
    with django_capture_on_commit_callbacks(execute=True):
        answer = admin.post(f"/outbox/{task.pk}/retry/")
    assert answer.status_code == 302
    assert OutboundTask.objects.get().state == "done"
    assert LocalIssue.objects.get(key="ALPHA-1").work_package == "Build"
    entry = AuditEntry.objects.get(kind="outbox.retried")
    assert entry.actor_account_id == world.site_admin.account_id
    assert "No failed calls" in admin.get("/outbox/").content.decode()


def test_the_failed_calls_page_costs_the_same_queries_for_many_tasks(
    cast, client_for, django_assert_max_num_queries
):
    OutboundTask.objects.bulk_create(
        OutboundTask(
            name="registers.work_package_field",
            state="dead" if n % 2 else "pending",
            attempts=3,
            last_error="TrackerError: down",
            payload={"issueKey": f"ALPHA-{n}"},
        )
        for n in range(60)
    )
    client = client_for(cast.site_admin)
    client.get("/outbox/")
    with django_assert_max_num_queries(12):
        page = client.get("/outbox/")
    assert page.content.decode().count("Retry now") == 60
