"""The audit log as people read it: one sentence per entry with names ("Lena Lindqvist raised
change request “Extend pilot”"), and the changed fields as label: before -> after. The stored
entry (codes, ids, JSON) is untouched; the page keeps it one click away.

The kernel does not know the registers or the business case, so each app that audits a kind
of record tells this module how to name its records (`register_titles`), in its AppConfig."""

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from django.db.models import Model

from governance import formatting, labels
from governance.models import AuditEntry
from governance.people import Person, resolve

# target type -> (the record's noun, fetch(ids) -> {id: title})
_TITLES: dict[str, tuple[str, Callable[[list[str]], dict[str, str]]]] = {}

NOUNS: dict[str, str] = {
    "project": "the project",
    "siteSettings": "the site settings",
    "apiToken": "API token",
    "oauthClient": "connected MCP client",
}
# kind -> what the person did, before the record's name ("raised change request “X”").
VERBS: dict[str, str] = {"created": "added", "updated": "edited", "deleted": "deleted"}
# kinds about the project's business case, status or settings: the whole phrase.
PHRASES: dict[str, str] = {
    "project.editors_changed": "changed who may edit the project",
    "site_settings.updated": "changed the site settings",
    "token.created": "created an API token",
    "token.revoked": "revoked an API token",
    "oauth_client.revoked": "disconnected an MCP client",
}
# What happened without a person (a consequence of another act, itself audited).
IMPERSONAL: dict[str, str] = {}
# Fields that say when and by whom: the entry says it already.
NOISE = {"updatedAt", "lastUpdatedAt", "lastUpdatedByAccountId", "revision", "updatedByAccountId"}
TITLE_FIELDS = ("summary", "title", "name", "decision")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


# The first word of a kind as a noun ("work_package" -> "work package"), where it is not its words.
KIND_NOUNS: dict[str, str] = {}


def register_app_words(vocabulary: ModuleType) -> None:
    """An app's `vocabulary` module (LABEL_STATES, LABEL_CHOICES, LABEL_FIELDS and AUDIT_*)
    registered with the label tables and the audit log's words, from its AppConfig.ready().
    A module leaves out the tables it has no words for."""

    def table(name: str) -> dict[str, str]:
        words: dict[str, str] = getattr(vocabulary, name, {})
        return words

    labels.register(
        states=table("LABEL_STATES"),
        choices=table("LABEL_CHOICES"),
        fields=table("LABEL_FIELDS"),
    )
    # The audit log's words: record nouns, the verbs and whole phrases of its kinds, what
    # happens without a person.
    NOUNS.update(table("AUDIT_NOUNS"))
    VERBS.update(table("AUDIT_VERBS"))
    PHRASES.update(table("AUDIT_PHRASES"))
    IMPERSONAL.update(table("AUDIT_IMPERSONAL"))
    KIND_NOUNS.update(table("AUDIT_KIND_NOUNS"))


def register_titles(
    target_type: str, fetch: Callable[[list[str]], dict[str, str]], noun: str | None = None
) -> None:
    """How to name the records of one target type: fetch(ids) -> {id: title}, one query."""
    _TITLES[target_type] = (
        noun or NOUNS.get(target_type, labels.words(target_type).lower()),
        fetch,
    )


def titles_from(model: type[Model], attr: str) -> Callable[[list[str]], dict[str, str]]:
    """The `fetch` of `register_titles` for records named by one of their fields."""
    return lambda ids: {
        str(pk): text
        for pk, text in model._default_manager.filter(pk__in=ids).values_list("pk", attr)
    }


def named_type(field: str) -> str | None:
    """The kind of record a change's field holds the id of, where its titles are registered:
    `decisionId`, `treatingDecisionId` and `changeRequestId` name a decision, a decision and a
    change request."""
    for target_type in _TITLES:
        suffix = f"{target_type[:1].upper()}{target_type[1:]}Id"
        if field == f"{target_type}Id" or field.endswith(suffix):
            return target_type
    return None


