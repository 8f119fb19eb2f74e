"""Helpers every register service shares: locking, fetching within a project, payload keys."""

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import models

from governance.cleaning import FieldErrors
from governance.errors import NotFound
from governance.models import Project
from governance.permissions import Caller, require

EDIT_MESSAGE = "Only the Project Lead and the editors they nominate may change the registers."


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


def get_in_project(
    model: type[models.Model], project: Project, record_id: Any, *, lock: bool = True
):
    """The record of `project` with this id, or NotFound (also for a malformed id)."""
    try:
        pk = uuid.UUID(str(record_id))
    except ValueError:
        raise NotFound() from None
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
