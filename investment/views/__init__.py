"""The investment pages: proposals and the scoring model, scenarios, and a scenario's export."""

from __future__ import annotations

from typing import Any

from governance import permissions
from governance.errors import NotFound
from governance.models import User

HIDDEN = "No such page that you can see."


def governor(request: Any) -> User:
    """The signed-in governor of investment decisions (a site administrator or the governance
    group); anyone else gets 404, as for a page that does not exist. The API answers 403 with
    words instead (`investment.services.require_governor`)."""
    user = permissions.request_user(request)
    if not permissions.may_govern_investment(user, request):
        raise NotFound(HIDDEN)
    return user
