"""Every Tracker method of the Jira backend against the Jira contract document: each request
is validated against Atlassian's schema (a mismatch fails the test) and each canned answer
against the documented response."""

import json

import pytest
import responses

from governance.atlassian import crypto
from governance.atlassian.context import acting_account
from governance.models import AtlassianGrant, TrackerFieldState
from governance.tracker import TrackerError
from tests.atlassian.conftest import AUTH_URL, give_grant, user_json
from tests.atlassian.fake_jira import field_meta
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def perms(key: str, have: bool) -> dict:
    return {
        "permissions": {
            key: {"id": "10", "key": key, "name": key, "type": "PROJECT", "havePermission": have}
        }
    }


def project_json(key: str, lead: str = "lead-1", pid: str = "10000") -> dict:
    return {"id": pid, "key": key, "name": f"{key} project", "lead": user_json(lead, "Lead")}


@pytest.fixture
def person(db):
    user = UserFactory(username="pat", display_name="Pat")
    give_grant(user)
    return user


# Identity -------------------------------------------------------------------------------------
def test_current_user_asks_myself_with_the_persons_token(tracker, jira, person):
    seen = []

    def myself(request, query, body):
        seen.append(request.headers["Authorization"])
        return 200, user_json(person.account_id, "Pat Person")

    jira.on("getCurrentUser", myself)
    user = tracker.current_user(person.account_id)
    assert user.display_name == "Pat Person"
    assert seen == ["Bearer access-1"]


def test_users_bulk_asks_at_most_ten_ids_at_a_time(tracker, jira):
    ids = [f"acc-{i:02}" for i in range(23)]

    def bulk(request, query, body):
        return 200, {
            "isLast": True,
            "startAt": 0,
            "maxResults": 10,
            "total": len(query["accountId"]),
            "values": [user_json(a, f"Person {a}") for a in query["accountId"]],
        }

    jira.on("bulkGetUsers", bulk)
    found = tracker.users_bulk(ids)
    assert set(found) == set(ids)
    batches = [q["accountId"] for q in jira.params("bulkGetUsers")]
    assert [len(b) for b in batches] == [10, 10, 3]
    assert found["acc-05"].avatar_url.endswith("acc-05.png")


def test_users_bulk_of_nothing_makes_no_call(tracker, jira):
    assert tracker.users_bulk([]) == {}
    assert jira.calls == []


def test_search_users_uses_the_service_account(tracker, jira):
    jira.uncontracted[("GET", "/rest/api/3/user/search")] = lambda r, q, b: (
        200,
        [user_json("a1", "Ann"), {**user_json("app", "Bot"), "accountType": "app"}],
    )
    assert [u.display_name for u in tracker.search_users("an")] == ["Ann"]


def test_group_membership_and_existence(tracker, jira):
    jira.on(
        "getUserGroups",
        lambda r, q, b: (200, [{"name": "governance", "groupId": "g1"}]),
    )
    jira.on(
        "getUsersFromGroup",
        lambda r, q, b: (
            (200, {"isLast": True, "values": []})
            if q["groupname"] == ["governance"]
            else (404, {"errorMessages": ["No group"]})
        ),
    )
    assert tracker.is_group_member("acc-1", "governance")
    assert not tracker.is_group_member("acc-1", "other")
    assert jira.count("getUserGroups") == 1  # cached briefly
    assert tracker.group_exists("governance")
    assert not tracker.group_exists("nope")


def test_site_admin_of_oneself_asks_mypermissions_of_others_their_groups(
    tracker, jira, person, settings
):
    settings.ATLASSIAN_ADMIN_GROUPS = ["site-admins"]
    jira.on("getMyPermissions", lambda r, q, b: (200, perms("ADMINISTER", True)))
    jira.on("getUserGroups", lambda r, q, b: (200, [{"name": "site-admins"}]))
    token = acting_account.set(person.account_id)
    try:
        assert tracker.is_site_admin(person.account_id)
    finally:
        acting_account.reset(token)
    assert jira.params("getMyPermissions") == [{"permissions": ["ADMINISTER"]}]
    assert tracker.is_site_admin("someone-else")
    assert jira.count("getUserGroups") == 1


