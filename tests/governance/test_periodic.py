"""`manage.py runperiodic` runs each scheduled job once per its period however often it is
called, records the run, retries a failed job, and two runs at once run a job once (the job's
row is the lock; the concurrent case needs PostgreSQL's row locks)."""

import datetime as dt
import io
import threading

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

from governance import periodic
from governance.models import Notification, PeriodicJob
from status.models import ProjectStatus

MONDAY = dt.datetime(2026, 11, 23, 0, 1, tzinfo=dt.UTC)


@pytest.fixture
def counting(monkeypatch):
    """A daily and a weekly job that count their runs (the registry restored afterwards)."""
    runs = {"daily": [], "weekly": []}
    monkeypatch.setattr(periodic, "_JOBS", {})
    periodic.register("test_daily", every=dt.timedelta(days=1))(runs["daily"].append)
    periodic.register("test_weekly", every=dt.timedelta(weeks=1))(runs["weekly"].append)
    monkeypatch.setattr(periodic, "autodiscover_modules", lambda name: None)
    return runs


def test_calling_every_five_minutes_runs_a_daily_job_once_a_day(db, counting):
    moment = MONDAY
    while moment < MONDAY + dt.timedelta(days=3):
        periodic.run_due(moment)
        moment += dt.timedelta(minutes=5)
    assert [run.date() for run in counting["daily"]] == [
        dt.date(2026, 11, 23),
        dt.date(2026, 11, 24),
        dt.date(2026, 11, 25),
    ]
    assert counting["weekly"] == [MONDAY]


def test_a_weekly_job_runs_once_per_iso_week(db, counting):
    for days in range(0, 15):
        periodic.run_due(MONDAY + dt.timedelta(days=days, hours=9))
    assert [run.isocalendar().week for run in counting["weekly"]] == [48, 49, 50]


def test_due_and_not_due(db, counting):
    outcomes = {o.name: o.state for o in periodic.run_due(MONDAY)}
    assert outcomes == {"test_daily": "ran", "test_weekly": "ran"}
    later = {o.name: o.state for o in periodic.run_due(MONDAY + dt.timedelta(hours=23))}
    assert later == {"test_daily": "not due", "test_weekly": "not due"}
    next_day = {o.name: o.state for o in periodic.run_due(MONDAY + dt.timedelta(days=1))}
    assert next_day == {"test_daily": "ran", "test_weekly": "not due"}
    assert PeriodicJob.objects.get(name="test_daily").last_run_at == MONDAY + dt.timedelta(days=1)


def test_the_day_is_the_sites_calendar_day(db, counting, settings):
    settings.TIME_ZONE = "Europe/Berlin"
    periodic.run_due(dt.datetime(2026, 11, 23, 22, 30, tzinfo=dt.UTC))  # 23:30 in Berlin
    periodic.run_due(dt.datetime(2026, 11, 23, 23, 30, tzinfo=dt.UTC))  # 00:30 the next day
    assert len(counting["daily"]) == 2


def test_a_failed_job_is_recorded_and_tried_again(db, monkeypatch):
    monkeypatch.setattr(periodic, "_JOBS", {})
    monkeypatch.setattr(periodic, "autodiscover_modules", lambda name: None)
    calls = []

    def flaky(now):
        calls.append(now)
        if len(calls) == 1:
            raise RuntimeError("mail server down")
        return "fine"

    periodic.register("flaky", every=dt.timedelta(days=1))(flaky)
    with pytest.raises(CommandError, match="flaky"):
        call_command("runperiodic", stdout=io.StringIO())
    row = PeriodicJob.objects.get(name="flaky")
    assert row.last_run_at is None and row.last_error == "RuntimeError: mail server down"
    out = io.StringIO()
    call_command("runperiodic", stdout=out)
    assert out.getvalue() == "flaky: ran (fine)\n"
    row.refresh_from_db()
    assert row.last_run_at is not None and row.last_error == ""


def test_runperiodic_sends_stale_reminders_and_digests_once(
    cast, django_capture_on_commit_callbacks
):
    ProjectStatus.objects.update_or_create(
        project=cast.project,
        defaults={
            "reporting_cadence": "Weekly",
            "last_updated_at": timezone.now() - dt.timedelta(days=10),
        },
    )
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("runperiodic", stdout=out)
        call_command("runperiodic", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[:8] == [
        "exception_check: ran (0)",
        "form_submissions: ran (0 form tokens removed)",
        "health_refresh: ran (1)",
        "jira_webhooks: ran (not Jira)",
        "oauth_registrations: ran (0 unused registrations removed)",
        "project_mirrors: ran (2 projects read from the tracker)",
        "stale_status_reminders: ran (1)",
        "weekly_digests: ran (0)",
    ]
    assert lines[8:] == [
        "exception_check: not due",
        "form_submissions: not due",
        "health_refresh: not due",
        "jira_webhooks: not due",
        "oauth_registrations: not due",
        "project_mirrors: not due",
        "stale_status_reminders: not due",
        "weekly_digests: not due",
    ]
    assert Notification.objects.filter(kind="status_stale").count() == 1
    # send_reminders still works on demand, and tells nobody twice.
    call_command("send_reminders", stdout=out)
    assert Notification.objects.filter(kind="status_stale").count() == 1


def test_a_job_is_idempotent_when_its_record_is_lost(cast, django_capture_on_commit_callbacks):
    ProjectStatus.objects.update_or_create(
        project=cast.project,
        defaults={"reporting_cadence": "Weekly", "last_updated_at": None},
    )
    with django_capture_on_commit_callbacks(execute=True):
        periodic.run_due()
        PeriodicJob.objects.all().delete()  # as if the run crashed before recording
        periodic.run_due()
    assert Notification.objects.filter(kind="status_stale").count() == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_run_a_job_once(monkeypatch):
    monkeypatch.setattr(periodic, "_JOBS", {})
    monkeypatch.setattr(periodic, "autodiscover_modules", lambda name: None)
    started, release = threading.Event(), threading.Event()
    runs = []

    def slow(now):
        runs.append(now)
        started.set()
        assert release.wait(timeout=60)

    periodic.register("slow", every=dt.timedelta(days=1))(slow)
    first = []

    def run_first():
        try:
            first.extend(periodic.run_due(MONDAY))
        finally:
            connection.close()

    thread = threading.Thread(target=run_first)
    thread.start()
    assert started.wait(timeout=60)
    second = periodic.run_due(MONDAY)  # another connection, while the first holds the job
    release.set()
    thread.join()
    assert [o.state for o in second] == ["busy"]
    assert [o.state for o in first] == ["ran"]
    assert len(runs) == 1
    assert [o.state for o in periodic.run_due(MONDAY)] == ["not due"]


def test_form_tokens_are_forgotten_after_two_days(db):
    from governance import submissions
    from governance.models import FormSubmission

    now = timezone.now()
    old = FormSubmission.objects.create(token="a" * 24, account_id="acc", kind="risk")
    FormSubmission.objects.filter(pk=old.pk).update(created_at=now - dt.timedelta(days=3))
    FormSubmission.objects.create(token="b" * 24, account_id="acc", kind="risk")
    assert submissions.forget_old_submissions(now) == "1 form tokens removed"
    assert list(FormSubmission.objects.values_list("token", flat=True)) == ["b" * 24]
