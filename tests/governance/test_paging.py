"""One paging for every API list and page (governance.paging): the document declares `cursor`
and `pageSize` the same way on every paged list; a cursor one list gave is refused by another
(400 `bad_request`, telling the client to start again from the first page and follow `next`);
the cursor of a previous page walks back over the same pages, NULL keys included."""

import datetime as dt
import itertools

import pytest
from django.test import Client

from governance import paging
from registers import listing
from tests.factories import ProjectFactory, UserFactory, WorkPackageFactory

PAGED = [
    "/api/v1/projects",
    "/api/v1/portfolio",
    "/api/v1/projects/{key}/work-packages",
    "/api/v1/projects/{key}/risks",
    "/api/v1/projects/{key}/decisions",
    "/api/v1/projects/{key}/changes",
]


def test_every_paged_list_declares_the_same_cursor_and_page_size(db):
    document = Client().get("/api/v1/openapi.json").json()
    declared = {}
    for path, item in document["paths"].items():
        operation = item.get("get", {})
        parameters = {p["name"]: p for p in operation.get("parameters", [])}
        if "cursor" not in parameters:
            continue
        declared[path] = (parameters["cursor"], parameters["pageSize"])
        answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
        page = document["components"]["schemas"][answer["$ref"].rsplit("/", 1)[1]]
        assert page["required"] == ["items", "next"], path
        assert page["properties"]["next"]["type"] == ["string", "null"], path
        assert "400" in operation["responses"] and "422" in operation["responses"], path
    assert sorted(declared) == sorted(PAGED)
    cursor, size = declared["/api/v1/projects"]
    assert not cursor["required"] and "400" in cursor["description"]
    assert (size["schema"]["minimum"], size["schema"]["maximum"]) == (1, 500)
    assert size["schema"]["default"] == 100
    for path, (other_cursor, other_size) in declared.items():
        assert (other_cursor, other_size) == (cursor, size), path


def test_a_cursor_of_another_list_is_refused_in_the_same_words(db, client_for):
    user = UserFactory(username="pager")
    ProjectFactory(key="ONE", browsers=[user])
    client = client_for(user)
    of_risks = paging.make_cursor(["ONE"], salt="registers:risks")
    of_projects = paging.make_cursor(["ONE"], salt="projects")
    urls = [
        f"/api/v1/projects?cursor={of_risks}",
        f"/api/v1/projects/ONE/risks?cursor={of_projects}",
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 400, url
        assert response.json()["error"] == {
            "code": "bad_request",
            "message": paging.CURSOR_MESSAGE,
        }


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_previous_cursors_walk_back_over_the_same_pages_nulls_included(db, size):
    project = ProjectFactory(key="WALK")
    starts = [None, dt.date(2026, 1, 1), dt.date(2026, 2, 1)]
    orders = [None, 1, 2]
    for n, (start, order) in enumerate(itertools.product(starts, orders)):
        WorkPackageFactory(project=project, name=f"A{n}", planned_start_date=start)
        WorkPackageFactory(
            project=project, name=f"B{8 - n}", sort_order=order, planned_start_date=start
        )
    rows = listing.records(project, "work-packages")
    keys = listing.ORDERS["work-packages"]
    expected = [wp.pk for wp in listing.in_order(project, "work-packages")]
    assert len(expected) == 18

    forward, found, cursor = [], None, None
    while True:
        found = paging.page(rows, keys, cursor=cursor, size=size, salt="walk")
        forward.append([wp.pk for wp in found.rows])
        assert (found.previous_cursor is None) == (cursor is None)
        if found.next_cursor is None:
            break
        cursor = found.next_cursor
    assert [pk for one in forward for pk in one] == expected

    backward = [forward[-1]]
    cursor = found.previous_cursor
    while cursor:
        found = paging.page(rows, keys, cursor=cursor, size=size, salt="walk")
        backward.append([wp.pk for wp in found.rows])
        assert found.next_cursor is not None
        cursor = found.previous_cursor
    assert backward[::-1] == forward
