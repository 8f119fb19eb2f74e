"""Helpers every register service shares: locking, fetching within a project, payload keys,
people and link cleaning, the after-commit tracker write-back queue."""

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import models

from governance import outbox
from governance.cleaning import FieldErrors, account_id
from governance.errors import NotFound
from governance.models import Project
from governance.people import resolve
from governance.permissions import Caller, require

EDIT_MESSAGE = "Only the Project Lead and the editors they nominate may change the registers."
WRITE_BACK_TASK = "registers.work_package_field"


def require_editor(caller: Caller) -> None:
    require(caller.can_edit, EDIT_MESSAGE)


def lock_project(project: Project) -> Project:
    """Lock the project row for the rest of the transaction: register writes of one project
    serialise behind it, so the freeze check cannot race a business-case act."""
    return Project.objects.select_for_update().get(pk=project.pk)


def writable_project(caller: Caller) -> Project:
    """Editor check, lock, freeze check: the start of every ordinary register write."""
    require_editor(caller)
    project = lock_project(caller.project)
    project.assert_registers_unfrozen()
    return project


def as_uuid(value: Any) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def get_in_project(
    model: type[models.Model], project: Project, record_id: Any, *, lock: bool = True
):
    """The record of `project` with this id, or NotFound (also for a malformed id)."""
    pk = as_uuid(record_id)
    if pk is None:
        raise NotFound()
    queryset = model.objects.filter(project=project, pk=pk)
    if lock:
        queryset = queryset.select_for_update()
    record = queryset.first()
    if record is None:
        raise NotFound(f"No such {model._meta.verbose_name} in {project.key}.")
    return record


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
    known = resolve(wanted.values())
    for key, value in wanted.items():
        if not known[value].known:
            errors.add(key, f"No tracker user with accountId {value}.")


def enqueue_write_back(project: Project, issue_keys: Iterable[str]) -> None:
    """Queue the 'Work Package' field write-back for each issue, inside the write's
    transaction; the task runs after commit and recomputes the value from the database."""
    for key in sorted(set(issue_keys)):
        outbox.enqueue(WRITE_BACK_TASK, {"projectId": project.pk, "issueKey": key})
