"""The people picker every page form uses to name a person (an owner, a maker, a proposer, an
approver): the project's people as choices, display name first (with the e-mail where two
share a name), the accountId as the value; and the server-side check that a person sent is
one of them."""

import contextlib
from collections import Counter
from collections.abc import Iterable

from governance import services as kernel_services
from governance.models import Project
from governance.people import browsers_among, resolve, search_browsers
from governance.tracker import TrackerError, get_tracker

NOT_AMONG = "Choose one of the people of {key}: the person given cannot see the project."


def _told_apart(people: dict[str, str]) -> dict[str, str]:
    """Each person's words in a list: the display name, with the e-mail (else the end of the
    accountId) where two people share it."""
    shared = Counter(name.casefold() for name in people.values())
    twins = [a for a, name in people.items() if shared[name.casefold()] > 1]
    if not twins:
        return people
    emails: dict[str, str] = {}
    with contextlib.suppress(TrackerError):
        emails = {a: u.email for a, u in get_tracker().users_bulk(twins).items() if u.email}
    told = dict(people)
    for account_id in twins:
        told[account_id] = f"{people[account_id]} ({emails.get(account_id) or account_id[-6:]})"
    return told


def people_choices(project: Project, current: Iterable[str | None] = ()) -> list[tuple[str, str]]:
    """The picker's choices, (accountId, words) sorted by name: of the project's lead,
    editors, sponsor and steering committee and the tracker's people directory, those who
    can browse the project; and whoever the record already names. Resolved in one call."""
    current = [a for a in current if a]
    ids = {
        project.lead_account_id,
        project.sponsor_account_id,
        *kernel_services.editor_account_ids(project),
        *(project.steering_account_ids or []),
        *current,
    }
    with contextlib.suppress(TrackerError):  # the picker still offers the known people
        ids.update(u.account_id for u in search_browsers(project.key, "", limit=100))
    ids.discard(None)
    ids.discard("")
    # Only people who can browse the project are offered (and whoever the record names now).
    ids = browsers_among(project.key, ids) | set(current)
    words = _told_apart({a: p.display_name for a, p in resolve(ids).items()})
    return sorted(words.items(), key=lambda pair: pair[1].casefold())


def choices_of(account_ids: Iterable[str | None]) -> list[tuple[str, str]]:
    """The picker's choices for a given set of people (a filter across projects: their
    leads), in the same words and order."""
    words = _told_apart({a: p.display_name for a, p in resolve(account_ids).items()})
    return sorted(words.items(), key=lambda pair: pair[1].casefold())


def strangers(
    project: Project, named: dict[str, str], allowed: Iterable[str] = ()
) -> dict[str, list[str]]:
    """The picked people ({field: accountId}) who are not among the project's people (who
    cannot browse it), each refused on its field; `allowed`: people kept whatever (whoever
    the record names now)."""
    wanted = {field: a for field, a in named.items() if a and a not in set(allowed)}
    if not wanted:
        return {}
    try:
        known = browsers_among(project.key, wanted.values())
    except TrackerError:
        return {}  # the services still refuse a person the tracker does not know
    return {
        field: [NOT_AMONG.format(key=project.key)]
        for field, account_id in wanted.items()
        if account_id not in known
    }
