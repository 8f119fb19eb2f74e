"""A Jira Cloud stand-in for tests: the contract mock's handlers answered from the local
tracker's tables (people, projects, browse grants, groups, issues), so the same cast and
fixtures the rest of the suite uses drive the Jira backend. Person tokens are
`tok-<accountId>`; `down = True` makes every operation answer 503.

What a contract mock cannot show, this site does as Jira Cloud documents it:

- A custom field can be set by `editIssue` only when it is on the edit screen of the issue's
  project and issue type; otherwise Jira answers 400 "Field 'customfield_N' cannot be set. It
  is not on the appropriate screen, or unknown." (Edit issue,
  https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-put;
  Edit issue metadata lists only the fields on that screen,
  https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-issueidorkey-editmeta-get).
  Every project here uses one issue type screen scheme (id 20) whose screen scheme (30) has
  a default screen (1) and an edit screen (2); `screens` holds each tab's field ids.
- A Jira Service Management project grants Browse projects to its portal-only customers
  (accountType `customer`, https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-users/#api-rest-api-3-user-bulk-get
  documents the account types), so `getBulkPermissions` says they may browse although they
  are not project members (https://support.atlassian.com/jira-service-management-cloud/docs/what-are-portal-only-customers/).
  `customers` holds those accountIds; they are granted Browse on every project here.
- `getBulkPermissions` and `findUsersWithAllPermissions` about other people need the
  service account (Administer Jira); a person's token gets 403 here
  (https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-permissions/#api-rest-api-3-permissions-check-post).
  `findUsersWithAllPermissions` takes the accounts from `startAt` to `startAt + maxResults`
  and then keeps only those with the permission, as its page documents.
- An issue in a security level the person is not in (`restricted`) is invisible to their
  token: JQL naming its key is refused with 400 "An issue with key 'X' does not exist for
  field 'key'." and `getIssue` answers 404, while the service account sees it
  (https://support.atlassian.com/jira-cloud-administration/docs/configure-issue-security-schemes/;
  https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issue-search/#api-rest-api-3-search-jql-post).
- Team-managed projects (`team_managed`, `style: next-gen`) do not use global custom
  fields at all: an edit of the field is refused there whatever the screens say
  (https://support.atlassian.com/jira-software-cloud/docs/what-are-team-managed-and-company-managed-projects/).
- A project's key can change (`rename`); its id does not. `getProject` takes the id, the key
  or a key the project had before, answering with the project as it is now, and lists every
  key with `expand=projectKeys`
  (https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-projects/#api-rest-api-3-project-projectidorkey-get;
  https://support.atlassian.com/jira-cloud-administration/docs/edit-a-projects-details/).
  `mypermissions` with a former key answers 404 here, the strict reading.
- Dynamic webhooks are held by an OAuth app's token only (an API token gets 403) and expire
  30 days after registration or the last refresh, measured on `now_ms`
  (https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-webhooks/).
"""

import re

from governance.models import Project
from governance.tracker.local.backend import LocalTracker
from governance.tracker.local.models import LocalAccount, LocalIssue, LocalProject
from tests.atlassian.conftest import give_grant
from tests.atlassian.contract import AtlassianMock

FIELD_ID = "customfield_10101"


CUSTOMERS: set[str] = set()


def user_json(user) -> dict:
    return {
        "accountId": user.account_id,
        "accountType": "customer" if user.account_id in CUSTOMERS else "atlassian",
        "displayName": user.display_name,
        "active": user.active,
        "avatarUrls": {"48x48": user.avatar_url or "https://avatars.test/a.png"},
    }


def project_json(project, *, style: str = "classic") -> dict:
    return {
        "id": str(10000 + project.pk),
        "key": project.key,
        "name": project.name,
        "style": style,
        "simplified": style == "next-gen",
        "lead": user_json(LocalTracker().current_user(project.lead.account_id)),
    }


def field_meta(field_id: str) -> dict:
    """One field of Edit issue metadata (FieldMetadata)."""
    return {
        "key": field_id,
        "name": field_id,
        "operations": ["set"],
        "required": False,
        "schema": {"type": "string"},
    }


NOT_ON_SCREEN = "Field '{}' cannot be set. It is not on the appropriate screen, or unknown."


def issue_json(issue) -> dict:
    return {
        "id": str(issue.pk),
        "key": issue.key,
        "fields": {
            "summary": issue.summary,
            "issuetype": {"name": issue.issue_type},
            "status": {"name": issue.status},
            FIELD_ID: issue.work_package,
        },
    }


