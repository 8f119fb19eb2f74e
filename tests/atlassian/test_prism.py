"""Every backend method against Atlassian's documents served by Prism, with request
validation on: a request that breaks the contract gets a 4xx from Prism and fails here.
Runs under `make contract-prism` (which starts and stops the mocks); skipped otherwise.
Prism answers with Atlassian's own examples, so these tests assert that each call was
accepted and its answer understood, not particular values."""

import os

import pytest

from governance.atlassian.context import acting_account
from governance.models import TrackerFieldState
from governance.tracker import TrackerError
from governance.tracker.jira import JiraTracker
from governance.wiki import WikiError
from governance.wiki.confluence import ConfluenceWiki
from tests.atlassian.conftest import give_grant
from tests.factories import UserFactory

JIRA = os.environ.get("PRISM_JIRA_URL", "")
CONFLUENCE_V2 = os.environ.get("PRISM_CONFLUENCE_V2_URL", "")
CONFLUENCE_V1 = os.environ.get("PRISM_CONFLUENCE_URL", "")

pytestmark = [
    pytest.mark.prism,
    pytest.mark.django_db,
    pytest.mark.skipif(not JIRA, reason="needs the Prism mocks: make contract-prism"),
]


@pytest.fixture
def prism(atlassian_settings):
    atlassian_settings.ATLASSIAN_JIRA_URL = JIRA
    atlassian_settings.ATLASSIAN_CONFLUENCE_URL = CONFLUENCE_V1
    atlassian_settings.ATLASSIAN_CONFLUENCE_V2_URL = CONFLUENCE_V2
    atlassian_settings.ATLASSIAN_RETRIES = 0
    return atlassian_settings


@pytest.fixture
def jira(prism):
    return JiraTracker()


@pytest.fixture
def wiki(prism):
    return ConfluenceWiki()


@pytest.fixture
def person(db):
    user = UserFactory(username="pat")
    give_grant(user)
    return user


def test_identity(jira, person):
    assert jira.current_user(person.account_id).account_id
    assert jira.users_bulk(["5b10a2844c20165700ede21g", "5b10ac8d82e05b22cc7d4ef5"])
    assert isinstance(jira.is_group_member("5b10a2844c20165700ede21g", "jira-administrators"), bool)
    assert jira.group_exists("jira-administrators")
    assert isinstance(jira.is_site_admin("someone-else"), bool)


def test_projects(jira, person):
    assert jira.get_project("EX").key
    assert jira.browsable_projects(person.account_id)
    assert isinstance(jira.can_browse(person.account_id, "EX"), bool)


def test_permissions_about_other_people_as_the_service_account(jira, prism):
    # getProject (the project id), getBulkPermissions, then bulkGetUsers (the account type).
    assert isinstance(jira.can_browse("5b10a2844c20165700ede21g", "EX"), bool)
    assert isinstance(jira.search_browsers("EX", "mia"), list)
    # Prism answers every range with its example: the listing stops at the page ceiling.
    prism.ATLASSIAN_MAX_PAGES = 2
    assert isinstance(jira.browsers_among("EX", ["a1", "a2"]), set)


def test_issues(jira, person):
    assert isinstance(jira.search_issues("EX", "bug"), list)
    assert isinstance(jira.search_issues("EX", ""), list)
    assert isinstance(jira.get_issues(["EX-1", "EX-2"]), dict)
    token = acting_account.set(person.account_id)  # summaries asked again as the reader
    try:
        assert isinstance(jira.get_issues(["EX-1", "EX-2"]), dict)
    finally:
        acting_account.reset(token)


def test_write_back_and_field_upkeep(jira):
    TrackerFieldState.objects.create(
        name="Work Package", field_id="customfield_10101", projects={"EX": "10000"}
    )
    jira.set_work_package_field("EX-1", "Build")
    jira.set_work_package_field("EX-1", None)
    state = TrackerFieldState.objects.get()
    state.projects = {}
    state.context_id = ""
    jira._cover_project(jira.service(), state, "10001")
    # Prism's example field list has no 'Work Package': it is created, and the id in the
    # answer (the example's) is used as it is, without a second look-up.
    assert jira._find_or_create_field(jira.service(), "Work Package")


def test_field_is_put_on_the_edit_screens(jira):
    creds = jira.service()
    # Prism answers each screen step with a generated or example body: the requests for the
    # project's screen schemes, their screens, tabs and fields, and the add, are accepted.
    screens = jira.edit_screens(creds, "10000")
    assert isinstance(screens, list)
    jira._put_on_edit_screens(creds, "customfield_10101", "10000", "EX")
    # Prism's example edit metadata does not list the field: the confirmation says so.
    with pytest.raises(TrackerError, match="does not offer"):
        jira._confirm_editable(creds, "customfield_10101", "EX-1")


def test_confluence(wiki):
    assert wiki.get_page("123") is not None
    # Prism answers with the document's example space: use its key.
    spaces = wiki.http.request("getSpaces", "GET", "/spaces", wiki.service(), base_url=wiki.v2())
    key = spaces["results"][0]["key"]
    assert wiki.space_id(key)
    page = wiki.create_page(space_key=key, title="Board paper", body="Hello", labels=["pmo"])
    assert page.id
    wiki.add_footer_comment(page_id="123", body="Please approve.", mention_account_ids=["a1"])
    assert wiki.ensure_space(key, "Governance") == (wiki.space_id(key), False)


def test_wiki_setup_creates_the_space_with_v1(wiki):
    # Prism's example spaces do not include NEWGOV: it is created with v1 createSpace. As
    # with the CQL search, Prism validates the request but cannot generate the v1 Space
    # answer (recursive schema): a malformed request would be a 4xx, not this 5xx.
    with pytest.raises(WikiError, match=r"createSpace, HTTP 5\d\d"):
        wiki.ensure_space("NEWGOV", "Governance")


def test_the_lookups_before_a_write_is_sent_again(wiki, jira):
    # What the app asks before resending a create whose first try timed out.
    # (Prism's generated space id is the word "string"; a real one is numeric.)
    assert wiki._page_titled("98", "Board paper") is None or True
    assert wiki._comment_marked("123", "gov-0123456789abcdef") is None
    assert isinstance(jira.fields_named(jira.service(), "Work Package"), list)
    assert jira._context_named(jira.service(), "customfield_10101", "Work Package") is None or True


def test_cql_search_is_left_to_the_in_process_contract(wiki, person):
    # Prism cannot generate the v1 search answer (its schema is recursive); the request, made
    # with the reader's token, is still validated, so a malformed one would be a 4xx.
    token = acting_account.set(person.account_id)
    try:
        with pytest.raises(WikiError, match=r"HTTP 5\d\d|not JSON"):
            wiki.search_pages("board")
    finally:
        acting_account.reset(token)


def test_webhooks(jira, person):
    """Item 13: the dynamic webhooks' four operations, as the administrator's OAuth grant.
    Atlassian's example answer to `registerDynamicWebhooks` has one refused webhook among
    the created ones: the app reports the refusal instead of keeping half a registration."""
    with pytest.raises(TrackerError, match="The clause watchCount is unsupported"):
        jira.register_webhooks(
            person.account_id,
            url="https://governance.example.com/hooks/jira/",
            jql="project in (10000)",
            events=["jira:issue_updated", "jira:issue_deleted"],
        )
    assert all(hook.get("id") for hook in jira.webhooks(person.account_id))
    assert jira.refresh_webhooks(person.account_id, [10000, 10001]) is not None
    jira.delete_webhooks(person.account_id, [10000])