def _record_ids(value: Any) -> list[str]:
    if isinstance(value, str) and _UUID.fullmatch(value):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and _UUID.fullmatch(v)]
    return []


def kind_label(kind: str) -> str:
    """A kind for the filter: "Change request raised", "Business case approved"."""
    if kind in PHRASES:
        text = PHRASES[kind]
        return text[:1].upper() + text[1:]
    if kind in IMPERSONAL:
        return IMPERSONAL[kind].split(":")[0]
    head, _, act = kind.partition(".")
    noun = KIND_NOUNS.get(head, head.replace("_", " "))
    verb = VERBS.get(kind) or VERBS.get(act) or act.replace("_", " ")
    text = f"{verb} {noun}"
    return text[:1].upper() + text[1:]


@dataclass
class Change:
    label: str
    before: str
    after: str
    created: bool = False


@dataclass
class Line:
    entry: AuditEntry
    actor: Person | None
    sentence: str
    record: str = ""
    changes: list[Change] = field(default_factory=list)

    @property
    def raw(self) -> str:
        return json.dumps(
            {
                "kind": self.entry.kind,
                "targetType": self.entry.target_type,
                "targetId": self.entry.target_id,
                "actorAccountId": self.entry.actor_account_id,
                "changes": self.entry.changes,
            },
            indent=2,
            ensure_ascii=False,
        )


def _date(value: str) -> str:
    if _ISO_DATETIME.match(value):
        return formatting.moment(value)
    if _ISO_DATE.fullmatch(value):
        return formatting.day(value)
    return value


def _titled(target_type: str, value: Any, titles: Mapping[tuple[str, str], str]) -> Any:
    """A record's id (or a list of them) as its title, where the record is still there."""
    if isinstance(value, list):
        return [_titled(target_type, v, titles) for v in value]
    if isinstance(value, str):
        return titles.get((target_type, value), value)
    return value


