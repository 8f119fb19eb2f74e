"""Jira dynamic webhooks (item 13 of the Atlassian issue), against the Jira stand-in: held
under a Jira administrator's OAuth grant for the linked projects, refreshed before they
expire, registered again when the projects or the grant change; the receiving endpoint takes
only Jira's bearer JWT signed with the client secret, and applies an event once.

Dynamic webhooks carry issue events only (the `events` enum of `registerDynamicWebhooks` in
Atlassian's document; https://jira.atlassian.com/browse/JRACLOUD-91677 asks for project
events): project events are handled when an administrator's webhook sends them, and a key
change is followed anyway on the next read by id (item 8)."""

import datetime as dt
import hashlib
import json

import jwt
import pytest
from django.utils import timezone

from governance import outbox, periodic, webhooks
from governance.models import (
    AtlassianGrant,
    AuditEntry,
    OutboundTask,
    Project,
    TrackerEventReceipt,
    TrackerWebhooks,
)
from governance.periodic import run_job
from governance.tracker.local import scripting
from governance.tracker.local.models import LocalProject
from registers.models import WorkPackage
from tests.atlassian.conftest import run_check, user_json
from tests.atlassian.test_commands import healthy  # noqa: F401  (fixture)
from tests.factories import WorkPackageFactory

pytestmark = [
    pytest.mark.django_db,
    # The test settings' client secret is short; PyJWT says so on every token made with it.
    pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning"),
]

SECRET = "client-secret"  # tests/atlassian/conftest.py: ATLASSIAN_CLIENT_SECRET


@pytest.fixture
def site(cast, fake_jira, settings):
    settings.ATLASSIAN_RETRIES = 0
    settings.SITE_URL = "https://governance.example.com"
    scripting.ensure_group("site-admins", members=["site_admin"])
    return fake_jira


def admin_grant(site, user, scopes="read:jira-work manage:jira-webhook"):
    grant = site.grant(user)
    grant.scopes = scopes
    grant.save()
    return grant


def job():
    return next(j for j in periodic.jobs() if j.name == "jira_webhooks")


def keep(now=None) -> str:
    """The periodic job, then the outbox worker."""
    outcome = run_job(job(), now or timezone.now())
    outbox.run_due()
    return outcome.detail


def ids(*keys) -> str:
    return ", ".join(str(10000 + LocalProject.objects.get(key=k).pk) for k in keys)


def test_the_job_registers_issue_webhooks_for_the_linked_projects_under_an_admins_grant(site, cast):
    admin_grant(site, cast.viewer)  # granted the scope, but no Jira administrator
    admin_grant(site, cast.site_admin)
    assert keep() == "register"
    [body] = site.mock.bodies("registerDynamicWebhooks")
    assert body == {
        "url": "https://governance.example.com/hooks/jira/",
        "webhooks": [
            {
                "events": ["jira:issue_updated", "jira:issue_deleted"],
                "jqlFilter": f"project in ({ids('ALPHA', 'OTHER')})",
            }
        ],
    }
    held = TrackerWebhooks.objects.get()
    assert held.account_id == cast.site_admin.account_id
    assert held.webhook_ids == list(site.webhooks)
    assert {h["owner"] for h in site.webhooks.values()} == {cast.site_admin.account_id}
    assert dt.timedelta(days=29) < held.expires_at - timezone.now() <= dt.timedelta(days=30)
    assert AuditEntry.objects.filter(kind="tracker.webhooks_registered").count() == 1
    # Nothing to do an hour later: no task, no call.
    assert keep(timezone.now() + dt.timedelta(hours=1)) == "fresh"
    assert site.mock.count("registerDynamicWebhooks") == 1


def test_without_an_admin_grant_the_task_fails_naming_what_to_do(site, cast):
    assert keep() == "register"
    task = OutboundTask.objects.get(name=webhooks.TASK)
    assert "manage:jira-webhook" in task.last_error and "signs in" in task.last_error
    assert site.mock.count("registerDynamicWebhooks") == 0
    # The next hour's run does not queue a second task while this one is retried.
    keep(timezone.now() + dt.timedelta(hours=1))
    assert OutboundTask.objects.filter(name=webhooks.TASK).count() == 1


