"""A person written as people write them: by accountId, e-mail or display name, matched
against the project's people loaded once (`governance.roster.ProjectPeople`)."""

import pytest

from governance.roster import MAX_PERSON_CHARS, PersonMatch, ProjectPeople, project_people
from governance.tracker.base import TrackerUser
from tests.factories import UserFactory

ANN = TrackerUser("acc-ann", "Ann Lee", email="ann.lee@x.test")
ANN2 = TrackerUser("acc-ann2", "ann  LEE", email="ann.lee2@x.test")
BOB = TrackerUser("acc-bob", "Bob Stone", email="Bob.Stone@X.test")
NOMAIL = TrackerUser("acc-nomail", "Cy Twin")
NOMAIL2 = TrackerUser("acc-nomail2", "Cy Twin")


@pytest.fixture
def people() -> ProjectPeople:
    return ProjectPeople([ANN, ANN2, BOB, NOMAIL, NOMAIL2])


def test_an_account_id_is_taken_first(people):
    assert people.match("acc-bob") == PersonMatch("acc-bob")
    assert people.match("  acc-bob ") == PersonMatch("acc-bob")


def test_an_email_is_matched_without_case(people):
    assert people.match("bob.stone@x.TEST") == PersonMatch("acc-bob")
    assert people.match(" ann.lee2@x.test ") == PersonMatch("acc-ann2")


def test_a_display_name_is_matched_without_case_or_extra_spaces(people):
    assert people.match("bob   STONE") == PersonMatch("acc-bob")
    assert people.match("\tBob Stone\n") == PersonMatch("acc-bob")


def test_two_people_with_one_name_are_refused_naming_their_emails(people):
    found = people.match("Ann Lee")
    assert found.account_id is None
    assert found.problem == (
        "2 people are called “Ann Lee”: ann.lee@x.test, ann.lee2@x.test — write the e-mail."
    )
    # Without e-mails, the accountIds tell them apart.
    assert "acc-nomail, acc-nomail2" in people.match("cy twin").problem


def test_an_unknown_name_or_email_is_refused_clearly(people):
    assert people.match("Zed Nobody") == PersonMatch(
        None, "No one in this project is called “Zed Nobody”."
    )
    assert people.match("zed@x.test") == PersonMatch(
        None, "No one in this project has the e-mail “zed@x.test”."
    )


def test_blank_is_no_person(people):
    assert people.match(None) == PersonMatch(None)
    assert people.match("   ") == PersonMatch(None)


@pytest.mark.parametrize(
    "value",
    ["Ann\x00Lee", "Ann \ud800Lee", "Ann Lee\ufffe", "a\x07b"],
    ids=["nul", "lone-surrogate", "noncharacter", "control"],
)
def test_hostile_text_is_refused_with_a_reason(people, value):
    found = people.match(value)
    assert found.account_id is None and found.problem


def test_a_ten_megabyte_value_is_refused_before_it_is_read(people):
    found = people.match("x" * 10_000_000)
    assert found == PersonMatch(
        None,
        "Too long to be a person (10,000,000 characters): write their e-mail address, "
        "display name or account id.",
    )
    assert len(people.match("y" * (MAX_PERSON_CHARS + 1)).problem) < 200


def test_a_number_cell_is_read_as_its_text_and_may_be_an_account_id(people):
    # Not on the project's list: `match_all` asks the tracker whether it is an accountId.
    assert people.match(12345) == "12345"


def test_match_all_asks_the_tracker_once_for_ids_outside_the_list(cast, monkeypatch):
    from django.core.cache import cache

    from governance.tracker.local.backend import LocalTracker

    cache.clear()
    calls = []
    bulk = LocalTracker.users_bulk
    monkeypatch.setattr(
        LocalTracker, "users_bulk", lambda self, ids: calls.append(set(ids)) or bulk(self, ids)
    )
    outsider = cast.outsider.account_id
    people = ProjectPeople([ANN])
    answers = people.match_all([outsider, "nobody-at-all", "Ann Lee", "Ann Lee", "Ghost Person"])
    assert answers[outsider] == PersonMatch(outsider)
    assert answers["Ann Lee"] == PersonMatch("acc-ann")
    assert answers["nobody-at-all"].problem == (
        "No one in this project is called “nobody-at-all” or has that account id."
    )
    assert answers["Ghost Person"].problem == "No one in this project is called “Ghost Person”."
    assert calls == [{outsider, "nobody-at-all"}]


def test_the_projects_people_are_those_who_may_browse_it(cast, django_assert_num_queries):
    with django_assert_num_queries(1):
        people = project_people(cast.project)
    assert people.match("Lena Lead") == PersonMatch(cast.lead.account_id)
    assert people.match("EDITOR@example.test") == PersonMatch(cast.editor.account_id)
    # Otto browses another project only: not one of this project's people by name.
    assert people.match("Otto Outsider").problem
    UserFactory(username="twin", display_name="Lena Lead")
    assert project_people(cast.project).match("Lena Lead").account_id == cast.lead.account_id


def test_without_a_tracker_listing_the_sites_people_who_browse_are_used(cast, monkeypatch):
    from governance.tracker.local.backend import LocalTracker

    monkeypatch.delattr(LocalTracker, "project_people")
    people = project_people(cast.project)
    assert people.match("Vera Viewer") == PersonMatch(cast.viewer.account_id)
    assert people.match("Otto Outsider").problem
