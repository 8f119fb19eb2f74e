"""The 'Work Package' field as a real Jira site treats it (items 1 and 2 of the Atlassian
issue), against the Jira stand-in (tests/atlassian/fake_jira.py), whose `editIssue` refuses a
field that is not on the edit screen and whose team-managed projects take no custom field."""

import pytest

from governance.models import TrackerFieldState
from governance.tracker import TrackerError
from governance.tracker.local import scripting
from tests.atlassian.conftest import run_check
from tests.atlassian.fake_jira import FIELD_ID
from tests.atlassian.test_commands import healthy  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(cast, fake_jira, settings):
    settings.ATLASSIAN_RETRIES = 0
    for n in (1, 2):
        scripting.ensure_issue(f"ALPHA-{n}", summary=f"Epic {n}")
    return fake_jira


def test_a_field_not_on_the_edit_screen_is_refused_by_the_site(site, tracker):
    """The stand-in behaves as Jira does: without the screen step, the edit is a 400."""
    site.field["created"] = True
    TrackerFieldState.objects.create(
        name="Work Package", field_id=FIELD_ID, projects={"ALPHA": "10001"}
    )
    with pytest.raises(TrackerError, match="not on the appropriate screen"):
        tracker.set_work_package_field("ALPHA-1", "Build")


def test_write_back_puts_the_field_on_the_edit_screens_confirms_it_then_edits(site, tracker):
    tracker.set_work_package_field("ALPHA-1", "Build")
    # The edit screen (2) of the project's screen scheme, on its first tab; not the default.
    assert FIELD_ID in site.screens[2][21]
    assert FIELD_ID not in site.screens[1][11]
    assert site.mock.bodies("addScreenTabField") == [{"fieldId": FIELD_ID}]
    assert site.mock.count("getEditIssueMeta") == 1
    assert site.edits == [("ALPHA-1", "Build")]

    before = len(site.mock.calls)
    tracker.set_work_package_field("ALPHA-2", "Build")  # all known: the edit alone
    assert [name for name, _, _ in site.mock.calls[before:]] == ["editIssue"]


def test_a_field_already_on_a_screen_tab_is_not_added_again(site, tracker):
    site.field["created"] = True
    site.screens[2][22].append(FIELD_ID)
    tracker.set_work_package_field("ALPHA-1", "Build")
    assert site.mock.count("addScreenTabField") == 0
    assert site.edits == [("ALPHA-1", "Build")]


def test_a_field_the_site_still_does_not_offer_is_a_named_error_and_no_edit(site, tracker):
    site.mock.on("getEditIssueMeta", (200, {"fields": {}}))
    with pytest.raises(
        TrackerError, match=f"does not offer the 'Work Package' field \\({FIELD_ID}\\)"
    ):
        tracker.set_work_package_field("ALPHA-1", "Build")
    assert site.edits == []
    assert TrackerFieldState.objects.get().projects == {}  # tried again next time


def test_a_team_managed_project_is_recorded_never_edited_and_shown_on_its_page(
    site, tracker, cast, client_for
):
    site.team_managed.add("ALPHA")
    tracker.set_work_package_field("ALPHA-1", "Build")  # no error: the link stands
    tracker.set_work_package_field("ALPHA-2", "Build")
    assert site.mock.count("editIssue") == 0
    assert site.mock.count("createCustomField") == 0
    assert site.mock.count("getProject") == 1
    assert "team-managed" in TrackerFieldState.objects.get().unwritable["ALPHA"]
    site.grant(cast.lead)
    page = client_for(cast.lead).get("/projects/ALPHA/")
    assert page.status_code == 200
    assert "Jira team-managed project" in page.content.decode()
    assert "Links to issues still work" in page.content.decode()


def test_the_overview_of_a_company_managed_project_says_nothing_about_the_field(
    site, tracker, cast, client_for
):
    tracker.set_work_package_field("ALPHA-1", "Build")
    site.grant(cast.lead)
    page = client_for(cast.lead).get("/projects/ALPHA/")
    assert "team-managed" not in page.content.decode()


# Item 2 ---------------------------------------------------------------------------------------
def test_the_created_field_id_is_used_without_looking_it_up_by_name_again(site, tracker):
    tracker.set_work_package_field("ALPHA-1", "Build")
    assert site.mock.count("createCustomField") == 1
    assert site.mock.count("getFieldsPaginated") == 1  # before: once more after creating
    assert TrackerFieldState.objects.get().field_id == FIELD_ID


def two_fields(request, query, body):
    return 200, {
        "isLast": True,
        "values": [
            {"id": "customfield_10101", "name": "Work Package", "schema": {"type": "string"}},
            {"id": "customfield_10230", "name": "Work Package", "schema": {"type": "string"}},
        ],
    }


def test_two_fields_of_the_same_name_are_refused_naming_both_ids(site, tracker):
    site.mock.on("getFieldsPaginated", two_fields)
    with pytest.raises(TrackerError) as refused:
        tracker.set_work_package_field("ALPHA-1", "Build")
    assert "customfield_10101, customfield_10230" in str(refused.value)
    assert site.mock.count("createCustomField") == 0
    assert site.edits == []


def test_atlassian_check_names_both_ids_of_two_same_named_fields(healthy):  # noqa: F811
    healthy.on("getFieldsPaginated", two_fields)
    code, _out, err = run_check()
    assert code == 2 and "[field]" in err
    assert "2 custom fields named 'Work Package' (customfield_10101, customfield_10230)" in err


def test_atlassian_check_reports_a_team_managed_project(healthy):  # noqa: F811
    TrackerFieldState.objects.create(
        name="Work Package",
        field_id=FIELD_ID,
        unwritable={"BETA": "This is a Jira team-managed project."},
    )
    code, out, err = run_check()
    assert code == 0, err
    assert "project BETA: the 'Work Package' field cannot be written" in out