def test_they_are_refreshed_before_they_expire(site, cast):
    admin_grant(site, cast.site_admin)
    keep()
    held = TrackerWebhooks.objects.get()
    later = timezone.now() + dt.timedelta(days=11)
    site.now_ms += 11 * 24 * 3600 * 1000
    assert keep(later) == "refresh"
    assert site.mock.bodies("refreshWebhooks") == [{"webhookIds": held.webhook_ids}]
    refreshed = TrackerWebhooks.objects.get()
    assert refreshed.expires_at > held.expires_at + dt.timedelta(days=10)
    assert site.mock.count("registerDynamicWebhooks") == 1


def test_a_new_linked_project_or_a_lost_grant_registers_them_again(site, cast):
    from tests.factories import ProjectFactory

    admin_grant(site, cast.site_admin)
    keep()
    first = TrackerWebhooks.objects.get().webhook_ids
    ProjectFactory(key="GAMMA", name="Gamma", lead=cast.lead)
    assert keep(timezone.now() + dt.timedelta(hours=1)) == "register"
    assert site.mock.bodies("deleteWebhookById") == [{"webhookIds": first}]
    assert TrackerWebhooks.objects.get().jql == f"project in ({ids('ALPHA', 'OTHER', 'GAMMA')})"
    assert list(site.webhooks) == TrackerWebhooks.objects.get().webhook_ids

    # The admin signs out; another Jira administrator has granted the scope.
    scripting.ensure_group("site-admins", members=["site_admin", "pmo"])
    admin_grant(site, cast.pmo)
    cast.site_admin.atlassian_grant.delete()
    assert keep(timezone.now() + dt.timedelta(hours=2)) == "register"
    assert TrackerWebhooks.objects.get().account_id == cast.pmo.account_id


# --- receiving --------------------------------------------------------------------------------


DELIVERY_QSH = webhooks.query_string_hash("POST", "/hooks/jira/", [])


def token(**claims) -> str:
    now = timezone.now()
    body = {
        "iss": "client-id",
        "iat": now,
        "exp": now + dt.timedelta(minutes=5),
        "qsh": DELIVERY_QSH,
        **claims,
    }
    return jwt.encode({k: v for k, v in body.items() if v is not None}, SECRET, algorithm="HS256")


def deliver(client, event: dict, *, bearer=None, identifier="delivery-1", path="/hooks/jira/"):
    headers = {"HTTP_X_ATLASSIAN_WEBHOOK_IDENTIFIER": identifier} if identifier else {}
    if bearer is not False:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {bearer or token()}"
    return client.post(path, json.dumps(event), content_type="application/json", **headers)


def test_the_query_string_hash_follows_atlassians_canonical_request():
    canonical = webhooks.canonical_request
    # Atlassian's own examples: GET / ?param=foo, and POST /user.
    assert canonical("get", "/", [("param", "foo")]) == "GET&/&param=foo"
    assert canonical("POST", "/user", []) == "POST&/user&"
    assert canonical("POST", "/hooks/jira/", []) == "POST&/hooks/jira&"
    assert canonical("POST", "", []) == "POST&/&"
    assert canonical("GET", "/a&b", []) == "GET&/a%26b&"
    # jwt left out; names sorted; a name's values sorted and joined by commas; RFC 3986.
    query = [("b", "2"), ("jwt", "x"), ("a", "z y"), ("a", "x+*~"), ("c", "é")]
    assert canonical("GET", "/p", query) == "GET&/p&a=x%2B%2A~,z%20y&b=2&c=%C3%A9"
    expected = hashlib.sha256(b"GET&/&param=foo").hexdigest()
    assert webhooks.query_string_hash("GET", "/", [("param", "foo")]) == expected


def _ahead(**delta) -> dt.datetime:
    return timezone.now() + dt.timedelta(**delta)


