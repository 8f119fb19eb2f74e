"""Cursor pages of a list: keyset paging in SQL over a declared order whose last key is
unique, so a page costs the same wherever it is and never repeats nor skips a row whatever is
inserted or deleted between two requests (an offset would shift under a newer row and repeat
the last one). The one paging of every API list (the registers, the projects, the portfolio)
and of the pages that link a next and a previous page.

An API list takes `cursor` (opaque: where the previous page stopped, as the answer's `next`
link gives it) and `pageSize` (1 to 500, default 100) and answers `{"items": [...], "next":
url}`, `next` null on the last page. A cursor holds the direction and the last (or first) row's
sort values, signed with the name of the list and its order: a cursor that list did not give
(altered, of another list, of another sort) answers 400 `bad_request`, telling the client to
start again from the first page; a page size out of its bounds answers 422 naming `pageSize`.
The next page is one indexed range read, not a count of the rows before it."""

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, TypeVar

from django.core import signing
from django.db.models import F, OrderBy, Q, QuerySet
from django.db.models.expressions import Combinable
from django.http import HttpRequest, QueryDict
from ninja.params import functions as params

from governance.errors import BadRequest
from governance.models import Project

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
CURSOR_MESSAGE = (
    "The cursor is not one this list gave (altered, or made for another list or sort): start "
    "again from the first page, without `cursor`, then follow each answer's `next` link."
)
R = TypeVar("R")


class BadCursor(BadRequest):
    """A cursor the list did not give: 400 `bad_request`, in words (a page starts again from
    its first page instead)."""

    default_message = CURSOR_MESSAGE


@dataclass(frozen=True)
class Key:
    """One key of a list's order: a field name (or annotation) or an expression, its
    direction; `nullable`: the key may be NULL (rows without a value come last, in either
    direction)."""

    expression: str | Combinable
    descending: bool = False
    nullable: bool = False


@dataclass(frozen=True)
class Page(Generic[R]):
    """One page: its rows (model instances, or dicts of a `values()` queryset), and the
    cursors of the pages after and before it (None at either end)."""

    rows: list[R]
    next_cursor: str | None
    previous_cursor: str | None = None


def _alias(index: int) -> str:
    return f"page_key_{index}"


def _order(keys: Sequence[Key], *, reverse: bool = False) -> list[OrderBy]:
    """The keys' order (nulls last), or its exact reverse (nulls first). A key that is never
    NULL says nothing of nulls, so an index on the order serves it on every database."""
    nulls: dict[str, bool] = {"nulls_first": True} if reverse else {"nulls_last": True}
    return [
        (F(_alias(i)).desc if key.descending != reverse else F(_alias(i)).asc)(
            **(nulls if key.nullable else {})
        )
        for i, key in enumerate(keys)
    ]


def _annotated(queryset: QuerySet[Any, R], keys: Sequence[Key]) -> QuerySet[Any, R]:
    annotations = {
        _alias(i): F(key.expression) if isinstance(key.expression, str) else key.expression
        for i, key in enumerate(keys)
    }
    annotated: QuerySet[Any, R] = queryset.annotate(**annotations)
    return annotated


def ordered(queryset: QuerySet[Any, R], keys: Sequence[Key]) -> QuerySet[Any, R]:
    """The queryset in the keys' order (each key annotated as `page_key_N`)."""
    return _annotated(queryset, keys).order_by(*_order(keys))


def _beyond(keys: Sequence[Key], values: Sequence[Any], *, before: bool) -> Q:
    """The rows after the one whose sort values are `values` in the keys' order (nulls last),
    or before it with `before`."""
    terms: list[Q] = []
    equal = Q()
    for i, (key, value) in enumerate(zip(keys, values, strict=True)):
        alias = _alias(i)
        if value is None:  # nulls are last: every value comes before, nothing after
            if before:
                terms.append(equal & Q(**{f"{alias}__isnull": False}))
            equal &= Q(**{f"{alias}__isnull": True})
            continue
        lookup = "lt" if key.descending != before else "gt"
        beyond = Q(**{f"{alias}__{lookup}": value})
        if key.nullable and not before:
            beyond |= Q(**{f"{alias}__isnull": True})
        terms.append(equal & beyond)
        equal &= Q(**{alias: value})
    if not terms:
        return Q(pk__in=[])  # nothing beyond
    condition = terms[0]
    for term in terms[1:]:
        condition |= term
    return condition


# --- the cursor ----------------------------------------------------------------------------


def _encode(value: Any) -> list[Any] | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return ["b", value]
    if isinstance(value, int):
        return ["i", value]
    if isinstance(value, float):
        return ["f", value]
    if isinstance(value, str):
        return ["s", value]
    if isinstance(value, Decimal):
        return ["n", str(value)]
    if isinstance(value, dt.datetime):
        return ["t", value.isoformat()]
    if isinstance(value, dt.date):
        return ["d", value.isoformat()]
    if isinstance(value, uuid.UUID):
        return ["u", value.hex]
    raise TypeError(f"A sort value of type {type(value).__name__} cannot be kept in a cursor.")


_PLAIN: dict[str, type | tuple[type, ...]] = {"b": bool, "i": int, "f": (int, float), "s": str}


