"""Every Wiki method of the Confluence backend against the Confluence v2 and v1 contract
documents (requests validated, canned answers validated)."""

import pytest

from governance.atlassian.context import acting_account
from governance.wiki import WikiError
from governance.wiki.confluence import ConfluenceWiki
from tests.atlassian.conftest import WIKI_URL, give_grant
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def wiki(atlassian_settings, confluence, sleeps):
    backend = ConfluenceWiki()
    backend.http.sleep = sleeps.append
    return backend


def page_json(page_id="123", title="Board paper: Alpha"):
    return {
        "id": page_id,
        "status": "current",
        "title": title,
        "spaceId": "98",
        "_links": {"base": WIKI_URL + "/wiki", "webui": f"/spaces/GOV/pages/{page_id}"},
    }


def search_result(page_id: str, title: str) -> dict:
    return {
        "content": {
            "id": page_id,
            "type": "page",
            "status": "current",
            "title": title,
            "space": {
                "key": "GOV",
                "name": "Governance",
                "type": "global",
                "status": "current",
                "_expandable": {},
                "_links": {},
            },
            "_links": {"webui": f"/spaces/GOV/pages/{page_id}"},
        },
        "title": title,
        "excerpt": "",
        "url": f"/spaces/GOV/pages/{page_id}",
        "entityType": "content",
        "iconCssClass": "page",
        "lastModified": "2026-11-01T10:00:00.000Z",
        "breadcrumbs": [],
    }


def test_get_page_and_missing_page(wiki, confluence):
    confluence.on(
        "getPageById",
        lambda r, q, b: (200, page_json()) if "/pages/123" in r.url else (404, {"errors": []}),
    )
    page = wiki.get_page("123")
    assert page.title == "Board paper: Alpha"
    assert page.url == WIKI_URL + "/wiki/spaces/GOV/pages/123"
    assert wiki.get_page("456") is None
    assert wiki.get_page("../etc") is None
    assert confluence.count("getPageById") == 2


def test_search_pages_through_cql(wiki, confluence):
    def search(request, query, body):
        return 200, {
            "results": [search_result("1", "Board paper"), search_result("2", "Minutes")],
            "start": 0,
            "limit": 10,
            "size": 2,
            "totalSize": 2,
            "cqlQuery": query["cql"][0],
            "searchDuration": 5,
            "_links": {"base": WIKI_URL + "/wiki"},
        }

    confluence.on("searchByCQL", search)
    reader = UserFactory(username="rita")
    give_grant(reader)
    token = acting_account.set(reader.account_id)
    try:
        pages = wiki.search_pages('board "paper', limit=10)
    finally:
        acting_account.reset(token)
    assert [(p.id, p.title, p.space_key) for p in pages] == [
        ("1", "Board paper", "GOV"),
        ("2", "Minutes", "GOV"),
    ]
    cql = confluence.params("searchByCQL")[0]["cql"][0]
    assert cql == (
        'type = page AND (title ~ "board \\"paper" OR text ~ "board \\"paper") '
        "ORDER BY lastmodified DESC"
    )


def test_create_page_resolves_the_space_creates_and_labels(wiki, confluence):
    confluence.on(
        "getSpaces",
        (200, {"results": [{"id": "98", "key": "GOV", "name": "Governance"}], "_links": {}}),
    )
    confluence.on("createPage", lambda r, q, b: (200, page_json("555", b["title"])))
    confluence.on(
        "addLabelsToContent",
        lambda r, q, b: (
            200,
            {
                "results": [
                    {"id": str(i), "name": x["name"], "prefix": "global", "label": x["name"]}
                    for i, x in enumerate(b)
                ],
                "size": len(b),
            },
        ),
    )
    page = wiki.create_page(
        space_key="GOV",
        title="Board paper: Alpha",
        body="Board paper for <Alpha>.\n\n1. The problem",
        labels=["pmo", "governance-board-paper"],
    )
    assert (page.id, page.space_key, page.labels) == (
        "555",
        "GOV",
        ("pmo", "governance-board-paper"),
    )
    sent = confluence.bodies("createPage")[0]
    assert sent["spaceId"] == "98" and sent["status"] == "current"
    assert sent["body"] == {
        "representation": "storage",
        "value": "<p>Board paper for &lt;Alpha&gt;.</p><p>1. The problem</p>",
    }
    assert confluence.bodies("addLabelsToContent") == [
        [
            {"prefix": "global", "name": "pmo"},
            {"prefix": "global", "name": "governance-board-paper"},
        ]
    ]
    wiki.create_page(space_key="GOV", title="Again", body="x")
    assert confluence.count("getSpaces") == 1  # the space id is cached


