"""Template helpers of the status pages: ISO timestamps from representations (live or
snapshot) back to dates for the `date` filter, and money as the drivers print it."""

import datetime as dt
from collections.abc import Mapping
from typing import Any

from django import template

from status import earned_value

register = template.Library()


@register.filter
def isodatetime(value: object) -> object:
    """An ISO date or timestamp string (as stored in representations) as a date/datetime."""
    if not value or not isinstance(value, str):
        return value
    try:
        if len(value) == 10:
            return dt.date.fromisoformat(value)
        return dt.datetime.fromisoformat(value)
    except ValueError:
        return value


@register.filter
def rag_initial(value: str | None) -> str:
    """A RAG as a one-letter cell label (the full word goes to screen readers)."""
    return {"Red": "R", "Amber": "A", "Green": "G", "Blue": "B"}.get(value or "None", "-")


@register.filter
def ev_reading(values: Mapping[str, Any] | None, key: str) -> str:
    """The reading in words of an earned-value figure (`status.earned_value.reading`)."""
    return earned_value.reading(key, values or {})
