"""The access gate as a filter in a list's SQL (`gatelist.viewable`, docs/decisions/0277):
exactly the projects the per-project gate lets each person view, whatever their role; the
page's roles as the per-project gate gives them; the project list and the projects API in a
constant number of queries a page, and paged in a stable order with no project twice or
missed while projects are added between pages."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from governance import gatelist, permissions
from governance.models import Project
from tests.conftest import PMO_GROUP, ROLES, roles_told_apart, set_governance_group
from tests.factories import ProjectFactory, UserFactory


def _request(user):
    request = RequestFactory().get("/")
    request.user = user
    return request


@pytest.fixture
def world(cast):
    return roles_told_apart(cast)


def _per_project(user):
    """The projects the per-project gate (`caller_for`) lets the user view, by key, with
    their roles."""
    request = _request(user)
    found = {}
    for project in Project.objects.order_by("key"):
        caller = permissions.caller_for(user, project, request=request)
        if caller.can_view:
            found[project.key] = _role(caller)
    return found


def _role(caller):
    return (caller.can_edit, caller.is_lead, caller.is_sponsor, caller.is_nominated_editor)


@pytest.mark.parametrize("paged", [False, True], ids=["every", "page"])
@pytest.mark.parametrize("group", ["", PMO_GROUP])
@pytest.mark.parametrize("role", ROLES)
def test_the_filter_selects_what_the_per_project_gate_lets_each_role_view(
    world, role, group, paged
):
    """Both shapes of the gate (grants hashed for a statement over every project, looked up
    one project at a time for a page: record 0308) select the same projects."""
    if group:
        set_governance_group(group)
    user = world.user(role)
    expected = _per_project(user)
    request = _request(user)
    filtered = list(gatelist.viewable(request, shown=True, page=paged).order_by("key"))
    assert [p.key for p in filtered] == sorted(expected)
    # The page's roles as the per-project gate gives them.
    assert {p.key: _role(c) for p, c in gatelist.page_callers(request, filtered)} == expected
    # And the list of every viewable project agrees.
    listed = permissions.viewable_projects(_request(user))
    assert {p.key: _role(c) for p, c in listed} == expected


@pytest.mark.parametrize("group", ["", PMO_GROUP])
def test_the_condition_over_rows_that_reach_their_project_is_the_same_rule(world, group):
    """`gatelist.condition(request, "project__")`, which the portfolio filters its stored rows
    with, selects the rows of exactly the projects `viewable` gives, for every role."""
    from status import health
    from status.models import ProjectHealth

    if group:
        set_governance_group(group)
    health.refresh(list(Project.objects.values_list("pk", flat=True)))
    for role in ROLES:
        request = _request(world.user(role))
        for page in (False, True):
            over_rows = ProjectHealth.objects.filter(
                gatelist.condition(request, "project__", page=page)
            )
            assert sorted(over_rows.values_list("project__key", flat=True)) == sorted(
                p.key for p in gatelist.viewable(request)
            ), (role, page)
        assert set(_per_project(world.user(role))) == {p.key for p in gatelist.viewable(request)}


def test_the_rules_each_role_meets(world):
    """What the walk above compares, spelled out: tracker browse first, the group after."""
    keys = {role: set(_per_project(world.user(role))) for role in ROLES}
    assert keys["viewer"] == {"ALPHA", "BETA", "GAMMA"}
    assert keys["outsider"] == {"OTHER"}
    assert keys["site_admin"] == {"ALPHA", "BETA"}
    assert keys["editor"] == {"ALPHA", "DELTA"}
    set_governance_group(PMO_GROUP)
    keys = {role: set(_per_project(world.user(role))) for role in ROLES}
    assert keys["viewer"] == {"BETA"}  # the steering committee of a project they browse
    assert keys["outsider"] == set()  # a steering seat never replaces browsing
    assert keys["pmo"] == {"ALPHA", "DELTA"}
    assert keys["site_admin"] == set()


def test_a_superuser_sees_only_what_they_browse(world):
    user = UserFactory(username="root")
    user.is_superuser = True
    user.save(update_fields=["is_superuser"])
    ProjectFactory(key="ROOTS", lead=world.lead, browsers=[user])
    assert set(_per_project(user)) == {"ROOTS"}
    assert [p.key for p in gatelist.viewable(_request(user))] == ["ROOTS"]


def test_the_mine_filter_is_the_lead_the_editors_and_the_sponsor(world):
    for role in ROLES:
        user = world.user(role)
        request = _request(user)
        mine = {
            p.key
            for p in gatelist.viewable(request).filter(gatelist.mine_condition(user.account_id))
        }
        expected = {
            key
            for key, (can_edit, is_lead, is_sponsor, _) in _per_project(user).items()
            if can_edit or is_lead or is_sponsor
        }
        assert mine == expected, role


def test_each_role_of_the_mine_filter_is_its_own_role(world):
    """`role_conditions` one by one (the assistant groups by them, record 0307): the lead,
    the nominated editor and the sponsor as the per-project gate gives each."""
    for role in ROLES:
        user = world.user(role)
        request = _request(user)
        per_project = _per_project(user)
        for name, condition in gatelist.role_conditions(user.account_id).items():
            found = {p.key for p in gatelist.viewable(request).filter(condition)}
            expected = {
                key
                for key, (_, is_lead, is_sponsor, is_nominee) in per_project.items()
                if {"lead": is_lead, "nominated": is_nominee, "sponsor": is_sponsor}[name]
            }
            assert found == expected, (role, name)


def test_the_mine_filter_and_count_follow_the_tracker_s_lead_of_the_moment(world, client_for):
    """A lead changed in the tracker and not yet in the mirror: the project list's "mine"
    filter and count name the tracker's lead, as each row's role does (`page_callers`), not
    the mirror's."""
    from governance.tracker.local.models import LocalAccount, LocalBrowseGrant, LocalProject

    viewer = LocalAccount.objects.get(account_id=world.viewer.account_id)
    alpha = LocalProject.objects.get(key="ALPHA")
    # The former lead still browses ALPHA, so only the lead of the moment can leave it out.
    former = LocalAccount.objects.get(account_id=world.lead.account_id)
    LocalBrowseGrant.objects.get_or_create(project=alpha, account=former)
    LocalProject.objects.filter(pk=alpha.pk).update(lead=viewer)  # no mirror upkeep
    assert Project.objects.get(key="ALPHA").lead_account_id == world.lead.account_id
    assert "ALPHA" in {p.key for p in gatelist.viewable(_request(world.lead))}
    for user in (world.viewer, world.lead):
        request = _request(user)
        mine = {
            p.key
            for p in gatelist.viewable(request).filter(gatelist.mine_condition(user.account_id))
        }
        roles = gatelist.page_callers(request, list(gatelist.viewable(request, shown=True)))
        assert mine == {p.key for p, c in roles if c.can_edit or c.is_lead or c.is_sponsor}
    assert "ALPHA" in mine_of(client_for(world.viewer))
    assert "ALPHA" not in mine_of(client_for(world.lead))


