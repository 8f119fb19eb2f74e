"""Who the current request acts for, so the tracker can make "as the user" calls (the issue
picker) with that person's own token. Set per request by AtlassianActingMiddleware, and by the
API token check (`act_for`) for requests that carry no session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest
    from django.http.response import HttpResponseBase


from contextvars import ContextVar

from governance.scoped import holding

acting_account: ContextVar[str] = ContextVar("acting_account", default="")
# The listings this request stopped at ATLASSIAN_MAX_PAGES (operationIds): the page says so.
incomplete_listings: ContextVar[frozenset[Any]] = ContextVar(
    "incomplete_listings", default=frozenset()
)


def mark_incomplete(operation: str) -> None:
    incomplete_listings.set(incomplete_listings.get() | {operation})


def act_for(account_id: str) -> None:
    """A request authenticated by a personal API token (not the session) acts for the token's
    owner from here on, so "as the user" calls use their own grant, as their pages do. The
    middleware restores the previous value when the request ends."""
    acting_account.set(account_id or "")


class AtlassianActingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        user = getattr(request, "user", None)
        account_id = getattr(user, "account_id", "") if user and user.is_authenticated else ""
        from governance.people import names_as_of

        with (
            holding(acting_account, account_id or ""),
            holding(names_as_of, None),
            holding(incomplete_listings, frozenset()),
        ):
            return self.get_response(request)
