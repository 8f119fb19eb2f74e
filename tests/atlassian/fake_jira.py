"""A Jira Cloud stand-in for tests: the contract mock's handlers answered from the local
tracker's tables (people, projects, browse grants, groups, issues), so the same cast and
fixtures the rest of the suite uses drive the Jira backend. Person tokens are
`tok-<accountId>`; `down = True` makes every operation answer 503."""

import re

from governance.tracker.local.backend import LocalTracker
from governance.tracker.local.models import LocalAccount, LocalIssue, LocalProject
from tests.atlassian.conftest import give_grant
from tests.atlassian.contract import AtlassianMock

FIELD_ID = "customfield_10101"


def user_json(user) -> dict:
    return {
        "accountId": user.account_id,
        "accountType": "atlassian",
        "displayName": user.display_name,
        "active": user.active,
        "avatarUrls": {"48x48": user.avatar_url or "https://avatars.test/a.png"},
    }


def project_json(project) -> dict:
    return {
        "id": str(10000 + project.pk),
        "key": project.key,
        "name": project.name,
        "lead": user_json(LocalTracker().current_user(project.lead.account_id)),
    }


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


class FakeJira:
    def __init__(self, mock: AtlassianMock):
        self.mock = mock
        self.local = LocalTracker()
        self.down = False
        self.edits: list[tuple[str, object]] = []
        self.field = {"created": False, "contexts": [], "mapping": []}
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
        page = projects[start : start + size]
        values = [project_json(LocalProject.objects.get(key=p.key)) for p in page]
        return 200, {
            "isLast": start + size >= len(projects),
            "startAt": start,
            "total": len(projects),
            "values": values,
        }

    def get_project(self, request, query, body):
        key = request.url.split("?")[0].rsplit("/", 1)[1]
        project = LocalProject.objects.filter(key=key).first()
        if project is None:
            return 404, {"errorMessages": ["No project could be found with key."]}
        return 200, project_json(project)

    def bulk_users(self, request, query, body):
        found = self.local.users_bulk(query["accountId"])
        return 200, {"isLast": True, "values": [user_json(u) for u in found.values()]}

    def find_users(self, request, query, body):
        return 200, [user_json(u) for u in self.local.search_users(query["query"][0])]

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
            issues = LocalIssue.objects.filter(key__in=[k.strip() for k in keys[1].split(",")])
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
        issue = LocalIssue.objects.filter(key=self._issue_key(request)).first()
        return (200, issue_json(issue)) if issue else (404, {"errorMessages": ["No issue"]})

    def edit_issue(self, request, query, body):
        key = self._issue_key(request)
        value = body["fields"][FIELD_ID]
        self.edits.append((key, value))
        if not LocalIssue.objects.filter(key=key).update(work_package=value):
            return 404, {"errorMessages": ["Issue does not exist"]}
        return 204, None

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
