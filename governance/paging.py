"""Cursor pages of an API list: keyset paging in SQL over a declared order whose last key is
unique, so a page never repeats nor skips a row whatever is inserted or deleted between two
requests (an offset would shift under a newer row and repeat the last one).

A list takes `cursor` (opaque: where the previous page stopped, as the answer's `next` link
gives it) and `pageSize` (1 to 500, default 100) and answers `{"items": [...], "next": url}`,
`next` null on the last page. The cursor is the last row's sort values, signed (a cursor that
was not given by the same list is refused with 400, in words), so the next page is one indexed
range read, not a count of the rows before it."""

import datetime as dt
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Generic, TypeVar

from django.core import signing
from django.db.models import F, Model, Q, QuerySet
from django.db.models.expressions import Combinable
from django.http import HttpRequest, QueryDict
from ninja import Query

from governance.errors import BadRequest

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
CURSOR_MESSAGE = (
    "The cursor is not one this list gave: start again without `cursor`, then follow each "
    "answer's `next` link."
)
M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class Key:
    """One key of a list's order: a field name or an expression, its direction; `nullable`:
    rows without a value come last, in either direction."""

    expression: str | Combinable
    descending: bool = False
    nullable: bool = False


@dataclass(frozen=True)
class Page(Generic[M]):
    rows: list[M]
    next_cursor: str | None


def _alias(index: int) -> str:
    return f"page_key_{index}"


def ordered(queryset: QuerySet[M], keys: Sequence[Key]) -> QuerySet[M]:
    """The queryset in the keys' order (each key annotated as `page_key_N`)."""
    annotations = {
        _alias(i): F(key.expression) if isinstance(key.expression, str) else key.expression
        for i, key in enumerate(keys)
    }
    order = [
        F(_alias(i)).desc(nulls_last=True) if key.descending else F(_alias(i)).asc(nulls_last=True)
        for i, key in enumerate(keys)
    ]
    return queryset.annotate(**annotations).order_by(*order)


def _after(keys: Sequence[Key], values: Sequence[Any]) -> Q:
    """The rows after the one whose sort values are `values`, in the keys' order (nulls last)."""
    terms: list[Q] = []
    equal = Q()
    for i, (key, value) in enumerate(zip(keys, values, strict=True)):
        alias = _alias(i)
        if value is None:  # nulls are last: nothing follows within this key
            equal &= Q(**{f"{alias}__isnull": True})
            continue
        beyond = Q(**{f"{alias}__{'lt' if key.descending else 'gt'}": value})
        if key.nullable:
            beyond |= Q(**{f"{alias}__isnull": True})
        terms.append(equal & beyond)
        equal &= Q(**{alias: value})
    if not terms:
        return Q(pk__in=[])  # nothing follows
    condition = terms[0]
    for term in terms[1:]:
        condition |= term
    return condition


# --- the cursor ----------------------------------------------------------------------------

_TAGS: dict[str, type] = {
    "i": int,
    "s": str,
    "b": bool,
    "n": Decimal,
    "d": dt.date,
    "t": dt.datetime,
    "u": uuid.UUID,
}


def _encode(value: Any) -> list[Any] | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return ["b", value]
    if isinstance(value, int):
        return ["i", value]
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


def _decode(item: Any) -> Any:
    if item is None:
        return None
    tag, text = item
    if tag in ("b", "i", "s") and isinstance(text, _TAGS[tag]):
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


def make_cursor(values: Sequence[Any], *, salt: str) -> str:
    return signing.dumps([_encode(v) for v in values], salt=f"paging:{salt}", compress=True)


def read_cursor(cursor: str, *, salt: str, keys: int) -> list[Any]:
    """The sort values a cursor holds; 400 (in words) for one this list did not give."""
    try:
        items = signing.loads(cursor, salt=f"paging:{salt}")
        if not isinstance(items, list) or len(items) != keys:
            raise ValueError("length")
        return [_decode(item) for item in items]
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise BadRequest(CURSOR_MESSAGE) from exc


def page(
    queryset: QuerySet[M], keys: Sequence[Key], *, cursor: str | None, size: int, salt: str
) -> Page[M]:
    """At most `size` rows after the cursor (from the start without one), in one query, and
    the cursor of the next page (None on the last). `salt` names the list: a cursor is taken
    by the list that gave it only."""
    rows = ordered(queryset, keys)
    if cursor:
        rows = rows.filter(_after(keys, read_cursor(cursor, salt=salt, keys=len(keys))))
    found = list(rows[: size + 1])
    if len(found) <= size:
        return Page(found, None)
    last = found[size - 1]
    values = [getattr(last, _alias(i)) for i in range(len(keys))]
    return Page(found[:size], make_cursor(values, salt=salt))


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
    return Query(
        None,
        description=(
            "Where the previous page stopped: the `cursor` of its `next` link (opaque). Absent: "
            "the first page. A cursor this list did not give is refused (400)."
        ),
    )


def page_size_parameter() -> Any:
    """The `pageSize` query parameter of a paged list."""
    return Query(
        DEFAULT_PAGE_SIZE,
        ge=1,
        le=MAX_PAGE_SIZE,
        description=f"Rows a page holds, 1 to {MAX_PAGE_SIZE} (default {DEFAULT_PAGE_SIZE}).",
    )
