"""The project mirror: governance's row for each tracker project (its key, name, lead and the
tracker's id), which the registers, the business case and the status hang from.

Its upkeep (created, refreshed, renamed with an audit entry when a key changes in the
tracker) is written here only, by the paths that hear from the tracker: sign-in (the
person's browsable projects, `sync_browsable`), Jira's webhooks
(`governance.webhooks`), the periodic job `project_mirrors` (`refresh_all`) and
the local tracker's own saves. The access gate (`governance.permissions`) only reads: a
mirror the tracker has moved on from is shown with the tracker's name, lead and key of the
moment (`current`), in memory, and is written by the next upkeep."""

import datetime as dt
import logging
from collections.abc import Collection

from django.db import transaction
from django.db.models import Q

from governance import audit, periodic
from governance.errors import NotFound
from governance.models import Project
from governance.tracker import TrackerError, TrackerProject, get_tracker

logger = logging.getLogger(__name__)


def mirrors_of(tracker_projects: Collection[TrackerProject]) -> dict[str, Project]:
    """The governance mirrors of these tracker projects, by the tracker's id, in one query:
    matched by the tracker's project id, or by key for a mirror not yet keyed by id."""
    ids = [t.id for t in tracker_projects if t.id]
    keys = [t.key for t in tracker_projects]
    rows = list(Project.objects.filter(Q(tracker_id__in=ids) | Q(key__in=keys, tracker_id=None)))
    by_id = {p.tracker_id: p for p in rows if p.tracker_id}
    by_key = {p.key: p for p in rows if not p.tracker_id}
    found = {}
    for t in tracker_projects:
        mirror = by_id.get(t.id) if t.id else None
        if mirror is None:
            mirror = by_key.pop(t.key, None)
        if mirror is not None:
            found[t.id or t.key] = mirror
    return found


def _free_key(key: str, tracker_id: str) -> None:
    """Another mirror holding `key` under another tracker id: that project's key changed
    since (Jira lets a new project take an old key), so it is read again by its id and
    follows; gone from the tracker, it keeps its registers under a key of its own."""
    other = Project.objects.filter(key=key).exclude(tracker_id=tracker_id).first()
    if other is None:
        return
    current = get_tracker().get_project(other.tracker_id) if other.tracker_id else None
    new_key = current.key if current and current.key != key else f"{key}_{other.pk}"[:32]
    _rename(other, new_key)


def _rename(project: Project, new_key: str, former: Collection[str] = ()) -> None:
    old_key = project.key
    project.former_keys = sorted({*(project.former_keys or []), old_key, *former} - {new_key})
    project.key = new_key
    project.save(update_fields=["key", "former_keys"])
    renamed = {"key": {"before": old_key, "after": new_key}}
    audit.record_in(project, "", "project.key_changed", "project", project.pk, renamed)


def sync_project(tracker_project: TrackerProject, existing: Project | None = None) -> Project:
    """The governance mirror of a tracker project, created or refreshed as needed. Mirrors are
    keyed by the tracker's project id: a project whose key changed keeps its mirror (and its
    registers), which takes the new key and keeps the old ones as redirects."""
    t = tracker_project
    if existing is None:
        existing = mirrors_of([t]).get(t.id or t.key)
    if existing is None:
        with transaction.atomic():
            if t.id:
                _free_key(t.key, t.id)
            project, _ = Project.objects.get_or_create(
                key=t.key,
                defaults={
                    "tracker_id": t.id or None,
                    "name": t.name,
                    "lead_account_id": t.lead_account_id,
                    "former_keys": sorted(set(t.former_keys) - {t.key}),
                },
            )
        return project
    fields = []
    if t.id and existing.tracker_id != t.id:
        existing.tracker_id = t.id
        fields.append("tracker_id")
    if existing.key != t.key:
        with transaction.atomic():
            _free_key(t.key, t.id or existing.tracker_id or "")
            if fields:
                existing.save(update_fields=fields)
                fields = []
            _rename(existing, t.key, t.former_keys)
    elif set(t.former_keys) - set(existing.former_keys or []) - {t.key}:
        existing.former_keys = sorted({*(existing.former_keys or []), *t.former_keys} - {t.key})
        fields.append("former_keys")
    if (existing.name, existing.lead_account_id) != (t.name, t.lead_account_id):
        existing.name = t.name
        existing.lead_account_id = t.lead_account_id
        fields += ["name", "lead_account_id"]
    if existing.tracker_deleted_at is not None:
        existing.tracker_deleted_at = None
        fields.append("tracker_deleted_at")
    if fields:
        existing.save(update_fields=fields)  # one UPDATE: atomic as it is
    return existing