@pytest.mark.parametrize(
    "claims",
    [
        lambda: {"exp": 4_000_000_000},  # 31 years ahead
        lambda: {"iat": None, "exp": 4_000_000_000},
        lambda: {"exp": _ahead(minutes=11)},  # past the ten-minute cap
        lambda: {"iat": _ahead(hours=-1), "exp": _ahead()},  # lived an hour
        lambda: {"qsh": None},  # not bound to a request
        lambda: {"qsh": "context-qsh"},  # a context token, bound to no request
        lambda: {"qsh": webhooks.query_string_hash("GET", "/hooks/jira/", [])},  # another method
        lambda: {"qsh": webhooks.query_string_hash("POST", "/oauth/token/", [])},  # another path
        lambda: {"qsh": webhooks.query_string_hash("POST", "/hooks/jira/", [("a", "1")])},
        lambda: {"qsh": "0" * 64},
        lambda: {"qsh": 12},
    ],
)
def test_a_long_lived_or_unbound_token_is_refused_storing_nothing(site, cast, client, claims):
    WorkPackageFactory(project=cast.project, name="Build", linked_issue_keys=["ALPHA-1"])
    answer = deliver(client, deleted("ALPHA-1"), bearer=token(**claims()))
    assert answer.status_code == 401
    assert TrackerEventReceipt.objects.count() == 0
    assert WorkPackage.objects.get().broken_issue_keys == {}


def test_a_token_bound_to_the_query_it_came_with_is_accepted(site, cast, client):
    query = [("user_id", "a b"), ("user_key", "k")]
    bound = token(qsh=webhooks.query_string_hash("POST", "/hooks/jira/", query))
    path = "/hooks/jira/?user_key=k&user_id=a%20b"
    assert deliver(client, deleted("ALPHA-1"), bearer=bound, path=path).status_code == 204
    other = deliver(client, deleted("ALPHA-2"), bearer=bound, path="/hooks/jira/?user_id=x")
    assert other.status_code == 401


def test_without_the_qsh_requirement_a_token_without_qsh_passes_and_a_wrong_one_does_not(
    site, cast, client, settings
):
    settings.ATLASSIAN_WEBHOOK_REQUIRE_QSH = False
    WorkPackageFactory(project=cast.project, name="Build", linked_issue_keys=["ALPHA-1"])
    wrong = token(qsh=webhooks.query_string_hash("GET", "/hooks/jira/", []))
    assert deliver(client, deleted("ALPHA-1"), bearer=wrong).status_code == 401
    assert deliver(client, deleted("ALPHA-1"), bearer=token(qsh=None)).status_code == 204
    # The lifetime cap holds either way.
    long_lived = token(qsh=None, exp=4_000_000_000)
    answer = deliver(client, deleted("ALPHA-2"), bearer=long_lived, identifier="d2")
    assert answer.status_code == 401


def deleted(key: str) -> dict:
    return {
        "webhookEvent": "jira:issue_deleted",
        "timestamp": 1_800_000_000_000,
        "issue": {"id": "10500", "key": key, "fields": {}},
        "matchedWebhookIds": [10001],
    }


@pytest.mark.parametrize(
    "bearer",
    [
        False,  # no Authorization header
        "not-a-jwt",
        jwt.encode({"iss": "client-id", "exp": 4_000_000_000}, "another-secret", "HS256"),
        jwt.encode({"iss": "client-id", "exp": 4_000_000_000}, SECRET * 3, "HS512"),
        jwt.encode({"iss": "client-id", "exp": 4_000_000_000}, None, "none"),
        "expired",
        "other-issuer",
        "no-expiry",
    ],
)
def test_anything_but_a_jwt_signed_with_the_client_secret_is_refused_storing_nothing(
    site, cast, client, bearer
):
    bearer = {
        "expired": token(exp=timezone.now() - dt.timedelta(minutes=5)),
        "other-issuer": token(iss="someone-else"),
        "no-expiry": token(exp=None),
    }.get(bearer, bearer)
    WorkPackageFactory(project=cast.project, name="Build", linked_issue_keys=["ALPHA-1"])
    answer = deliver(client, deleted("ALPHA-1"), bearer=bearer)
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "unauthenticated"
    assert TrackerEventReceipt.objects.count() == 0
    assert WorkPackage.objects.get().broken_issue_keys == {}


