"""Helpers every register service shares: locking, fetching within a project, payload keys,
people and link cleaning, the after-commit tracker write-back queue."""

import functools
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from django.db import models

from governance import audit, inserts, notifications, outbox, signals, specs
from governance.cleaning import FieldErrors, account_id
from governance.concurrency import check_version
from governance.errors import NotFound
from governance.models import Project
from governance.people import Person, resolve
from governance.permissions import Caller, require
from governance.scoped import holding
from registers.models import RegisterRecord

T = TypeVar("T")
R = TypeVar("R", bound=models.Model)
EDIT_MESSAGE = "Only the Project Lead and the editors they nominate may change the registers."
WRITE_BACK_TASK = "registers.work_package_field"


def require_editor(caller: Caller) -> None:
    require(caller.can_edit, EDIT_MESSAGE)


def lock_project(project: Project) -> Project:
    """Lock the project row for the rest of the transaction: register writes of one project
    serialise behind it, so the freeze check cannot race a business-case act."""
    return Project.objects.select_for_update().get(pk=project.pk)


@dataclass
class _Batch:
    project: Project  # locked and checked writable once, for the whole batch
    pending: list[models.Model] = field(default_factory=list)
    memo: dict[str, Any] = field(default_factory=dict)  # `batch_memo`


_BATCH: ContextVar[_Batch | None] = ContextVar("register_batch", default=None)


@contextmanager
def batch(caller: Caller, *, write: bool = True) -> Iterator[Project]:
    """One locked, writable project for many creates (an import): inside the block the
    register services skip their per-row lock, `insert` queues new records, and the audit
    entries are queued too; both are written when the block ends, a COPY per table on
    PostgreSQL and multi-row statements elsewhere (`governance.inserts`).
    Use it inside the writing transaction; a block that raises writes nothing.

    `write=False` (an import's preview): the same checks on the same project (editor, not
    frozen), without the lock, and nothing is written when the block ends: the rows are built
    and claimed (`batch_memo`) as in the import, never inserted."""
    if write:
        project = writable_project(caller)
    else:
        require_editor(caller)
        project = caller.project
        project.assert_registers_unfrozen()
    held = _Batch(project)
    with holding(_BATCH, held):
        if not write:
            yield held.project
            return
        with audit.batched(), notifications.batched():
            yield held.project
            by_model: dict[type[models.Model], list[models.Model]] = {}
            for record in held.pending:
                by_model.setdefault(type(record), []).append(record)
            for model, records in by_model.items():
                inserts.insert_many(model, records, audit.BATCH_SIZE)
    if held.pending:  # bulk_create sends no post_save: the project's health is told here
        signals.project_facts_changed(held.project.pk)


def insert(record: models.Model) -> None:
    """Insert a new record now, or inside `batch()` when the block ends. For records whose
    creation no later row of the same batch reads back."""
    held = _BATCH.get()
    if held is None or held.project.pk != getattr(record, "project_id", None):
        record.save(force_insert=True)
    else:
        held.pending.append(record)


def batch_memo(project: Project, key: str, load: Callable[[], T]) -> T | None:
    """Inside `batch()` for `project`: what `load()` answered the first time `key` was asked
    in the batch (the services keep it current as they queue records); None outside, where
    the caller asks the database itself."""
    held = _BATCH.get()
    if held is None or held.project.pk != project.pk:
        return None
    if key not in held.memo:
        held.memo[key] = load()
    return cast(T, held.memo[key])


def audit_write(
    caller: Caller,
    project: Project,
    target_type: str,
    kind: str,
    target_id: object,
    changes: Mapping[str, Any],
) -> None:
    """The audit entry of a register write, by the caller, in the project's trail."""
    audit.record_in(project, caller.account_id, kind, target_type, target_id, changes)


def save_revised(
    caller: Caller,
    project: Project,
    record: RegisterRecord,
    target_type: str,
    kind: str,
    changes: Mapping[str, Any],
    fields: Collection[str] = (),
) -> None:
    """Save an edited record at its next revision, with its audit entry: the whole row, or
    only `fields` (with the revision and the updated_at stamp)."""
    record.revision += 1
    if fields:
        record.save(update_fields=[*fields, "revision", "updated_at"])
    else:
        record.save()
    audit_write(caller, project, target_type, kind, record.pk, changes)


def insert_created(
    caller: Caller,
    project: Project,
    record: R,
    target_type: str,
    kind: str,
    spec: type[specs.Spec],
) -> None:
    """Insert a new record (`insert`) with its audit entry, every field of its `spec` it was
    created with (its snapshot once inserted)."""
    insert(record)
    changes = audit.diff({}, specs.snapshot(spec, record))
    audit_write(caller, project, target_type, kind, record.pk, changes)