def mirror_for_key(key: str) -> Project | None:
    """The mirror a URL's key names: the project with that key now, else the one that had it
    before (its URLs redirect to the current key)."""
    project = Project.objects.filter(key=key).first()
    if project is not None:
        return project
    candidates = Project.objects.filter(former_keys__icontains=f'"{key}"')
    return next((p for p in candidates if key in (p.former_keys or [])), None)


def renamed_in_tracker(mirror: Project | None) -> TrackerProject | None:
    """The project as the tracker has it now, when its key is no longer the mirror's."""
    if mirror is None or not mirror.tracker_id:
        return None
    try:
        current = get_tracker().get_project(mirror.tracker_id)
    except TrackerError:
        return None
    return current if current is not None and current.key != mirror.key else None


def holder_of(key: str) -> TrackerProject | None:
    """The tracker project whose key is `key` now (not one that had it before), if any."""
    try:
        current = get_tracker().get_project(key)
    except TrackerError:
        return None
    return current if current is not None and current.key == key else None


def current_of(tracker_project: TrackerProject) -> Project | None:
    """The mirror of a tracker project as the tracker has it now (`current`), or None while
    it has no mirror yet. A read: the gate's."""
    existing = mirrors_of([tracker_project]).get(tracker_project.id or tracker_project.key)
    return current(tracker_project, existing) if existing is not None else None


def current(tracker_project: TrackerProject, existing: Project) -> Project:
    """The mirror as the tracker has it now: the tracker's key, name and lead set on it in
    memory, nothing written (the upkeep writes them). A read: the gate's."""
    t = tracker_project
    if existing.key != t.key:
        existing.former_keys = sorted({*(existing.former_keys or []), existing.key} - {t.key})
        existing.key = t.key
    existing.name, existing.lead_account_id = t.name, t.lead_account_id
    existing.tracker_id = existing.tracker_id or t.id or None
    return existing


def mirrored(tracker_projects: Collection[TrackerProject]) -> list[Project]:
    """The mirrors of these tracker projects as the tracker has them now (`current`), in
    their order, those not mirrored yet left out. A read: the gate's long way for a list."""
    existing = mirrors_of(tracker_projects) if tracker_projects else {}
    return [
        current(t, existing[t.id or t.key]) for t in tracker_projects if (t.id or t.key) in existing
    ]


def named_by(account_id: str, key: str) -> Project:
    """The mirror a project key names now, for a person who browses that project in the
    tracker, as the tracker has it (`current`); NotFound otherwise, a refusal saying nothing
    of whether the key was ever used. A former key names the project that had it, unless
    another project has taken it since; a key changed in the tracker since the mirror last
    saw it is followed. A read: the gate's long way."""
    tracker = get_tracker()
    stored = mirror_for_key(key)
    renamed = None
    if not tracker.can_browse(account_id, stored.key if stored is not None else key):
        # Refused, unless the key changed in the tracker since the mirror last saw it.
        renamed = renamed_in_tracker(stored)
        if renamed is None or not tracker.can_browse(account_id, renamed.key):
            raise NotFound(f"No project {key} that you can see.")
    try:
        # A known mirror is read by the tracker's id, so a key changed since is followed.
        asked = stored.tracker_id if stored is not None and stored.tracker_id else key
        tracker_project = renamed or tracker.get_project(asked)
    except TrackerError:
        # The page renders from the local mirror, once browsing is confirmed (from the cache).
        if stored is None:
            raise
        project = stored
    else:
        if tracker_project is None:
            raise NotFound(f"No project {key} that you can see.")
        browsed = stored.key if stored is not None else key
        if stored is not None:
            project = current(tracker_project, stored)
        elif (found := current_of(tracker_project)) is not None:
            project = found
        else:  # not mirrored yet
            raise NotFound(f"No project {key} that you can see.")
        if (
            renamed is None
            and project.key != browsed
            and not tracker.can_browse(account_id, project.key)
        ):
            raise NotFound(f"No project {key} that you can see.")
    if project.key != key:
        # The key named moved on; unless another project has taken it since, redirect.
        holder = holder_of(key)
        if holder is not None and tracker.can_browse(account_id, key):
            held = current_of(holder)
            if held is None:
                raise NotFound(f"No project {key} that you can see.")
            project = held
    return project


