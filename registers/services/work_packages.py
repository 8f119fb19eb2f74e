"""Work packages: add, edit, delete, reorder, link and unlink tracker issues. Linking,
unlinking, renaming and deleting queue the 'Work Package' write-back onto the issues."""

import re
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone

from governance import audit, signals, specs
from governance.cleaning import FieldErrors
from governance.concurrency import check_version
from governance.errors import NotFound, ValidationFailed
from governance.formatting import with_article
from governance.mirror import mirror_for_key
from governance.models import Project
from governance.permissions import Caller
from governance.tracker import TrackerError, get_tracker
from registers.models import WorkPackage
from registers.selectors import ordered
from registers.services.common import (
    as_uuid,
    audit_write,
    batch_memo,
    check_people,
    enqueue_write_back,
    get_in_project,
    insert_created,
    refuse_members,
    save_revised,
    writable_project,
    writable_record,
)
from registers.specs import WorkPackageSpec

# Each start date and the end date it must not pass (plannedStartDate, plannedEndDate...).
DATE_PAIRS = [
    (start, start.replace("Start", "End"))
    for start in specs.with_rule(WorkPackageSpec, specs.IsoDate)
    if "Start" in start
]
ISSUE_KEY = re.compile(r"[A-Z][A-Z0-9_]*-[1-9]\d*")
MOVES = {"up": -1, "down": 1}


# --- validation ------------------------------------------------------------------------------


def _progress_agrees(status: str, progress: int | None) -> str | None:
    """The spec's rule: Complete requires 100; Not Started 0 or null; In Progress and Blocked
    10 to 90. The message names what the status needs."""
    package = f"{with_article(status, capital=True)} work package"
    if status == "Complete" and progress != 100:
        return f"{package} has progress 100."
    if status == "Not Started" and progress not in (None, 0):
        return f"{package} has progress 0 or none."
    if status in ("In Progress", "Blocked") and (progress is None or not 10 <= progress <= 90):
        return f"{package} has progress between 10 and 90."
    return None


def _stored_links(project: Project, exclude: Any = None) -> dict[str, str]:
    taken: dict[str, str] = {}
    others = WorkPackage.objects.filter(project=project)
    if exclude is not None:
        others = others.exclude(pk=exclude)
    for name, keys in others.values_list("name", "linked_issue_keys"):
        for key in keys or []:
            taken[key] = name
    return taken


def _linked_elsewhere(project: Project, wp: WorkPackage) -> dict[str, str]:
    """Issue key -> name of the other package of the project that links it (a new package in
    a batch: the links read once for the batch and those its earlier rows claimed)."""
    if wp._state.adding:
        links = batch_memo(project, "work-package-links", lambda: _stored_links(project))
        if links is not None:
            return links
    return _stored_links(project, exclude=wp.pk)


def check_new_issue_keys(
    project: Project, wp: WorkPackage, wanted: list[tuple[str, str]], errors: FieldErrors
) -> None:
    """Each newly linked issue must be an issue of this project in the tracker, linked by no
    other work package (the issue's 'Work Package' field holds one reference)."""
    if not wanted:
        return
    taken = _linked_elsewhere(project, wp)
    to_check = []
    for field, key in wanted:
        if key.rpartition("-")[0] != project.key:
            errors.add(field, f"{key} is not an issue of project {project.key}.")
        elif key in taken:
            errors.add(field, f"{key} is already linked to the work package '{taken[key]}'.")
        else:
            to_check.append((field, key))
    if not to_check:
        return
    try:
        found = get_tracker().get_issues([key for _, key in to_check])
    except TrackerError:
        for field, key in to_check:
            errors.add(field, f"The tracker could not be asked about {key}; try again shortly.")
        return
    for field, key in to_check:
        if key not in found:
            errors.add(field, f"The tracker has no issue {key}.")