def test_a_deleted_issue_marks_its_link_broken_at_once_and_twice_changes_nothing(
    site, cast, client, client_for
):
    wp = WorkPackageFactory(project=cast.project, name="Build", linked_issue_keys=["ALPHA-1"])
    assert deliver(client, deleted("ALPHA-1")).status_code == 204
    wp.refresh_from_db()
    assert wp.broken_issue_keys == {"ALPHA-1": "deleted"}
    revision = wp.revision
    # Jira delivers it again (same identifier), and again without one (same event, time).
    assert deliver(client, deleted("ALPHA-1")).status_code == 204
    assert deliver(client, deleted("ALPHA-1"), identifier="").status_code == 204
    assert deliver(client, deleted("ALPHA-1"), identifier="").status_code == 204
    wp.refresh_from_db()
    assert wp.revision == revision
    assert AuditEntry.objects.filter(kind="work_package.issue_link_broken").count() == 1
    assert TrackerEventReceipt.objects.count() == 2

    site.grant(cast.lead)
    page = client_for(cast.lead).get(f"/projects/ALPHA/registers/work-packages/{wp.pk}/")
    assert "link broken: deleted in the tracker" in page.content.decode()


def test_an_issue_moved_under_another_key_marks_the_old_link_broken(site, cast, client):
    wp = WorkPackageFactory(project=cast.project, name="Build", linked_issue_keys=["ALPHA-1"])
    moved = {
        "webhookEvent": "jira:issue_updated",
        "timestamp": 1_800_000_000_001,
        "issue": {"id": "10500", "key": "OTHER-7", "fields": {}},
        "changelog": {
            "items": [
                {"field": "Key", "fromString": "ALPHA-1", "toString": "OTHER-7"},
                {"field": "project", "fromString": "Alpha programme", "toString": "Other"},
            ]
        },
    }
    assert deliver(client, moved).status_code == 204
    wp.refresh_from_db()
    assert wp.broken_issue_keys == {"ALPHA-1": "moved to OTHER-7"}


def test_an_ordinary_update_changes_nothing(site, cast, client):
    wp = WorkPackageFactory(project=cast.project, name="Build", linked_issue_keys=["ALPHA-1"])
    event = {
        "webhookEvent": "jira:issue_updated",
        "timestamp": 1,
        "issue": {"id": "10500", "key": "ALPHA-1"},
        "changelog": {"items": [{"field": "summary", "fromString": "a", "toString": "b"}]},
    }
    assert deliver(client, event).status_code == 204
    wp.refresh_from_db()
    assert wp.broken_issue_keys == {} and wp.revision == 1


def test_project_events_follow_a_key_change_and_mark_a_deleted_project(site, cast, client):
    alpha_id = str(10000 + LocalProject.objects.get(key="ALPHA").pk)
    updated = {
        "webhookEvent": "project_updated",
        "timestamp": 2,
        "project": {"id": int(alpha_id), "key": "OMEGA", "name": "Alpha programme"},
    }
    assert deliver(client, updated, identifier="p-1").status_code == 204
    project = Project.objects.get(tracker_id=alpha_id)
    assert (project.pk, project.key, project.former_keys) == (cast.project.pk, "OMEGA", ["ALPHA"])
    gone = {"webhookEvent": "project_deleted", "timestamp": 3, "project": {"id": int(alpha_id)}}
    assert deliver(client, gone, identifier="p-2").status_code == 204
    assert Project.objects.get(pk=project.pk).tracker_deleted_at is not None
    assert AuditEntry.objects.filter(kind="project.deleted_in_tracker").count() == 1


def test_a_project_created_in_jira_is_mirrored_when_the_event_arrives(site, cast, client):
    created = {
        "webhookEvent": "project_created",
        "timestamp": 4,
        "project": {
            "id": 19999,
            "key": "NOVA",
            "name": "Nova programme",
            "projectLead": {"accountId": cast.lead.account_id},
        },
    }
    assert deliver(client, created, identifier="p-3").status_code == 204
    project = Project.objects.get(tracker_id="19999")
    assert (project.key, project.name, project.lead_account_id) == (
        "NOVA",
        "Nova programme",
        cast.lead.account_id,
    )
    # Hostile or missing ids and keys store nothing.
    for bad in ({"id": "1x", "key": "BAD"}, {"id": 5, "key": "lower"}, {"id": True, "key": "T"}):
        event = {"webhookEvent": "project_created", "timestamp": 5, "project": bad}
        assert deliver(client, event, identifier=f"p-{bad['key']}").status_code == 204
    assert not Project.objects.filter(key__in=["BAD", "lower", "T"]).exists()