# Projects -------------------------------------------------------------------------------------
def test_get_project_and_missing_project(tracker, jira):
    jira.on(
        "getProject",
        lambda r, q, b: (
            (200, project_json("ALPHA", lead="lead-9"))
            if r.url.split("?")[0].endswith("/ALPHA")
            else (404, {"errorMessages": ["No project"]})
        ),
    )
    project = tracker.get_project("ALPHA")
    assert (project.key, project.lead_account_id) == ("ALPHA", "lead-9")
    # Every key the project had comes with it (item 8: a key change is followed).
    assert jira.params("getProject")[0]["expand"] == ["lead,projectKeys"]
    assert tracker.get_project("NOPE") is None
    assert tracker.get_project("../x") is None


def test_browsable_projects_follows_three_pages_and_is_cached(tracker, jira, person):
    pages = {
        "0": ([project_json("CCC"), project_json("AAA")], False),
        "2": ([project_json("BBB"), project_json("DDD")], False),
        "4": ([project_json("EEE")], True),
    }

    def search(request, query, body):
        values, last = pages[query["startAt"][0]]
        return 200, {"isLast": last, "startAt": int(query["startAt"][0]), "values": values}

    jira.on("searchProjects", search)
    keys = [p.key for p in tracker.browsable_projects(person.account_id)]
    assert keys == ["AAA", "BBB", "CCC", "DDD", "EEE"]
    assert jira.count("searchProjects") == 3
    assert {q["action"][0] for q in jira.params("searchProjects")} == {"browse"}
    tracker.browsable_projects(person.account_id)
    assert jira.count("searchProjects") == 3


def test_pagination_stops_at_the_ceiling(tracker, jira, person, settings):
    settings.ATLASSIAN_MAX_PAGES = 4
    jira.on(
        "searchProjects",
        lambda r, q, b: (200, {"isLast": False, "values": [project_json(f"P{q['startAt'][0]}")]}),
    )
    assert len(tracker.browsable_projects(person.account_id)) == 4


def test_can_browse_asks_as_the_person_and_caches(tracker, jira, person):
    jira.on(
        "getMyPermissions",
        lambda r, q, b: (200, perms("BROWSE_PROJECTS", q["projectKey"] == ["ALPHA"])),
    )
    token = acting_account.set(person.account_id)
    try:
        assert tracker.can_browse(person.account_id, "ALPHA")
        assert not tracker.can_browse(person.account_id, "BETA")
        assert tracker.can_browse(person.account_id, "ALPHA")
    finally:
        acting_account.reset(token)
    assert jira.count("getMyPermissions") == 2


def test_can_browse_fails_closed_without_a_grant(tracker, jira):
    token = acting_account.set("stranger")
    try:
        assert not tracker.can_browse("stranger", "ALPHA")
    finally:
        acting_account.reset(token)
    assert tracker.browsable_projects("stranger") == []
    assert jira.calls == []


# Issues ---------------------------------------------------------------------------------------
def issue_json(key, summary="Thing", wp=None):
    fields = {"summary": summary, "issuetype": {"name": "Epic"}, "status": {"name": "To Do"}}
    if wp is not None:
        fields["customfield_10101"] = wp
    return {"id": "1" + key.split("-")[1], "key": key, "fields": fields}


def test_issue_picker_as_the_acting_person(tracker, jira, person):
    def picker(request, query, body):
        assert request.headers["Authorization"] == "Bearer access-1"
        return 200, {
            "sections": [
                {"id": "hs", "issues": [{"key": "ALPHA-1", "summaryText": "First"}]},
                {
                    "id": "cs",
                    "issues": [
                        {"key": "ALPHA-1", "summaryText": "First"},
                        {"key": "ALPHA-2", "summaryText": "Second"},
                        {"key": "BETA-1", "summaryText": "Elsewhere"},
                    ],
                },
            ]
        }

    jira.on("getIssuePickerResource", picker)
    token = acting_account.set(person.account_id)
    try:
        found = tracker.search_issues("ALPHA", "fi")
    finally:
        acting_account.reset(token)
    assert [i.key for i in found] == ["ALPHA-1", "ALPHA-2"]
    assert jira.params("getIssuePickerResource")[0]["currentJQL"] == ['project = "ALPHA"']


def test_empty_picker_lists_recent_issues_through_search_jql(tracker, jira):
    jira.on(
        "searchAndReconsileIssuesUsingJqlPost",
        lambda r, q, b: (200, {"isLast": True, "issues": [issue_json("ALPHA-3")]}),
    )
    assert [i.key for i in tracker.search_issues("ALPHA", "")] == ["ALPHA-3"]


