"""What the page shell needs on every page: who is signed in and which sections they reach."""

import datetime as dt
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from governance import notifications, permissions
from governance.models import User
from governance.people import Person, resolve, stale_names_since
from governance.tracker import TrackerError


class Shell:
    """What the page shell shows a signed-in person (built only for one)."""

    def __init__(self, request: HttpRequest, user: User) -> None:
        self.request = request
        self.user = user

    @property
    def me(self) -> Person | None:
        return resolve([self.user.account_id]).get(self.user.account_id)

    @property
    def names_as_of(self) -> dt.datetime | None:
        return stale_names_since()

    # Navigation only: when the tracker cannot answer, the links are left out (the pages
    # behind them check again, and fail closed).
    def _asks(self, check: Callable[[User, HttpRequest], bool]) -> bool:
        try:
            return check(self.user, self.request)
        except TrackerError:
            return False

    @property
    def portfolio_access(self) -> bool:
        return self._asks(permissions.has_portfolio_access)

    @property
    def investment_access(self) -> bool:
        return self._asks(permissions.may_govern_investment)

    @property
    def unread_notifications(self) -> int:
        return notifications.unread_count(self.user.account_id)

    @property
    def is_site_admin(self) -> bool:
        return self._asks(permissions.is_site_admin)


def shell(request: HttpRequest) -> dict[str, Any]:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"shell": None}
    return {"shell": SimpleLazyObject(lambda: Shell(request, user))}
