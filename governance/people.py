"""Display names and avatars for accountIds, resolved from the tracker in bulk at render time
and cached (names are never stored on governance records)."""

import datetime as dt
import time
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache

from governance.tracker import TrackerError, get_tracker

_PREFIX = "person:v1:"
# A longer-lived copy of each resolved person, used only when the tracker cannot answer.
_BACKUP = "person-backup:v1:"
BACKUP_SECONDS = 30 * 24 * 3600
# What a people picker says when the tracker cannot be searched (the page itself stays up,
# as the issue picker's does).
PEOPLE_SEARCH_DOWN = "People cannot be searched in the tracker right now; try again shortly."
# When the tracker could not answer during this request: the time the oldest name shown was
# resolved (epoch seconds), else None. Reset per request (AtlassianActingMiddleware).
names_as_of: ContextVar[float | None] = ContextVar("names_as_of", default=None)


@dataclass(frozen=True)
class Person:
    account_id: str
    display_name: str
    avatar_url: str = ""
    known: bool = True

    @property
    def initials(self) -> str:
        parts = [p for p in self.display_name.replace("(", " ").split() if p[:1].isalnum()]
        return "".join(p[0] for p in parts[:2]).upper() or "?"

    def as_seat(self) -> dict[str, Any]:
        return {
            "accountId": self.account_id,
            "displayName": self.display_name,
            "avatarUrl": self.avatar_url,
        }


def by_name(account_ids: Iterable[str], people: Mapping[str, Person]) -> list[str]:
    """These account ids in the order of their display names (`people`, as `resolve` gives
    them), as a list of people is offered to choose from; the id settles a tie."""

    def key(account_id: str) -> tuple[str, str]:
        found = people.get(account_id)
        return ((found.display_name if found else account_id).casefold(), account_id)

    return sorted(account_ids, key=key)


def _unknown(account_id: str) -> Person:
    return Person(
        account_id=account_id, display_name=f"Unknown user ({account_id[-6:]})", known=False
    )


def resolve(account_ids: Iterable[str | None]) -> dict[str, Person]:
    """One cache round trip, then one tracker call for the misses, whatever the count."""
    ids = sorted({a for a in account_ids if a})
    if not ids:
        return {}
    cached = cache.get_many([_PREFIX + a for a in ids])
    people = {key[len(_PREFIX) :]: Person(**value) for key, value in cached.items()}
    missing = [a for a in ids if a not in people]
    if missing:
        try:
            found = get_tracker().users_bulk(missing)
        except TrackerError:
            found = None
        if found is None:
            people.update(_from_backup(missing))
            return people
        fresh, backup = {}, {}
        now = time.time()
        for account_id in missing:
            user = found.get(account_id)
            person = (
                Person(account_id, user.display_name, user.avatar_url)
                if user
                else _unknown(account_id)
            )
            people[account_id] = person
            fresh[_PREFIX + account_id] = person.__dict__
            if user:
                backup[_BACKUP + account_id] = {"person": person.__dict__, "at": now}
        cache.set_many(fresh, timeout=settings.PEOPLE_CACHE_SECONDS)
        if backup:
            cache.set_many(backup, timeout=BACKUP_SECONDS)
    return people


def _from_backup(account_ids: list[str]) -> dict[str, Person]:
    """The tracker is not answering: the last names it gave, and note how old they are."""
    saved = cache.get_many([_BACKUP + a for a in account_ids])
    people = {}
    oldest = names_as_of.get()
    for account_id in account_ids:
        entry = saved.get(_BACKUP + account_id)
        if entry:
            people[account_id] = Person(**entry["person"])
            oldest = min(oldest or entry["at"], entry["at"])
        else:
            people[account_id] = _unknown(account_id)
            oldest = oldest or time.time()
    names_as_of.set(oldest)
    return people


def forget(account_ids: Iterable[str]) -> None:
    cache.delete_many([_PREFIX + a for a in account_ids if a])


def stale_names_since() -> dt.datetime | None:
    """When names on this page come from a saved copy because the tracker did not answer:
    the datetime of the oldest; else None."""
    import datetime as dt

    stamp = names_as_of.get()
    return dt.datetime.fromtimestamp(stamp, tz=dt.UTC) if stamp else None


def browsers_among(project_key: str, account_ids: Iterable[str | None]) -> set[str]:
    """Which of these people can browse the project: the tracker's bulk answer where it has
    one, else one question per person."""
    from governance.tracker import get_tracker

    tracker = get_tracker()
    ids = {a for a in account_ids if a}
    bulk = getattr(tracker, "browsers_among", None)
    if bulk is not None:
        return set(bulk(project_key, ids))
    return {a for a in ids if tracker.can_browse(a, project_key)}


def search_browsers(project_key: str, query: str, *, limit: int = 20) -> list[Any]:
    """People who may browse the project matching `query`: the tracker's own filtered search
    where it has one (one request), else its people search filtered by `browsers_among`."""
    from governance.tracker import get_tracker

    tracker = get_tracker()
    search = getattr(tracker, "search_browsers", None)
    if search is not None:
        return list(search(project_key, query, limit=limit))
    found = tracker.search_users(query, limit=limit)
    browsers = browsers_among(project_key, [u.account_id for u in found])
    return [u for u in found if u.account_id in browsers]
