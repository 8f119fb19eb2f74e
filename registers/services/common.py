"""Helpers every register service shares: locking, fetching within a project, payload keys,
people and link cleaning, the after-commit tracker write-back queue."""

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import models

from governance import outbox
from governance.cleaning import FieldErrors, account_id, http_url, text
from governance.errors import NotFound
from governance.models import Project
from governance.people import resolve
from governance.permissions import Caller, require

EDIT_MESSAGE = "Only the Project Lead and the editors they nominate may change the registers."
WRITE_BACK_TASK = "registers.work_package_field"

LINK_TYPES = ["confluence", "link"]
LINK_LABEL_MAX = 200


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


def clean_links(
    value: Any, field: str, errors: FieldErrors, *, existing: list[dict] | None = None
) -> list[dict] | None:
    """Links shaped like the business case's supportingLinks: each {id, label, url, type,
    pageId?, spaceKey?, templateKind?}; url http or https; type 'confluence' or 'link'. A link
    without an id keeps the id of a stored link with the same url, else gets a new one.
    Returns None (and names each offending entry) when any entry is invalid."""
    if value is None:
        return []
    if not isinstance(value, list):
        errors.add(field, "Must be a list of links {label, url, type}.")
        return None
    by_url = {link.get("url"): link.get("id") for link in existing or [] if isinstance(link, dict)}
    allowed = {"id", "label", "url", "type", "pageId", "spaceKey", "templateKind"}
    cleaned, ok, seen_ids = [], True, set()
    for index, item in enumerate(value):
        name = f"{field}[{index}]"
        if isinstance(item, str):
            item = {"url": item}
        if not isinstance(item, Mapping):
            errors.add(name, "Must be a link {label, url, type}.")
            ok = False
            continue
        for key in item:
            if key not in allowed:
                errors.add(f"{name}.{key}", "Unknown field.")
                ok = False
        url, error = http_url(item.get("url"))
        if error:
            errors.add(f"{name}.url", error)
            ok = False
        label, error = text(item.get("label"), max_length=LINK_LABEL_MAX)
        if error:
            errors.add(f"{name}.label", error)
            ok = False
        link_type = item.get("type") or "link"
        if link_type not in LINK_TYPES:
            errors.add(f"{name}.type", f"Must be one of: {', '.join(LINK_TYPES)}.")
            ok = False
        link_id = item.get("id") or by_url.get(url) or str(uuid.uuid4())
        if not isinstance(link_id, str) or len(link_id) > 64:
            errors.add(f"{name}.id", "Must be a short text id.")
            ok = False
        elif link_id in seen_ids:
            link_id = str(uuid.uuid4())
        seen_ids.add(link_id)
        link = {"id": link_id, "label": label or url, "url": url, "type": link_type}
        for key, cap in (("pageId", 64), ("spaceKey", 255), ("templateKind", 64)):
            if item.get(key) not in (None, ""):
                extra, error = text(item[key], max_length=cap)
                if error:
                    errors.add(f"{name}.{key}", error)
                    ok = False
                link[key] = extra
        cleaned.append(link)
    return cleaned if ok else None


def enqueue_write_back(project: Project, issue_keys: Iterable[str]) -> None:
    """Queue the 'Work Package' field write-back for each issue, inside the write's
    transaction; the task runs after commit and recomputes the value from the database."""
    for key in sorted(set(issue_keys)):
        outbox.enqueue(WRITE_BACK_TASK, {"projectId": project.pk, "issueKey": key})
