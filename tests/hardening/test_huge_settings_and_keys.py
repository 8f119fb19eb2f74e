"""Huge numbers in headers and settings, and project keys no project can have.

An If-Match of 4,300 digits and more (past what int() reads) answered 500, even to a viewer;
a `scopeRedAfterDays` of 3,000,000 overflowed a date in the derivation. Now the If-Match is
400 in words, after who may act (a viewer's write is 403), and every RAG threshold takes its
documented range at entry, a value stored out of range being read within it. A project key
holding NUL, a lone surrogate or a noncharacter reached PostgreSQL through the assistant
(`internal`); it is refused naming projectKey before any query, at every door."""

import json

import pytest
from django.test import Client
from mcp import Client as McpClient

from agent import catalogue
from agent.mcp_server import build_server
from governance import cleaning
from governance.concurrency import IF_MATCH_MESSAGE
from governance.models import THRESHOLD_RANGES, AuditEntry, SiteSettings
from governance.tracker.local import scripting
from registers.models import Risk, WorkPackage
from tests.agent.conftest import EVERYONE, use_group
from tests.conftest import run_async
from tests.factories import WorkPackageFactory

BASE = "/api/v1/projects/ALPHA"
SIZES = [4300, 4301, 5000, 401]  # 401 digits: 10^400
HUGE = ["9" * n if n != 401 else "1" + "0" * 400 for n in SIZES]


def _writes(wp_pk):
    return [
        ("PATCH", f"{BASE}/work-packages/{wp_pk}", {"commentary": "x"}),
        ("PATCH", f"{BASE}/status", {"phase": "Build"}),
        ("PATCH", f"{BASE}/charter", {"businessProblem": "x"}),
        ("PUT", f"{BASE}/editors", {"accountIds": []}),
    ]


@pytest.mark.parametrize("digits", HUGE, ids=[f"{n} digits" for n in SIZES])
def test_a_huge_if_match_is_403_to_a_viewer_and_400_in_words_to_the_lead(cast, bearer, digits):
    wp = WorkPackageFactory(project=cast.project)
    written = AuditEntry.objects.exclude(kind="token.created")
    before = written.count()
    for method, path, body in _writes(wp.pk):
        for user, status in ((cast.viewer, 403), (cast.lead, 400)):
            for header in (f'"{digits}"', f'W/"{digits}"', digits):
                response = Client().generic(
                    method,
                    path,
                    json.dumps(body),
                    content_type="application/json",
                    HTTP_IF_MATCH=header,
                    **bearer(user),
                )
                assert response.status_code == status, (path, user, response.content[:200])
                if status == 400:
                    assert response.json()["error"]["message"] == IF_MATCH_MESSAGE
    admin = Client().patch(
        "/api/v1/site-settings",
        json.dumps({"brCadenceDefault": "Quarterly"}),
        content_type="application/json",
        HTTP_IF_MATCH=f'"{digits}"',
        **bearer(cast.site_admin),
    )
    assert admin.status_code == 400 and admin.json()["error"]["message"] == IF_MATCH_MESSAGE
    assert written.count() == before


def test_a_revision_of_18_digits_is_still_read_and_stale(cast, bearer):
    wp = WorkPackageFactory(project=cast.project)
    response = Client().patch(
        f"{BASE}/work-packages/{wp.pk}",
        json.dumps({"commentary": "x"}),
        content_type="application/json",
        HTTP_IF_MATCH='"999999999999999999"',
        **bearer(cast.lead),
    )
    assert response.status_code == 412


# --- RAG thresholds: a documented range at every entry, read within it ------------------------

OUT_OF_RANGE = [3_000_000, -1, 10**400, 1e308, "NaN", "Infinity", True]


@pytest.mark.parametrize("key", sorted(THRESHOLD_RANGES))
def test_every_threshold_out_of_its_range_is_refused_by_the_api(cast, bearer, key):
    low, high = THRESHOLD_RANGES[key]
    client, auth = Client(), bearer(cast.site_admin)
    for value in [*OUT_OF_RANGE, high + 1]:
        body = json.dumps({"ragThresholds": {key: value}})
        if value in ("NaN", "Infinity"):
            body = body.replace(f'"{value}"', value)  # the JSON literal, refused whole (400)
        response = client.patch(
            "/api/v1/site-settings", body, content_type="application/json", **auth
        )
        assert response.status_code in (400, 422), (key, value, response.content[:200])
        if response.status_code == 422:
            fields = response.json()["error"]["fields"]
            assert fields[f"ragThresholds.{key}"] == [f"Must be a number from {low} to {high}."]
    assert client.patch(
        "/api/v1/site-settings",
        json.dumps({"ragThresholds": {key: high}}),
        content_type="application/json",
        **auth,
    ).status_code in (200, 422)  # 422 only for the order of a pair, never the range
    assert SiteSettings.load().rag_thresholds.get(key) in (None, high)


