"""Notifications whose act is already done: the sweep for those made before the services
resolved them as they acted (`governance.notifications.resolve`, called by the business-case
acts, the change decision and the exception decision). A case no longer Submitted (or
submitted again since), a change no longer Proposed (or gone, or on frozen registers), an
exception decided or settled: their unread notifications are marked read, so the bell counts
only what is open. Idempotent; `manage.py resolve_notifications` runs it, audited as
notifications.resolved."""

import uuid
from typing import Any

from django.db import transaction
from django.utils import timezone

from charter.models import BusinessCase
from governance import audit
from governance.models import FROZEN_APPROVAL_STATUSES, Notification
from registers.models import ChangeRequest
from status.models import UNDECIDED_STATES, ProjectException


def _part(key: str, index: int) -> str:
    parts = key.split(":", 2)
    return parts[index] if len(parts) > index else ""


def stale_ids() -> list[int]:
    """The unread notifications whose act is done."""
    unread = Notification.objects.filter(
        read_at=None, kind__in=["case_submitted", "change_routed", "project_exception"]
    ).values_list("pk", "kind", "dedupe_key")
    rows = list(unread)
    change_ids = {_part(k, 1) for _, kind, k in rows if kind == "change_routed"}
    exception_ids = {_part(k, 1) for _, kind, k in rows if kind == "project_exception"}
    project_keys = {_part(k, 1) for _, kind, k in rows if kind == "case_submitted"}
    open_changes = {
        str(pk)
        for pk in ChangeRequest.objects.filter(
            pk__in=[i for i in change_ids if _uuid(i)], status="Proposed"
        )
        .exclude(project__approval_status__in=FROZEN_APPROVAL_STATUSES)
        .values_list("pk", flat=True)
    }
    open_exceptions = {
        str(pk)
        for pk in ProjectException.objects.filter(
            pk__in=[i for i in exception_ids if _uuid(i)], state__in=UNDECIDED_STATES
        ).values_list("pk", flat=True)
    }
    submitted = set(
        BusinessCase.objects.filter(
            project__key__in=project_keys, approval_status="Submitted"
        ).values_list("project__key", flat=True)
    )
    # Of a case still Submitted, only the latest submission's notice is open (one submitted
    # again since made a new one).
    latest: dict[str, int] = {}
    for pk, kind, key in rows:
        if kind == "case_submitted":
            latest[_part(key, 1)] = max(pk, latest.get(_part(key, 1), pk))
    done = []
    for pk, kind, key in rows:
        if kind == "change_routed":
            is_open = _part(key, 1) in open_changes
        elif kind == "project_exception":
            is_open = _part(key, 1) in open_exceptions
        else:
            is_open = _part(key, 1) in submitted and latest.get(_part(key, 1)) == pk
        if not is_open:
            done.append(pk)
    return done


def _uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def resolve_done(*, actor_account_id: str = "", at: Any = None) -> int:
    """Mark read every unread notification whose act is done; one audit entry (how many, of
    which kinds). Returns how many."""
    at = at or timezone.now()
    with transaction.atomic():
        ids = stale_ids()
        if not ids:
            return 0
        kinds: dict[str, int] = {}
        for kind in Notification.objects.filter(pk__in=ids).values_list("kind", flat=True):
            kinds[kind] = kinds.get(kind, 0) + 1
        count = Notification.objects.filter(pk__in=ids, read_at=None).update(read_at=at)
        audit.record(
            actor_account_id=actor_account_id,
            kind="notifications.resolved",
            target_type="notification",
            changes={"resolved": {"before": None, "after": {"count": count, "kinds": kinds}}},
        )
    return count
