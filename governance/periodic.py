"""Jobs that run on a schedule, not on anyone's action. `manage.py runperiodic`, called every
few minutes by cron, a systemd timer or a Kubernetes CronJob, runs each job that is due.

An app registers its jobs in its `periodic` module (found like the admin's modules) with
`register(name, every=...)`. A job runs once per slot of `every` in the site's time zone (a
day is a calendar day; a week is an ISO week, Monday to Sunday), so calling the command every
five minutes runs a daily job once a day. Each job's `PeriodicJob` row is its lock: a run
holds it (SELECT ... FOR UPDATE SKIP LOCKED) while the job works, and a concurrent run skips
the job instead of running it twice; the row records the last run. A job that fails is
logged, its error kept on the row, and it is tried again on the next call. Jobs must be
idempotent anyway (a crash after the work but before the record runs it again)."""

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import autodiscover_modules

from governance.models import PeriodicJob

logger = logging.getLogger("governance.periodic")

# A Monday at midnight: slots of a week are ISO weeks, slots of a day are calendar days.
EPOCH = dt.datetime(2001, 1, 1)
MAX_ERROR = 2000


@dataclass(frozen=True)
class Job:
    name: str
    every: dt.timedelta
    run: Callable[[dt.datetime], Any]  # called with the run's time; returns a summary


@dataclass(frozen=True)
class Outcome:
    name: str
    state: str  # "ran", "not due", "busy" (another run holds it), "failed"
    detail: Any = None


_JOBS: dict[str, Job] = {}
_Run = TypeVar("_Run", bound=Callable[[dt.datetime], Any])


def register(name: str, *, every: dt.timedelta) -> Callable[[_Run], _Run]:
    """Register `function(now)` as the periodic job `name`, run once per `every`."""

    def decorate(function: _Run) -> _Run:
        _JOBS[name] = Job(name, every, function)
        return function

    return decorate


def jobs() -> list[Job]:
    autodiscover_modules("periodic")
    return sorted(_JOBS.values(), key=lambda job: job.name)


def slot(moment: dt.datetime, every: dt.timedelta) -> int:
    """The number of the `every`-long slot `moment` falls in, counted in local time."""
    return (timezone.localtime(moment).replace(tzinfo=None) - EPOCH) // every


def is_due(job: Job, last_run_at: dt.datetime | None, now: dt.datetime) -> bool:
    return last_run_at is None or slot(last_run_at, job.every) < slot(now, job.every)


def run_job(job: Job, now: dt.datetime | None = None) -> Outcome:
    """Run `job` if it is due and no other run holds it; record the run."""
    now = now or timezone.now()
    PeriodicJob.objects.get_or_create(name=job.name)
    with transaction.atomic():
        row = PeriodicJob.objects.select_for_update(skip_locked=True).filter(name=job.name)
        record = row.first()
        if record is None:
            return Outcome(job.name, "busy")
        if not is_due(job, record.last_run_at, now):
            return Outcome(job.name, "not due")
        try:
            with transaction.atomic():
                detail = job.run(now)
        except Exception as error:
            logger.exception("periodic job %s failed", job.name)
            record.last_error = f"{type(error).__name__}: {error}"[:MAX_ERROR]
            record.last_failed_at = timezone.now()
            record.save(update_fields=["last_error", "last_failed_at"])
            return Outcome(job.name, "failed", record.last_error)
        record.last_run_at = now
        record.last_finished_at = timezone.now()
        record.last_error = ""
        record.save(update_fields=["last_run_at", "last_finished_at", "last_error"])
    return Outcome(job.name, "ran", detail)


def run_due(now: dt.datetime | None = None) -> list[Outcome]:
    """Run every registered job that is due (each in its own transaction)."""
    now = now or timezone.now()
    return [run_job(job, now) for job in jobs()]
