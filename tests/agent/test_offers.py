"""Which writes the assistant offers (`catalogue.available`): those the person may use on at
least one project they view, asked of the callers `gatelist.role_callers` gives (the first
project of each combination of lead, editor and sponsor roles the person has, standing for
every project of it) rather than of a caller made for every viewable project (record 0307)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agent import catalogue
from governance import gatelist, permissions
from governance.errors import Forbidden
from governance.models import Project
from governance.tracker.local import scripting
from tests.conftest import ROLES, roles_told_apart, set_governance_group
from tests.factories import ProjectFactory, UserFactory, nominate

EVERYONE = "everyone"


def _offered(user):
    return {a.name for a in catalogue.available(catalogue.request_for(user)) if a.is_write}


def _offered_the_long_way(user):
    """The rule as written: a write whose offer holds for the caller of any project the person
    views, each caller made."""
    callers = [c for _, c in permissions.viewable_projects(catalogue.request_for(user))]
    return {
        a.name
        for a in catalogue.CATALOGUE.values()
        if a.offered_to is not None and any(a.offered_to(c) for c in callers)
    }


@pytest.fixture
def world(cast):
    """The projects that tell the roles apart (`roles_told_apart`), with every one of the cast
    in the governance group, so that each reaches the assistant."""
    roles_told_apart(cast)
    scripting.ensure_group(EVERYONE, members=[getattr(cast, role).username for role in ROLES])
    set_governance_group(EVERYONE)
    return cast


@pytest.mark.parametrize("group", [EVERYONE, ""])
@pytest.mark.parametrize("role", ROLES)
def test_each_role_is_offered_what_the_rule_offers_it(world, role, group):
    """With the governance group (everyone reaches the assistant) and without one (the site
    administrator alone does; the others are refused alike both ways)."""
    set_governance_group(group)
    user = world.user(role)
    try:
        expected = _offered_the_long_way(user)
        catalogue.require_agent_access(catalogue.request_for(user))
    except Forbidden:
        with pytest.raises(Forbidden):
            _offered(user)
        return
    assert _offered(user) == expected


def test_the_roles_tell_the_offers_apart(world):
    """The scenario above is not one where everyone is offered the same."""
    offered = {role: _offered(world.user(role)) for role in ROLES}
    assert "add_risk" in offered["lead"] and "add_risk" in offered["editor"]
    assert "add_risk" not in offered["pmo"] and "add_risk" not in offered["site_admin"]
    assert "decide_gate_review" in offered["sponsor"]
    # DELTA's sponsor, who does not browse DELTA: its sponsor's writes are not theirs.
    assert "decide_gate_review" not in offered["viewer"]
    assert "decide_gate_review" not in offered["lead"]


def test_each_combination_of_roles_answers_for_its_own_projects(db):
    """A person who leads many projects, sponsors one of them that is not the first, is the
    nominated editor of another and only browses two more: each write offered as the rule
    offers it, and the sponsor's writes only once they sponsor one."""
    person = UserFactory(username="many")
    scripting.ensure_group(EVERYONE, members=["many"])
    set_governance_group(EVERYONE)
    for n in range(5):
        ProjectFactory(key=f"P{n}", lead=person)
    ProjectFactory(key="P5", browsers=[person])
    nominate(ProjectFactory(key="P6", browsers=[person]), person)
    ProjectFactory(key="P7", browsers=[person])
    assert "decide_gate_review" not in _offered(person)
    assert "add_risk" in _offered(person)
    sponsored = Project.objects.get(key="P3")
    sponsored.sponsor_account_id = person.account_id
    sponsored.save(update_fields=["sponsor_account_id"])
    assert "decide_gate_review" in _offered(person)
    assert _offered(person) == _offered_the_long_way(person)
    # The first project of each combination: led (P0), led and sponsored (P3), none (P5),
    # nominated (P6).
    request = catalogue.request_for(person)
    assert [p.key for p, _ in gatelist.role_callers(request)] == ["P0", "P3", "P5", "P6"]


def test_a_person_who_views_nothing_is_offered_no_write(db):
    person = UserFactory(username="nobody")
    scripting.ensure_group(EVERYONE, members=["nobody"])
    set_governance_group(EVERYONE)
    ProjectFactory(key="HIDDEN")
    assert _offered(person) == set() == _offered_the_long_way(person)
    assert gatelist.role_callers(catalogue.request_for(person)) == []


COMBINATIONS = [(), ("lead",), ("nominated",), ("sponsor",), ("lead", "sponsor")]


def _project(key, person, roles, **fields):
    project = ProjectFactory(
        key=key, **({"lead": person} if "lead" in roles else {"browsers": [person]})
    )
    if "nominated" in roles:
        nominate(project, person)
    if "sponsor" in roles:
        project.sponsor_account_id = person.account_id
    for name, value in fields.items():
        setattr(project, name, value)
    project.save()
    return project


def test_every_offer_reads_only_the_roles_and_the_person(db):
    """What lets the first project of a combination of roles answer for all of it: each
    write's offer answers the same on projects where the person has the same lead, editor
    and sponsor roles and that differ in all else they meet there (a steering seat, the BAU
    owner's seat, frozen registers)."""
    person = UserFactory(username="person")
    request = catalogue.request_for(person)
    for n, roles in enumerate(COMBINATIONS):
        projects = [
            _project(f"PLAIN{n}", person, roles),
            _project(
                f"SEATED{n}",
                person,
                roles,
                steering_account_ids=[person.account_id],
                bau_owner_account_id=person.account_id,
            ),
            _project(f"FROZEN{n}", person, roles, approval_status="Closed"),
        ]
        callers = [permissions.caller_for(person, p, request=request) for p in projects]
        assert all(c.can_view for c in callers)
        assert {(c.is_lead, c.is_nominated_editor, c.is_sponsor) for c in callers} == {
            ("lead" in roles, "nominated" in roles, "sponsor" in roles)
        }
        assert callers[2].registers_frozen and callers[1].is_steering_member
        for action in catalogue.CATALOGUE.values():
            if action.offered_to is not None:
                assert len({action.offered_to(c) for c in callers}) == 1, (roles, action.name)


def _queries(user):
    with CaptureQueriesContext(connection) as captured:
        catalogue.available(catalogue.request_for(user))
    return len(captured)


def test_the_offers_are_read_in_the_same_queries_at_3_and_40_projects(db):
    """Whatever the number of projects the person views, leads or sponsors."""
    person = UserFactory(username="reader")
    scripting.ensure_group(EVERYONE, members=["reader"])
    set_governance_group(EVERYONE)

    def add(start, stop):
        for n in range(start, stop):
            ProjectFactory(key=f"A{n:02}", browsers=[person])
            ProjectFactory(key=f"L{n:02}", lead=person)
            sponsored = ProjectFactory(key=f"S{n:02}", browsers=[person])
            sponsored.sponsor_account_id = person.account_id
            sponsored.save(update_fields=["sponsor_account_id"])

    add(0, 3)
    few = _queries(person)
    # One caller each for the projects they only browse, lead and sponsor.
    assert len(gatelist.role_callers(catalogue.request_for(person))) == 3
    add(3, 40)
    assert _queries(person) == few
    assert len(gatelist.role_callers(catalogue.request_for(person))) == 3
