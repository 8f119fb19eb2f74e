"""Notifications: a message to one person, kept for the in-app list and e-mailed through the
outbox after commit (Django's mail backends: the console on a laptop, SMTP by setting).

One function makes them, `notify`; the services call it inside their own transaction. The
event's `dedupe_key` is unique, so an event that is reported twice (a retried task, a second
run of the reminders) makes no second notification and no second e-mail; the e-mail handler
sends only while `emailed_at` is empty. A person may turn any kind off: then nothing is made."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import connection, transaction
from django.utils import timezone

from governance import cleaning, outbox
from governance.models import (
    NOTIFICATION_KINDS,
    Notification,
    NotificationOptOut,
    Project,
    User,
)
from governance.scoped import holding

logger = logging.getLogger(__name__)

EMAIL_TASK = "notification.email"
# Notifications told inside `batched()`: made together when the block ends.
_BATCH: ContextVar[list[Notification] | None] = ContextVar("notification_batch", default=None)
BATCH_SIZE = 500


def opted_out(account_id: str, kind: str) -> bool:
    return NotificationOptOut.objects.filter(account_id=account_id, kind=kind).exists()


def notify(
    *,
    kind: str,
    recipient_account_id: str | None,
    dedupe_key: str,
    subject: str,
    body: str = "",
    url: str = "",
    project_key: str = "",
) -> Notification | None:
    """Tell one person of one event, once. None when there is nobody to tell, they turned
    this kind off, or the event was already told (and inside `batched()`, where it is
    made, or not, when the block ends)."""
    if kind not in NOTIFICATION_KINDS:
        raise LookupError(f"No notification kind {kind!r}.")
    if not recipient_account_id:
        return None
    queued = _BATCH.get()
    if queued is not None:
        queued.append(
            Notification(
                dedupe_key=dedupe_key[:255],
                recipient_account_id=recipient_account_id,
                kind=kind,
                project_key=project_key,
                subject=subject[:255],
                body=body,
                url=url[:500],
            )
        )
        return None
    if opted_out(recipient_account_id, kind):
        return None
    with transaction.atomic():
        note, created = Notification.objects.get_or_create(
            dedupe_key=dedupe_key[:255],
            defaults={
                "recipient_account_id": recipient_account_id,
                "kind": kind,
                "project_key": project_key,
                "subject": subject[:255],
                "body": body,
                "url": url[:500],
            },
        )
        if not created:
            return None
        outbox.enqueue(EMAIL_TASK, {"id": note.pk})
    return note


def notify_lead_and_sponsor(
    project: Project, *, kind: str, dedupe_key: str, subject: str, body: str, url: str
) -> None:
    """Tell the project's Lead and its sponsor of one event (once when they are one person):
    each one's dedupe key is `dedupe_key` and their accountId."""
    for account in {project.lead_account_id, project.sponsor_account_id} - {""}:
        notify(
            kind=kind,
            recipient_account_id=account,
            dedupe_key=f"{dedupe_key}:{account}",
            subject=subject,
            body=body,
            url=url,
            project_key=project.key,
        )


@contextmanager
def batched() -> Iterator[None]:
    """Make the notifications told inside the block in a few statements when it ends (an
    import of thousands of change requests tells a person of each): the opt-outs and the
    events already told are read once, the new notifications and their e-mail tasks are
    written in multi-row statements, with the same outcome as telling them one by one. Use
    it inside the writing transaction; a block that raises makes none."""
    queued: list[Notification] = []
    with holding(_BATCH, queued):
        yield
    if queued:
        _make(queued)


def _make(queued: list[Notification]) -> None:
    people = {note.recipient_account_id for note in queued}
    out = set(
        NotificationOptOut.objects.filter(account_id__in=people).values_list("account_id", "kind")
    )
    keys = [note.dedupe_key for note in queued]
    told: set[str] = set()
    for start in range(0, len(keys), BATCH_SIZE):
        chunk = keys[start : start + BATCH_SIZE]
        found = Notification.objects.filter(dedupe_key__in=chunk).values_list("dedupe_key")
        told.update(key for (key,) in found)
    fresh = []
    for note in queued:
        if (note.recipient_account_id, note.kind) in out or note.dedupe_key in told:
            continue
        told.add(note.dedupe_key)
        fresh.append(note)
    Notification.objects.bulk_create(fresh, batch_size=BATCH_SIZE)
    # One resolved before the batch ended (its act done in the same block) is not e-mailed.
    outbox.enqueue_many(EMAIL_TASK, [{"id": note.pk} for note in fresh if note.read_at is None])


