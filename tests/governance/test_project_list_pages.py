"""The project list in pages of 100 by key: the page's next / previous links (keeping the
search), the API's cursor and `next` link, every project once, a constant number of queries."""

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.paging import CURSOR_MESSAGE
from tests.factories import ProjectFactory, UserFactory


def _keys(html):
    """The keys of the page's rows (each row names its project, then its key)."""
    return re.findall(
        r'<a href="/projects/[A-Z0-9]+/">[^<]*</a> <span class="key">([A-Z0-9]+)<', html
    )


def test_the_project_list_pages_by_key_and_keeps_the_search(db, client_for):
    user = UserFactory(username="many")
    for n in range(105):
        ProjectFactory(key=f"K{n:03d}", name=f"Project {n}", browsers=[user])
    client = client_for(user)
    first = client.get("/").content.decode()
    assert _keys(first) == [f"K{n:03d}" for n in range(100)]
    assert 'rel="next"' in first and 'rel="prev"' not in first
    href = re.search(r'rel="next" href="([^"]+)"', first)[1].replace("&amp;", "&")
    second = client.get("/" + href).content.decode()
    assert _keys(second) == [f"K{n:03d}" for n in range(100, 105)]
    assert 'rel="prev"' in second and 'rel="next"' not in second
    searched = client.get("/?q=Project").content.decode()
    link = re.search(r'rel="next" href="([^"]+)"', searched)[1]
    assert "q=Project" in link


def test_the_project_api_pages_with_a_cursor_and_a_next_link(db, client_for):
    user = UserFactory(username="many_api")
    for n in range(7):
        ProjectFactory(key=f"P{n}", browsers=[user])
    client = client_for(user)
    seen, url, queries = [], "/api/v1/projects?pageSize=3", []
    while url:
        with CaptureQueriesContext(connection) as captured:
            body = client.get(url).json()
        queries.append(len(captured))
        seen += [p["projectKey"] for p in body["items"]]
        # Added between page loads: never shown twice, never shifts a project off a page.
        if len(seen) == 3:
            ProjectFactory(key="P0A", browsers=[user])  # before the cursor: not shown
            ProjectFactory(key="P3X", browsers=[user])  # after it: shown once
        url = body["next"]
    assert seen == sorted(seen) and len(seen) == len(set(seen))
    assert {f"P{n}" for n in range(7)} | {"P3X"} <= set(seen) and "P0A" not in seen
    assert len(set(queries[1:])) == 1  # the same queries on every page after the first
    refused = client.get("/api/v1/projects?pageSize=0")
    assert refused.status_code == 422 and "pageSize" in refused.json()["error"]["fields"]
    refused = client.get("/api/v1/projects?cursor=nonsense")
    assert refused.status_code == 400
    assert refused.json()["error"] == {"code": "bad_request", "message": CURSOR_MESSAGE}


def test_the_page_goes_back_by_its_previous_link_and_opens_a_bad_cursor_at_the_start(
    db, client_for
):
    user = UserFactory(username="back")
    for n in range(205):
        ProjectFactory(key=f"B{n:03d}", browsers=[user])
    client = client_for(user)
    first = client.get("/").content.decode()
    second = client.get("/" + _link(first, "next")).content.decode()
    third = client.get("/" + _link(second, "next")).content.decode()
    assert _keys(third) == [f"B{n:03d}" for n in range(200, 205)]
    back = client.get("/" + _link(third, "prev")).content.decode()
    assert _keys(back) == _keys(second) == [f"B{n:03d}" for n in range(100, 200)]
    assert _keys(client.get("/" + _link(back, "prev")).content.decode()) == _keys(first)
    assert _keys(client.get("/?cursor=nonsense").content.decode()) == _keys(first)


def _link(html, rel):
    return re.search(rf'rel="{rel}" href="([^"]+)"', html)[1].replace("&amp;", "&")