# The service account's id as the tests' getCurrentUser gives it (user_json("svc", ...)).
SERVICE_ACCOUNT_ID = "svc"


class FakeJira:
    def __init__(self, mock: AtlassianMock):
        self.mock = mock
        self.local = LocalTracker()
        self.down = False
        self.edits: list[tuple[str, object]] = []
        self.field = {"created": False, "contexts": [], "mapping": []}
        self.team_managed: set[str] = set()
        self.customers = CUSTOMERS
        # ("EDIT_ISSUES", "ALPHA") or "USER_PICKER": what the service account was not given.
        self.service_lacks: set = set()
        self.restricted: set[str] = set()
        # A large site: this many more projects every person may browse (not in the tables).
        self.extra_projects = 0
        CUSTOMERS.clear()
        # Dynamic webhooks by id; `now_ms` is the site's clock (milliseconds) for expiry.
        self.webhooks: dict[int, dict] = {}
        self.now_ms = 1_800_000_000_000
        # Project id -> the keys it had before (a key changed: `rename`).
        self.former_keys: dict[int, list[str]] = {}
        # Mirrors the cast made through the local tracker carry its ids: this site's instead.
        for project in LocalProject.objects.all():
            Project.objects.filter(tracker_id=str(project.pk)).update(
                tracker_id=str(10000 + project.pk)
            )
        # screen id -> tab id -> field ids on that tab (2 is every project's edit screen).
        self.screens: dict[int, dict[int, list[str]]] = {
            1: {11: ["summary"]},
            2: {21: ["summary", "description"], 22: ["labels"]},
        }
        ops = {
            "getCurrentUser": self.myself,
            "getMyPermissions": self.my_permissions,
            "searchProjects": self.search_projects,
            "getProject": self.get_project,
            "bulkGetUsers": self.bulk_users,
            "getUserGroups": self.user_groups,
            "getUsersFromGroup": self.group_members,
            "searchAndReconsileIssuesUsingJqlPost": self.search_jql,
            "getIssuePickerResource": self.picker,
            "getIssue": self.get_issue,
            "editIssue": self.edit_issue,
            "getFieldsPaginated": self.fields,
            "createCustomField": self.create_field,
            "getContextsForField": self.contexts,
            "createCustomFieldContext": self.create_context,
            "getProjectContextMapping": self.mapping,
            "assignProjectsToCustomFieldContext": self.assign,
            "getIssueTypeScreenSchemeProjectAssociations": self.screen_scheme_projects,
            "getIssueTypeScreenSchemeMappings": self.screen_scheme_mappings,
            "getScreenSchemes": self.screen_schemes,
            "getAllScreenTabs": self.screen_tabs,
            "getAllScreenTabFields": self.screen_tab_fields,
            "addScreenTabField": self.add_screen_tab_field,
            "getEditIssueMeta": self.edit_meta,
            "getBulkPermissions": self.bulk_permissions,
            "findUsersWithAllPermissions": self.users_with_permissions,
            "registerDynamicWebhooks": self.register_webhooks,
            "getDynamicWebhooksForApp": self.list_webhooks,
            "refreshWebhooks": self.refresh_webhooks,
            "deleteWebhookById": self.delete_webhooks,
        }
        for name, func in ops.items():
            mock.on(name, self._guard(func))
        mock.uncontracted[("GET", "/rest/api/3/user/search")] = self._guard(self.find_users)

    def _guard(self, func):
        def handle(request, query, body):
            if self.down:
                return (
                    503,
                    {"errorMessages": ["Jira is down for maintenance"]},
                    {"Retry-After": "1"},
                )
            return func(request, query, body)

        return handle

    @staticmethod
    def grant(user):
        return give_grant(user, access=f"tok-{user.account_id}")

    @staticmethod
    def _account(request) -> str:
        header = request.headers.get("Authorization", "")
        return header.removeprefix("Bearer tok-") if header.startswith("Bearer tok-") else ""

    # Identity
    def myself(self, request, query, body):
        user = self.local.current_user(self._account(request))
        return (200, user_json(user)) if user else (401, {"message": "Unauthorized"})

    def my_permissions(self, request, query, body):
        account = self._account(request)
        wanted = query["permissions"][0]
        if wanted == "BROWSE_PROJECTS":
            key = query["projectKey"][0]
            if not LocalProject.objects.filter(key=key).exists():
                return 404, {"errorMessages": ["No project could be found with key."]}
            have = self.local.can_browse(account, key)
        else:
            have = self.local.is_site_admin(account)
        return 200, {"permissions": {wanted: {"key": wanted, "havePermission": have}}}

    def search_projects(self, request, query, body):
        projects = self.local.browsable_projects(self._account(request))
        start, size = int(query["startAt"][0]), int(query["maxResults"][0])
        size = min(size, 100)  # "Must be less than or equal to 100"
        extra = [f"X{n:05}" for n in range(self.extra_projects)]
        projects = [*projects, *extra]
        page = projects[start : start + size]
        values = [
            project_json(LocalProject.objects.get(key=p.key))
            if not isinstance(p, str)
            else {"id": str(50000 + int(p[1:])), "key": p, "name": f"Project {p}"}
            for p in page
        ]
        return 200, {
            "isLast": start + size >= len(projects),
            "startAt": start,
            "total": len(projects),
            "values": values,
        }

    def project_named(self, id_or_key: str):
        """A project by id, key, or a key it had before (Jira answers an old key with the
        project as it is now)."""
        if id_or_key.isdigit():
            return LocalProject.objects.filter(pk=int(id_or_key) - 10000).first()
        project = LocalProject.objects.filter(key=id_or_key).first()
        if project is None:
            pk = next((pk for pk, keys in self.former_keys.items() if id_or_key in keys), None)
            project = LocalProject.objects.filter(pk=pk).first() if pk else None
        return project

    def rename(self, old: str, new: str) -> None:
        """A Jira administrator changes a project's key (and its issues' keys with it)."""
        project = LocalProject.objects.get(key=old)
        self.former_keys.setdefault(project.pk, []).append(old)
        project.key = new
        project.save(update_fields=["key"])
        for issue in LocalIssue.objects.filter(project=project):
            issue.key = new + issue.key.removeprefix(old)
            issue.save(update_fields=["key"])

    def get_project(self, request, query, body):
        key = request.url.split("?")[0].rsplit("/", 1)[1]
        project = self.project_named(key)
        if project is None:
            return 404, {"errorMessages": ["No project could be found with key."]}
        style = "next-gen" if project.key in self.team_managed else "classic"
        data = project_json(project, style=style)
        if "projectKeys" in (query.get("expand") or [""])[0]:
            data["projectKeys"] = [*self.former_keys.get(project.pk, []), project.key]
        return 200, data

    def bulk_users(self, request, query, body):
        found = self.local.users_bulk(query["accountId"])
        return 200, {"isLast": True, "values": [user_json(u) for u in found.values()]}

    def find_users(self, request, query, body):
        return 200, [user_json(u) for u in self.local.search_users(query["query"][0])]

    @staticmethod
    def _as_service(request) -> bool:
        return request.headers.get("Authorization", "").startswith("Basic ")

    def _may_browse(self, account_id: str, key: str) -> bool:
        return account_id in self.customers or self.local.can_browse(account_id, key)

    def bulk_permissions(self, request, query, body):
        if not self._as_service(request):
            return 403, {"errorMessages": ["You do not have the permission to check others."]}
        account = body.get("accountId", "")
        # The service account is set up as docs/atlassian.md asks (Browse users and groups; Browse
        # projects and Edit issues in the linked projects) but for what `service_lacks` names.
        service = account == SERVICE_ACCOUNT_ID
        rows = []
        for wanted in body.get("projectPermissions") or []:
            for permission in wanted["permissions"]:
                projects = [
                    pid
                    for pid in wanted.get("projects") or []
                    if permission in ("BROWSE_PROJECTS", "EDIT_ISSUES")
                    and (project := LocalProject.objects.filter(pk=pid - 10000).first())
                    and (
                        (service and (permission, project.key) not in self.service_lacks)
                        or (not service and self._may_browse(account, project.key))
                    )
                ]
                rows.append({"permission": permission, "projects": projects, "issues": []})
        granted = [
            p
            for p in body.get("globalPermissions") or []
            if service and p not in self.service_lacks
        ]
        return 200, {"globalPermissions": granted, "projectPermissions": rows}

    def users_with_permissions(self, request, query, body):
        if not self._as_service(request):
            return 403, {"errorMessages": ["You do not have the permission to list users."]}
        assert query["permissions"] == ["BROWSE_PROJECTS"]
        key = query["projectKey"][0]
        start = int(query.get("startAt", ["0"])[0])
        size = int(query.get("maxResults", ["50"])[0])
        text = query.get("query", [""])[0].casefold()
        accounts = list(LocalAccount.objects.filter(active=True).order_by("pk"))
        window = accounts[start : start + size]
        return 200, [
            user_json(a)
            for a in window
            if self._may_browse(a.account_id, key)
            and (not text or text in a.display_name.casefold() or text in a.name.casefold())
        ]

    def user_groups(self, request, query, body):
        account = LocalAccount.objects.filter(account_id=query["accountId"][0]).first()
        if account is None:
            return 404, {"errorMessages": ["No user"]}
        return 200, [{"name": g.name, "groupId": str(g.pk)} for g in account.groups.all()]

    def group_members(self, request, query, body):
        if not self.local.group_exists(query["groupname"][0]):
            return 404, {"errorMessages": ["Group not found"]}
        return 200, {"isLast": True, "values": []}

    # Issues
    def search_jql(self, request, query, body):
        jql = body["jql"]
        keys = re.match(r"key in \(([^)]*)\)", jql)
        if keys:
            named = [k.strip() for k in keys[1].split(",")]
            hidden = self.restricted if self._account(request) else set()
            for key in named:
                if key in hidden or not LocalIssue.objects.filter(key=key).exists():
                    message = f"An issue with key '{key}' does not exist for field 'key'."
                    return 400, {"errorMessages": [message]}
            issues = LocalIssue.objects.filter(key__in=named)
        else:
            project = re.match(r'project = "([^"]+)"', jql)[1]
            issues = LocalIssue.objects.filter(project__key=project).order_by("-key")
        issues = list(issues[: body.get("maxResults", 50)])
        return 200, {"isLast": True, "issues": [issue_json(i) for i in issues]}

    def picker(self, request, query, body):
        project = re.match(r'project = "([^"]+)"', query["currentJQL"][0])[1]
        found = self.local.search_issues(project, query["query"][0])
        return 200, {
            "sections": [
                {"id": "cs", "issues": [{"key": i.key, "summaryText": i.summary} for i in found]}
            ]
        }

    def _issue_key(self, request) -> str:
        return request.url.split("?")[0].rsplit("/", 1)[1]

    def get_issue(self, request, query, body):
        key = self._issue_key(request)
        if self._account(request) and key in self.restricted:
            return 404, {"errorMessages": ["Issue does not exist or you do not have permission"]}
        issue = LocalIssue.objects.filter(key=key).first()
        return (200, issue_json(issue)) if issue else (404, {"errorMessages": ["No issue"]})

    def on_edit_screen(self, field_id: str) -> bool:
        return any(field_id in fields for fields in self.screens[2].values())

    def edit_issue(self, request, query, body):
        key = self._issue_key(request)
        if not LocalIssue.objects.filter(key=key).exists():
            return 404, {"errorMessages": ["Issue does not exist"]}
        (field_id, value), *_ = body["fields"].items()
        if key.rsplit("-", 1)[0] in self.team_managed or not self.on_edit_screen(field_id):
            return 400, {"errorMessages": [], "errors": {field_id: NOT_ON_SCREEN.format(field_id)}}
        self.edits.append((key, value))
        LocalIssue.objects.filter(key=key).update(work_package=value)
        return 204, None

    def edit_meta(self, request, query, body):
        key = request.url.split("?")[0].rsplit("/", 2)[1]
        if not LocalIssue.objects.filter(key=key).exists():
            return 404, {"errorMessages": ["Issue does not exist"]}
        on_screen = [f for fields in self.screens[2].values() for f in fields]
        if key.rsplit("-", 1)[0] in self.team_managed:
            on_screen = [f for f in on_screen if not f.startswith("customfield_")]
        return 200, {"fields": {f: field_meta(f) for f in on_screen}}

    # Screens
    def screen_scheme_projects(self, request, query, body):
        return 200, {
            "isLast": True,
            "values": [
                {
                    "issueTypeScreenScheme": {"id": "20", "name": "Default"},
                    "projectIds": query["projectId"],
                }
            ],
        }

    def screen_scheme_mappings(self, request, query, body):
        return 200, {
            "isLast": True,
            "values": [
                {"issueTypeId": i, "issueTypeScreenSchemeId": "20", "screenSchemeId": "30"}
                for i in ("default", "10001")
            ],
        }

    def screen_schemes(self, request, query, body):
        return 200, {
            "isLast": True,
            "values": [{"id": 30, "name": "Default", "screens": {"default": 1, "edit": 2}}],
        }

    def _screen_path(self, request) -> list[int]:
        found = re.search(r"/screens/(\d+)(?:/tabs/(\d+))?", request.url)
        return [int(n) for n in found.groups() if n]

    def screen_tabs(self, request, query, body):
        (screen,) = self._screen_path(request)
        return 200, [{"id": tab, "name": f"Tab {tab}"} for tab in self.screens[screen]]

    def screen_tab_fields(self, request, query, body):
        screen, tab = self._screen_path(request)
        return 200, [{"id": f, "name": f} for f in self.screens[screen][tab]]

    def add_screen_tab_field(self, request, query, body):
        screen, tab = self._screen_path(request)
        if any(body["fieldId"] in fields for fields in self.screens[screen].values()):
            return 400, {"errorMessages": ["The field is already on the screen."]}
        self.screens[screen][tab].append(body["fieldId"])
        return 200, {"id": body["fieldId"], "name": "Work Package"}

    # Dynamic webhooks: only an app's OAuth token may hold them; an API token is refused
    # ("Only Connect and OAuth 2.0 apps can use this operation", Webhooks API group,
    # https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-webhooks/). They
    # expire 30 days after registration or the last refresh.
    THIRTY_DAYS_MS = 30 * 24 * 3600 * 1000

    def _app_only(self, request):
        if self._as_service(request) or not self._account(request):
            return 403, {"errorMessages": ["The caller isn't an app."]}
        return None

    def register_webhooks(self, request, query, body):
        if refused := self._app_only(request):
            return refused
        results = []
        for hook in body["webhooks"]:
            hook_id = 10000 + len(self.webhooks) + 1
            while hook_id in self.webhooks:
                hook_id += 1
            self.webhooks[hook_id] = {
                "id": hook_id,
                "events": hook["events"],
                "jqlFilter": hook["jqlFilter"],
                "url": body["url"],
                "owner": self._account(request),
                "expirationDate": self.now_ms + self.THIRTY_DAYS_MS,
            }
            results.append({"createdWebhookId": hook_id})
        return 200, {"webhookRegistrationResult": results}

    def list_webhooks(self, request, query, body):
        if refused := self._app_only(request):
            return refused
        values = [
            {k: v for k, v in hook.items() if k != "owner"} for hook in self.webhooks.values()
        ]
        return 200, {"isLast": True, "startAt": 0, "total": len(values), "values": values}

    def refresh_webhooks(self, request, query, body):
        if refused := self._app_only(request):
            return refused
        expiry = self.now_ms + self.THIRTY_DAYS_MS
        for hook_id in body["webhookIds"]:
            if hook_id in self.webhooks:  # others are ignored, as documented
                self.webhooks[hook_id]["expirationDate"] = expiry
        return 200, {"expirationDate": expiry}

    def delete_webhooks(self, request, query, body):
        if refused := self._app_only(request):
            return refused
        for hook_id in body["webhookIds"]:
            self.webhooks.pop(hook_id, None)
        return 202, None

    # The custom field
    def fields(self, request, query, body):
        values = (
            [{"id": FIELD_ID, "name": "Work Package", "schema": {"type": "string"}}]
            if self.field["created"]
            else []
        )
        return 200, {"isLast": True, "values": values}

    def create_field(self, request, query, body):
        self.field["created"] = True
        return 201, {"id": FIELD_ID, "name": body["name"], "schema": {"type": "string"}}

    def contexts(self, request, query, body):
        return 200, {"isLast": True, "values": self.field["contexts"]}

    def create_context(self, request, query, body):
        context = {
            "id": "10025",
            "name": body["name"],
            "description": "",
            "isGlobalContext": False,
            "isAnyIssueType": True,
        }
        self.field["contexts"].append(context)
        self.assign(request, query, body)
        return 201, {"id": "10025", "name": body["name"], "projectIds": body["projectIds"]}

    def mapping(self, request, query, body):
        return 200, {"isLast": True, "values": self.field["mapping"]}

    def assign(self, request, query, body):
        self.field["mapping"] += [
            {"contextId": "10025", "projectId": p} for p in body["projectIds"]
        ]
        return 204, None