HOSTILE = [
    None,
    True,
    2**63,
    1e308,
    "a\x00b",
    "a\ud800b",
    "x" * 10_000_000,
    [],
    ["ALPHA-1"],
    {"key": "ALPHA-1\x00"},
    "ALPHA-1\n",
    "../ALPHA",
]
SHAPES = [
    lambda v: {"webhookEvent": v, "timestamp": 1, "issue": {"key": "ALPHA-1"}},
    lambda v: {"webhookEvent": "jira:issue_deleted", "timestamp": v, "issue": {"key": v}},
    lambda v: {"webhookEvent": "jira:issue_deleted", "timestamp": 1, "issue": v},
    lambda v: {"webhookEvent": "jira:issue_updated", "timestamp": 1, "changelog": v},
    lambda v: {
        "webhookEvent": "jira:issue_updated",
        "timestamp": 1,
        "issue": {"key": v},
        "changelog": {"items": [v, {"field": "key", "fromString": v}]},
    },
    lambda v: {"webhookEvent": "project_updated", "timestamp": 1, "project": v},
    lambda v: {"webhookEvent": "project_created", "timestamp": 1, "project": v},
    lambda v: {
        "webhookEvent": "project_updated",
        "timestamp": 1,
        "project": {"id": v, "key": v, "name": v, "lead": {"accountId": v}},
    },
    lambda v: {"webhookEvent": "project_deleted", "timestamp": 1, "project": {"id": v}},
]


@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_a_signed_event_with_hostile_values_in_any_member_breaks_nothing(site, cast, client, shape):
    """Every member the endpoint reads, given each class of hostile value: answered 204 (or
    400 for a body that is not an object), never a 500; no link is marked broken, no project
    renamed or marked deleted, and what is stored fits its column."""
    wp = WorkPackageFactory(project=cast.project, name="Build", linked_issue_keys=["ALPHA-1"])
    for n, value in enumerate(HOSTILE):
        event = SHAPES[shape](value)
        body = json.dumps(event)  # a lone surrogate goes as its \\u escape, as JSON allows
        answer = client.post(
            "/hooks/jira/",
            body,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {token()}",
            HTTP_X_ATLASSIAN_WEBHOOK_IDENTIFIER=f"hostile-{shape}-{n}",
        )
        assert answer.status_code in (204, 400), value if len(str(value)) < 80 else "10 MB"
    wp.refresh_from_db()
    assert wp.broken_issue_keys == {} and wp.revision == 1
    project = Project.objects.get(pk=cast.project.pk)
    assert (project.key, project.tracker_deleted_at) == ("ALPHA", None)


# --- atlassian_check ------------------------------------------------------------------------


def test_the_check_fails_with_status_2_naming_what_to_do_until_they_are_fresh(
    cast,
    healthy,  # noqa: F811
    site,
):
    # The service account's answers as the healthy site gives them (the stand-in has none).
    site.mock.on("getCurrentUser", (200, user_json("svc", "Governance bot")))
    site.mock.on(
        "getMyPermissions",
        (200, {"permissions": {"ADMINISTER": {"key": "ADMINISTER", "havePermission": True}}}),
    )
    site.field["created"] = True
    code, _, err = run_check()
    assert code == 2 and "manage:jira-webhook" in err
    pat = AtlassianGrant.objects.get(user__username="pat")  # what people grant, and the scope
    admin_grant(site, cast.site_admin, scopes=pat.scopes + " manage:jira-webhook")
    code, _, err = run_check()
    assert code == 2 and "not registered yet" in err and "runperiodic" in err
    keep()
    code, out, _ = run_check()
    assert code == 0 and "Jira webhooks" in out and "fresh until" in out
    TrackerWebhooks.objects.update(expires_at=timezone.now() + dt.timedelta(days=3))
    code, _, err = run_check()
    assert code == 2 and "within 7 days" in err
    site.webhooks.clear()
    code, _, err = run_check()
    assert code == 2 and "no longer has the webhooks" in err
