"""The conflict panel of a stale save: field by field, what the person submitted and what is
stored now, where the two differ. The register rows and the business case's sections show
their panels from these rows."""

from collections.abc import Mapping
from typing import Any

from governance.people import Person, resolve

NOTHING = "—"


def conflict_rows(
    labels: Mapping[str, str], yours: Mapping[str, Any], stored: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """In the order of `labels` (field: label), each field whose submitted and stored values
    differ: `{field, label, yours, stored}`. Text is compared without its surrounding spaces
    and with one kind of line end, a list whatever its order. Shown: people by their display
    names (the `...AccountId` fields, resolved in one call), lists joined, nothing as a dash."""
    people = resolve(
        value
        for values in (yours, stored)
        for field, value in values.items()
        if field in labels and field.endswith("AccountId") and isinstance(value, str)
    )
    rows = []
    for field, label in labels.items():
        mine, theirs = yours.get(field, ""), stored.get(field, "")
        if _normal(mine) != _normal(theirs):
            rows.append(
                {
                    "field": field,
                    "label": label,
                    "yours": _shown(mine, people),
                    "stored": _shown(theirs, people),
                }
            )
    return rows


def _normal(value: Any) -> Any:
    if isinstance(value, list):
        return sorted(value)
    return ("" if value is None else str(value)).strip().replace("\r\n", "\n")


def _shown(value: Any, people: Mapping[str, Person]) -> str:
    if isinstance(value, list):
        return ", ".join(value) or NOTHING
    person = people.get(value) if isinstance(value, str) else None
    if person:
        return person.display_name
    return str(value) if value not in (None, "") else NOTHING