def test_get_issues_pages_through_search_jql_never_the_removed_search(tracker, jira):
    TrackerFieldState.objects.create(name="Work Package", field_id="customfield_10101")
    pages = {
        None: ([issue_json("ALPHA-1", wp="Build")], "t2"),
        "t2": ([issue_json("ALPHA-2")], "t3"),
        "t3": ([issue_json("ALPHA-3")], None),
    }

    def search(request, query, body):
        issues, token = pages[body.get("nextPageToken")]
        answer = {"issues": issues, "isLast": token is None}
        if token:
            answer["nextPageToken"] = token
        return 200, answer

    jira.on("searchAndReconsileIssuesUsingJqlPost", search)
    found = tracker.get_issues(["ALPHA-1", "ALPHA-2", "ALPHA-3", "not a key"])
    assert sorted(found) == ["ALPHA-1", "ALPHA-2", "ALPHA-3"]
    assert found["ALPHA-1"].work_package == "Build"
    assert found["ALPHA-2"].issue_type == "Epic"
    body = jira.bodies("searchAndReconsileIssuesUsingJqlPost")[0]
    assert body["jql"] == "key in (ALPHA-1, ALPHA-2, ALPHA-3) ORDER BY key"
    assert "customfield_10101" in body["fields"]
    assert jira.count("searchAndReconsileIssuesUsingJqlPost") == 3


def test_get_issues_falls_back_to_one_by_one_when_jql_refuses_a_key(tracker, jira):
    jira.on(
        "searchAndReconsileIssuesUsingJqlPost",
        (400, {"errorMessages": ["An issue with key 'ALPHA-9' does not exist"]}),
    )
    jira.on(
        "getIssue",
        lambda r, q, b: (
            (200, issue_json("ALPHA-1"))
            if "/ALPHA-1" in r.url
            else (404, {"errorMessages": ["gone"]})
        ),
    )
    assert list(tracker.get_issues(["ALPHA-1", "ALPHA-9"])) == ["ALPHA-1"]


# The custom field and the write-back -----------------------------------------------------------
@pytest.fixture
def field_jira(jira):
    """A Jira with no 'Work Package' field yet: found by name once created."""
    state = {"fields": [], "contexts": [], "mapping": []}

    def search(request, query, body):
        values = [f for f in state["fields"] if query.get("query", [""])[0] in f["name"]]
        return 200, {"isLast": True, "startAt": 0, "total": len(values), "values": values}

    def create_field(request, query, body):
        field = {
            "id": "customfield_10101",
            "name": body["name"],
            "custom": True,
            "schema": {"type": "string", "custom": body["type"]},
        }
        state["fields"].append(field)
        return 201, field

    def contexts(request, query, body):
        return 200, {"isLast": True, "values": state["contexts"]}

    def create_context(request, query, body):
        context = {"id": "10025", "name": body["name"]}
        state["contexts"].append(
            {**context, "isAnyIssueType": True, "isGlobalContext": False, "description": ""}
        )
        state["mapping"] += [{"contextId": "10025", "projectId": p} for p in body["projectIds"]]
        return 201, {**context, "projectIds": body["projectIds"], "issueTypeIds": []}

    def assign(request, query, body):
        state["mapping"] += [{"contextId": "10025", "projectId": p} for p in body["projectIds"]]
        return 204, None

    jira.on("getFieldsPaginated", search)
    jira.on("createCustomField", create_field)
    jira.on("getContextsForField", contexts)
    jira.on("createCustomFieldContext", create_context)
    jira.on(
        "getProjectContextMapping",
        lambda r, q, b: (200, {"isLast": True, "values": state["mapping"]}),
    )
    jira.on("assignProjectsToCustomFieldContext", assign)
    ids = {"ALPHA": "10001", "BETA": "10002"}
    jira.on(
        "getProject",
        lambda r, q, b: (
            200,
            project_json(r.url.rsplit("/", 1)[1], pid=ids[r.url.rsplit("/", 1)[1]]),
        ),
    )
    jira.on("editIssue", (204, None))
    # Every project's issue types share one edit screen (7) with one tab (70).
    state["tab"] = ["summary"]
    jira.on(
        "getIssueTypeScreenSchemeProjectAssociations",
        lambda r, q, b: (
            200,
            {
                "isLast": True,
                "values": [
                    {
                        "issueTypeScreenScheme": {"id": "5", "name": "S"},
                        "projectIds": q["projectId"],
                    }
                ],
            },
        ),
    )
    jira.on(
        "getIssueTypeScreenSchemeMappings",
        lambda r, q, b: (
            200,
            {
                "isLast": True,
                "values": [
                    {
                        "issueTypeId": "default",
                        "issueTypeScreenSchemeId": "5",
                        "screenSchemeId": "6",
                    }
                ],
            },
        ),
    )
    jira.on(
        "getScreenSchemes",
        lambda r, q, b: (
            200,
            {"isLast": True, "values": [{"id": 6, "name": "S", "screens": {"default": 7}}]},
        ),
    )
    jira.on("getAllScreenTabs", lambda r, q, b: (200, [{"id": 70, "name": "Field Tab"}]))
    jira.on(
        "getAllScreenTabFields", lambda r, q, b: (200, [{"id": f, "name": f} for f in state["tab"]])
    )

    def add_to_tab(request, query, body):
        state["tab"].append(body["fieldId"])
        return 200, {"id": body["fieldId"], "name": "Work Package"}

    jira.on("addScreenTabField", add_to_tab)
    jira.on(
        "getEditIssueMeta",
        lambda r, q, b: (200, {"fields": {f: field_meta(f) for f in state["tab"]}}),
    )
    jira.state = state
    return jira


