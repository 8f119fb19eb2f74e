"""The Jira Cloud backend (TRACKER_BACKEND=jira): the Tracker protocol over Jira's REST API
v3, exactly the operations in contracts/atlassian/jira-platform-v3.subset.json.

"As the user" (the person's own OAuth token): current_user, browsable_projects, can_browse,
is_site_admin about oneself, and the issue picker. "As the app" (the service account):
users_bulk, search_users, is_group_member, group_exists, is_site_admin about others,
get_project, get_issues, the 'Work Package' custom field and the write-back."""

import datetime as dt
import logging
import re
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Exists

from governance.atlassian import grants, service
from governance.atlassian.context import acting_account, incomplete_listings, mark_incomplete
from governance.atlassian.errors import AtlassianUnavailable, SignInRequired
from governance.atlassian.http import Client, Credentials, UserCredentials, query_string
from governance.models import AtlassianGrant, TrackerFieldState
from governance.tracker.base import TrackerError, TrackerIssue, TrackerProject, TrackerUser

logger = logging.getLogger(__name__)

API = "/rest/api/3"
ISSUE_KEY = re.compile(r"^[A-Z][A-Z0-9_]*-[1-9][0-9]*$")
PROJECT_KEY = re.compile(r"^[A-Z][A-Z0-9_]*$")
PROJECT_ID = re.compile(r"^[1-9][0-9]{0,18}$")
USER_BULK_BATCH = 10  # /user/bulk is asked for at most 10 accountIds at a time
JQL_KEYS_BATCH = 50
FIELD_TYPE = "com.atlassian.jira.plugin.system.customfieldtypes:textfield"
FIELD_SEARCHER = "com.atlassian.jira.plugin.system.customfieldtypes:textsearcher"
ISSUE_FIELDS = ["summary", "issuetype", "status"]
_CACHE = "jira:v1:"
TEAM_MANAGED = (
    "This is a Jira team-managed project: those do not use global custom fields, so the "
    "Work Package field cannot be written on its issues. Links to issues still work and the "
    "registers keep their data."
)


def two_fields_message(name: str, ids: list[str]) -> str:
    return (
        f"Jira has {len(ids)} custom fields named '{name}' ({', '.join(ids)}): rename or "
        "delete all but one in Jira's settings (Issues, Custom fields), then retry."
    )


def _user(data: dict[str, Any]) -> TrackerUser:
    avatars = data.get("avatarUrls") or {}
    return TrackerUser(
        account_id=data["accountId"],
        display_name=data.get("displayName") or data["accountId"],
        avatar_url=avatars.get("48x48") or avatars.get("32x32") or "",
        email=data.get("emailAddress") or "",
        active=bool(data.get("active", True)),
    )


def _project(data: dict[str, Any]) -> TrackerProject:
    key = data["key"]
    return TrackerProject(
        key=key,
        name=data.get("name") or key,
        lead_account_id=((data.get("lead") or {}).get("accountId") or ""),
        id=str(data.get("id") or ""),
        former_keys=tuple(k for k in data.get("projectKeys") or () if k and k != key),
    )


def _granted(account_id: str, granted: bool | None) -> bool:
    """Whether the person holds a grant: as the caller read it, else from the database."""
    return grants.has_grant(account_id) if granted is None else bool(granted) and bool(account_id)


class JiraGate:
    """The tracker's part of the access gate for one person (see `JiraTracker.gate`): Jira's
    answers from the cache (TRACKER_CACHE_SECONDS), the grant from the gate's one statement."""

    def __init__(self, tracker: "JiraTracker", account_id: str, values: dict[str, Any]) -> None:
        self.tracker, self.account_id, self.granted = tracker, account_id, values["gate_t_grant"]

    def can_browse(self, project_key: str) -> bool:
        return self.tracker.can_browse(self.account_id, project_key, granted=self.granted)

    def project(self, project_key: str) -> TrackerProject | None:
        return self.tracker.get_project(project_key)

    def is_site_admin(self) -> bool:
        return self.tracker.is_site_admin(self.account_id, granted=self.granted)

    def is_group_member(self, group: str) -> bool:
        return self.tracker.is_group_member(self.account_id, group)


