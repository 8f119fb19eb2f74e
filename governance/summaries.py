"""Summaries over every project a reader can view, stored per reader and read again while
nothing they read has changed: the one cache of the pages across projects.

What it buys (record 0308, measured at 1,000 and 10,000 projects): each of these is a pass
over every viewable row, and at 10,000 projects costs PostgreSQL, a request:
- the portfolio's summary and heat grid (61 ms), theme choices (34 ms), bubbles (26 ms) and
  lead choices (21 ms);
- whether a project lacks a current row (11 ms);
- the project list's counts (15 ms);
- the investment ranks (22-24 ms).
While they hold, each is one indexed read instead. A request after a write reads them again
(what the pages cost without it) and stores them.

Keyed by what they depend on:
- the reader and their audience (`gatelist.audience`: the tracker, the governance group and
  membership, a listed tracker's ids) and what the caller adds (`depends`: the health basis);
- the revision of the facts (`SummaryRevision`), raised in the transaction of every write of
  what the summaries read: the stored health rows (`status.health`), the projects (a save or
  delete through the signals connected here, an update or bulk write through
  `ProjectQuerySet`), editor nominations, the site settings and the local tracker's projects,
  accounts and grants; an app above names its own models through `watch` (the status app its
  health rows, the investment app its scores, model versions and criteria); a bulk write calls
  `summaries_changed` itself;
- the time the soonest-expiring row they read stops being current (`valid_until`), so a
  summary never outlives the rows the page would derive again.

A summary read at a revision is stored under that revision only: a write that commits while
it is read raises the revision, and the summary is never answered after it."""

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from django.db.models import Model, OuterRef, Q, Subquery
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.http import HttpRequest
from django.utils import timezone

from governance import gatelist, permissions
from governance.models import (
    EditorNomination,
    Project,
    SiteSettings,
    StoredSummary,
    SummaryRevision,
    User,
    summaries_changed,
)
from governance.tracker.local.models import LocalAccount, LocalBrowseGrant, LocalProject

_T = TypeVar("_T")
Computed = tuple[_T, datetime | None]

# The models whose saves and deletes change what a stored summary reads.
WATCHED = (Project, EditorNomination, SiteSettings, LocalProject, LocalBrowseGrant, LocalAccount)


def watch(*models: type[Model]) -> None:
    """Raise the revision on every save and delete of these models (an app's ready names the
    models of its own that a stored summary reads)."""
    for model in models:
        uid = f"summaries-{model._meta.label_lower}"
        post_save.connect(summaries_changed, sender=model, dispatch_uid=f"{uid}-save")
        post_delete.connect(summaries_changed, sender=model, dispatch_uid=f"{uid}-delete")


def connect() -> None:
    """The kernel's watched models and the browsers relation (the kernel's ready)."""
    watch(*WATCHED)
    m2m_changed.connect(
        summaries_changed, sender=LocalProject.browsers.through, dispatch_uid="summaries-browsers"
    )


def _audience(request: HttpRequest, depends: Sequence[Any]) -> str:
    text = json.dumps([*gatelist.audience(request), *depends], default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def read(
    request: HttpRequest,
    name: str,
    compute: Callable[[], Computed[_T]],
    *,
    depends: Sequence[Any] = (),
) -> _T:
    """The summary `name` of the reader: as stored while it holds (one statement), else
    `compute()` (the value, JSON, and the time it stops holding, None for never) stored at
    the revision read before computing it. Either way the value as JSON gives it back."""
    user = permissions.request_user(request)
    if user.pk is None:
        return compute()[0]
    audience = _audience(request, depends)
    value: _T
    for _ in range(2):
        stamp, text = _stored(user, name, audience)
        if text is not None:
            value = json.loads(text)
            return value
        computed, valid_until = compute()
        text = json.dumps(computed)
        # What a later read gives (tuples as lists, keys as text), the first time too.
        value = json.loads(text)
        if stamp is None:
            return value  # no revision to store it under
        # Stored only when nothing was written while it was read: a write meanwhile (the
        # computation's own, such as health rows derived on the way) is read again, once.
        if _stamp() == stamp:
            StoredSummary.objects.bulk_create(
                [
                    StoredSummary(
                        user=user,
                        name=name,
                        audience=audience,
                        revision=stamp,
                        valid_until=valid_until,
                        value=text,
                    )
                ],
                update_conflicts=True,
                unique_fields=["user", "name"],
                update_fields=["audience", "revision", "valid_until", "value"],
            )
            return value
    return value


def _stamp() -> int | None:
    return SummaryRevision.objects.filter(pk=1).values_list("stamp", flat=True).first()


def _stored(user: User, name: str, audience: str) -> tuple[int | None, str | None]:
    """The current revision and the reader's summary stored at it, still valid (or None), in
    one statement."""
    stored = StoredSummary.objects.filter(
        Q(valid_until__isnull=True) | Q(valid_until__gt=timezone.now()),
        user=user,
        name=name,
        audience=audience,
        revision=OuterRef("stamp"),
    )
    found = (
        SummaryRevision.objects.filter(pk=1)
        .annotate(value=Subquery(stored.values("value")[:1]))
        .values_list("stamp", "value")
        .first()
    )
    return (None, None) if found is None else found
