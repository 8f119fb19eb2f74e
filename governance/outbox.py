"""Durable outbound calls. A service enqueues a task inside its own transaction, so the task
exists exactly when the change does; it runs only after commit: right away in the web process
when OUTBOX_RUN_ON_COMMIT is on, and in any case by the worker (`manage.py outbox_worker`),
which retries failures with exponential back-off and recovers tasks whose worker died (an
expired lease). Handlers must be idempotent: a task may run more than once."""

import datetime as dt
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from governance.models import OutboundTask

logger = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], None]
_HANDLERS: dict[str, Handler] = {}
# What people see for each kind of task (`handler(name, label)`).
TASK_LABELS: dict[str, str] = {}


def handler(name: str, label: str = "") -> Callable[[Handler], Handler]:
    """Register the function that performs tasks called `name`, and what people see for the
    task (the failed-calls page; the code stays in the database and the audit)."""

    def register(func: Handler) -> Handler:
        _HANDLERS[name] = func
        if label:
            TASK_LABELS[name] = label
        return func

    return register


def enqueue(name: str, payload: dict[str, Any] | None = None) -> OutboundTask:
    """Queue an outbound call. Call inside the transaction of the change that needs it."""
    if name not in _HANDLERS:
        raise LookupError(f"No outbox handler named {name!r}.")
    task = OutboundTask.objects.create(name=name, payload=payload or {})
    if settings.OUTBOX_RUN_ON_COMMIT:
        transaction.on_commit(_wake(task.pk))
    return task


def enqueue_many(name: str, payloads: list[dict[str, Any]]) -> list[OutboundTask]:
    """`enqueue` for many calls of one handler, in multi-row statements."""
    if name not in _HANDLERS:
        raise LookupError(f"No outbox handler named {name!r}.")
    tasks = OutboundTask.objects.bulk_create(
        [OutboundTask(name=name, payload=payload or {}) for payload in payloads], batch_size=500
    )
    if settings.OUTBOX_RUN_ON_COMMIT:
        for task in tasks:
            transaction.on_commit(_wake(task.pk))
    return tasks


def _wake(task_id: uuid.UUID) -> Callable[[], None]:
    """The after-commit try of a task in the web process. Its failure (the tracker, the
    database going away) is logged and left to the worker: the write it follows is stored and
    is answered as stored."""

    def run_after_commit() -> None:
        try:
            run_task(task_id)
        except Exception:
            logger.warning("outbox task %s: the after-commit try failed", task_id, exc_info=True)

    return run_after_commit


def backoff(attempts: int) -> dt.timedelta:
    """30 s, 1 min, 2 min, ... capped at one hour."""
    return dt.timedelta(
        seconds=min(settings.OUTBOX_BACKOFF_SECONDS * 2 ** max(attempts - 1, 0), 3600)
    )


def _claim(task_id: uuid.UUID) -> bool:
    now = timezone.now()
    lease = now + dt.timedelta(seconds=settings.OUTBOX_LEASE_SECONDS)
    claimed = (
        OutboundTask.objects.filter(pk=task_id)
        .filter(_due(now))
        .update(state=OutboundTask.State.RUNNING, locked_until=lease, attempts=F("attempts") + 1)
    )
    return claimed == 1


def _due(now: dt.datetime) -> Q:
    return Q(state=OutboundTask.State.PENDING, run_after__lte=now) | Q(
        state=OutboundTask.State.RUNNING, locked_until__lt=now
    )