def test_write_back_creates_the_field_and_one_context_then_reuses_them(tracker, field_jira):
    tracker.set_work_package_field("ALPHA-1", "Build")
    assert field_jira.count("createCustomField") == 1
    created = field_jira.bodies("createCustomField")[0]
    assert created["name"] == "Work Package" and created["type"].endswith(":textfield")
    assert field_jira.bodies("createCustomFieldContext") == [
        {"name": "Work Package", "projectIds": ["10001"], "issueTypeIds": []}
    ]
    assert field_jira.bodies("editIssue") == [{"fields": {"customfield_10101": "Build"}}]

    tracker.set_work_package_field("BETA-4", None)  # a second project joins the context
    assert field_jira.bodies("assignProjectsToCustomFieldContext") == [{"projectIds": ["10002"]}]
    assert field_jira.bodies("editIssue")[-1] == {"fields": {"customfield_10101": None}}

    before = len(field_jira.calls)
    tracker.set_work_package_field("ALPHA-2", "Build")  # everything known: one call
    assert [name for name, _, _ in field_jira.calls[before:]] == ["editIssue"]
    assert field_jira.count("createCustomField") == 1
    assert field_jira.count("createCustomFieldContext") == 1
    state = TrackerFieldState.objects.get()
    assert state.projects == {"ALPHA": "10001", "BETA": "10002"}


def test_field_upkeep_is_idempotent_when_the_field_already_exists(tracker, field_jira):
    field_jira.state["fields"].append(
        {"id": "customfield_10101", "name": "Work Package", "schema": {"type": "string"}}
    )
    field_jira.state["contexts"].append(
        {
            "id": "10025",
            "name": "Work Package",
            "description": "",
            "isGlobalContext": False,
            "isAnyIssueType": True,
        }
    )
    field_jira.state["mapping"].append({"contextId": "10025", "projectId": "10001"})
    tracker.set_work_package_field("ALPHA-1", "Build")
    assert field_jira.count("createCustomField") == 0
    assert field_jira.count("createCustomFieldContext") == 0
    assert field_jira.count("assignProjectsToCustomFieldContext") == 0


def test_write_back_to_a_deleted_issue_is_done(tracker, field_jira):
    field_jira.on("editIssue", (404, {"errorMessages": ["Issue does not exist"]}))
    tracker.set_work_package_field("ALPHA-1", "Build")  # no error: nothing left to show


