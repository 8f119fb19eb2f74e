"""Signals through which a lower layer tells a higher one that something happened, inside the
same transaction (Django signals are synchronous). The charter app sends the first three; the
status app receives them, so the charter never imports the status app. `project_changed` is
announced through `project_facts_changed` (the status app connects the saves and deletes of the
facts it derives from to it; a write that bypasses the models calls it itself)."""

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from django.db.models import Q
from django.dispatch import Signal

# Sent when a business case is approved. kwargs: project (governance.Project), at (datetime).
# Receiver: project status sets initiationStartedAt when unset.
charter_approved = Signal()

# Sent when an act of the business case ends delivery: Kill, Archive or Close. kwargs: project,
# act (the act's name: "kill", "archive" or "close"), label (its label), caller (the Caller who
# took it), at (datetime), reason (str, the reason given; "" for Close). Sent inside the act's
# transaction. Receiver: the status app settles the project's undecided exception, naming the
# act, and withdraws its exception plan's Proposed change request.
charter_ended = Signal()

# Sent when initiation completes: the first steering minutes are recorded or the first
# steering committee is confirmed as held. kwargs: project, at (datetime).
# Receiver: project status sets initiationCompletedAt when unset.
initiation_completed = Signal()

# Sent when facts a project's derived status reads may have changed: its registers, business
# case, status or approval state. kwargs: project_ids (set of governance.Project ids). Sent inside
# the writing transaction, so a receiver's writes commit or roll back with the change.
# Receivers: the status app rewrites those projects' stored health rows; the registers raise
# their registers revision and store their register summary at it.
project_changed = Signal()

# Sent when the tracker says an issue is gone under its key: deleted, or moved (its key
# changed). kwargs: issue_key (str), reason (str: "deleted" or "moved to NEW-KEY"),
# project_key (str, the governance project the key's prefix names, or ""). Sent inside the
# transaction that records the tracker's event. Receiver: the registers mark the link broken.
tracker_issue_gone = Signal()

# Sent when a person's "Waiting for me" queue is read, so an app above the charter adds the
# items of its own that await them. kwargs: request, rows (the (Project, Caller) pairs the person
# can view, of the projects `waiting_projects` names). A receiver answers {name: [items]}; the
# queue lists them under that name.
# Receivers: the status app answers the exceptions awaiting the person ("exceptions"), the stage
# gates the gate reviews ("gateReviews").
waiting_items = Signal()

# Sent just before, so the queue reads only the viewable projects that may hold such an item
# (not every project the person can view). kwargs: account_id (the person's). A receiver
# answers a condition over Project (a Q) that holds for every project where one of its items
# may await the person (more is harmless: `waiting_items` decides, with each caller's roles).
# Receivers: the stage gates (a current stage's gate review) and the status app (an undecided
# exception).
waiting_projects = Signal()

# Sent when a steering pack is made (status.pack.pack_of), so an app above the status adds a
# section of its own. kwargs: project, view (the pack's status.derive.StatusView). A receiver
# answers {name: section} (JSON values); the pack keeps them under those names, frozen with it.
# Receiver: the stage gates answer the stage ("stage": current stage, criteria, last decision).
steering_pack = Signal()

# Sent when a site administrator renames themes in the site settings. kwargs: renames (a list
# of (old, new): the name each had and the name it takes, all of one save), actor_account_id
# (str). Sent once, inside the settings' transaction, so the cases move with the names or not
# at all. Receiver: the charter moves every business case naming an old theme to its new
# name, auditing each.
theme_renamed = Signal()


def answer_waiting_with(
    app: str,
    *,
    key: str,
    items: Callable[[Iterable[tuple[Any, Any]]], list[Any]],
    projects: Callable[[], Q],
) -> None:
    """Connect an app's answers to "Waiting for me": `projects`, a condition over Project that
    holds where one of its items may await a person (`waiting_projects`), and `items`, its items
    awaiting the person among the (Project, Caller) rows read, listed under `key`
    (`waiting_items`). An app answers both: the queue reads the items of only the projects some
    answer names. Connected strongly, as the receivers live only here."""

    def on_waiting_items(
        sender: object, *, rows: Iterable[tuple[Any, Any]], **kwargs: Any
    ) -> dict[str, list[Any]]:
        return {key: items(rows)}

    def on_waiting_projects(sender: object, **kwargs: Any) -> Q:
        return projects()

    waiting_items.connect(on_waiting_items, weak=False, dispatch_uid=f"{app}.waiting")
    waiting_projects.connect(
        on_waiting_projects, weak=False, dispatch_uid=f"{app}.waiting_projects"
    )


_deferred = threading.local()


def project_facts_changed(*project_ids: Any) -> None:
    """Announce that these projects' facts changed. Inside `deferred_project_changes()` the ids
    are collected and announced once when the block ends; otherwise at once."""
    ids = {pk for pk in project_ids if pk is not None}
    if not ids:
        return
    stack = getattr(_deferred, "stack", None)
    if stack:
        stack[-1].update(ids)
        return
    project_changed.send(sender=None, project_ids=ids)


@contextmanager
def deferred_project_changes() -> Iterator[None]:
    """Announce the changes made in the block once, when it ends (still inside the caller's
    transaction): a write that touches many rows of a project rewrites its health once. Use it
    inside `transaction.atomic()`. A block that raises announces nothing: its transaction is
    left to roll back."""
    stack = _deferred.__dict__.setdefault("stack", [])
    stack.append(set())
    try:
        yield
    except BaseException:
        ids = stack.pop()
        if stack:
            stack[-1].update(ids)
        raise
    ids = stack.pop()
    if stack:
        stack[-1].update(ids)
    elif ids:
        project_changed.send(sender=None, project_ids=ids)
