"""Summaries over every project a reader can view, stored per reader and read again while
nothing they read has changed: the one cache of the pages across projects.

What it buys (record 0308, measured at 1,000 and 10,000 projects): each of these is a pass
over every viewable row, and at 10,000 projects costs PostgreSQL, a request:
- the portfolio's summary and heat grid (61 ms), theme choices (34 ms), bubbles (26 ms) and
  lead choices (21 ms);
- whether a project lacks a current row (11 ms);
- the project list's counts (15 ms);
- the investment ranks (22-24 ms).
While they hold, each is two small reads instead (the revision's rows and the reader's row).
A request after a write reads them again (what the pages cost without it) and stores them.

Keyed by what they depend on:
- the reader and their audience (`gatelist.audience`: the tracker, the governance group and
  membership, a listed tracker's ids) and what the caller adds (`depends`: the health basis,
  the deployed version);
- the revision of the facts (`SummaryRevision`), raised in the transaction of every write of
  what the summaries read: the stored health rows (`status.health`, a save, a delete through
  `ProjectHealthQuerySet`), the projects (a save or
  delete through the signals connected here, an update or bulk write through
  `ProjectQuerySet`), editor nominations, the site settings and the local tracker's projects,
  accounts and grants; an app above names its own models through `watch` (the status app its
  health rows, the investment app its scores, model versions and criteria); a bulk write calls
  `summaries_changed` itself;
- the time the soonest-expiring row they read stops being current (`valid_until`), so a
  summary never outlives the rows the page would derive again.

A summary read at a revision is stored under that revision only: a write that commits while
it is read raises the revision, and the summary is never answered after it. The revision is
REVISION_SHARDS rows (`summaries_changed` raises one no other open transaction holds), so a
long writer never stalls the others."""

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

from django.db.models import Model, Q
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.http import HttpRequest
from django.utils import timezone

from governance import cleaning, gatelist, permissions
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


def watch(*models: type[Model], deletes: bool = True) -> None:
    """Raise the revision on every save (and, with `deletes`, every delete) of these models:
    an app's ready names the models of its own that a stored summary reads. A model whose rows
    are deleted in bulk (the health rows) raises it from its queryset's `delete` instead: a
    delete signal makes Django read and signal every row it deletes."""
    for model in models:
        uid = f"summaries-{model._meta.label_lower}"
        post_save.connect(summaries_changed, sender=model, dispatch_uid=f"{uid}-save")
        if deletes:
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
    """The summary `name` of the reader: as stored while it holds (two small statements: the
    revision and the reader's row), else `compute()` (the value, JSON, and the time it stops
    holding, None for never) stored at the revision read before computing it. Either way the
    value as JSON gives it back, money to the cent (`cleaning.Money`)."""
    user = permissions.request_user(request)
    if user.pk is None:
        return compute()[0]
    audience = _audience(request, depends)
    value: _T
    for _ in range(2):
        revision = _revision()
        text = _stored(user, name, audience, revision)
        if text is not None:
            value = _loads(text)
            return value
        computed, valid_until = compute()
        text = cleaning.json_text(computed)
        # What a later read gives (tuples as lists, keys as text), the first time too.
        value = _loads(text)
        if revision is None:
            return value  # no revision to store it under
        # Stored only when nothing was written while it was read: a write meanwhile (the
        # computation's own, such as health rows derived on the way) is read again, once.
        if _revision() == revision:
            StoredSummary.objects.bulk_create(
                [
                    StoredSummary(
                        user=user,
                        name=name,
                        audience=audience,
                        revision=revision,
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


def _revision() -> int | None:
    """The revision the rows' stamps name together (63 bits of their digest); None while no
    row is made."""
    stamps = list(SummaryRevision.objects.order_by("pk").values_list("stamp", flat=True))
    if not stamps:
        return None
    digest = hashlib.sha256(",".join(map(str, stamps)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _stored(user: User, name: str, audience: str, revision: int | None) -> str | None:
    """The reader's summary stored at `revision` for `audience`, still valid, or None."""
    if revision is None:
        return None
    found: str | None = (
        StoredSummary.objects.filter(
            Q(valid_until__isnull=True) | Q(valid_until__gt=timezone.now()),
            user=user,
            name=name,
            audience=audience,
            revision=revision,
        )
        .values_list("value", flat=True)
        .first()
    )
    return found


def _loads(text: str) -> Any:
    """JSON written by `cleaning.json_text`, each number as the app made it: an amount a float
    cannot hold exactly back as `cleaning.Money` (its digits), every other as before."""
    return json.loads(text, parse_float=_number)


def _number(text: str) -> float:
    number = float(text)
    if "e" in text.lower() or repr(number) == text:
        return number
    return cleaning.Money(Decimal(text))
