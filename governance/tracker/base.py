"""The tracker interface, shaped for Jira Cloud's REST API v3 (see contracts/): every
method maps onto one or two of the operations listed there."""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from governance.seams import RemoteError

if TYPE_CHECKING:
    from typing_extensions import TypeIs


class TrackerError(RemoteError):
    """The tracker could not answer (down, misconfigured, refused)."""


@dataclass(frozen=True)
class TrackerUser:
    account_id: str
    display_name: str
    avatar_url: str = ""
    email: str = ""
    active: bool = True


@dataclass(frozen=True)
class TrackerProject:
    key: str
    name: str
    lead_account_id: str
    # The tracker's own id of the project: stable when its key changes (Jira: the numeric
    # project id; the local tracker: its row id). "" when the tracker did not say.
    id: str = ""
    # Keys the project had before (Jira: `expand=projectKeys`, less the current key).
    former_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class TrackerIssue:
    key: str
    summary: str
    issue_type: str = ""
    status: str = ""
    work_package: str | None = None


class Tracker(Protocol):
    # Identity ---------------------------------------------------------------------------
    def current_user(self, account_id: str) -> TrackerUser | None:
        """Jira: GET /myself (as the user)."""

    def users_bulk(self, account_ids: Iterable[str]) -> dict[str, TrackerUser]:
        """Display name and avatar for many accountIds at once. Jira: GET /user/bulk."""

    def search_users(self, query: str, *, limit: int = 20) -> list[TrackerUser]:
        """People picker."""

    def is_site_admin(self, account_id: str) -> bool:
        """Jira: GET /mypermissions?permissions=ADMINISTER."""

    def is_group_member(self, account_id: str, group: str) -> bool:
        """Jira: GET /user/groups."""

    def group_exists(self, group: str) -> bool:
        """Jira: GET /group/member (404 when unknown)."""

    # Projects ---------------------------------------------------------------------------
    def get_project(self, key: str) -> TrackerProject | None:
        """A project with its lead, by key, former key or id (a renamed project answers with
        its current key). Jira: GET /project/{projectIdOrKey}?expand=lead,projectKeys."""

    def browsable_projects(self, account_id: str) -> list[TrackerProject]:
        """Projects this user may browse. Jira: GET /project/search (as the user)."""

    def can_browse(self, account_id: str, project_key: str) -> bool:
        """Jira: GET /mypermissions?projectKey=..&permissions=BROWSE_PROJECTS."""

    # Issues ------------------------------------------------------------------------------
    def search_issues(self, project_key: str, text: str, *, limit: int = 20) -> list[TrackerIssue]:
        """Issue picker. Jira: GET /issue/picker or GET /search/jql."""

    def get_issues(self, keys: Iterable[str]) -> dict[str, TrackerIssue]:
        """The issues among `keys` that exist, by key. Jira: POST /search/jql (key in (...))."""

    def set_work_package_field(self, issue_key: str, value: str | None) -> None:
        """Write (or clear, with None) the 'Work Package' reference on an issue.
        Jira: PUT /issue/{key} on the per-project custom field."""


class GatedTracker(Protocol):
    """A tracker whose answers the access gate's one statement reads (`governance.gatesql`)."""

    def gate_expressions(
        self, account_id: str, group: Any, key: str = "key", *, every: bool = False
    ) -> dict[str, Any]: ...

    def gate(self, account_id: str, values: dict[str, Any]) -> Any: ...


def is_gated(tracker: object) -> "TypeIs[GatedTracker]":
    """Whether `tracker` answers the gate's statement (`GatedTracker`)."""
    return hasattr(tracker, "gate_expressions")