@outbox.handler(EMAIL_TASK)
def send_notification_email(payload: dict[str, Any]) -> None:
    """Send the notification's e-mail unless it was sent already, it was resolved or read
    since, the person has no address, or they turned the kind off since."""
    note_id = payload.get("id")
    if note_id is None:
        return
    # One resolved (read) since it was queued is not e-mailed: its act is done.
    note = Notification.objects.filter(
        pk=note_id, emailed_at__isnull=True, read_at__isnull=True
    ).first()
    if note is None or opted_out(note.recipient_account_id, note.kind):
        return
    address = (
        User.objects.filter(account_id=note.recipient_account_id, is_active=True)
        .exclude(email="")
        .values_list("email", flat=True)
        .first()
    )
    if not address:
        return
    link = f"{settings.SITE_URL.rstrip('/')}{note.url}" if note.url else ""
    text = "\n\n".join(part for part in (note.body, link) if part)
    # Mark first, inside a row claim: a second run of the same task finds it sent.
    claimed = Notification.objects.filter(pk=note.pk, emailed_at__isnull=True).update(
        emailed_at=timezone.now()
    )
    if not claimed:
        return
    try:
        send_mail(note.subject, text, settings.DEFAULT_FROM_EMAIL, [address])
    except Exception:
        Notification.objects.filter(pk=note.pk).update(emailed_at=None)  # retried by the outbox
        raise


def unread_count(account_id: str) -> int:
    """The menu's count, on every page: the statement written once per process (building
    and compiling the ORM's COUNT cost three times running it)."""
    with connection.cursor() as cursor:
        cursor.execute(_unread_statement(connection.vendor), [account_id])
        row = cursor.fetchone()
        return int(row[0]) if row else 0


@cache
def _unread_statement(vendor: str) -> str:
    """`Notification.objects.filter(recipient_account_id=..., read_at=None).count()`."""
    query = Notification.objects.filter(recipient_account_id="", read_at=None).order_by()
    sql, params = query.values("pk").query.get_compiler(connection=connection).as_sql()
    assert list(params) == [""], params
    return f"SELECT COUNT(*) FROM ({sql}) AS unread"


def mark_read(account_id: str, ids: list[Any] | None = None) -> int:
    """Mark this person's notifications read (these ids, or all)."""
    rows = Notification.objects.filter(recipient_account_id=account_id, read_at=None)
    if ids is not None:
        rows = rows.filter(pk__in=[n for n in map(cleaning.whole_number, ids) if n is not None])
    return rows.update(read_at=timezone.now())


def resolve(dedupe_prefix: str, *, at: Any = None) -> int:
    """The act the notifications of one event ask for is done (the case or the change
    decided, the exception decided or answered): mark those still unread read, so the bell
    counts only what is still open. Called by the service that does the act, inside its
    transaction (its audit entry records the act). Returns how many."""
    at = at or timezone.now()
    queued = _BATCH.get() or []
    waiting = [n for n in queued if n.dedupe_key.startswith(dedupe_prefix) and n.read_at is None]
    for note in waiting:  # told in this batch, made when it ends: made resolved
        note.read_at = at
    stored = Notification.objects.filter(dedupe_key__startswith=dedupe_prefix, read_at=None)
    return stored.update(read_at=at) + len(waiting)


def reopen(dedupe_keys: list[str], *, resolved_since: Any) -> int:
    """Open again the notifications of these events marked read since `resolved_since` (the
    moment an act made them moot, e.g. the registers froze): the act was undone, so what they
    ask for is open again and the bell counts them. Returns how many."""
    if not dedupe_keys:
        return 0
    stored = Notification.objects.filter(dedupe_key__in=dedupe_keys, read_at__gte=resolved_since)
    return stored.update(read_at=None)


def resolve_project(kind: str, project_key: str, *, at: Any = None) -> int:
    """Resolve every unread notification of this kind about one project (its registers froze:
    no change routed to anyone can be decided any more)."""
    at = at or timezone.now()
    queued = _BATCH.get() or []
    waiting = [
        n for n in queued if n.kind == kind and n.project_key == project_key and n.read_at is None
    ]
    for note in waiting:
        note.read_at = at
    stored = Notification.objects.filter(kind=kind, project_key=project_key, read_at=None)
    return stored.update(read_at=at) + len(waiting)


def set_opt_outs(account_id: str, off: set[str]) -> None:
    """The kinds this person turned off, replacing the previous choice."""
    off = {k for k in off if k in NOTIFICATION_KINDS}
    with transaction.atomic():
        NotificationOptOut.objects.filter(account_id=account_id).exclude(kind__in=off).delete()
        for kind in off:
            NotificationOptOut.objects.get_or_create(account_id=account_id, kind=kind)
