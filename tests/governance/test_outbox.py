"""Outbound calls: queued in the change's transaction, run after commit, retried with
back-off, dead after the last attempt, recovered after a worker dies."""

import datetime as dt

import pytest
from django.db import transaction
from django.utils import timezone

from governance import outbox
from governance.models import OutboundTask

CALLS: list[dict] = []
FAIL = {"times": 0}


@outbox.handler("test.echo")
def _echo(payload):
    if FAIL["times"] > 0:
        FAIL["times"] -= 1
        raise ConnectionError("tracker down")
    CALLS.append(payload)


@pytest.fixture(autouse=True)
def _reset():
    CALLS.clear()
    FAIL["times"] = 0


def test_task_runs_only_after_commit(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        outbox.enqueue("test.echo", {"n": 1})
        assert CALLS == []
    assert CALLS == [{"n": 1}]
    assert OutboundTask.objects.get().state == "done"


def test_rolled_back_change_leaves_no_task(db):
    with pytest.raises(RuntimeError), transaction.atomic():
        outbox.enqueue("test.echo", {"n": 1})
        raise RuntimeError("the write failed")
    assert not OutboundTask.objects.exists()


def test_unknown_task_name_is_refused(db):
    with pytest.raises(LookupError):
        outbox.enqueue("test.nothing")


def test_failure_is_retried_with_backoff_then_succeeds(db, settings):
    settings.OUTBOX_RUN_ON_COMMIT = False
    FAIL["times"] = 2
    task = outbox.enqueue("test.echo", {"n": 2})
    assert outbox.run_task(task.pk) is False
    task.refresh_from_db()
    assert task.state == "pending" and task.attempts == 1 and "tracker down" in task.last_error
    assert task.run_after > timezone.now() + dt.timedelta(seconds=20)
    assert outbox.run_due() == (0, 0)  # not due yet
    OutboundTask.objects.filter(pk=task.pk).update(run_after=timezone.now())
    assert outbox.run_due() == (0, 1)
    OutboundTask.objects.filter(pk=task.pk).update(run_after=timezone.now())
    assert outbox.run_due() == (1, 0)
    task.refresh_from_db()
    assert task.state == "done" and task.attempts == 3 and CALLS == [{"n": 2}]


def test_task_is_dead_after_the_last_attempt(db, settings):
    settings.OUTBOX_RUN_ON_COMMIT = False
    settings.OUTBOX_MAX_ATTEMPTS = 2
    FAIL["times"] = 5
    task = outbox.enqueue("test.echo", {})
    outbox.run_task(task.pk)
    OutboundTask.objects.filter(pk=task.pk).update(run_after=timezone.now())
    outbox.run_task(task.pk)
    task.refresh_from_db()
    assert task.state == "dead" and task.attempts == 2


def test_task_of_a_dead_worker_is_recovered_after_its_lease(db, settings):
    settings.OUTBOX_RUN_ON_COMMIT = False
    task = outbox.enqueue("test.echo", {"n": 3})
    OutboundTask.objects.filter(pk=task.pk).update(
        state="running", locked_until=timezone.now() + dt.timedelta(minutes=5)
    )
    assert outbox.run_due() == (0, 0)  # still leased
    OutboundTask.objects.filter(pk=task.pk).update(
        locked_until=timezone.now() - dt.timedelta(seconds=1)
    )
    assert outbox.run_due() == (1, 0)
    assert CALLS == [{"n": 3}]


def test_backoff_doubles_and_is_capped(settings):
    settings.OUTBOX_BACKOFF_SECONDS = 30
    assert [outbox.backoff(n).total_seconds() for n in (1, 2, 3)] == [30, 60, 120]
    assert outbox.backoff(20).total_seconds() == 3600