def _decode(item: Any) -> Any:
    if item is None:
        return None
    tag, text = item
    if tag in _PLAIN and isinstance(text, _PLAIN[tag]):
        return text
    if tag == "n":
        return Decimal(text)
    if tag == "t":
        return dt.datetime.fromisoformat(text)
    if tag == "d":
        return dt.date.fromisoformat(text)
    if tag == "u":
        return uuid.UUID(hex=text)
    raise ValueError(tag)


def make_cursor(values: Sequence[Any], *, salt: str, before: bool = False) -> str:
    """The cursor of the page after the row whose sort values are `values` (before it with
    `before`), for the list named `salt`."""
    items = ["b" if before else "a", [_encode(v) for v in values]]
    return signing.dumps(items, salt=f"paging:{salt}", compress=True)


def read_cursor(cursor: str, *, salt: str, keys: int) -> tuple[bool, list[Any]]:
    """(before, sort values) of a cursor the list named `salt` gave; `BadCursor` (400, in
    words) for any other."""
    try:
        direction, items = signing.loads(cursor, salt=f"paging:{salt}")
        if direction not in ("a", "b") or not isinstance(items, list) or len(items) != keys:
            raise ValueError("shape")
        return direction == "b", [_decode(item) for item in items]
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise BadCursor() from exc


def _values(row: Any, count: int) -> list[Any]:
    if isinstance(row, Mapping):
        return [row[_alias(i)] for i in range(count)]
    return [getattr(row, _alias(i)) for i in range(count)]


def page(
    queryset: QuerySet[Any, R],
    keys: Sequence[Key],
    *,
    cursor: str | None,
    size: int,
    salt: str,
) -> Page[R]:
    """At most `size` rows after the cursor (before it, for a cursor of a previous page; from
    the start without one), in one query, and the cursors of the next and previous pages
    (None at either end). `salt` names the list and its order: a cursor is taken by the list
    that gave it only (`BadCursor` otherwise)."""
    before, values = (
        read_cursor(cursor, salt=salt, keys=len(keys)) if cursor else (False, list[Any]())
    )
    rows = _annotated(queryset, keys)
    if values:
        rows = rows.filter(_beyond(keys, values, before=before))
    found = list(rows.order_by(*_order(keys, reverse=before))[: size + 1])
    more = len(found) > size
    found = found[:size]
    if before:
        found.reverse()
    has_next = more if not before else True
    has_previous = bool(values) and (more if before else True)
    if not found:
        return Page(found, None, None)
    return Page(
        found,
        make_cursor(_values(found[-1], len(keys)), salt=salt) if has_next else None,
        make_cursor(_values(found[0], len(keys)), salt=salt, before=True) if has_previous else None,
    )


def page_size(value: Any) -> int:
    """A page's size as a page (not the API) reads it: 1 to MAX_PAGE_SIZE, the default for
    anything else (a stale bookmark still opens). The API declares `pageSize` instead
    (`page_size_parameter`): out of bounds is 422 there."""
    try:
        size = int(value)
    except (TypeError, ValueError):
        return DEFAULT_PAGE_SIZE
    return size if 1 <= size <= MAX_PAGE_SIZE else DEFAULT_PAGE_SIZE


def projects_page(projects: QuerySet[Project], cursor: str | None, size: int) -> Page[Project]:
    """The page of `projects` (the viewable ones, `gatelist.viewable`, filtered in SQL)
    that `cursor` names, by key (unique): one query whatever the page's position."""
    return page(projects, [Key("key")], cursor=cursor, size=size, salt="projects")


# --- the API's side ------------------------------------------------------------------------


def next_link(request: HttpRequest, cursor: str | None) -> str | None:
    """The URL of the next page: this request's, with the cursor (and the same page size and
    filters)."""
    if cursor is None:
        return None
    query: QueryDict = request.GET.copy()
    query["cursor"] = cursor
    return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")


def answer(request: HttpRequest, items: list[Any], cursor: str | None) -> dict[str, Any]:
    """A page as the API answers it."""
    return {"items": items, "next": next_link(request, cursor)}


def schema_of(item: dict[str, Any], noun: str) -> dict[str, Any]:
    """The OpenAPI schema of a page of `item`s."""
    return {
        "type": "object",
        "description": f"One page of {noun}, in the list's order.",
        "properties": {
            "items": {"type": "array", "items": item},
            "next": {
                "type": ["string", "null"],
                "description": (
                    "The URL of the next page (this request with its `cursor`); null on the "
                    "last page."
                ),
            },
        },
        "required": ["items", "next"],
    }


def cursor_parameter() -> Any:
    """The `cursor` query parameter of a paged list."""
    return params.Query(
        None,
        description=(
            "Where the previous page stopped: the `cursor` of its `next` link (opaque). Absent: "
            "the first page. A cursor this list did not give (altered, or of another list or "
            "sort) is refused (400): start again from the first page and follow `next`."
        ),
    )


def page_size_parameter() -> Any:
    """The `pageSize` query parameter of a paged list."""
    return params.Query(
        DEFAULT_PAGE_SIZE,
        ge=1,
        le=MAX_PAGE_SIZE,
        description=f"Rows a page holds, 1 to {MAX_PAGE_SIZE} (default {DEFAULT_PAGE_SIZE}).",
    )
