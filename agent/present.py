"""An action's JSON result as the Assistant page shows it: the main facts in words, the lists
as rows with a link to each page. Generic over the catalogue (no per-action template)."""

from typing import Any

from agent.forms import is_person, label
from governance import labels
from governance.people import resolve

MAIN = ("name", "title", "decision", "summary", "what", "text", "kind")
HIDDEN = {"link", "id", "revision", "done", "nextCursor", "description", "targetId"}


def _account_ids(value: Any, found: set[str]) -> set[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key.endswith("AccountId") and isinstance(item, str) and item:
                found.add(item)
            else:
                _account_ids(item, found)
    elif isinstance(value, list):
        for item in value:
            _account_ids(item, found)
    return found


def _with_names(value: Any, people: dict[str, Any]) -> Any:
    """Account ids replaced by people's names (keys `xAccountId` become `x`)."""
    if isinstance(value, dict):
        named = {}
        for key, item in value.items():
            if key.endswith("AccountId") and isinstance(item, str | None):
                person = people.get(item) if item else None
                named[key[: -len("AccountId")]] = person.display_name if person else None
            else:
                named[key] = _with_names(item, people)
        return named
    if isinstance(value, list):
        return [_with_names(v, people) for v in value]
    return value


def _scalar(value: Any) -> str:
    if value is None:
        return "none"
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if isinstance(value, dict):
        return " · ".join(f"{label(k)} {_scalar(v)}" for k, v in value.items() if v not in ({}, []))
    if isinstance(value, list):
        return ", ".join(_scalar(v) for v in value)
    return str(value)


def _item(entry: dict[str, Any]) -> dict[str, Any]:
    main = next((entry[k] for k in MAIN if entry.get(k)), "") or entry.get("projectKey", "")
    bits = [
        (label(k), _scalar(v))
        for k, v in entry.items()
        if k not in HIDDEN and k not in MAIN and not isinstance(v, list | dict)
    ]
    nested = [(label(k), _scalar(v)) for k, v in entry.items() if isinstance(v, dict | list) and v]
    return {
        "key": entry.get("projectKey", ""),
        "text": str(main),
        "link": entry.get("link"),
        "bits": [b for b in bits if b[0] != "Project"],
        "nested": nested,
    }


def present(result: Any) -> dict[str, Any]:
    result = _with_names(result, resolve(_account_ids(result, set())))
    if not isinstance(result, dict):
        return {"facts": [("Result", _scalar(result))], "lists": [], "link": None}
    facts, lists = [], []

    def walk(prefix: str, body: dict[str, Any]) -> None:
        for key, value in body.items():
            if key in HIDDEN:
                continue
            name = f"{prefix}{label(key)}" if not prefix else f"{prefix} · {label(key).lower()}"
            if key == "items":
                name = prefix or "Results"
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                lists.append({"title": name, "items": [_item(v) for v in value]})
            elif isinstance(value, list) and not value and key == "items":
                lists.append({"title": prefix or "Results", "items": []})
            elif isinstance(value, dict) and ("items" in value or key in ("dimensions",)):
                if key == "dimensions":
                    lists.append(
                        {
                            "title": name,
                            "items": [
                                _item({"name": label(k), **v})
                                for k, v in value.items()
                                if isinstance(v, dict)
                            ],
                        }
                    )
                else:
                    walk(name, value)
            else:
                facts.append((name, _scalar(value)))

    walk("", result)
    return {"facts": facts, "lists": lists, "link": result.get("link"), "done": result.get("done")}


def kind_label(kind: str) -> str:
    """An audit kind in words: "work_package.updated" -> "Work package updated"."""
    words = kind.replace("_", " ").replace(".", " ")
    return words[:1].upper() + words[1:]


def proposal_label(kind: str) -> str:
    """What a proposed write does, in words: "risk.created" -> "New risk"."""
    thing, _, act = kind.partition(".")
    thing = thing.replace("_", " ")
    return {
        "created": f"New {thing}",
        "updated": f"Changes to the {thing}",
        "made": f"The {thing} recorded as made",
        "note_added": f"A note on the {thing}",
    }.get(act, kind_label(kind))


def preview_rows(preview: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A proposal's changes as the card shows them: what, where, and each field's before and
    after."""
    rows = []
    people = resolve(
        value
        for entry in preview
        for name, change in (entry.get("changes") or {}).items()
        if is_person(name)
        for value in (change.get("before"), change.get("after"))
        if isinstance(value, str)
    )
    for entry in preview:
        changes = entry.get("changes") or {}
        names = sorted(changes, key=lambda n: (n not in MAIN, n))
        fields = []
        for name in names:
            if name in ("updatedAt", "createdAt", "lastUpdatedAt", "lastUpdatedByAccountId"):
                continue
            before, after = changes[name].get("before"), changes[name].get("after")
            if before is None and after in (None, "", False, [], {}):
                continue  # a new record's empty fields say nothing
            if is_person(name):  # the person by name, the field by its label
                fields.append((labels.label(name), _name(before, people), _name(after, people)))
                continue
            fields.append((label(name), _word(before), _word(after)))
        rows.append(
            {
                "what": proposal_label(entry["kind"]),
                "projectKey": entry.get("projectKey", ""),
                "fields": fields,
            }
        )
    return rows


def _name(value: Any, people: dict[str, Any]) -> Any:
    person = people.get(value) if isinstance(value, str) else None
    return person.display_name if person else value


def _word(value: Any) -> Any:
    return {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value