# HTTP behaviour -------------------------------------------------------------------------------
def test_429_is_never_slept_on_and_carries_retry_after_and_the_limit_headers(
    tracker, jira, sleeps, caplog
):
    jira.on(
        "getProject",
        (
            429,
            {"errorMessages": ["slow down"]},
            {
                "Retry-After": "1800",
                "RateLimit-Reason": "jira-quota-tenant-based",
                "X-RateLimit-Limit": "65000",
                "X-RateLimit-Remaining": "0",
            },
        ),
    )
    with pytest.raises(TrackerError) as limited:
        tracker.get_project("ALPHA")
    assert sleeps == []  # before: a sleep clamped to 10 s inside the request
    assert jira.count("getProject") == 1
    assert limited.value.retry_after == 1800  # any length, not clamped
    assert "RateLimit-Reason jira-quota-tenant-based" in str(limited.value)
    assert "X-RateLimit-Remaining 0" in str(limited.value)
    assert "jira-quota-tenant-based" in caplog.text


def test_503_retried_then_a_named_error(tracker, jira, sleeps, settings):
    settings.ATLASSIAN_RETRIES = 2
    jira.on("getProject", (503, {"errorMessages": ["maintenance"]}))
    with pytest.raises(TrackerError) as error:
        tracker.get_project("ALPHA")
    assert "getProject" in str(error.value) and "503" in str(error.value)
    assert len(sleeps) == 2
    assert jira.count("getProject") == 3


def test_every_non_2xx_is_a_tracker_error_naming_the_operation(tracker, jira):
    jira.on("getUserGroups", (403, {"errorMessages": ["You are not allowed"]}))
    with pytest.raises(TrackerError, match=r"getUserGroups, HTTP 403\): You are not allowed"):
        tracker.is_group_member("acc-1", "g")


def test_connection_failure_is_a_tracker_error(tracker, rsps, atlassian_settings, sleeps):
    with pytest.raises(TrackerError, match="not answering"):
        tracker.get_project("ALPHA")  # nothing registered: the connection is refused


def test_service_401_is_a_clear_error_without_the_secret(tracker, jira):
    jira.on("getProject", (401, {"message": "Client must be authenticated"}))
    with pytest.raises(TrackerError) as error:
        tracker.get_project("ALPHA")
    assert "refused the credentials (getProject, HTTP 401)" in str(error.value)
    assert "service-api-token" not in str(error.value)


def token_answer(access: str, refresh: str) -> dict:
    return {
        "access_token": access,
        "refresh_token": refresh,
        "expires_in": 3600,
        "token_type": "Bearer",
        "scope": "read:jira-work offline_access",
    }


def test_401_refreshes_once_stores_the_rotated_refresh_token_then_succeeds(
    tracker, jira, rsps, person
):
    sent = []

    def token(request):
        sent.append(request.body)
        return 200, {}, json.dumps(token_answer("access-2", "refresh-2"))

    rsps.add_callback(responses.POST, AUTH_URL + "/oauth/token", callback=token)

    def myself(request, query, body):
        if request.headers["Authorization"] == "Bearer access-1":
            return 401, {"message": "expired"}
        return 200, user_json(person.account_id, "Pat")

    jira.on("getCurrentUser", myself)
    assert tracker.current_user(person.account_id).display_name == "Pat"
    assert len(sent) == 1 and "refresh-1" in str(sent[0])
    grant = AtlassianGrant.objects.get(account_id=person.account_id)
    assert crypto.decrypt(grant.refresh_token) == "refresh-2"
    assert crypto.decrypt(grant.access_token) == "access-2"
    assert "refresh-2" not in grant.refresh_token  # encrypted at rest


def test_expired_token_is_refreshed_before_the_call(tracker, jira, rsps, person):
    give_grant(person, expires_in=-10)
    rsps.add(responses.POST, AUTH_URL + "/oauth/token", json=token_answer("access-3", "refresh-3"))
    jira.on("getCurrentUser", lambda r, q, b: (200, user_json(person.account_id, "Pat")))
    tracker.current_user(person.account_id)
    grant = AtlassianGrant.objects.get()
    assert crypto.decrypt(grant.refresh_token) == "refresh-3"


def test_revoked_grant_asks_to_sign_in_again(tracker, jira, rsps, person):
    from governance.atlassian.errors import SignInRequired

    rsps.add(
        responses.POST,
        AUTH_URL + "/oauth/token",
        status=403,
        json={"error": "invalid_grant", "error_description": "Unknown or invalid refresh token."},
    )
    jira.on("getCurrentUser", (401, {"message": "expired"}))
    with pytest.raises(SignInRequired):
        tracker.current_user(person.account_id)
    assert not AtlassianGrant.objects.exists()
