"""The project's people: who they are, how two of the same name are told apart, and a person
written by name, e-mail or accountId matched against them. The people pickers
(governance.picker), the import and its template (registers), the assistant and the people
searches read them here, so a person offered by one is the person the others take.

Who: the people who may browse the project, as far as the app knows them. Where the tracker
lists a project's browsers (`project_people`), that list. Else the union of the project's
role holders (lead, sponsor, BAU owner, steering seats, nominated editors), the site's
signed-in people and the first `LISTED` people of the tracker's search of its browsers, kept
to those who may browse it.

Told apart: people whose display names are the same (case- and whitespace-insensitively)
are told apart by their e-mail, else by their accountId (`mark`). A list shows such a person
as "Ann Lee (ann.lee@example.test)"; the import template writes the mark alone; the import
reads either, and refuses the bare name, naming the marks."""

import contextlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from governance.cleaning import control_error
from governance.models import Project, User
from governance.people import browsers_among, resolve, search_browsers
from governance.permissions import editor_account_ids
from governance.tracker import TrackerError, get_tracker

# How many of the tracker's browsers its people search gives where it cannot list them all.
LISTED = 100
# Longer than any accountId (128), e-mail address (254) or display name (200) the tracker
# holds: refused before anything else looks at it.
MAX_PERSON_CHARS = 320
# A person as a list shows them: a name, then what tells them apart in brackets.
_WITH_MARK = re.compile(r"^(?P<name>.*?\S)\s*\((?P<mark>[^()]+)\)$")


# --- who the project's people are -------------------------------------------------------------


def role_holders(project: Project) -> set[str]:
    """The people the project names in a role: its lead, sponsor, BAU owner, steering seats
    and nominated editors (one query)."""
    ids = {
        project.lead_account_id,
        project.sponsor_account_id,
        project.bau_owner_account_id,
        *(project.steering_account_ids or []),
        *editor_account_ids(project),
    }
    return {a for a in ids if a}


def _listing(project: Project) -> list[Any] | None:
    """The tracker's list of the project's browsers, where it has one (one call)."""
    listing = getattr(get_tracker(), "project_people", None)
    return list(listing(project.key)) if listing is not None else None


def _known_browsers(project: Project) -> set[str]:
    """Without the tracker's list: the role holders, the signed-in people and the tracker's
    first `LISTED` browsers, kept to those who may browse the project."""
    ids = role_holders(project)
    ids.update(User.objects.exclude(account_id="").values_list("account_id", flat=True))
    with contextlib.suppress(TrackerError):  # the people the app knows are still there
        ids.update(u.account_id for u in search_browsers(project.key, "", limit=LISTED))
    return browsers_among(project.key, ids)


def member_ids(project: Project) -> set[str]:
    """The accountIds of the project's people."""
    listed = _listing(project)
    if listed is not None:
        return {u.account_id for u in listed}
    return _known_browsers(project)


# --- telling two of one name apart -------------------------------------------------------------


def name_key(text: str) -> str:
    """A display name compared case- and whitespace-insensitively."""
    return " ".join(text.split()).casefold()


def mark(account_id: str, email: str | None) -> str:
    """What tells a person apart from another of the same name: their e-mail, else their
    accountId (the whole of it, which the import reads back)."""
    return (email or "").strip() or account_id


def twins(names: Mapping[str, str]) -> set[str]:
    """The accountIds of `names` ({accountId: display name}) whose name another shares."""
    seen: dict[str, list[str]] = {}
    for account_id, name in names.items():
        seen.setdefault(name_key(name), []).append(account_id)
    return {a for same in seen.values() if len(same) > 1 for a in same}


def shown(names: Mapping[str, str]) -> dict[str, str]:
    """Each person's words in a list ({accountId: words}): the display name, with the mark in
    brackets where another of `names` shares it (their e-mails in one tracker call)."""
    alike = twins(names)
    if not alike:
        return dict(names)
    emails: dict[str, str] = {}
    with contextlib.suppress(TrackerError):  # the accountIds still tell them apart
        emails = {a: u.email for a, u in get_tracker().users_bulk(alike).items()}
    return _words(names, emails, alike)


def words_of(users: Iterable[Any]) -> dict[str, str]:
    """`shown` for people the tracker gave with their e-mails (a people search's results),
    with no further call."""
    listed = list(users)
    names = {u.account_id: u.display_name for u in listed}
    return _words(names, {u.account_id: u.email for u in listed}, twins(names))


def _words(names: Mapping[str, str], emails: Mapping[str, str], alike: set[str]) -> dict[str, str]:
    return {
        a: f"{name} ({mark(a, emails.get(a))})" if a in alike else name for a, name in names.items()
    }


def choices(account_ids: Iterable[str | None]) -> list[tuple[str, str]]:
    """A people picker's choices, (accountId, words) in the order of the words: the names
    resolved in one call, those of one name told apart."""
    words = shown({a: p.display_name for a, p in resolve(account_ids).items()})
    return sorted(words.items(), key=lambda pair: pair[1].casefold())


# --- a person written as a spreadsheet or a person would write them --------------------------


def _quoted(text: str) -> str:
    return f"“{text[:80]}…”" if len(text) > 80 else f"“{text}”"


