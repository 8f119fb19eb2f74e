"""Reads as the person, so nothing leaks (item 4 of the Atlassian issue): the wiki page
picker's search and the linked issues' summaries run with the reader's own token. The fake
sites let the service account see a restricted page and an issue in a security level that
the reader may not (Confluence page restrictions:
https://support.atlassian.com/confluence-cloud/docs/what-are-page-permissions-and-restrictions/;
Jira issue security: see tests/atlassian/fake_jira.py)."""

import contextlib

import pytest

from governance.atlassian.context import acting_account
from governance.permissions import caller_for
from governance.tracker.local import scripting
from registers.services import work_package_create
from tests.atlassian.conftest import WIKI_URL, give_grant
from tests.atlassian.test_confluence_backend import search_result

pytestmark = pytest.mark.django_db


def cql_answer(results, cql):
    return {
        "results": results,
        "start": 0,
        "limit": 10,
        "size": len(results),
        "totalSize": len(results),
        "cqlQuery": cql,
        "searchDuration": 3,
        "_links": {"base": WIKI_URL + "/wiki"},
    }


@pytest.fixture
def wiki_site(cast, atlassian_settings, confluence, settings):
    """Confluence where the service account also sees a restricted page."""
    settings.TRACKER_BACKEND = "local"
    settings.WIKI_BACKEND = "confluence"

    def search(request, query, body):
        as_service = request.headers["Authorization"].startswith("Basic ")
        results = [search_result("1", "Alpha board paper")]
        if as_service:
            results.append(search_result("2", "Alpha board salaries (restricted)"))
        return 200, cql_answer(results, query["cql"][0])

    confluence.on("searchByCQL", search)
    return confluence


def test_the_wiki_picker_lists_only_pages_the_reader_may_open(wiki_site, cast, client_for):
    give_grant(cast.lead, access="reader-token")
    page = client_for(cast.lead).get("/projects/ALPHA/charter/wiki/?q=board")
    text = page.content.decode()
    assert "Alpha board paper" in text
    assert "salaries" not in text
    assert wiki_site.count("searchByCQL") == 1


def test_the_wiki_picker_without_the_readers_grant_lists_nothing_and_says_why(
    wiki_site, cast, client_for
):
    page = client_for(cast.lead).get("/projects/ALPHA/charter/wiki/?q=board")
    text = page.content.decode()
    assert "salaries" not in text and "Alpha board paper" not in text
    assert "you have not signed in with Atlassian here" in text
    assert wiki_site.count("searchByCQL") == 0


@contextlib.contextmanager
def acting(account_id: str):
    token = acting_account.set(account_id)
    try:
        yield
    finally:
        acting_account.reset(token)


@pytest.fixture
def issues(cast, fake_jira, settings):
    settings.ATLASSIAN_RETRIES = 0
    settings.OUTBOX_RUN_ON_COMMIT = False
    scripting.ensure_issue("ALPHA-1", summary="Secret acquisition")
    scripting.ensure_issue("ALPHA-2", summary="Public roadmap")
    for person in (cast.lead, cast.viewer):
        fake_jira.grant(person)
    with acting(cast.lead.account_id):
        wp = work_package_create(
            caller=caller_for(cast.lead, cast.project),
            data={"name": "Build", "linkedIssueKeys": ["ALPHA-1", "ALPHA-2"]},
        )
    fake_jira.restricted.add("ALPHA-1")  # in a security level the viewer is not in
    return wp


def test_a_linked_issue_the_reader_may_not_see_shows_its_key_alone(
    issues, cast, client_for, fake_jira
):
    page = client_for(cast.viewer).get(f"/projects/ALPHA/registers/work-packages/{issues.pk}/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "ALPHA-1" in text and "ALPHA-2" in text
    assert "Public roadmap" in text
    assert "Secret acquisition" not in text
    assert "not found in the tracker" not in text  # it exists; the reader may not read it


def test_a_reader_without_a_grant_gets_keys_alone(issues, tracker, fake_jira):
    with acting("someone-without-a-grant"):
        found = tracker.get_issues(["ALPHA-1", "ALPHA-2"])
    assert {k: i.summary for k, i in found.items()} == {"ALPHA-1": "", "ALPHA-2": ""}


def test_the_worker_outside_any_request_reads_as_the_service_account(issues, tracker):
    found = tracker.get_issues(["ALPHA-1", "ALPHA-2"])
    assert found["ALPHA-1"].summary == "Secret acquisition"
