"""The audit writer: one append-only entry per write, inside the write's transaction."""

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Any
from uuid import UUID

from governance.models import AuditEntry


def jsonable(value: Any) -> Any:
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


def diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Changed fields as {field: {"before": ..., "after": ...}}, JSON-ready."""
    changes = {}
    for field in sorted(set(before) | set(after)):
        old, new = jsonable(before.get(field)), jsonable(after.get(field))
        if old != new:
            changes[field] = {"before": old, "after": new}
    return changes


def record(
    *,
    actor_account_id: str,
    kind: str,
    target_type: str,
    target_id: Any = "",
    project_key: str = "",
    changes: Mapping[str, Any] | None = None,
) -> AuditEntry:
    """Write one entry. Call it inside the same `transaction.atomic()` block as the write."""
    return AuditEntry.objects.create(
        actor_account_id=actor_account_id,
        project_key=project_key,
        kind=kind,
        target_type=target_type,
        target_id=str(target_id),
        changes=jsonable(dict(changes or {})),
    )


def entry_to_dict(entry: AuditEntry) -> dict:
    return {
        "id": entry.pk,
        "at": entry.at.isoformat(),
        "actorAccountId": entry.actor_account_id,
        "projectKey": entry.project_key,
        "kind": entry.kind,
        "targetType": entry.target_type,
        "targetId": entry.target_id,
        "changes": entry.changes,
    }