def mine_of(client):
    """The keys the project list shows with "mine only", after its count says so."""
    page = client.get("/?mine=1").content.decode()
    keys = {key for key in ("ALPHA", "BETA", "DELTA") if f"/projects/{key}/" in page}
    count = len(keys)
    assert f"You lead, edit or sponsor {count} project" in page or not count
    return keys


# --- the project list and the projects API: queries and paging ------------------------------


def _add(start, stop, user, lead):
    for n in range(start, stop):
        ProjectFactory(key=f"P{n:03d}", lead=lead, browsers=[user])


def _queries(client, url):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


@pytest.mark.parametrize("url", ["/", "/?mine=1", "/?q=p0", "/api/v1/projects?pageSize=5"])
def test_the_project_list_runs_the_same_queries_at_3_and_40_projects(db, client_for, url):
    user = UserFactory(username="reader")
    lead = UserFactory(username="leader")
    client = client_for(user)
    _add(0, 3, user, lead)
    # A first request stores the new projects' health rows (`status.health`), then the
    # request measured reads them.
    client.get(url)
    small = _queries(client, url)
    _add(3, 40, user, lead)
    client.get(url)
    assert _queries(client, url) == small


def _api_walk(client, url, between):
    keys, pages = [], 0
    while url:
        response = client.get(url)
        assert response.status_code == 200, response.content
        body = response.json()
        keys += [item["projectKey"] for item in body["items"]]
        url = body["next"]
        pages += 1
        between(pages)
    return keys


def _page_walk(client, url, between):
    keys, pages = [], 0
    while url is not None:
        response = client.get(url)
        assert response.status_code == 200
        keys += [item["project"].key for item in response.context["items"]]
        following = response.context["pages"].get("next")
        url = "/" + following if following else None
        pages += 1
        between(pages)
    return keys


@pytest.mark.parametrize("walk", [_api_walk, _page_walk])
def test_pages_keep_their_order_while_projects_are_added(db, client_for, monkeypatch, walk):
    """Every project there at the start is on exactly one page, in key order, while projects
    are added before, on and after the page the walk is on."""
    user = UserFactory(username="reader")
    lead = UserFactory(username="leader")
    client = client_for(user)
    for n in range(1, 60, 2):  # odd numbers: room for others between them
        ProjectFactory(key=f"P{n:03d}", lead=lead, browsers=[user])
    before = set(Project.objects.values_list("key", flat=True))
    # Even numbers from both ends inwards: each time one early in the order, one late.
    evens = list(range(0, 60, 2))
    added = iter([n for pair in zip(evens, reversed(evens), strict=True) for n in pair])

    def between(page):
        for _ in range(3):
            n = next(added, None)
            if n is not None and not Project.objects.filter(key=f"P{n:03d}").exists():
                ProjectFactory(key=f"P{n:03d}", lead=lead, browsers=[user])

    monkeypatch.setattr("governance.paging.DEFAULT_PAGE_SIZE", 7)
    url = "/" if walk is _page_walk else "/api/v1/projects?pageSize=7"
    keys = walk(client, url, between)
    assert len(keys) == len(set(keys)), "a project twice"
    assert keys == sorted(keys), "out of order"
    assert before <= set(keys), "a project missed"
    assert len(keys) > len(before)  # the later ones added meanwhile are listed too


def test_the_api_next_link_keeps_the_page_size(db, client_for):
    user = UserFactory(username="reader")
    lead = UserFactory(username="leader")
    _add(0, 5, user, lead)
    body = client_for(user).get("/api/v1/projects?pageSize=2").json()
    assert [item["projectKey"] for item in body["items"]] == ["P000", "P001"]
    assert parse_qs(urlsplit(body["next"]).query)["pageSize"] == ["2"]