def _value(name: str, value: Any, people: Mapping[str, Person]) -> str:
    """A stored value as short readable text: people by name, dates as dates, codes as words."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        if _ISO_DATE.match(value):
            return _date(value)
        person = people.get(value)
        if person is not None and (person.known or name.endswith("AccountId")):
            return person.display_name
        text = labels.label(value)
        return text if len(text) <= 200 else text[:199] + "…"
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return ", ".join(_value(name, v, people) for v in value)
        return f"{len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        if "accountId" in value or "displayName" in value:
            person = people.get(value.get("accountId") or "")
            return person.display_name if person else value.get("displayName") or "—"
        if "text" in value:
            return _value(name, value["text"], people)
        if "title" in value:
            return str(value["title"])
        if value and all(_UUID.fullmatch(str(k)) for k in value):
            return f"{len(value)} record{'s' if len(value) != 1 else ''}"
        return (
            ", ".join(
                f"{labels.field_label(k).lower()} {_value(k, v, people)}"
                for k, v in value.items()
                if v not in (None, "", [], {})
            )
            or "—"
        )
    if isinstance(value, int | float):
        return f"{value:,}".replace(",", "\u202f") if abs(value) >= 10000 else str(value)
    return str(value)


def _account_ids(value: Any) -> Iterable[str]:
    if (
        isinstance(value, str)
        and ":" in value
        and " " not in value
        and len(value) <= 128
        and not _ISO_DATE.match(value)
        and "://" not in value
    ):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            if key == "accountId" or key.endswith("AccountId") or isinstance(inner, dict | list):
                yield from _account_ids(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _account_ids(inner)


def _title_from_changes(entry: AuditEntry) -> str:
    for name in TITLE_FIELDS:
        change = (entry.changes or {}).get(name)
        if isinstance(change, dict):
            value = change.get("after") or change.get("before")
            if isinstance(value, str) and value:
                return value
    return ""


def _plain_dict(value: Any) -> bool:
    """A dict of named fields (not a person, not a map of records by id)."""
    return (
        isinstance(value, dict)
        and "accountId" not in value
        and "displayName" not in value
        and not any(_UUID.fullmatch(str(k)) for k in value)
    )


def _expand(name: str, before: Any, after: Any) -> list[tuple[str, Any, Any]]:
    """A changed object (the close-out, the financial case) as the fields in it that changed,
    one level down: "Close-out, as-built outcome: — → Delivered"."""
    expands = (_plain_dict(before) or before is None) and _plain_dict(after)
    if expands or (_plain_dict(before) and after is None):
        before, after = before or {}, after or {}
        return [
            (f"{name}.{key}", before.get(key), after.get(key))
            for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)
        ]
    return [(name, before, after)]


def describe(entries: list[AuditEntry], *, record_known: bool = False) -> list[Line]:
    """Each entry as a sentence and its changes, with every name resolved in bulk (one
    people call; one query per kind of record)."""
    ids: set[str] = set()
    by_type: dict[str, set[str]] = {}
    for entry in entries:
        ids.add(entry.actor_account_id)
        for name, change in (entry.changes or {}).items():
            if isinstance(change, dict):
                ids.update(_account_ids(change.get("before")))
                ids.update(_account_ids(change.get("after")))
                named = named_type(name)
                if named is not None:
                    for value in (change.get("before"), change.get("after")):
                        by_type.setdefault(named, set()).update(_record_ids(value))
        if entry.target_type in _TITLES and entry.target_id:
            by_type.setdefault(entry.target_type, set()).add(entry.target_id)
    people = resolve(ids)
    titles: dict[tuple[str, str], str] = {}
    for target_type, target_ids in by_type.items():
        _, fetch = _TITLES[target_type]
        for target_id, title in fetch(sorted(target_ids)).items():
            titles[(target_type, str(target_id))] = title
    return [_line(entry, people, titles, record_known) for entry in entries]


def _line(
    entry: AuditEntry,
    people: Mapping[str, Person],
    titles: Mapping[tuple[str, str], str],
    record_known: bool,
) -> Line:
    actor = people.get(entry.actor_account_id) if entry.actor_account_id else None
    who = actor.display_name if actor else (entry.actor_account_id or "")
    kind = entry.kind
    record = ""
    if kind in IMPERSONAL:
        sentence = IMPERSONAL[kind]
    elif kind in PHRASES:
        sentence = f"{who} {PHRASES[kind]}" if who else PHRASES[kind]
    else:
        noun = _TITLES.get(entry.target_type, (NOUNS.get(entry.target_type, ""), None))[0]
        noun = noun or labels.words(entry.target_type).lower()
        act = kind.partition(".")[2]
        verb = VERBS.get(kind) or VERBS.get(act) or act.replace("_", " ")
        title = titles.get((entry.target_type, entry.target_id)) or _title_from_changes(entry)
        record = title
        named = f"{noun} “{title}”" if title else noun
        if record_known:
            named = f"this {noun}"
        sentence = f"{who} {verb} {named}" if who else f"{verb[:1].upper()}{verb[1:]} {named}"
    created = kind.endswith(".created") or kind.endswith(".recorded")
    changes = []
    flat = []
    for name, change in sorted((entry.changes or {}).items(), key=lambda kv: kv[0]):
        if name in NOISE or not isinstance(change, dict):
            continue
        flat.extend(_expand(name, change.get("before"), change.get("after")))
    for name, before, after in flat:
        if name.rpartition(".")[2] in NOISE:
            continue
        if created and after in (None, "", [], {}, False):
            continue
        if before in (None, "", [], {}) and after in (None, "", [], {}):
            continue
        record_type = named_type(name)
        if record_type is not None:
            before, after = (_titled(record_type, v, titles) for v in (before, after))
        changes.append(
            Change(
                labels.field_label(name),
                _value(name, before, people),
                _value(name, after, people),
                created=created or before is None,
            )
        )
    return Line(entry, actor, sentence, record, changes)