def sync_projects(tracker_projects: Collection[TrackerProject]) -> dict[str, Project]:
    """The mirrors of these tracker projects, created or refreshed as needed, by the
    tracker's id (or key): a constant number of statements, but for a key changed in the
    tracker (rare), renamed one project at a time as `sync_project` does."""

    def ident(t: TrackerProject) -> str:
        return t.id or t.key

    existing = mirrors_of(tracker_projects)
    for t in tracker_projects:
        if ident(t) in existing and existing[ident(t)].key != t.key:
            existing[ident(t)] = sync_project(t, existing[ident(t)])
    missing = [t for t in tracker_projects if ident(t) not in existing]
    if missing:
        taken = set(
            Project.objects.filter(key__in=[t.key for t in missing]).values_list("key", flat=True)
        )
        for t in [t for t in missing if t.key in taken]:
            existing[ident(t)] = sync_project(t)  # a stale mirror holds the key: freed first
        fresh = [t for t in missing if t.key not in taken]
        Project.objects.bulk_create(
            [
                Project(
                    key=t.key,
                    tracker_id=t.id or None,
                    name=t.name,
                    lead_account_id=t.lead_account_id,
                )
                for t in fresh
            ],
            ignore_conflicts=True,
        )
        created = {p.key: p for p in Project.objects.filter(key__in=[t.key for t in fresh])}
        existing.update({ident(t): created[t.key] for t in fresh if t.key in created})
    stale = []
    for t in tracker_projects:
        project = existing.get(ident(t))
        if project is None:
            continue
        if (project.name, project.lead_account_id, project.tracker_id) != (
            t.name,
            t.lead_account_id,
            t.id or project.tracker_id,
        ):
            project.name, project.lead_account_id = t.name, t.lead_account_id
            project.tracker_id = t.id or project.tracker_id
            stale.append(project)
    if stale:
        Project.objects.bulk_update(stale, ["name", "lead_account_id", "tracker_id"])
    return existing


def sync_browsable(account_id: str) -> int:
    """The mirrors of every project the person browses in the tracker, brought up to date:
    at sign-in (Atlassian's callback, `governance.auth_views`; the local tracker's
    `user_logged_in`). The tracker not answering does not stop the sign-in (the periodic
    upkeep follows). The number of projects read."""
    try:
        projects = get_tracker().browsable_projects(account_id)
    except TrackerError as exc:
        logger.info("Project mirrors not refreshed at sign-in: %s", type(exc).__name__)
        return 0
    sync_projects(projects)
    return len(projects)


def refresh_all(now: dt.datetime | None = None) -> str:
    """Every mirror read again from the tracker by its id (and, from a tracker that lists
    all its projects, the projects not mirrored yet): the upkeep that catches what no
    webhook told."""
    tracker = get_tracker()
    listing = getattr(tracker, "all_projects", None)
    known = list(listing()) if listing is not None else []
    seen = {t.id for t in known}
    kept = Project.objects.filter(tracker_id__isnull=False, tracker_deleted_at=None)
    for tracker_id in kept.exclude(tracker_id__in=seen).values_list("tracker_id", flat=True):
        if tracker_id is None:  # the filter leaves none; the column is nullable
            continue
        try:
            found = tracker.get_project(tracker_id)
        except TrackerError:
            continue
        if found is not None:
            known.append(found)
    sync_projects(known)
    return f"{len(known)} projects read from the tracker"


periodic.register("project_mirrors", every=dt.timedelta(hours=1))(refresh_all)