def run_task(task_id: uuid.UUID) -> bool:
    """Claim and run one task if it is due. Returns True when it ran and succeeded."""
    if not _claim(task_id):
        return False
    task = OutboundTask.objects.get(pk=task_id)
    func = _HANDLERS.get(task.name)
    try:
        if func is None:
            raise LookupError(f"No outbox handler named {task.name!r}.")
        func(task.payload)
    except Exception as exc:
        # A rate limit is no failure of the task: held until Retry-After (any length) has
        # passed, without spending an attempt.
        wait = getattr(exc, "retry_after", None)
        dead = wait is None and task.attempts >= settings.OUTBOX_MAX_ATTEMPTS
        OutboundTask.objects.filter(pk=task.pk).update(
            state=OutboundTask.State.DEAD if dead else OutboundTask.State.PENDING,
            attempts=F("attempts") - (1 if wait is not None else 0),
            run_after=timezone.now()
            + (dt.timedelta(seconds=wait) if wait is not None else backoff(task.attempts)),
            locked_until=None,
            last_error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=timezone.now() if dead else None,
        )
        logger.warning(
            "outbox task %s (%s) failed, attempt %s: %s", task.pk, task.name, task.attempts, exc
        )
        return False
    OutboundTask.objects.filter(pk=task.pk).update(
        state=OutboundTask.State.DONE, locked_until=None, finished_at=timezone.now(), last_error=""
    )
    return True


def due_task_ids(limit: int = 50) -> list[Any]:
    now = timezone.now()
    tasks = OutboundTask.objects.filter(_due(now)).order_by("run_after", "created_at")
    if connection.features.has_select_for_update_skip_locked:
        with transaction.atomic():
            return list(
                tasks.select_for_update(skip_locked=True).values_list("pk", flat=True)[:limit]
            )
    return list(tasks.values_list("pk", flat=True)[:limit])


def run_due(limit: int = 50) -> tuple[int, int]:
    """Run every due task once. Returns (succeeded, failed)."""
    ok = failed = 0
    for task_id in due_task_ids(limit):
        if run_task(task_id):
            ok += 1
        else:
            failed += 1
    return ok, failed


def work(*, poll_seconds: float = 2.0, once: bool = False) -> None:
    while True:
        ok, failed = run_due()
        if ok or failed:
            logger.info("outbox: %s done, %s failed", ok, failed)
        if once:
            return
        if not ok and not failed:
            time.sleep(poll_seconds)


def task_label(name: str) -> str:
    return TASK_LABELS.get(name, name.rsplit(".", 1)[-1].replace("_", " ").capitalize())


def failing_tasks(limit: int = 200) -> list[OutboundTask]:
    """Dead tasks first, then tasks still being retried after a failure, newest first."""
    dead = OutboundTask.objects.filter(state=OutboundTask.State.DEAD).order_by("-finished_at")
    # Held by a rate limit without spending an attempt: listed too, with the limit headers.
    retrying = (
        OutboundTask.objects.filter(state=OutboundTask.State.PENDING)
        .filter(Q(attempts__gt=0) | ~Q(last_error=""))
        .order_by("-created_at")
    )
    return [*dead[:limit], *retrying[:limit]]


def retry(task_id: uuid.UUID, *, actor_account_id: str) -> OutboundTask:
    """A site admin sends a dead (or waiting) task back to the queue, due now, with a fresh
    allowance of attempts. Audited. Running or finished tasks are left alone."""
    from governance import audit
    from governance.errors import Conflict, NotFound

    with transaction.atomic():
        task = OutboundTask.objects.select_for_update().filter(pk=task_id).first()
        if task is None:
            raise NotFound()
        if task.state not in (OutboundTask.State.DEAD, OutboundTask.State.PENDING):
            raise Conflict("This task is running or already done.")
        before = {"state": task.state, "attempts": task.attempts}
        task.state = OutboundTask.State.PENDING
        task.attempts = 0
        task.run_after = timezone.now()
        task.locked_until = None
        task.finished_at = None
        task.save(update_fields=["state", "attempts", "run_after", "locked_until", "finished_at"])
        audit.record(
            actor_account_id=actor_account_id,
            kind="outbox.retried",
            target_type="outbound_task",
            target_id=task.pk,
            changes=audit.diff(before, {"state": task.state, "attempts": 0}),
        )
    if settings.OUTBOX_RUN_ON_COMMIT:
        transaction.on_commit(_wake(task.pk))
    return task