@dataclass(frozen=True)
class PersonMatch:
    """What a written person is: `account_id` when found (None for a blank cell), else
    `problem`, the sentence a person reads."""

    account_id: str | None
    problem: str | None = None


class ProjectPeople:
    """The project's people (`project_people`), loaded once, looked up in dicts: a written
    person is matched by exact accountId, then by e-mail (case-insensitively), then by display
    name (case- and whitespace-insensitively), then as a list shows one of two people of one
    name ("Ann Lee (ann.lee@example.test)"). `match_all` answers many values with at most one
    more tracker call (accountIds of people outside the project's list)."""

    def __init__(self, users: Iterable[Any]) -> None:
        self.by_id: dict[str, Any] = {}
        self.by_email: dict[str, list[Any]] = {}
        self.by_name: dict[str, list[Any]] = {}
        for user in users:
            if user.account_id in self.by_id:
                continue
            self.by_id[user.account_id] = user
            if user.email:
                self.by_email.setdefault(user.email.strip().casefold(), []).append(user)
            self.by_name.setdefault(name_key(user.display_name), []).append(user)

    def written(self) -> list[str]:
        """How the import template writes each person, as `match` reads them back: the
        display name, or the mark where two share the name; in the order of the names."""
        users = sorted(self.by_id.values(), key=lambda u: (name_key(u.display_name), u.email))
        return [
            mark(u.account_id, u.email)
            if len(self.by_name[name_key(u.display_name)]) > 1
            else u.display_name
            for u in users
        ]

    def _one_of_twins(self, text: str) -> str | None:
        """The accountId of "Name (mark)", as a list shows one of two people of one name."""
        found = _WITH_MARK.match(text)
        if not found:
            return None
        wanted = found["mark"].strip().casefold()
        named = self.by_name.get(name_key(found["name"]), [])
        hits = [u for u in named if mark(u.account_id, u.email).casefold() == wanted]
        return hits[0].account_id if len(hits) == 1 else None

    def match(self, value: Any) -> PersonMatch | str:
        """A match, or the cleaned text when it may be an accountId of someone outside the
        project's list (the tracker is asked: `match_all`)."""
        if value is None:
            return PersonMatch(None)
        value = value if isinstance(value, str) else str(value)
        if len(value) > MAX_PERSON_CHARS:
            return PersonMatch(
                None,
                f"Too long to be a person ({len(value):,} characters): write their e-mail "
                "address, display name or account id.",
            )
        refused = control_error(value)
        if refused:
            return PersonMatch(None, refused)
        text: str = value.strip()
        if not text:
            return PersonMatch(None)
        if text in self.by_id:
            return PersonMatch(text)
        if "@" in text:
            found = self.by_email.get(text.casefold(), [])
            if len(found) == 1:
                return PersonMatch(found[0].account_id)
            if found:
                ids = ", ".join(u.account_id for u in found)
                return PersonMatch(
                    None,
                    f"{len(found)} people have the e-mail {_quoted(text)}: {ids} — write the "
                    "account id.",
                )
        found = self.by_name.get(name_key(text), [])
        if len(found) == 1:
            return PersonMatch(found[0].account_id)
        if found:
            return PersonMatch(None, _same_name(text, found))
        twin = self._one_of_twins(text)
        if twin is not None:
            return PersonMatch(twin)
        if "@" in text:
            return PersonMatch(None, f"No one in this project has the e-mail {_quoted(text)}.")
        if any(c.isspace() for c in text) or len(text) > 128:
            return PersonMatch(None, f"No one in this project is called {_quoted(text)}.")
        return text

    def match_all(self, values: Iterable[Any]) -> dict[Any, PersonMatch]:
        """Each distinct value's match; the values that may be accountIds of people outside
        the project's list are resolved in one call (`resolve`)."""
        answers: dict[Any, PersonMatch] = {}
        outside: dict[Any, str] = {}
        for value in values:
            if value in answers or value in outside:
                continue
            found = self.match(value)
            if isinstance(found, str):
                outside[value] = found
            else:
                answers[value] = found
        known = resolve(outside.values()) if outside else {}
        for value, text in outside.items():
            person = known.get(text)
            answers[value] = (
                PersonMatch(text)
                if person is not None and person.known
                else PersonMatch(
                    None,
                    f"No one in this project is called {_quoted(text)} or has that account id.",
                )
            )
        return answers


def _same_name(text: str, found: list[Any]) -> str:
    """The refusal of a name two people share, naming what tells them apart (`mark`)."""
    marks = ", ".join(mark(u.account_id, u.email) for u in found)
    emails = sum(1 for u in found if u.email)
    write = {len(found): "e-mail", 0: "account id"}.get(emails, "e-mail or account id")
    return f"{len(found)} people are called {_quoted(text)}: {marks} — write the {write}."


def project_people(project: Project) -> ProjectPeople:
    """The project's people with their e-mails, to match written people against: the
    tracker's list in one call where it has one; else those the app knows who may browse the
    project (`member_ids`), looked up in one bulk call."""
    listed = _listing(project)
    if listed is not None:
        return ProjectPeople(listed)
    try:
        ids = _known_browsers(project)
        users = get_tracker().users_bulk(ids)
    except TrackerError:
        return ProjectPeople([])
    return ProjectPeople(users[a] for a in sorted(ids) if a in users)
