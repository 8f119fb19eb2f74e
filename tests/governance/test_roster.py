"""One definition of the project's people (`governance.roster`): the same set for the people
pickers, the assistant's picker and the import, and two people of one name told apart the
same way by each (the picker's words, the import template's drop-down, the import's refusal
and what the import reads back)."""

import pytest

from governance import picker, roster
from governance.models import EditorNomination
from governance.people import forget
from governance.roster import PersonMatch, ProjectPeople, project_people
from governance.tracker.base import TrackerUser
from governance.tracker.local import scripting
from governance.tracker.local.backend import LocalTracker
from governance.tracker.local.models import LocalAccount, LocalProject
from tests.factories import UserFactory


def _account(name: str, display_name: str) -> str:
    """A tracker account that has never signed in to the site (no Django user)."""
    account = LocalAccount.objects.create(
        name=name,
        account_id=scripting.new_account_id(),
        display_name=display_name,
        email=f"{name}@example.test",
    )
    return account.account_id


def _everywhere(project) -> tuple[set[str], set[str], set[str]]:
    """The project's people as the roster, the picker and the import each take them."""
    return (
        roster.member_ids(project),
        {a for a, _ in picker.people_choices(project)},
        set(project_people(project).by_id),
    )


def test_with_the_trackers_list_the_projects_people_are_those_who_may_browse_it(cast):
    browsers = {cast.lead, cast.editor, cast.viewer, cast.sponsor, cast.site_admin, cast.pmo}
    wanted = {u.account_id for u in browsers}
    assert _everywhere(cast.project) == (wanted, wanted, wanted)


def test_without_it_the_union_of_role_holders_the_signed_in_and_the_search(cast, monkeypatch):
    """Lead, sponsor, BAU owner, steering seats and nominated editors, the site's signed-in
    people and the tracker's search of the project's browsers, kept to those who may browse
    the project: the same set for the picker and the import."""
    monkeypatch.delattr(LocalTracker, "project_people")
    searched: list[str] = []
    search = LocalTracker.search_users
    monkeypatch.setattr(
        LocalTracker,
        "search_users",
        lambda self, query, limit=20: [
            u for u in search(self, query, limit=limit) if u.display_name in searched
        ],
    )
    project = cast.project
    bau, seat, nominee = (_account(n, n.title()) for n in ("bau", "seat", "nominee"))
    far_seat = _account("farseat", "Far Seat")  # a seat who cannot browse the project
    quiet = _account("quiet", "Quiet Browser")  # browses; no role, never signed in
    scripting.ensure_project(
        "ALPHA", name="Alpha programme", lead="lead", browsers=["bau", "seat", "nominee", "quiet"]
    )
    project.bau_owner_account_id = bau
    project.steering_account_ids = [seat, far_seat]
    project.save(update_fields=["bau_owner_account_id", "steering_account_ids"])
    EditorNomination.objects.create(
        project=project, account_id=nominee, nominated_by_account_id=project.lead_account_id
    )
    assert roster.role_holders(project) == {
        cast.lead.account_id,
        cast.sponsor.account_id,
        cast.editor.account_id,
        bau,
        seat,
        far_seat,
        nominee,
    }
    signed_in = {cast.lead, cast.editor, cast.viewer, cast.sponsor, cast.site_admin, cast.pmo}
    wanted = {u.account_id for u in signed_in} | {bau, seat, nominee}
    assert _everywhere(project) == (wanted, wanted, wanted)
    searched.append("Quiet Browser")  # the tracker's search of the browsers finds the quiet one
    wanted.add(quiet)
    assert _everywhere(project) == (wanted, wanted, wanted)
    assert cast.outsider.account_id not in wanted and far_seat not in wanted


@pytest.fixture
def twin(cast):
    """A second Eddie Editor, written with other case and spaces (still the same name)."""
    twin = UserFactory(username="twin", display_name="eddie  EDITOR")
    scripting.ensure_project("ALPHA", name="Alpha programme", lead="lead", browsers=["twin"])
    return twin