class JiraTracker:
    product = "Jira"

    # The access gate (governance.permissions) ----------------------------------------
    def gate_expressions(
        self, account_id: str, group: str, key: str = "key", *, every: bool = False
    ) -> dict[str, Any]:
        """What the gate's one statement reads for Jira: whether the person holds a grant
        (over any row: `key` and `every` are not read). The rest comes from Jira's cached
        answers."""
        return {"gate_t_grant": Exists(AtlassianGrant.objects.filter(account_id=account_id))}

    def gate(self, account_id: str, values: dict[str, Any]) -> JiraGate:
        return JiraGate(self, account_id, values)

    def gate_browsable(self, account_id: str) -> list[TrackerProject] | None:
        """The person's browsable projects when Jira's listing is cached, else None."""
        return self.cached_browsable_projects(account_id)

    def __init__(self) -> None:
        self.http = Client(product=self.product, error_class=TrackerError)

    # Credentials ----------------------------------------------------------------------
    def service(self) -> Credentials:
        """The service account, on the site (classic token) or the gateway (scoped)."""
        return service.credentials(self.product, TrackerError)

    def as_user(self, account_id: str) -> Credentials:
        try:
            return UserCredentials(account_id, self.product)
        except AtlassianUnavailable as exc:
            raise TrackerError(str(exc)) from None

    def _get(self, operation: str, path: str, creds: Credentials, **params: Any) -> Any:
        return self.http.request(operation, "GET", API + path, creds, params=params or None)

    # Identity -------------------------------------------------------------------------
    def current_user(self, account_id: str) -> TrackerUser | None:
        if not grants.has_grant(account_id):
            return self.users_bulk([account_id]).get(account_id)
        data = self._get("getCurrentUser", "/myself", self.as_user(account_id))
        return _user(data) if data and data.get("accountId") else None

    def users_bulk(self, account_ids: Iterable[str]) -> dict[str, TrackerUser]:
        ids = sorted({a for a in account_ids if a})
        found: dict[str, TrackerUser] = {}
        if not ids:
            return found
        creds = self.service()
        for start in range(0, len(ids), USER_BULK_BATCH):
            batch = ids[start : start + USER_BULK_BATCH]
            for data in self.http.offset_pages(
                "bulkGetUsers", API + "/user/bulk", creds, params={"accountId": batch}
            ):
                if data.get("accountId"):
                    found[data["accountId"]] = _user(data)
        return found

    def search_users(self, query: str, *, limit: int = 20) -> list[TrackerUser]:
        # findUsers (GET /user/search) is Jira's people picker; it is outside the trimmed
        # contract documents, so its shape is pinned by tests/atlassian fixtures instead.
        data = self.http.request(
            "findUsers",
            "GET",
            API + "/user/search",
            self.service(),
            params={"query": query.strip() or ".", "maxResults": limit},
        )
        return [
            _user(u)
            for u in (data or [])
            if u.get("accountId") and u.get("accountType", "atlassian") == "atlassian"
        ][:limit]

    def is_site_admin(self, account_id: str, *, granted: bool | None = None) -> bool:
        """`granted`: whether the person holds a grant, when the caller already read it (the
        access gate's one statement)."""
        if not account_id:
            return False
        key = f"{_CACHE}admin:{account_id}"
        cached: bool | None = cache.get(key)
        if cached is not None:
            return cached
        if account_id == acting_account.get() and _granted(account_id, granted):
            data = self._get(
                "getMyPermissions",
                "/mypermissions",
                self.as_user(account_id),
                permissions="ADMINISTER",
            )
            granted = (((data or {}).get("permissions") or {}).get("ADMINISTER") or {}).get(
                "havePermission"
            )
            admin = bool(granted)
        else:
            admin = any(
                self.is_group_member(account_id, group) for group in settings.ATLASSIAN_ADMIN_GROUPS
            )
        cache.set(key, admin, settings.TRACKER_CACHE_SECONDS)
        return admin

    def _groups_of(self, account_id: str) -> set[str]:
        key = f"{_CACHE}groups:{account_id}"
        cached = cache.get(key)
        if cached is not None:
            return set(cached)
        data = self.http.request(
            "getUserGroups",
            "GET",
            API + "/user/groups",
            self.service(),
            params={"accountId": account_id},
            missing_ok=True,
        )
        names = sorted({g.get("name") for g in (data or []) if g.get("name")})
        cache.set(key, names, settings.TRACKER_CACHE_SECONDS)
        return set(names)

    def is_group_member(self, account_id: str, group: str) -> bool:
        if not account_id or not group:
            return False
        return group in self._groups_of(account_id)

    def group_exists(self, group: str) -> bool:
        if not group:
            return False
        data = self.http.request(
            "getUsersFromGroup",
            "GET",
            API + "/group/member",
            self.service(),
            params={"groupname": group, "maxResults": 1},
            missing_ok=True,
        )
        return data is not None

    # Projects -------------------------------------------------------------------------
    def get_project(self, key: str) -> TrackerProject | None:
        """By key, former key or id: Jira answers an old key with the project as it is now;
        `projectKeys` lists every key it had (the mirror keeps them as redirects)."""
        if not (PROJECT_KEY.match(key or "") or PROJECT_ID.match(key or "")):
            return None
        data = self.http.request(
            "getProject",
            "GET",
            f"{API}/project/{key}",
            self.service(),
            params={"expand": "lead,projectKeys"},
            missing_ok=True,
        )
        return _project(data) if data else None

    def cached_browsable_projects(self, account_id: str) -> list[TrackerProject] | None:
        """The cached listing of `browsable_projects` (None when not cached), read without
        asking whether the person still holds a grant: the caller asks that itself."""
        cached = cache.get(f"{_CACHE}projects:{account_id}") if account_id else None
        if cached is None:
            return None
        rows, stopped = cached
        if stopped:
            mark_incomplete("searchProjects")
        return [TrackerProject(*row) for row in rows]

    def browsable_projects(
        self, account_id: str, *, granted: bool | None = None
    ) -> list[TrackerProject]:
        if not _granted(account_id, granted):
            return []
        cached = self.cached_browsable_projects(account_id)
        if cached is not None:
            return cached
        key = f"{_CACHE}projects:{account_id}"
        before = incomplete_listings.get()
        projects = [
            _project(p)
            for p in self.http.offset_pages(
                "searchProjects",
                API + "/project/search",
                self.as_user(account_id),
                params={"action": "browse", "expand": "lead", "orderBy": "key"},
            )
        ]
        projects.sort(key=lambda p: p.key)
        stopped = "searchProjects" in incomplete_listings.get() - before
        cache.set(
            key,
            ([(p.key, p.name, p.lead_account_id, p.id) for p in projects], stopped),
            settings.TRACKER_CACHE_SECONDS,
        )
        return projects

    def can_browse(self, account_id: str, project_key: str, *, granted: bool | None = None) -> bool:
        """The signed-in person: their own token (no grant: no). Anyone else: asked as the
        service account (`getBulkPermissions`); portal-only customers never pass."""
        if not PROJECT_KEY.match(project_key or "") or not account_id:
            return False
        if account_id == acting_account.get():
            return self._may_browse_myself(account_id, project_key, granted)
        key = f"{_CACHE}browse:{account_id}:{project_key}"
        cached: bool | None = cache.get(key)
        if cached is not None:
            return cached
        allowed = self._others_may_browse(account_id, project_key)
        cache.set(key, allowed, settings.TRACKER_CACHE_SECONDS)
        return allowed

    def _may_browse_myself(
        self, account_id: str, project_key: str, granted: bool | None = None
    ) -> bool:
        # Fail closed: only the person's own grant can say they may browse.
        if not _granted(account_id, granted):
            return False
        key = f"{_CACHE}browse-self:{account_id}:{project_key}"
        cached: bool | None = cache.get(key)
        if cached is not None:
            return cached
        data = self.http.request(
            "getMyPermissions",
            "GET",
            API + "/mypermissions",
            self.as_user(account_id),
            params={"projectKey": project_key, "permissions": "BROWSE_PROJECTS"},
            missing_ok=True,
        )
        allowed = bool(
            (((data or {}).get("permissions") or {}).get("BROWSE_PROJECTS") or {}).get(
                "havePermission"
            )
        )
        cache.set(key, allowed, settings.TRACKER_CACHE_SECONDS)
        return allowed

    def _project_id(self, project_key: str) -> str:
        key = f"{_CACHE}project-id:{project_key}"
        cached: str | None = cache.get(key)
        if cached is not None:
            return cached
        data = self.http.request(
            "getProject", "GET", f"{API}/project/{project_key}", self.service(), missing_ok=True
        )
        project_id = str((data or {}).get("id") or "")
        cache.set(key, project_id, settings.TRACKER_CACHE_SECONDS)
        return project_id

    def bulk_permissions(self, body: dict[str, Any]) -> Any:
        """`getBulkPermissions` as the service account: a check, so safe to send again."""
        return self.http.request(
            "getBulkPermissions",
            "POST",
            API + "/permissions/check",
            self.service(),
            idempotent=True,
            json=body,
        )

    def _others_may_browse(self, account_id: str, project_key: str) -> bool:
        project_id = self._project_id(project_key)
        if not project_id:
            return False
        data = self.bulk_permissions(
            {
                "accountId": account_id,
                "projectPermissions": [
                    {"permissions": ["BROWSE_PROJECTS"], "projects": [int(project_id)]}
                ],
            }
        )
        granted = any(
            row.get("permission") == "BROWSE_PROJECTS"
            and int(project_id) in (row.get("projects") or [])
            for row in (data or {}).get("projectPermissions") or []
        )
        if not granted:
            return False
        # A service project grants Browse to its portal-only customers: not members here.
        found = self.http.request(
            "bulkGetUsers",
            "GET",
            API + "/user/bulk",
            self.service(),
            params={"accountId": [account_id]},
        )
        return any(
            u.get("accountId") == account_id and u.get("accountType") == "atlassian"
            for u in (found or {}).get("values") or []
        )

    def _browsers(self, project_key: str, query: str, limit: int) -> list[dict[str, Any]]:
        """`findUsersWithAllPermissions` as the service account: people who may browse the
        project matching `query` (all of them when empty), Atlassian accounts only."""
        params = {"permissions": "BROWSE_PROJECTS", "projectKey": project_key}
        if query:
            params["query"] = query
        found: list[dict[str, Any]] = []
        start = 0
        for _ in range(settings.ATLASSIAN_MAX_PAGES):
            page = self.http.request(
                "findUsersWithAllPermissions",
                "GET",
                API + "/user/permission/search",
                self.service(),
                params={**params, "startAt": start, "maxResults": limit},
            )
            page = page or []
            found += [u for u in page if u.get("accountId") and u.get("accountType") == "atlassian"]
            # Jira filters each range of `maxResults` accounts, so a short page is not the
            # last one: only a query (one page is the picker's answer) or an empty page ends.
            if query or not page:
                return found
            start += limit
        self.http._stopped("findUsersWithAllPermissions")
        return found

    def _all_browsers(self, project_key: str) -> list[dict[str, Any]]:
        key = f"{_CACHE}browsers:{project_key}"
        browsers: list[dict[str, Any]] | None = cache.get(key)
        if browsers is None:
            browsers = self._browsers(project_key, "", 1000)
            cache.set(key, browsers, settings.TRACKER_CACHE_SECONDS)
        return browsers

    def search_browsers(
        self, project_key: str, query: str, *, limit: int = 20
    ) -> list[TrackerUser]:
        """The people picker for a project: Jira filters by Browse, in one request (with no
        query, the project's browsers listed once and cached)."""
        if not PROJECT_KEY.match(project_key or ""):
            return []
        query = query.strip()
        found = (
            self._browsers(project_key, query, limit) if query else self._all_browsers(project_key)
        )
        return [_user(u) for u in found][:limit]

    def browsers_among(self, project_key: str, account_ids: Iterable[str | None]) -> set[str]:
        """Which of these people may browse the project. The signed-in person is asked with
        their own token; one other person through `getBulkPermissions`; more than one through
        one listing of the project's browsers (cached), never one request per person."""
        ids = {a for a in account_ids if a}
        if not ids or not PROJECT_KEY.match(project_key or ""):
            return set()
        me = acting_account.get()
        allowed = {me} if me in ids and self.can_browse(me, project_key) else set()
        others = ids - {me}
        if len(others) == 1:
            (other,) = others
            return allowed | ({other} if self.can_browse(other, project_key) else set())
        if others:
            allowed |= others & {u["accountId"] for u in self._all_browsers(project_key)}
        return allowed

    # Issues ---------------------------------------------------------------------------
    def _picker_creds(self) -> Credentials:
        account_id = acting_account.get()
        if account_id and grants.has_grant(account_id):
            return self.as_user(account_id)
        return self.service()

    def search_issues(self, project_key: str, text: str, *, limit: int = 20) -> list[TrackerIssue]:
        if not PROJECT_KEY.match(project_key or ""):
            return []
        creds = self._picker_creds()
        text = text.strip()
        if not text:
            issues = self.http.token_pages(
                "searchAndReconsileIssuesUsingJqlPost",
                "POST",
                API + "/search/jql",
                creds,
                body={
                    "jql": f"project = {query_string(project_key)} ORDER BY key DESC",
                    "fields": ISSUE_FIELDS,
                    "maxResults": limit,
                },
            )
            found = []
            for data in issues:
                found.append(self._issue(data, None))
                if len(found) >= limit:
                    break
            return found
        data = self._get(
            "getIssuePickerResource",
            "/issue/picker",
            creds,
            query=text,
            currentJQL=f"project = {query_string(project_key)}",
            showSubTasks="true",
        )
        seen: dict[str, TrackerIssue] = {}
        for section in (data or {}).get("sections") or []:
            for issue in section.get("issues") or []:
                key = issue.get("key") or ""
                if key.startswith(project_key + "-") and key not in seen:
                    seen[key] = TrackerIssue(
                        key=key, summary=issue.get("summaryText") or issue.get("summary") or ""
                    )
        return list(seen.values())[:limit]

    def _issue(self, data: dict[str, Any], field_id: str | None) -> TrackerIssue:
        fields = data.get("fields") or {}
        value = fields.get(field_id) if field_id else None
        return TrackerIssue(
            key=data.get("key") or "",
            summary=fields.get("summary") or "",
            issue_type=(fields.get("issuetype") or {}).get("name") or "",
            status=(fields.get("status") or {}).get("name") or "",
            work_package=value if isinstance(value, str) and value else None,
        )

    def _fetch_issues(self, keys: list[str], creds: Credentials, fields: list[str]) -> list[Any]:
        """The issues among `keys` that `creds` may see: `key in (...)` a batch at a time;
        when JQL refuses a batch (a key that does not exist, or that these credentials may
        not see), one by one."""
        issues: list[Any] = []
        for start in range(0, len(keys), JQL_KEYS_BATCH):
            batch = keys[start : start + JQL_KEYS_BATCH]
            try:
                issues += list(
                    self.http.token_pages(
                        "searchAndReconsileIssuesUsingJqlPost",
                        "POST",
                        API + "/search/jql",
                        creds,
                        body={
                            "jql": f"key in ({', '.join(batch)}) ORDER BY key",
                            "fields": fields,
                            "maxResults": 100,
                        },
                    )
                )
            except TrackerError as exc:
                if "HTTP 400" not in str(exc):
                    raise
                issues += [
                    data
                    for key in batch
                    if (
                        data := self.http.request(
                            "getIssue",
                            "GET",
                            f"{API}/issue/{key}",
                            creds,
                            params={"fields": ",".join(fields)},
                            missing_ok=True,
                        )
                    )
                ]
        return issues

    def get_issues(self, keys: Iterable[str]) -> dict[str, TrackerIssue]:
        wanted = sorted({k.strip().upper() for k in keys if k and ISSUE_KEY.match(k.strip())})
        if not wanted:
            return {}
        field_id = self._known_field_id()
        fields = [*ISSUE_FIELDS, *([field_id] if field_id else [])]
        found: dict[str, TrackerIssue] = {}
        for data in self._fetch_issues(wanted, self.service(), fields):
            issue = self._issue(data, field_id)
            if issue.key:
                found[issue.key] = issue
        return self._as_the_reader(found)

    def _as_the_reader(self, found: dict[str, TrackerIssue]) -> dict[str, TrackerIssue]:
        """What the service account found, with summary, type and status only where the
        person the request acts for may see the issue (their own search); else the key alone.
        Outside a request (the worker) nobody reads: as found."""
        reader = acting_account.get()
        if not reader or not found:
            return found
        seen: set[str] = set()
        if grants.has_grant(reader):
            try:
                answer = self._fetch_issues(sorted(found), self.as_user(reader), ["summary"])
                seen = {data.get("key") for data in answer if data.get("key")}
            except TrackerError:
                seen = set()  # the reader's search failed: keys alone, nothing leaks
        return {
            key: issue
            if key in seen
            else TrackerIssue(key=key, summary="", work_package=issue.work_package)
            for key, issue in found.items()
        }

    # The 'Work Package' custom field ----------------------------------------------------
    def _known_field_id(self) -> str:
        state = TrackerFieldState.objects.filter(name=settings.ATLASSIAN_FIELD_NAME).first()
        return state.field_id if state else ""

    def field_unwritable(self, project_key: str) -> str:
        """Why the 'Work Package' field cannot be written in this project ("" when it can or
        is not known yet): a team-managed project has no global custom fields."""
        state = TrackerFieldState.objects.filter(name=settings.ATLASSIAN_FIELD_NAME).first()
        return (state.unwritable.get(project_key) or "") if state else ""

    def ensure_field(self, project_key: str, issue_key: str = "") -> str:
        """The custom field's id, found by name or created, with a context covering the
        project and on the edit screens of the project's issue types (confirmed editable on
        `issue_key`). "" for a team-managed project, where it cannot be written. Idempotent,
        and serialised across workers by a row lock."""
        creds = self.service()
        name = settings.ATLASSIAN_FIELD_NAME
        state, _ = TrackerFieldState.objects.get_or_create(name=name)
        if project_key in state.unwritable:
            return ""
        if state.field_id and project_key in state.projects:
            return state.field_id
        with transaction.atomic():
            state = TrackerFieldState.objects.select_for_update().get(pk=state.pk)
            if project_key in state.unwritable:
                return ""
            if project_key not in state.projects:
                project = self.http.request(
                    "getProject", "GET", f"{API}/project/{project_key}", creds
                )
                project_id = str(project["id"])
                if project.get("style") == "next-gen" or project.get("simplified"):
                    state.unwritable = {**state.unwritable, project_key: TEAM_MANAGED}
                    state.save()
                    logger.warning(
                        "Jira project %s is team-managed: the '%s' field cannot be written",
                        project_key,
                        name,
                    )
                    return ""
                if not state.field_id:
                    state.field_id = self._find_or_create_field(creds, name)
                    state.context_id = ""
                    state.projects = {}
                self._cover_project(creds, state, project_id)
                self._put_on_edit_screens(creds, state.field_id, project_id, project_key)
                if issue_key:
                    self._confirm_editable(creds, state.field_id, issue_key)
                state.projects = {**state.projects, project_key: project_id}
            state.save()
            return state.field_id

    def fields_named(self, creds: Credentials, name: str) -> list[str]:
        """The ids of every custom field called `name` on the site, sorted."""
        return sorted(
            str(f["id"])
            for f in self.http.offset_pages(
                "getFieldsPaginated",
                API + "/field/search",
                creds,
                params={"type": "custom", "query": name},
            )
            if f.get("name") == name and f.get("id")
        )

    def _find_or_create_field(self, creds: Credentials, name: str) -> str:
        ids = self.fields_named(creds, name)
        if len(ids) > 1:
            raise TrackerError(two_fields_message(name, ids))
        if ids:
            return ids[0]

        def made() -> dict[str, str] | None:
            ids = self.fields_named(creds, name)
            if len(ids) > 1:
                raise TrackerError(two_fields_message(name, ids))
            return {"id": ids[0]} if ids else None

        created = self.http.create(
            "createCustomField",
            API + "/field",
            creds,
            find=made,
            json={
                "name": name,
                "description": "The governance work package this issue belongs to "
                "(kept by the governance app).",
                "type": FIELD_TYPE,
                "searcherKey": FIELD_SEARCHER,
            },
        )
        field_id = str((created or {}).get("id") or "")
        if not field_id:
            raise TrackerError(f"Jira created the '{name}' field without saying its id.")
        return field_id

    def edit_screens(self, creds: Credentials, project_id: str) -> list[int]:
        """The edit screen (or the default one) of every issue type of the project: its
        issue type screen scheme, that scheme's screen schemes, their screens."""
        schemes = [
            str((row.get("issueTypeScreenScheme") or {}).get("id"))
            for row in self.http.offset_pages(
                "getIssueTypeScreenSchemeProjectAssociations",
                API + "/issuetypescreenscheme/project",
                creds,
                params={"projectId": [project_id]},
                page_size=100,
            )
            if (row.get("issueTypeScreenScheme") or {}).get("id")
        ]
        screen_schemes = sorted(
            {
                str(item["screenSchemeId"])
                for item in self.http.offset_pages(
                    "getIssueTypeScreenSchemeMappings",
                    API + "/issuetypescreenscheme/mapping",
                    creds,
                    params={"issueTypeScreenSchemeId": schemes},
                    page_size=100,
                )
                if item.get("screenSchemeId")
            }
            if schemes
            else ()
        )
        screens: set[int] = set()
        if screen_schemes:
            for scheme in self.http.offset_pages(
                "getScreenSchemes",
                API + "/screenscheme",
                creds,
                params={"id": [int(i) for i in screen_schemes]},
                page_size=100,
            ):
                kinds = scheme.get("screens") or {}
                screen = kinds.get("edit") or kinds.get("default")
                if screen:
                    screens.add(int(screen))
        return sorted(screens)

    def _put_on_edit_screens(
        self, creds: Credentials, field_id: str, project_id: str, project_key: str
    ) -> None:
        """Add the field to the first tab of each edit screen that does not have it yet."""
        for screen in self.edit_screens(creds, project_id):
            tabs = self.http.request(
                "getAllScreenTabs", "GET", f"{API}/screens/{screen}/tabs", creds
            )
            tabs = [t for t in (tabs or []) if t.get("id") is not None]
            if not tabs:
                raise TrackerError(
                    f"Jira screen {screen} of project {project_key} has no tab to put the "
                    f"'{settings.ATLASSIAN_FIELD_NAME}' field on."
                )
            present = any(
                f.get("id") == field_id
                for tab in tabs
                for f in self.http.request(
                    "getAllScreenTabFields",
                    "GET",
                    f"{API}/screens/{screen}/tabs/{tab['id']}/fields",
                    creds,
                )
                or []
            )
            if not present:
                self.http.request(
                    "addScreenTabField",
                    "POST",
                    f"{API}/screens/{screen}/tabs/{tabs[0]['id']}/fields",
                    creds,
                    json={"fieldId": field_id},
                )

    def _confirm_editable(self, creds: Credentials, field_id: str, issue_key: str) -> None:
        meta = self.http.request(
            "getEditIssueMeta",
            "GET",
            f"{API}/issue/{issue_key}/editmeta",
            creds,
            missing_ok=True,
        )
        if meta is not None and field_id not in (meta.get("fields") or {}):
            raise TrackerError(
                f"Jira does not offer the '{settings.ATLASSIAN_FIELD_NAME}' field "
                f"({field_id}) for editing on {issue_key}, although it is on the project's "
                "edit screens: check the field configuration hides nothing, then retry."
            )

    def _cover_project(self, creds: Credentials, state: TrackerFieldState, project_id: str) -> None:
        field = state.field_id
        mapping = self.http.offset_pages(
            "getProjectContextMapping",
            f"{API}/field/{field}/context/projectmapping",
            creds,
        )
        for row in mapping:
            if str(row.get("projectId")) == project_id or row.get("isGlobalContext"):
                state.context_id = state.context_id or str(row.get("contextId") or "")
                return
        if not state.context_id:
            for context in self.http.offset_pages(
                "getContextsForField", f"{API}/field/{field}/context", creds
            ):
                if not context.get("isGlobalContext") and context.get("name") == state.name:
                    state.context_id = str(context["id"])
                    break
        if not state.context_id:
            created = self.http.create(
                "createCustomFieldContext",
                f"{API}/field/{field}/context",
                creds,
                find=lambda: self._context_named(creds, field, state.name),
                json={"name": state.name, "projectIds": [project_id], "issueTypeIds": []},
            )
            state.context_id = str((created or {}).get("id") or "")
            return
        self.http.request(
            "assignProjectsToCustomFieldContext",
            "PUT",
            f"{API}/field/{field}/context/{state.context_id}/project",
            creds,
            json={"projectIds": [project_id]},
        )

    def _context_named(self, creds: Credentials, field: str, name: str) -> dict[str, Any] | None:
        for context in self.http.offset_pages(
            "getContextsForField", f"{API}/field/{field}/context", creds
        ):
            if not context.get("isGlobalContext") and context.get("name") == name:
                return {"id": str(context["id"])}
        return None

    def set_work_package_field(self, issue_key: str, value: str | None) -> None:
        if not ISSUE_KEY.match(issue_key or ""):
            return
        field_id = self.ensure_field(issue_key.rsplit("-", 1)[0], issue_key)
        if not field_id:
            return  # a team-managed project: the link stands, the field cannot be written
        # An issue deleted in Jira meanwhile (404) has nothing left to show: done.
        self.http.request(
            "editIssue",
            "PUT",
            f"{API}/issue/{issue_key}",
            self.service(),
            params={"notifyUsers": "false"},
            json={"fields": {field_id: value or None}},
            missing_ok=True,
        )

    # Dynamic webhooks (governance.webhooks), as the admin whose grant holds them --
    def webhooks(self, account_id: str) -> list[dict[str, Any]]:
        """The webhooks this app registered (`getDynamicWebhooksForApp`), as that person."""
        return list(
            self.http.offset_pages(
                "getDynamicWebhooksForApp", API + "/webhook", self.as_user(account_id)
            )
        )

    def register_webhooks(
        self, account_id: str, *, url: str, jql: str, events: list[str]
    ) -> list[int]:
        """`registerDynamicWebhooks` as that person; never sent twice blindly: a first try
        whose answer was lost is looked for among the app's webhooks (same filter, events)."""
        creds = self.as_user(account_id)

        def made() -> dict[str, Any] | None:
            ids = [
                hook["id"]
                for hook in self.webhooks(account_id)
                if hook.get("jqlFilter") == jql
                and sorted(hook.get("events") or []) == sorted(events)
            ]
            return (
                {"webhookRegistrationResult": [{"createdWebhookId": i} for i in ids]}
                if ids
                else None
            )

        answer = self.http.create(
            "registerDynamicWebhooks",
            API + "/webhook",
            creds,
            find=made,
            json={"url": url, "webhooks": [{"events": events, "jqlFilter": jql}]},
        )
        results = (answer or {}).get("webhookRegistrationResult") or []
        errors = [e for r in results for e in r.get("errors") or []]
        ids = [int(r["createdWebhookId"]) for r in results if r.get("createdWebhookId")]
        if errors or not ids:
            raise TrackerError(
                "Jira did not register the webhooks (registerDynamicWebhooks): "
                + ("; ".join(errors) or "no webhook id in its answer")
            )
        return ids

    def refresh_webhooks(self, account_id: str, ids: list[int]) -> dt.datetime | None:
        """`refreshWebhooks`: another 30 days. Returns the new expiry (aware datetime)."""
        answer = self.http.request(
            "refreshWebhooks",
            "PUT",
            API + "/webhook/refresh",
            self.as_user(account_id),
            json={"webhookIds": [int(i) for i in ids]},
        )
        return webhook_expiry((answer or {}).get("expirationDate"))

    def delete_webhooks(self, account_id: str, ids: list[int]) -> None:
        self.http.request(
            "deleteWebhookById",
            "DELETE",
            API + "/webhook",
            self.as_user(account_id),
            json={"webhookIds": [int(i) for i in ids]},
            missing_ok=True,
        )


def webhook_expiry(value: object) -> dt.datetime | None:
    """Jira's `expirationDate`: milliseconds since the epoch (the schema), or a date string
    (its examples). None when absent or unreadable."""
    if isinstance(value, int | float):
        return dt.datetime.fromtimestamp(value / 1000, tz=dt.UTC)
    if isinstance(value, str) and value:
        for fmt in ("%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S%z"):
            try:
                return dt.datetime.strptime(value, fmt)
            except ValueError:
                continue
    return None


__all__ = ["JiraTracker", "SignInRequired"]