@pytest.mark.parametrize("typed", ["3000000", "9" * 5000, "1" + "0" * 400, "1e400", "-1", "²"])
def test_the_settings_page_refuses_a_threshold_past_its_range(cast, client_for, typed):
    response = client_for(cast.site_admin).post(
        "/portfolio/settings/", {"threshold-scopeRedAfterDays": typed}
    )
    assert response.status_code == 422
    assert (
        "Must be a number from 0 to 3650." in response.content.decode()
        or "number" in response.content.decode()
    )
    assert "scopeRedAfterDays" not in (SiteSettings.load().rag_thresholds or {})


@pytest.mark.parametrize("stored", [3_000_000, 10**18, -5, 1e308])
def test_a_threshold_stored_out_of_range_is_read_within_it(cast, client_for, bearer, stored):
    from registers.models import ChangeRequest

    ChangeRequest.objects.create(project=cast.project, summary="More", dimensions=["Scope"])
    site = SiteSettings.load()
    SiteSettings.objects.filter(pk=site.pk).update(rag_thresholds={"scopeRedAfterDays": stored})
    response = Client().get(f"{BASE}/status", **bearer(cast.viewer))
    assert response.status_code == 200, response.content[:300]
    assert response.json()["thresholds"]["scopeRedAfterDays"] in (0, 3650)
    assert client_for(cast.viewer).get("/projects/ALPHA/status/").status_code == 200
    assert client_for(cast.site_admin).get("/portfolio/").status_code == 200


# --- project keys no project can have ----------------------------------------------------------

BAD_KEYS = ["AL\x00PHA", "\x00", "AL\ud800PHA", "AL\ufffePHA", "\U0010ffff"]


@pytest.fixture
def everyone(cast):
    scripting.ensure_group(EVERYONE, members=["lead", "editor", "viewer"])
    use_group(EVERYONE)


def _keyed_actions():
    return sorted(
        name
        for name, action in catalogue.CATALOGUE.items()
        if "projectKey" in action.schema.get("properties", {})
    )


def test_the_walk_covers_every_write_that_names_a_project():
    names = _keyed_actions()
    writes = [n for n in names if catalogue.CATALOGUE[n].is_write]
    assert len(writes) >= 12, writes


@pytest.mark.parametrize("key", BAD_KEYS, ids=["nul", "only-nul", "surrogate", "fffe", "plane16"])
def test_every_action_refuses_a_bad_project_key_naming_it(cast, bearer, everyone, key):
    for name in _keyed_actions():
        response = Client().post(
            f"/api/v1/agent/actions/{name}",
            json.dumps({"arguments": {"projectKey": key}}),
            content_type="application/json",
            **bearer(cast.lead),
        )
        assert response.status_code == 422, (name, response.content[:300])
        error = response.json()["error"]
        assert "projectKey" in error["fields"] or "arguments.projectKey" in error["fields"], (
            name,
            error,
        )
    assert not Risk.objects.exists() and not WorkPackage.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_every_mcp_tool_refuses_a_bad_project_key_in_the_api_words(cast, everyone):
    server = build_server(lambda: catalogue.request_for(cast.lead))
    names = _keyed_actions()

    async def go():
        async with McpClient(server) as session:
            return [
                (name, key, await session.call_tool(name, {"projectKey": key}))
                for name in names
                for key in BAD_KEYS
            ]

    for name, key, result in run_async(go):
        assert result.is_error, (name, key)
        error = result.structured_content["error"]
        assert error["code"] == "validation", (name, repr(key), error)
        assert "projectKey" in error["fields"], (name, repr(key), error)
    assert not Risk.objects.exists()


@pytest.mark.parametrize("key", [*BAD_KEYS, "A" * 33])
def test_the_key_check_is_the_one_the_api_and_pages_use(cast, bearer, client_for, key):
    assert cleaning.project_key(key)[1]
    from django.test import RequestFactory

    from governance import permissions
    from governance.errors import NotFound

    request = RequestFactory().get("/")
    request.user = cast.lead
    with pytest.raises(NotFound):
        permissions.project_for(request, key)
    quoted = key.encode("utf-8", "surrogatepass").hex()
    path = "".join(f"%{quoted[i : i + 2]}" for i in range(0, len(quoted), 2))
    assert Client().get(f"/api/v1/projects/{path}/risks", **bearer(cast.lead)).status_code in (
        400,
        404,
    )
    assert client_for(cast.lead).get(f"/projects/{path}/").status_code in (400, 404)
