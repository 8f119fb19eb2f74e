"""Keyset pages of a list: an opaque cursor names the row a page starts after (or ends
before), so a page costs the same whatever its position and rows inserted between two page
loads never shift a row onto two pages or off every page.

A list is ordered by `Field`s whose last one is unique (the tie-breaker). A cursor holds the
ordering's signature (the sort it was made for), the direction and the row's values of those
fields; a cursor made for another sort is refused (`BadCursor`)."""

import base64
import binascii
import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import F, Q, QuerySet
from django.http import HttpRequest

from governance.models import Project
from governance.sql import AnyOf

PAGE_SIZE = 100
PAGE_SIZE_MAX = 500


class BadCursor(ValueError):
    """The cursor is not one this list made (altered, or made for another sort)."""


@dataclass(frozen=True)
class Field:
    """One column of a list's order: a field or annotation name, ascending or not. Where
    the column may be NULL, it comes after a column that sorts its NULLs (a 0/1 flag)."""

    name: str
    ascending: bool = True


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return {"at": value.isoformat()}
    return value


def _typed(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"at"}:
        return dt.datetime.fromisoformat(value["at"])
    return value


def encode(signature: str, before: bool, values: Sequence[Any]) -> str:
    text = json.dumps([signature, "b" if before else "a", [_plain(v) for v in values]])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode(cursor: str, signature: str, fields: Sequence[Field]) -> tuple[bool, list[Any]]:
    """(before, values) of a cursor made by `encode` for this signature and these fields."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        made_for, direction, values = json.loads(raw)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise BadCursor("Not a cursor of this list.") from exc
    if made_for != signature or direction not in ("a", "b"):
        raise BadCursor("The cursor was made for another sort of this list.")
    if not isinstance(values, list) or len(values) != len(fields):
        raise BadCursor("Not a cursor of this list.")
    if any(isinstance(v, (list, dict)) and not isinstance(_typed(v), dt.datetime) for v in values):
        raise BadCursor("Not a cursor of this list.")
    return direction == "b", [_typed(v) for v in values]


def beyond(fields: Sequence[Field], values: Sequence[Any], *, before: bool = False) -> Q:
    """The rows after `values` in the order of `fields` (before them with `before`): the
    lexicographic comparison, a NULL value comparing equal only to NULL."""
    alternatives = Q(pk__in=[])
    equal = Q()
    for field, value in zip(fields, values, strict=True):
        forward = field.ascending != before
        if value is not None:
            lookup = "gt" if forward else "lt"
            alternatives |= equal & Q(**{f"{field.name}__{lookup}": value})
            equal &= Q(**{field.name: value})
        else:
            equal &= Q(**{f"{field.name}__isnull": True})
    return alternatives


def ordering(fields: Sequence[Field], *, reverse: bool = False) -> list[Any]:
    return [F(f.name).asc() if f.ascending != reverse else F(f.name).desc() for f in fields]


@dataclass
class Page:
    """One page: its rows (model instances or values), and the cursors of the pages after
    and before it (None at either end)."""

    rows: list[Any]
    next: str | None
    previous: str | None


def page_of(
    queryset: QuerySet[Any],
    fields: Sequence[Field],
    *,
    signature: str,
    cursor: str = "",
    size: int = PAGE_SIZE,
    values_of: Any = None,
) -> Page:
    """The page of `queryset` (annotated with every field of `fields`) that `cursor` names,
    `size` rows at most, in one query. `values_of(row)` gives a row's values of `fields`
    (default: its attributes)."""
    before, values = decode(cursor, signature, fields) if cursor else (False, [])
    if values:
        queryset = queryset.filter(beyond(fields, values, before=before))
    rows = list(queryset.order_by(*ordering(fields, reverse=before))[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    if before:
        rows.reverse()

    def at(row: Any) -> list[Any]:
        if values_of is not None:
            return list(values_of(row))
        return [getattr(row, f.name.replace("__", "_")) for f in fields]

    has_next = more if not before else True
    has_previous = bool(values) and (more if before else True)
    return Page(
        rows=rows,
        next=encode(signature, False, at(rows[-1])) if rows and has_next else None,
        previous=encode(signature, True, at(rows[0])) if rows and has_previous else None,
    )


def page_size(value: Any, *, strict: bool) -> int:
    """The page size asked for (1..PAGE_SIZE_MAX; PAGE_SIZE when absent). The API refuses
    another (ValueError); a page falls back to the default."""
    if value in (None, ""):
        return PAGE_SIZE
    try:
        size = int(value)
    except (TypeError, ValueError):
        size = 0
    if 1 <= size <= PAGE_SIZE_MAX:
        return size
    if strict:
        raise ValueError(f"Must be a whole number from 1 to {PAGE_SIZE_MAX}.")
    return PAGE_SIZE


# --- in the API ---------------------------------------------------------------------------

CURSOR_DESCRIPTION = (
    "Opaque: the `next` link of the page before carries it. Absent for the first page; "
    "a cursor made for another sort is refused (422)."
)
PAGE_SIZE_DESCRIPTION = f"Rows a page, 1 to {PAGE_SIZE_MAX} (default {PAGE_SIZE})."


def page_schema(items: dict[str, Any], description: str = "") -> dict[str, Any]:
    """The answer of a paged list: its `items` and the `next` page's link (null on the last
    page). A client follows `next` until it is null."""
    return {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": items},
            "next": {
                "type": ["string", "null"],
                "format": "uri",
                "description": "The next page (the same query with its cursor); null on the "
                "last page.",
            },
        },
        "required": ["items", "next"],
        "description": description or "One page of the list, and the link to the next.",
    }


def next_link(request: HttpRequest, cursor: str | None) -> str | None:
    """The request's own URL with `cursor` for the next page (None without one)."""
    if not cursor:
        return None
    query = request.GET.copy()
    query["cursor"] = cursor
    return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")


def project_page(rows: Sequence[tuple[Any, Any]], cursor: str, size: int) -> Page:
    """The page of the viewable `rows` (project, caller) that `cursor` names, by key (unique),
    read in SQL: one query whatever the page's position."""
    ids = [project.pk for project, _ in rows]
    projects = Project.objects.filter(AnyOf(F("pk"), ids)) if ids else Project.objects.none()
    return page_of(projects, [Field("key")], signature="key", cursor=cursor, size=size)