def writable_project(caller: Caller) -> Project:
    """Editor check, lock, freeze check: the start of every ordinary register write (inside
    `batch()`, done once for the batch)."""
    require_editor(caller)
    held = _BATCH.get()
    if held is not None and held.project.pk == caller.project.pk:
        return held.project
    project = lock_project(caller.project)
    project.assert_registers_unfrozen()
    return project


def as_uuid(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


Record = TypeVar("Record", bound=models.Model)


def get_in_project(
    model: type[Record], project: Project, record_id: Any, *, lock: bool = True
) -> Record:
    """The record of `project` with this id, or NotFound (also for a malformed id)."""
    pk = as_uuid(record_id)
    if pk is None:
        raise NotFound()
    queryset = model._default_manager.filter(project=project, pk=pk)
    if lock:
        queryset = queryset.select_for_update()
    record = queryset.first()
    if record is None:
        raise NotFound(f"No such {model._meta.verbose_name} in {project.key}.")
    return record


def writable_record(
    caller: Caller,
    model: type[Record],
    record_id: Any,
    expected_revision: int | None,
    *,
    check: Callable[[Record], None] | None = None,
) -> tuple[Project, Record]:
    """The start of every edit or delete of one register row, inside the caller's
    transaction, in the order its refusals answer: the editor check (403), the project
    locked and not frozen (409), the record of the project (404), the record's own refusal
    (`check`, 409: a decided change, a made decision) and its revision (412)."""
    project = writable_project(caller)
    record = get_in_project(model, project, record_id)
    if check is not None:
        check(record)
    check_version(cast(Any, record).revision, expected_revision, current_repr=record)
    return project, record


def refuse_members(errors: FieldErrors, members: Iterable[str]) -> None:
    """The members of a request body that a write of single values does not take (the API's
    `other_members`), refused with the body's other faults (422, "Unknown field."): after the
    caller (403), the state (409) and the revision (412), so the body is judged last."""
    for name in members:
        errors.add(name, "Unknown field.")


def check_keys(
    data: Mapping[str, Any], writable: Iterable[str], read_only: Iterable[str], errors: FieldErrors
) -> None:
    """Refuse keys the resource does not have; read-only and derived keys are ignored."""
    known = set(writable) | set(read_only)
    for key in data:
        if key not in known:
            errors.add(key, "Unknown field.")


def clean_people(
    record: models.Model,
    data: Mapping[str, Any],
    fields: Mapping[str, str],
    errors: FieldErrors,
) -> None:
    """Set each accountId field present in `data` ({spec name: attribute}) on `record`; each
    must be a known tracker user. One tracker lookup for all of them."""
    wanted: dict[str, str] = {}
    for key, attr in fields.items():
        if key not in data:
            continue
        value, error = account_id(data[key])
        if error:
            errors.add(key, error)
            continue
        setattr(record, attr, value)
        if value:
            wanted[key] = value
    known = _people(wanted.values())
    for key, value in wanted.items():
        if not known[value].known:
            errors.add(key, f"No tracker user with accountId {value}.")


def _people(account_ids: Iterable[str]) -> Mapping[str, Person]:
    """`resolve`; inside `batch()` each person is looked up once for the whole batch (an
    import of thousands of rows names a few people, and a cache round trip per row is one
    per row to Redis)."""
    held = _BATCH.get()
    if held is None:
        return resolve(account_ids)
    known: dict[str, Person] = held.memo.setdefault("people", {})
    missing = [a for a in account_ids if a not in known]
    if missing:
        known.update(resolve(missing))
    return known


def check_people(
    spec: type[specs.Spec],
    record: models.Model,
    partial: specs.Spec,
    errors: FieldErrors,
    *,
    also: Iterable[str] = (),
) -> None:
    """`clean_people` for the accountId fields of a validated partial: those whose rule is
    an accountId, and `also` (API names the caller has decided to check), when sent."""
    declared = specs.fields(spec)
    wanted = {
        api: declared[api].name
        for api in _people_fields(spec, frozenset(also))
        if declared[api].name in partial.model_fields_set
    }
    sent = {api: getattr(partial, name) for api, name in wanted.items()}
    clean_people(record, sent, wanted, errors)


@functools.cache
def _people_fields(spec: type[specs.Spec], also: frozenset[str]) -> tuple[str, ...]:
    """The API names `check_people` checks, in declaration order (worked out once)."""
    return tuple(
        api
        for api, field in specs.fields(spec).items()
        if isinstance(field.rule, specs.AccountId) or api in also
    )


def enqueue_write_back(project: Project, issue_keys: Iterable[str]) -> None:
    """Queue the 'Work Package' field write-back for each issue, inside the write's
    transaction; the task runs after commit and recomputes the value from the database."""
    for key in sorted(set(issue_keys)):
        outbox.enqueue(WRITE_BACK_TASK, {"projectId": project.pk, "issueKey": key})
