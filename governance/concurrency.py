"""Optimistic concurrency: every mutable record carries an integer `revision`; a write based
on an older revision is refused (Stale), in the UI as a conflict row and in the API as 412."""

import re
from collections.abc import Callable
from typing import Any, TypeVar

from django.db.models import Model
from django.http import HttpRequest

from governance import cleaning
from governance.errors import BadRequest, Stale


def etag(revision: int) -> str:
    return f'"{revision}"'


View = TypeVar("View", bound=Callable[..., Any])


def honours_if_match(view: View) -> View:
    """Declare that an API operation reads If-Match (and so may answer 412): the OpenAPI
    document lists the header and the 412 for exactly the operations marked."""
    view.__dict__["honours_if_match"] = True
    return view


IF_MATCH_MESSAGE = 'If-Match must be an ETag from this API, for example "3".'


class Unreadable(int):
    """An If-Match that is no ETag of this API (not digits in quotes, or more digits than a
    revision has: 4,300 of them are past what int() reads). Refused (400) where the revision
    is checked, so who may act is answered first (a viewer's write is 403 whatever it sends)."""


UNREADABLE = Unreadable(-1)


def parse_if_match(header: str | None) -> int | None:
    """The expected revision from an If-Match header (None when absent or '*'); UNREADABLE,
    refused by `check_version`, for anything else."""
    if not header or header.strip() == "*":
        return None
    match = re.fullmatch(r'\s*(?:W/)?"([0-9]+)"\s*', header)
    revision = cleaning.whole_number(match.group(1)) if match else None
    return UNREADABLE if revision is None else revision


def read_if_match(request: HttpRequest) -> int | None:
    """The expected revision the request's If-Match header names (`parse_if_match`)."""
    return parse_if_match(request.headers.get("If-Match"))


def check_version(current: int, expected: int | None, *, current_repr: Model | None = None) -> None:
    """Raise BadRequest for an unreadable If-Match, Stale when the client's revision is not
    the stored one."""
    if isinstance(expected, Unreadable):
        raise BadRequest(IF_MATCH_MESSAGE)
    if expected is not None and int(expected) != int(current):
        raise Stale(current=current_repr)