def normalise_issue_key(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    key = value.strip().upper()
    return key if ISSUE_KEY.fullmatch(key) else None


def _clean_issue_keys(
    project: Project, wp: WorkPackage, value: Any, errors: FieldErrors
) -> list[str] | None:
    if value is None:
        value = []
    if not isinstance(value, list):
        errors.add("linkedIssueKeys", "Must be a list of issue keys such as ABC-12.")
        return None
    keys: list[str] = []
    new: list[tuple[str, str]] = []
    stored = set(wp.linked_issue_keys or [])
    ok = True
    for index, raw in enumerate(value):
        key = normalise_issue_key(raw)
        if key is None:
            errors.add(f"linkedIssueKeys[{index}]", "Must be an issue key such as ABC-12.")
            ok = False
            continue
        if key in keys:
            continue
        keys.append(key)
        if key not in stored:
            new.append((f"linkedIssueKeys[{index}]", key))
    before = len(errors)
    check_new_issue_keys(project, wp, new, errors)
    return keys if ok and len(errors) == before else None


def _clean(
    project: Project, wp: WorkPackage, data: dict[str, Any], *, creating: bool
) -> FieldErrors:
    """Validate `data` onto `wp` (in memory): the declaration's rules (`WorkPackageSpec`),
    then the stateful and cross-field ones. Every offending field is named."""
    partial, errors = specs.validate(WorkPackageSpec, data, creating=creating)
    values = specs.sent(partial)
    if values.get("id") not in (None, ""):
        pk = as_uuid(values["id"])
        if pk is None:
            errors.add("id", "Must be a UUID.")
        elif WorkPackage.objects.filter(pk=pk).exists():
            errors.add("id", "A work package with this id already exists.")
        else:
            wp.pk = pk
    specs.apply(partial, wp, skip=STATEFUL)
    if "name" in values and _name_taken(project, wp):
        errors.add("name", f"Another work package of {project.key} is called '{wp.name}'.")
    check_people(WorkPackageSpec, wp, partial, errors)
    _clean_actual_end(wp, values, errors)
    for start, end in DATE_PAIRS:
        first, last = (getattr(wp, specs.fields(WorkPackageSpec)[k].name) for k in (start, end))
        if first and last and first > last and start not in errors and end not in errors:
            errors.add(end, f"Must not be before {start} ({first.isoformat()}).")
    if "status" not in errors and "progress" not in errors:
        disagreement = _progress_agrees(wp.status, wp.progress)
        if disagreement:
            errors.add("progress", disagreement)
    if "linkedIssueKeys" in data:
        keys = _clean_issue_keys(project, wp, data["linkedIssueKeys"], errors)
        if keys is not None:
            wp.linked_issue_keys = keys
    return errors


def _name_key(name: str) -> str:
    return name.upper()  # as `iexact` compares on PostgreSQL (UPPER on both sides)


def _batch_names(project: Project) -> set[str] | None:
    """Inside `batch()`: the names of the project's packages (as `_name_key`), read once for
    the batch, then kept by `claim_work_package`; None outside a batch."""
    return batch_memo(
        project,
        "work-package-names",
        lambda: {
            _name_key(name)
            for name in WorkPackage.objects.filter(project=project).values_list("name", flat=True)
        },
    )


def _name_taken(project: Project, wp: WorkPackage) -> bool:
    """Another package of the project has this name, case aside (a new package in a batch:
    against the names read once and those of the batch's earlier rows)."""
    names = _batch_names(project) if wp._state.adding else None
    if names is not None:
        return _name_key(wp.name) in names
    others = WorkPackage.objects.filter(project=project, name__iexact=wp.name).exclude(pk=wp.pk)
    return others.exists()


# Checked against stored state or folded into another field, not set as sent.
STATEFUL = {"id", "actual_end_date", "actual_end", "linked_issue_keys"}


def _clean_actual_end(wp: WorkPackage, values: dict[str, Any], errors: FieldErrors) -> None:
    """actualEnd mirrors actualEndDate. Either may be sent; when both are sent and differ,
    the one that differs from the stored date is the edit (a read-modify-write round trip
    carries the other unchanged). When actualEndDate is refused, actualEnd is not read."""
    if "actualEndDate" in errors:
        errors.pop("actualEnd", None)
        return
    if "actualEnd" in errors:
        return
    sent = {key: values[name] for key, name in MIRROR if name in values}
    if not sent:
        return
    distinct = set(sent.values())
    if len(distinct) == 1:
        wp.actual_end_date = distinct.pop()
        return
    stored = wp.actual_end_date
    if sent["actualEndDate"] == stored:
        wp.actual_end_date = sent["actualEnd"]
    elif sent["actualEnd"] == stored:
        wp.actual_end_date = sent["actualEndDate"]
    else:
        errors.add("actualEnd", "Mirrors actualEndDate: send the same date, or only one of them.")


MIRROR = (("actualEndDate", "actual_end_date"), ("actualEnd", "actual_end"))


# --- writes ------------------------------------------------------------------------------------


def work_package_create(*, caller: Caller, data: dict[str, Any]) -> WorkPackage:
    """Add a work package. budgetBaseline and the legacy lock stamps are never taken from the
    client; linked issues get their 'Work Package' field written after commit."""
    with transaction.atomic():
        project = writable_project(caller)
        return write_work_package(caller, project, build_work_package(caller, project, data))


def build_work_package(caller: Caller, project: Project, data: dict[str, Any]) -> WorkPackage:
    """A new work package of `project` from `data`, checked and not written: ValidationFailed
    names every refused field. Reads, never writes: a refused row leaves nothing to undo, so
    an import needs no savepoint per row."""
    wp = WorkPackage(project=project, updated_by_account_id=caller.account_id)
    _clean(project, wp, data, creating=True).raise_if_any()
    return wp


def claim_work_package(project: Project, wp: WorkPackage) -> None:
    """Inside `batch()`: what a package `build_work_package` made takes from the batch's later
    rows (its name, its linked issues), whether the batch writes it (an import) or
    only checks it (its preview). Nothing outside a batch (a single create is then stored)."""
    names = _batch_names(project)
    if names is None:
        return
    names.add(_name_key(wp.name))
    links = batch_memo(project, "work-package-links", lambda: _stored_links(project))
    if links is not None:
        for key in wp.linked_issue_keys or []:
            links[key] = wp.name


def write_work_package(caller: Caller, project: Project, wp: WorkPackage) -> WorkPackage:
    """Insert a package `build_work_package` made (inside `batch()`, queued: the import claims
    it for the batch's later rows first, `claim_work_package`), with its audit entry and its
    issues' write-back."""
    insert_created(caller, project, wp, "workPackage", "work_package.created", WorkPackageSpec)
    enqueue_write_back(project, wp.linked_issue_keys)
    return wp


def work_package_update(
    *, caller: Caller, wp_id: Any, data: dict[str, Any], expected_revision: int | None = None
) -> WorkPackage:
    """Edit a work package. The stored budgetBaseline and lock stamps are kept whatever the
    client sends."""
    with transaction.atomic():
        project, wp = writable_record(caller, WorkPackage, wp_id, expected_revision)
        before = specs.snapshot(WorkPackageSpec, wp)
        _clean(project, wp, data, creating=False).raise_if_any()
        after = specs.snapshot(WorkPackageSpec, wp)
        changes = audit.diff(before, after)
        if changes:
            wp.updated_by_account_id = caller.account_id
            save_revised(caller, project, wp, "workPackage", "work_package.updated", changes)
            old_keys, new_keys = set(before["linkedIssueKeys"]), set(after["linkedIssueKeys"])
            touched = old_keys ^ new_keys
            if before["name"] != after["name"]:
                touched |= new_keys
            enqueue_write_back(project, touched)
    return wp


def work_package_delete(
    *, caller: Caller, wp_id: Any, expected_revision: int | None = None
) -> None:
    """Delete a work package; its linked issues have their 'Work Package' field cleared."""
    with transaction.atomic():
        project, wp = writable_record(caller, WorkPackage, wp_id, expected_revision)
        keys = list(wp.linked_issue_keys or [])
        audit_write(
            caller,
            project,
            "workPackage",
            "work_package.deleted",
            wp.pk,
            audit.diff(specs.snapshot(WorkPackageSpec, wp), {}),
        )
        wp.delete()
        enqueue_write_back(project, keys)


def work_package_link_issue(
    *,
    caller: Caller,
    wp_id: Any,
    issue_key: Any,
    expected_revision: int | None = None,
    other_members: Iterable[str] = (),
) -> WorkPackage:
    """Link one tracker issue (idempotent for an issue already linked to this package)."""
    with transaction.atomic():
        project, wp = writable_record(caller, WorkPackage, wp_id, expected_revision)
        errors = FieldErrors()
        refuse_members(errors, other_members)
        key = normalise_issue_key(issue_key)
        if key is None:
            errors.add("issueKey", "Must be an issue key such as ABC-12.")
        errors.raise_if_any()
        assert key is not None  # refused just above
        if key in (wp.linked_issue_keys or []):
            return wp
        check_new_issue_keys(project, wp, [("issueKey", key)], errors)
        errors.raise_if_any()
        before = list(wp.linked_issue_keys or [])
        wp.linked_issue_keys = [*before, key]
        _save_links(caller, project, wp, before, key, "work_package.issue_linked")
    return wp


def work_package_unlink_issue(
    *, caller: Caller, wp_id: Any, issue_key: Any, expected_revision: int | None = None
) -> WorkPackage:
    """Unlink one issue; its 'Work Package' field is cleared after commit."""
    with transaction.atomic():
        project = writable_project(caller)
        wp = get_in_project(WorkPackage, project, wp_id)
        key = normalise_issue_key(issue_key)
        if key is None or key not in (wp.linked_issue_keys or []):
            raise NotFound(f"{issue_key} is not linked to this work package.")
        check_version(wp.revision, expected_revision, current_repr=wp)
        before = list(wp.linked_issue_keys)
        wp.linked_issue_keys = [k for k in before if k != key]
        wp.broken_issue_keys = {
            k: why for k, why in (wp.broken_issue_keys or {}).items() if k != key
        }
        _save_links(caller, project, wp, before, key, "work_package.issue_unlinked")
    return wp


def _save_links(
    caller: Caller, project: Project, wp: WorkPackage, before: list[str], key: str, action: str
) -> None:
    """A package's links changed by one issue (`key`): its new revision, the audit entry (the
    links before and after) and the issue's write-back after commit."""
    wp.updated_by_account_id = caller.account_id
    linked = {"linkedIssueKeys": {"before": before, "after": wp.linked_issue_keys}}
    save_revised(caller, project, wp, "workPackage", action, linked)
    enqueue_write_back(project, [key])


def mark_issue_link_broken(*, issue_key: str, reason: str, project_key: str = "") -> int:
    """The tracker says `issue_key` is gone (deleted, or moved under another key): every work
    package linking it, in the project its key names, marks that link broken at once, audited
    as the tracker's doing. The same news twice changes nothing. Returns how many changed."""
    project = mirror_for_key(project_key or issue_key.rsplit("-", 1)[0])
    if project is None:
        return 0
    changed = []
    with transaction.atomic():
        rows = WorkPackage.objects.select_for_update().filter(project=project)
        for wp in rows.only("pk", "linked_issue_keys", "broken_issue_keys", "revision"):
            broken = wp.broken_issue_keys or {}
            if issue_key not in (wp.linked_issue_keys or []) or broken.get(issue_key) == reason:
                continue
            wp.broken_issue_keys = {**broken, issue_key: reason}
            wp.revision += 1
            changed.append(wp)
            marked = {"brokenIssueKeys": {"before": broken, "after": wp.broken_issue_keys}}
            audit.record_in(
                project, "", "work_package.issue_link_broken", "workPackage", wp.pk, marked
            )
        WorkPackage.objects.bulk_update(changed, ["broken_issue_keys", "revision"])
        if changed:  # bulk_update sends no post_save
            signals.project_facts_changed(project.pk)
    return len(changed)


def _apply_order(caller: Caller, project: Project, packages: list[WorkPackage]) -> None:
    """Give `packages` sortOrder 1..n in this order; bump the revision of those that moved."""
    before = [str(wp.pk) for wp in ordered(WorkPackage.objects.filter(project=project))]
    after = [str(wp.pk) for wp in packages]
    now = timezone.now()
    changed = []
    for position, wp in enumerate(packages, start=1):
        if wp.sort_order != position:
            wp.sort_order = position
            wp.revision += 1
            wp.updated_by_account_id = caller.account_id
            wp.updated_at = now
            changed.append(wp)
    if not changed:
        return
    WorkPackage.objects.bulk_update(
        changed, ["sort_order", "revision", "updated_by_account_id", "updated_at"], batch_size=500
    )
    signals.project_facts_changed(project.pk)  # bulk_update sends no post_save
    audit_write(
        caller,
        project,
        "project",
        "work_package.reordered",
        project.key,
        {"order": {"before": before, "after": after}} if before != after else {},
    )


def work_package_reorder(
    *, caller: Caller, ids: Any, other_members: Iterable[str] = ()
) -> list[WorkPackage]:
    """Set the manual order: `ids` lists every work package of the project exactly once.
    Refused in the house order: the editor and frozen registers, then the body (422)."""
    with transaction.atomic():
        project = writable_project(caller)
        packages = {
            wp.pk: wp for wp in WorkPackage.objects.select_for_update().filter(project=project)
        }
        errors = FieldErrors()
        refuse_members(errors, other_members)
        if not isinstance(ids, list):
            errors.add("ids", "Must be the list of every work package id, in order.")
            errors.raise_if_any()
        wanted, seen = [], set()
        for index, raw in enumerate(ids):
            pk = as_uuid(raw)
            if pk is None or pk not in packages:
                errors.add(f"ids[{index}]", "Not a work package of this project.")
            elif pk in seen:
                errors.add(f"ids[{index}]", "Listed twice.")
            else:
                seen.add(pk)
                wanted.append(packages[pk])
        missing = [str(pk) for pk in packages if pk not in seen]
        if missing and not errors:
            errors.add(
                "ids",
                f"Every work package must be listed; missing: {', '.join(missing[:5])}"
                + (" and more." if len(missing) > 5 else "."),
            )
        errors.raise_if_any()
        _apply_order(caller, project, wanted)
    return wanted


def work_package_move(*, caller: Caller, wp_id: Any, direction: Any) -> WorkPackage:
    """Move one package one place "up" or "down" in the register's current order (the
    first stays first, the last stays last)."""
    with transaction.atomic():
        project = writable_project(caller)
        packages = list(ordered(WorkPackage.objects.select_for_update().filter(project=project)))
        pk = as_uuid(wp_id)
        index = next((i for i, wp in enumerate(packages) if wp.pk == pk), None)
        if index is None:
            raise NotFound(f"No such work package in {project.key}.")
        if not isinstance(direction, str) or direction not in MOVES:
            raise ValidationFailed({"direction": ["Move up or down."]})
        target = max(0, min(len(packages) - 1, index + MOVES[direction]))
        wp = packages.pop(index)
        packages.insert(target, wp)
        _apply_order(caller, project, packages)
    return wp


def work_package_baseline(
    caller: Caller, project: Project, package: WorkPackage, budget: Any, *, planned_end: Any = None
) -> None:
    """Write a work package's budgetBaseline (the business case's approval freezes the budget;
    a change applied to the package moves it) and, when a change applied to its baseline moves
    the plan with it, its plannedEndDate; audited as work_package.baselined; nothing when it
    holds both. The caller holds the package's row lock and has checked its own act."""
    fields = {"budget_baseline": ("budgetBaseline", budget)}
    if planned_end is not None:
        fields["planned_end_date"] = ("plannedEndDate", planned_end)
    moved = {f: v for f, v in fields.items() if getattr(package, f) != v[1]}
    if not moved:
        return
    before = {name: getattr(package, f) for f, (name, _) in moved.items()}
    for f, (_, value) in moved.items():
        setattr(package, f, value)
    package.updated_by_account_id = caller.account_id
    changes = audit.diff(before, {name: value for name, value in moved.values()})
    stored = [*moved, "updated_by_account_id"]
    save_revised(caller, project, package, "workPackage", "work_package.baselined", changes, stored)


def work_package_for_update(project: Project, wp_id: Any) -> WorkPackage | None:
    """A package of the project locked for a write by another app's act, or None."""
    pk = as_uuid(wp_id)
    if pk is None:
        return None
    return WorkPackage.objects.select_for_update().filter(project=project, pk=pk).first()


def work_packages_baseline(caller: Caller, project: Project) -> list[WorkPackage]:
    """The business case's approval: every package of the project, locked in primary-key
    order, has its budget frozen as its budgetBaseline; the packages are returned for the plan
    baseline the case records."""
    packages = list(WorkPackage.objects.select_for_update().filter(project=project).order_by("pk"))
    for package in packages:
        work_package_baseline(caller, project, package, package.budget)
    return packages