@pytest.mark.parametrize("with_email", [True, False], ids=["e-mail", "account-id"])
def test_two_people_of_one_name_are_told_apart_the_same_way_everywhere(cast, twin, with_email):
    editor = cast.editor
    if not with_email:
        LocalAccount.objects.filter(name__in=["editor", "twin"]).update(email="")
        forget([editor.account_id, twin.account_id])
    marks = {
        editor.account_id: "editor@example.test" if with_email else editor.account_id,
        twin.account_id: "twin@example.test" if with_email else twin.account_id,
    }
    # The pickers: the name, and the mark in brackets.
    words = dict(picker.people_choices(cast.project))
    assert words[editor.account_id] == f"Eddie Editor ({marks[editor.account_id]})"
    assert words[twin.account_id] == f"eddie  EDITOR ({marks[twin.account_id]})"
    assert words[cast.lead.account_id] == "Lena Lead"
    assert dict(picker.choices_of([editor.account_id, twin.account_id])) == {
        a: words[a] for a in marks
    }
    # The import template: the mark in place of the name.
    people = project_people(cast.project)
    written = people.written()
    assert set(marks.values()) <= set(written) and "Eddie Editor" not in written
    # The import: the bare name refused naming the marks; the template's words and the
    # picker's words read back as the person.
    problem = people.match("Eddie Editor").problem
    assert problem is not None and all(mark in problem for mark in marks.values())
    assert problem.endswith("write the e-mail." if with_email else "write the account id.")
    for account_id, mark in marks.items():
        assert people.match(mark) == PersonMatch(account_id)
        assert people.match(words[account_id]) == PersonMatch(account_id)


def test_a_name_with_brackets_of_its_own_is_still_a_name():
    people = ProjectPeople(
        [
            TrackerUser("acc-c", "Cy Ray (Contractor)"),
            TrackerUser("acc-a", "Ann Lee", email="ann@x.test"),
            TrackerUser("acc-a2", "Ann Lee", email="ann2@x.test"),
        ]
    )
    assert people.match("cy ray (contractor)") == PersonMatch("acc-c")
    assert people.match("Ann Lee (ANN2@x.test)") == PersonMatch("acc-a2")
    assert people.match("Ann Lee (nobody@x.test)").problem
    assert people.match("Bo Bee (ann@x.test)").problem  # the mark of someone of another name


def test_the_people_searches_tell_two_of_one_name_apart_too(cast, client_for):
    """The seat search and the editors' search list the tracker's people with their e-mails:
    two of one name among the results show the mark as the pickers do."""
    for name in ("nia", "nia2"):
        UserFactory(username=name, display_name="Nia Twin")
    scripting.ensure_project("ALPHA", name="Alpha programme", lead="lead", browsers=["nia", "nia2"])
    client = client_for(cast.lead)
    for url, query in (
        ("/projects/ALPHA/charter/people/", {"field": "decisionAuthority", "q": "nia"}),
        ("/projects/ALPHA/editors/", {"q": "nia"}),
    ):
        html = client.get(url, query).content.decode()
        assert "Nia Twin (nia@example.test)" in html and "Nia Twin (nia2@example.test)" in html
    html = client.get("/projects/ALPHA/editors/", {"q": "vera"}).content.decode()
    assert "Vera Viewer</span>" in html  # one of a name: the name alone


def test_the_trackers_list_names_each_person_once_whatever_else_they_lead_or_browse(cast):
    """The local tracker's list of the people who may browse a project asks the project's lead
    and grants by its key: a person who leads and browses many other projects is listed once,
    in a statement that does not join them (joined, a person's 10,000 led projects times their
    10,000 grants made one register page take 4.4 s)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    busy = LocalAccount.objects.get(account_id=cast.lead.account_id)
    gone = scripting.ensure_user("gone", display_name="Gone Away")
    for n in range(12):
        scripting.ensure_project(
            f"OTHER{n}", name=f"Other {n}", lead=busy.name, browsers=[busy.name, "gone"]
        )
    LocalProject.objects.get(key="ALPHA").browsers.add(LocalAccount.objects.get(name="gone"))
    LocalAccount.objects.filter(name="gone").update(active=False)
    with CaptureQueriesContext(connection) as queries:
        listed = LocalTracker().project_people("ALPHA")
    ids = [person.account_id for person in listed]
    assert len(ids) == len(set(ids))
    assert cast.lead.account_id in ids
    assert {cast.editor.account_id, cast.viewer.account_id} <= set(ids)
    assert gone.account_id not in ids
    names = [person.display_name for person in listed]
    assert names == sorted(names)
    [statement] = queries.captured_queries
    assert "DISTINCT" not in statement["sql"]
