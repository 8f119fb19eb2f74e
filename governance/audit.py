"""The audit writer: one append-only entry per write, inside the write's transaction."""

import datetime as dt
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import Decimal
from typing import Any
from uuid import UUID

from governance import cleaning, inserts
from governance.errors import note_stored_on_commit
from governance.models import AuditEntry, Project
from governance.scoped import holding

# The channel a write came through when it was not a person's own page or API call: "agent"
# for the assistant's action catalogue, with the client's name (an MCP client, the in-app
# assistant, an API script). Set with `via()` around the service call.
_CHANNEL: ContextVar[tuple[str, str]] = ContextVar("audit_channel", default=("", ""))
CHANNEL_MAX, CLIENT_MAX = 16, 100

# Entries recorded inside `batched()`: written together when the block ends.
_BATCH: ContextVar[list[AuditEntry] | None] = ContextVar("audit_batch", default=None)
BATCH_SIZE = 500


@contextmanager
def via(channel: str, client: str = "") -> Iterator[None]:
    """Record every audit entry written inside the block with this channel and client."""
    with holding(_CHANNEL, (channel[:CHANNEL_MAX], (client or "")[:CLIENT_MAX])):
        yield


@contextmanager
def batched() -> Iterator[None]:
    """Write the entries recorded in the block in a few multi-row statements when it ends, in
    the order they were recorded (an import of thousands of rows writes an entry per row; one
    COPY on PostgreSQL: `governance.inserts`). Use it inside the writing transaction; a block
    that raises writes none (its transaction is left to roll back)."""
    entries: list[AuditEntry] = []
    with holding(_BATCH, entries):
        yield
    inserts.insert_many(AuditEntry, entries, BATCH_SIZE)


# Values already JSON-ready, by exact type: most of what a write records (an import records
# every field of thousands of rows) goes no further than this check.
_PLAIN = frozenset({str, int, float, bool, type(None)})


def jsonable(value: Any) -> Any:
    if type(value) in _PLAIN:
        return value
    if isinstance(value, dict):  # an entry's changes: {field: {"before": ..., "after": ...}}
        return {str(k): v if type(v) in _PLAIN else jsonable(v) for k, v in value.items()}
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, list | tuple):
        return [v if type(v) in _PLAIN else jsonable(v) for v in value]
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
    """Write one entry (inside `batched()`, queue it for the block's end). Call it inside the
    same `transaction.atomic()` block as the write.
    The values the spec's lenient fields coerced since the last entry are recorded as
    `received` ({field: value as sent})."""
    note_stored_on_commit()
    channel, client = _CHANNEL.get()
    received = {note["field"]: note["received"] for note in cleaning.coercions().unaudited()}
    if received:
        changes = {**(changes or {}), "received": received}
    entry = AuditEntry(
        channel=channel,
        client=client,
        actor_account_id=actor_account_id,
        project_key=project_key,
        kind=kind,
        target_type=target_type,
        target_id=str(target_id),
        changes=jsonable(dict(changes or {})),
    )
    batch = _BATCH.get()
    if batch is None:
        entry.save(force_insert=True)
    else:
        batch.append(entry)
    return entry


def record_in(
    project: Project,
    actor_account_id: str,
    kind: str,
    target_type: str,
    target_id: Any,
    changes: Mapping[str, Any] | None,
) -> None:
    """An entry in the project's trail: `record` with the project's key."""
    record(
        actor_account_id=actor_account_id,
        project_key=project.key,
        kind=kind,
        target_type=target_type,
        target_id=target_id,
        changes=changes,
    )


def entry_to_dict(entry: AuditEntry) -> dict[str, Any]:
    """`channel` and `client` appear only on writes made through a channel (the assistant)."""
    body = {
        "id": entry.pk,
        "at": entry.at.isoformat(),
        "actorAccountId": entry.actor_account_id,
        "projectKey": entry.project_key,
        "kind": entry.kind,
        "targetType": entry.target_type,
        "targetId": entry.target_id,
        "changes": entry.changes,
    }
    if entry.channel:
        body.update({"channel": entry.channel, "client": entry.client or None})
    return body
