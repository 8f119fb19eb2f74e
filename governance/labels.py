"""The words people read for the codes the data and the API keep: lifecycle states, choices,
change states, audit kinds and field names. Pages show `label(code)`; the API keeps codes.
A code not listed reads as its words ("DeliveredAsChartered" -> "Delivered as chartered")."""

import re
from typing import TypeVar, overload

STATES: dict[str, str] = {}
CHOICES: dict[str, str] = {}
# Field names as people call them (the API's names stay in the API).
FIELDS: dict[str, str] = {}
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z]|$)|[A-Z]?[a-z]+|\d+")
_CODE = re.compile(r"[a-z]+(?:[A-Z][a-z0-9]*)+|(?:[A-Z][a-z0-9]+){2,}")
_KEEP_UPPER = {"rag": "RAG", "bau": "BAU", "kpi": "KPI", "eac": "EAC", "id": "", "pct": "%"}


def register(*, states: dict[str, str], choices: dict[str, str], fields: dict[str, str]) -> None:
    """An app's labels for its states, choices and field names, registered in its
    AppConfig.ready() (the kernel holds no upper app's vocabulary)."""
    STATES.update(states)
    CHOICES.update(choices)
    FIELDS.update(fields)


def words(code: str) -> str:
    """camelCase or CamelCase as words, first letter capital: "plannedStartDate" ->
    "Planned start date"."""
    parts = [p.lower() for p in _WORD.findall(code)]
    if parts and parts[-1] == "id" and len(parts) > 1:
        parts = parts[:-1]
    if len(parts) > 2 and parts[-2:] == ["account", "id"]:
        parts = parts[:-2]
    out = [_KEEP_UPPER.get(p, p) for p in parts]
    text = " ".join(p for p in out if p)
    return text[:1].upper() + text[1:]


_T = TypeVar("_T")


@overload
def label(code: str) -> str: ...
@overload
def label(code: _T) -> _T: ...
def label(code: object) -> object:
    """The label of a state, a choice or a field name; other text is returned unchanged."""
    if not isinstance(code, str) or not code:
        return code
    for table in (STATES, CHOICES, FIELDS):
        if code in table:
            return table[code]
    if _CODE.fullmatch(code):
        return words(code)
    return code


def _field(name: str) -> str:
    text = label(name)
    return text[:1].upper() + text[1:] if text == name else text


def _lower_first(text: str) -> str:
    """Mid-sentence: "Planned start date" -> "planned start date"; "RAG" stays."""
    if len(text) > 1 and text[1].isupper():
        return text
    return text[:1].lower() + text[1:]


def field_label(name: str) -> str:
    """A field name, or a path into one ("lines[2].cost", "lessons.worked"), as words."""
    if not isinstance(name, str):
        return name
    match = re.fullmatch(r"(\w+)\[(\d+)\](?:\.(\w+))?", name)
    if match:
        field, index, part = match.groups()
        text = f"{_field(field)}, line {int(index) + 1}"
        return f"{text}, {_lower_first(_field(part))}" if part else text
    if "." in name:
        parts = [_field(part) for part in name.split(".")]
        return ", ".join([parts[0], *(_lower_first(p) for p in parts[1:])])
    return _field(name)


def in_message(message: str) -> str:
    """A message that names fields by their API names ("Must not be before plannedStartDate")
    with those names as words."""
    if not isinstance(message, str):
        return message
    return _CODE.sub(lambda m: _lower_first(label(m.group(0))), message)
