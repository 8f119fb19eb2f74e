"""The catalogue as forms, generated from each action's JSON Schema (the Assistant page
without a language model), and the arguments read back from a submitted form."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.http import QueryDict


import re
from typing import Any

from agent.catalogue import Action
from governance.labels import in_message
from governance.labels import label as choice_label

# Words for the arguments' names where splitting the camelCase name is not enough.
LABELS = {
    "projectKey": "Project",
    "q": "Words",
    "minScore": "Score at least",
    "pendingForDaysAtLeast": "Pending for at least (days)",
    "riskId": "Risk",
    "workPackageId": "Work package",
    "decisionId": "Decision",
    "expectedRevision": "Revision you read",
    "rag": "RAG",
    "overallRag": "Overall RAG",
    "cursor": "Continue from",
    "lead": "Project lead",
    "xml": "Plan file (XML)",
}


def label(name: str, spec: dict[str, Any] | None = None) -> str:
    """The argument's words: listed here, else the title its schema carries (a register
    field's declared label, with what kind of id it takes), else its camelCase split."""
    if name in LABELS:
        return LABELS[name]
    title = (spec or {}).get("title")
    if title:
        if is_person(name):
            return str(title)  # picked from the project's people, never typed as an id
        return f"{title} (id)" if name.endswith("Id") else title
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()
    words = words.replace(" rag", " RAG")
    return words[:1].upper() + words[1:]


def is_person(name: str) -> bool:
    """Whether the argument names a person: the form offers a people picker for it."""
    return name.endswith("AccountId") or name == "lead"


# The status codes and markup a description written for programs carries: (422), `score`.
_PROGRAM_MARKS = re.compile(r"\s*\((?:4\d\d)\)|`")


def in_words(text: str) -> str:
    """A description written for programs as a person reads it: no backticks or status
    codes, field names as words."""
    return in_message(_PROGRAM_MARKS.sub("", text or ""))


def _types(spec: dict[str, Any]) -> list[str]:
    kind = spec.get("type", [])
    return kind if isinstance(kind, list) else [kind]


# Arguments for programs, not people: the form leaves them out (a form reads the current
# revision and pages with its limit).
FORM_SKIPS = {"cursor", "expectedRevision"}


def fields(
    action: Action,
    values: dict[str, Any] | None = None,
    projects: list[tuple[str, str]] | None = None,
    people: list[tuple[str, str]] | None = None,
) -> list[dict[str, Any]]:
    """One entry per argument: name, label, widget, choices, required, hint, value. The
    project is chosen from `projects` ((key, name) the person can view), or typed by its key
    where they are None (too many to list); a person from
    `people` ((accountId, words) of the chosen project: the people picker), none offered
    while no project is chosen."""
    values = values or {}
    required = set(action.schema.get("required", []))
    found = []
    for name, spec in action.schema.get("properties", {}).items():
        if name in FORM_SKIPS:
            continue
        types = _types(spec)
        field: dict[str, Any] = {
            "name": name,
            "label": label(name, spec),
            "required": name in required,
            "hint": in_words(spec.get("description", "")),
            "value": values.get(name, ""),
            "id": f"a-{action.name}-{name}",
        }
        if name == "projectKey" and projects is not None:
            field["widget"] = "select"
            field["choices"] = [key for key, _ in projects]
            field["labels"] = {key: f"{key}: {title}" for key, title in projects}
            field["hint"] = ""
            field["project"] = True
        elif name == "projectKey":  # more projects than a choice lists: the key is typed
            field["widget"] = "text"
            field["hint"] = "Type the project's key, as in its issue keys (APOLLO for APOLLO-12)."
            field["project"] = True
        elif is_person(name):
            field["widget"] = "select"
            field["person"] = True
            field["choices"] = [a for a, _ in people or []]
            field["labels"] = dict(people or [])
            field["hint"] = ""
        elif "enum" in spec:
            field["widget"] = "select"
            field["choices"] = [c for c in spec["enum"] if c not in (None, "")]
            field["labels"] = {c: choice_label(c) for c in field["choices"]}
        elif "array" in types:
            field["widget"] = "checkboxes"
            field["choices"] = spec.get("items", {}).get("enum", [])
            field["labels"] = {c: choice_label(c) for c in field["choices"]}
            chosen = values.get(name) or []
            field["value"] = [chosen] if isinstance(chosen, str) else chosen
        elif "boolean" in types:
            field["widget"] = "select"
            field["choices"] = ["yes", "no"]
            value = values.get(name, "")
            field["value"] = {True: "yes", False: "no"}.get(value, value)
        elif "integer" in types or "number" in types:
            field["widget"] = "number"
            field["step"] = "1" if "integer" in types else "any"
            field["min"] = spec.get("minimum")
            field["max"] = spec.get("maximum")
        elif spec.get("format") == "date":
            field["widget"] = "date"
        elif spec.get("maxLength", 0) > 200:
            field["widget"] = "textarea"
        else:
            field["widget"] = "text"
        found.append(field)
    return found


def arguments(action: Action, post: QueryDict) -> dict[str, Any]:
    """The submitted form as arguments: empty fields are left out; numbers and yes/no are
    converted; anything unconvertible is passed as typed so the schema refuses it (422)."""
    args: dict[str, Any] = {}
    for name, spec in action.schema.get("properties", {}).items():
        types = _types(spec)
        if "array" in types:
            chosen = [v for v in post.getlist(name) if v]
            if chosen:
                args[name] = chosen
            continue
        raw = (post.get(name) or "").strip()
        if raw == "":
            continue
        if "boolean" in types:
            args[name] = {"yes": True, "no": False}.get(raw, raw)
        elif "integer" in types:
            try:
                args[name] = int(raw)
            except ValueError:
                args[name] = raw
        elif "number" in types:
            try:
                args[name] = float(raw)
            except ValueError:
                args[name] = raw
        else:
            args[name] = raw
    return args


def values_of(action: Action, data: QueryDict | dict[str, Any]) -> dict[str, Any]:
    """What a form shows again: from a submitted form (several values for a list) or from a
    proposal's arguments (numbers and yes/no as typed)."""
    values: dict[str, Any] = {}
    for name, spec in action.schema.get("properties", {}).items():
        if "array" in _types(spec):
            many = data.getlist(name) if hasattr(data, "getlist") else data.get(name)
            values[name] = list(many or [])
        elif name in data:
            value = data.get(name)
            if isinstance(value, bool):
                value = "yes" if value else "no"
            values[name] = "" if value is None else str(value)
    return values


def people_named(arguments: dict[str, Any]) -> dict[str, str]:
    """The people the arguments name, by argument."""
    return {
        name: value
        for name, value in arguments.items()
        if is_person(name) and isinstance(value, str) and value
    }