def test_create_page_in_a_missing_space_says_to_run_wiki_setup(wiki, confluence):
    confluence.on("getSpaces", (200, {"results": [], "_links": {}}))
    with pytest.raises(WikiError, match="wiki_setup"):
        wiki.create_page(space_key="NOPE", title="t", body="b")


def test_footer_comment_mentions_the_approver(wiki, confluence):
    confluence.on(
        "createFooterComment",
        (201, {"id": "77", "status": "current", "title": "Re: Board paper", "pageId": "555"}),
    )
    wiki.add_footer_comment(page_id="555", body="Please approve.", mention_account_ids=["acc-1"])
    body = confluence.bodies("createFooterComment")[0]
    assert body["pageId"] == "555"
    assert body["body"]["value"].startswith(
        '<p><ac:link><ri:user ri:account-id="acc-1" /></ac:link> Please approve.</p>'
        '<ac:structured-macro ac:name="anchor">'
    )


def test_ensure_space_is_idempotent(wiki, confluence):
    spaces = []
    confluence.on("getSpaces", lambda r, q, b: (200, {"results": spaces, "_links": {}}))

    def create(request, query, body):
        spaces.append({"id": "99", "key": body["key"], "name": body["name"]})
        return 200, {
            "id": 99,
            "key": body["key"],
            "name": body["name"],
            "status": "current",
            "type": "global",
            "_expandable": {},
            "_links": {},
        }

    confluence.on("createSpace", create)
    assert wiki.ensure_space("GOV", "Governance") == ("99", True)
    assert wiki.ensure_space("GOV", "Governance") == ("99", False)
    assert confluence.count("createSpace") == 1


def test_the_space_is_created_with_confluence_v1_not_the_beta_v2(wiki, confluence):
    confluence.on("getSpaces", (200, {"results": [], "_links": {}}))
    paths = []

    def create(request, query, body):
        paths.append(request.url.split("?")[0])
        return 200, {
            "id": 99,
            "key": body["key"],
            "name": body["name"],
            "status": "current",
            "type": "global",
            "_expandable": {},
            "_links": {},
        }

    confluence.on("createSpace", create)
    assert wiki.ensure_space("GOV", "Governance") == ("99", True)
    assert paths == [WIKI_URL + "/wiki/rest/api/space"]  # before: /wiki/api/v2/spaces


def test_confluence_errors_are_wiki_errors_naming_the_operation(wiki, confluence, settings):
    settings.ATLASSIAN_RETRIES = 1
    confluence.on("getPageById", (503, {"message": "down"}))
    with pytest.raises(WikiError, match=r"getPageById, HTTP 503"):
        wiki.get_page("1")


def test_the_business_case_picker_searches_confluence_live(
    cast, atlassian_settings, confluence, client_for, settings
):
    settings.TRACKER_BACKEND = "local"  # the cast's access; the wiki alone is Confluence
    settings.WIKI_BACKEND = "confluence"
    confluence.on(
        "searchByCQL",
        lambda r, q, b: (
            200,
            {
                "results": [search_result("4242", "Alpha board paper")],
                "start": 0,
                "limit": 10,
                "size": 1,
                "totalSize": 1,
                "cqlQuery": q["cql"][0],
                "searchDuration": 3,
                "_links": {"base": WIKI_URL + "/wiki"},
            },
        ),
    )
    give_grant(cast.lead)  # the picker searches as the reader
    response = client_for(cast.lead).get("/projects/ALPHA/charter/wiki/?q=board")
    assert response.status_code == 200
    assert "Alpha board paper" in response.content.decode()
    assert confluence.count("searchByCQL") == 1
