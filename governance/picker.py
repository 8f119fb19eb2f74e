"""The people picker every page form uses to name a person (an owner, a maker, a proposer, an
approver): the project's people as choices (governance.roster: who they are, and two of one
name told apart), the accountId as the value; and the server-side check that a person sent is
one of them."""

from collections.abc import Iterable

from governance import roster
from governance.models import Project
from governance.people import browsers_among
from governance.tracker import TrackerError

NOT_AMONG = "Choose one of the people of {key}: the person given cannot see the project."


def people_choices(project: Project, current: Iterable[str | None] = ()) -> list[tuple[str, str]]:
    """The picker's choices, (accountId, words) in the order of the words: the project's
    people (governance.roster: those who may browse it) and whoever the record already
    names, those of one name told apart by their e-mail, else their accountId."""
    return roster.choices(roster.member_ids(project) | {a for a in current if a})


def choices_of(account_ids: Iterable[str | None]) -> list[tuple[str, str]]:
    """The picker's choices for a given set of people (a filter across projects: their
    leads), in the same words and order."""
    return roster.choices(account_ids)


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
