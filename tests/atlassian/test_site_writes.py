"""No blind retries of writes (item 6 of the Atlassian issue): a POST that timed out may have
worked on the site. Each create below 'times out' after the site made the thing (the answer
is lost on the way back), or before it made anything; the app looks for what the first try
made (the page by title in the space, the comment by its marker, the field by name, the
context by name) and sends the POST again only when it is not there."""

import pytest
import requests

from governance.tracker import TrackerError
from governance.tracker.local import scripting
from tests.atlassian.fake_jira import FIELD_ID

pytestmark = pytest.mark.django_db


def lost_answer(handler, *, made: bool = True):
    """The site does (or does not) do the work, then the answer never arrives."""
    tries = []

    def handle(request, query, body):
        tries.append(body)
        if len(tries) == 1:
            if made:
                handler(request, query, body)
            raise requests.exceptions.ReadTimeout("read timed out")
        return handler(request, query, body)

    handle.tries = tries
    return handle


@pytest.fixture
def wiki(atlassian_settings, confluence, sleeps):
    from governance.wiki.confluence import ConfluenceWiki

    backend = ConfluenceWiki()
    backend.http.sleep = sleeps.append
    confluence.on(
        "getSpaces",
        (200, {"results": [{"id": "98", "key": "GOV", "name": "Governance"}], "_links": {}}),
    )
    return backend


@pytest.fixture
def pages(confluence):
    made = []

    def create(request, query, body):
        page = {"id": str(500 + len(made)), "title": body["title"], "status": "current"}
        made.append(page)
        return 200, page

    def in_space(request, query, body):
        title = query.get("title", [""])[0]
        return 200, {"results": [p for p in made if p["title"] == title], "_links": {}}

    confluence.on("getPagesInSpace", in_space)
    return made, create


def test_a_page_whose_creation_timed_out_after_it_was_made_is_found_not_made_twice(
    wiki, confluence, pages
):
    made, create = pages
    confluence.on("createPage", lost_answer(create))
    page = wiki.create_page(space_key="GOV", title="Board paper", body="Hello")
    assert page.id == "500"
    assert len(made) == 1  # before: a second page "Board paper" on the site
    assert confluence.count("createPage") == 1
    assert confluence.params("getPagesInSpace")[0]["title"] == ["Board paper"]


def test_a_page_whose_creation_failed_before_anything_was_made_is_sent_once_more(
    wiki, confluence, pages
):
    made, create = pages
    confluence.on("createPage", lost_answer(create, made=False))
    assert wiki.create_page(space_key="GOV", title="Board paper", body="Hello").id == "500"
    assert len(made) == 1
    assert confluence.count("createPage") == 2


def test_a_footer_comment_is_found_by_its_marker_not_posted_twice(wiki, confluence):
    comments = []

    def create(request, query, body):
        comments.append(
            {
                "id": str(70 + len(comments)),
                "status": "current",
                "pageId": body["pageId"],
                "body": {"storage": {"representation": "storage", "value": body["body"]["value"]}},
            }
        )
        return 201, {"id": comments[-1]["id"], "status": "current", "pageId": body["pageId"]}

    confluence.on("createFooterComment", lost_answer(create))
    confluence.on(
        "getPageFooterComments", lambda r, q, b: (200, {"results": comments, "_links": {}})
    )
    wiki.add_footer_comment(page_id="555", body="Please approve.", mention_account_ids=["a1"])
    assert len(comments) == 1
    assert confluence.count("createFooterComment") == 1
    assert confluence.count("getPageFooterComments") == 1


def test_a_space_whose_creation_timed_out_is_found_not_made_twice(atlassian_settings, confluence):
    from governance.wiki.confluence import ConfluenceWiki

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

    confluence.on("createSpace", lost_answer(create))
    assert ConfluenceWiki().ensure_space("GOV", "Governance") == ("99", True)
    assert len(spaces) == 1 and confluence.count("createSpace") == 1


@pytest.fixture
def site(cast, fake_jira, settings):
    settings.ATLASSIAN_RETRIES = 3
    scripting.ensure_issue("ALPHA-1", summary="Epic 1")
    return fake_jira


def test_a_custom_field_whose_creation_timed_out_is_found_by_name_not_made_twice(site, tracker):
    site.mock.on("createCustomField", lost_answer(site._guard(site.create_field)))
    tracker.set_work_package_field("ALPHA-1", "Build")
    assert site.mock.count("createCustomField") == 1
    assert site.edits == [("ALPHA-1", "Build")]


def test_a_context_whose_creation_timed_out_is_found_by_name_not_made_twice(site, tracker):
    site.mock.on("createCustomFieldContext", lost_answer(site._guard(site.create_context)))
    tracker.set_work_package_field("ALPHA-1", "Build")
    assert site.mock.count("createCustomFieldContext") == 1
    assert len(site.field["contexts"]) == 1
    assert site.edits == [("ALPHA-1", "Build")]


def test_a_write_that_met_a_server_error_is_not_retried_blindly_either(site, tracker, sleeps):
    site.mock.on("createCustomField", (503, {"errorMessages": ["busy"]}))
    with pytest.raises(TrackerError, match="createCustomField"):
        tracker.set_work_package_field("ALPHA-1", "Build")
    # Looked for it by name (nothing), sent once more (503 again): two tries, no sleeps.
    assert site.mock.count("createCustomField") == 2
    assert sleeps == []
    assert FIELD_ID
