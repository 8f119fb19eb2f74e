"""The catalogue as forms, generated from each action's JSON Schema (the Assistant page
without a language model), and the arguments read back from a submitted form."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.http import QueryDict


import re
from typing import Any

from agent.catalogue import Action

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
}


def label(name: str, spec: dict[str, Any] | None = None) -> str:
    """The argument's words: listed here, else the title its schema carries (a register
    field's declared label, with what kind of id it takes), else its camelCase split."""
    if name in LABELS:
        return LABELS[name]
    title = (spec or {}).get("title")
    if title:
        if name.endswith("AccountId"):
            return f"{title} (account id)"
        return f"{title} (id)" if name.endswith("Id") else title
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()
    words = words.replace(" rag", " RAG")
    return words[:1].upper() + words[1:]


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
) -> list[dict[str, Any]]:
    """One entry per argument: name, label, widget, choices, required, hint, value. The
    project is chosen from `projects` ((key, name) the person can view)."""
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
            "hint": spec.get("description", ""),
            "value": values.get(name, ""),
            "id": f"a-{action.name}-{name}",
        }
        if name == "projectKey" and projects is not None:
            field["widget"] = "select"
            field["choices"] = [key for key, _ in projects]
            field["labels"] = dict(projects)
            field["hint"] = ""
        elif "enum" in spec:
            field["widget"] = "select"
            field["choices"] = [c for c in spec["enum"] if c not in (None, "")]
        elif "array" in types:
            field["widget"] = "checkboxes"
            field["choices"] = spec.get("items", {}).get("enum", [])
            field["value"] = values.get(name) or []
        elif "boolean" in types:
            field["widget"] = "select"
            field["choices"] = ["yes", "no"]
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
