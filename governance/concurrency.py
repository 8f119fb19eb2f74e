"""Optimistic concurrency: every mutable record carries an integer `revision`; a write based
on an older revision is refused (Stale), in the UI as a conflict row and in the API as 412."""

import re

from governance.errors import BadRequest, Stale


def etag(revision: int) -> str:
    return f'"{revision}"'


def honours_if_match(view):
    """Declare that an API operation reads If-Match (and so may answer 412): the OpenAPI
    document lists the header and the 412 for exactly the operations marked."""
    view.honours_if_match = True
    return view


def parse_if_match(header: str | None) -> int | None:
    """The expected revision from an If-Match header (None when absent or '*')."""
    if not header or header.strip() == "*":
        return None
    match = re.fullmatch(r'\s*(?:W/)?"(\d+)"\s*', header)
    if not match:
        raise BadRequest('If-Match must be an ETag from this API, for example "3".')
    return int(match.group(1))


def check_version(current: int, expected: int | None, *, current_repr=None) -> None:
    """Raise Stale when the client's revision is not the stored one."""
    if expected is not None and int(expected) != int(current):
        raise Stale(current=current_repr)
