"""The summaries stored per reader (`governance.summaries`, docs/decisions/0308): the portfolio's
summary and choices and the project list's counts, read again after every write a PMO meets
(a status, a new project, a grant given or taken, a nomination, an exception, the site's
themes, the tracker's lead, the governance group, a row expiring), each reader's own, and
never stored from a read that a write overtook."""

import datetime as dt

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from governance import summaries
from governance.models import (
    EditorNomination,
    Project,
    SiteSettings,
    StoredSummary,
    SummaryRevision,
    summaries_changed,
)
from governance.tracker.local.models import LocalAccount, LocalBrowseGrant, LocalProject
from status.models import ProjectHealth, ProjectStatus
from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import UserFactory, nominate
from tests.portfolio.test_portfolio import make_project


@pytest.fixture
def pmo_world(cast):
    """The site administrator browses ALPHA (the cast's) and three projects of their own."""
    admin = cast.site_admin
    make_project("RED", browsers=[admin], theme="Cost Out", overall="Red")
    make_project("AMB", browsers=[admin], theme="Strategic", overall="Amber")
    make_project("GRN", browsers=[admin], overall="Green")
    return cast


def _page(client, url="/portfolio/"):
    response = client.get(url)
    assert response.status_code == 200
    return response.context["data"]


def _overall(client):
    return {cell["rag"]: cell["count"] for cell in _page(client).heat[0]["cells"]}


def _list(client):
    response = client.get("/")
    assert response.status_code == 200
    return response.context["total"], response.context["mine_count"]


def test_a_second_read_answers_from_the_stored_summary(pmo_world, client_for):
    client = client_for(pmo_world.site_admin)
    first = _page(client)
    with CaptureQueriesContext(connection) as queries:
        again = _page(client)
    assert (again.total, again.summary, again.heat) == (first.total, first.summary, first.heat)
    assert (again.themes, again.leads, again.bubbles) == (first.themes, first.leads, first.bubbles)
    counted = [q["sql"] for q in queries if 'COUNT("status_projecthealth"' in q["sql"]]
    assert counted == []  # no aggregate over the rows: the stored summary answered
    assert StoredSummary.objects.filter(user=pmo_world.site_admin, name="portfolio").exists()


def test_a_status_changed_shows_at_once(pmo_world, client_for):
    client = client_for(pmo_world.site_admin)
    assert _overall(client)["Red"] == 1
    status = ProjectStatus.objects.get(project__key="GRN")
    status.overall_rag = "Red"
    status.save()  # the status app rewrites the project's stored row: its write raises it
    assert _overall(client)["Red"] == 2


def test_a_new_project_and_a_grant_given_or_taken_show_at_once(pmo_world, client_for):
    admin = pmo_world.site_admin
    client = client_for(admin)
    assert _page(client).total == 4 and _list(client)[0] == 4
    make_project("NEW", browsers=[admin])
    assert _page(client).total == 5 and _list(client)[0] == 5
    account = LocalAccount.objects.get(account_id=admin.account_id)
    LocalProject.objects.get(key="NEW").browsers.remove(account)  # through the relation
    assert _page(client).total == 4 and _list(client)[0] == 4
    LocalProject.objects.get(key="NEW").browsers.add(account)
    assert _page(client).total == 5 and _list(client)[0] == 5
    LocalBrowseGrant.objects.filter(project__key="RED", account=account).delete()
    assert _page(client).total == 4 and _list(client)[0] == 4


def test_a_deleted_project_leaves_the_summary(pmo_world, client_for):
    client = client_for(pmo_world.site_admin)
    assert _page(client).total == 4
    Project.objects.filter(key="AMB").delete()
    assert _page(client).total == 3


def test_a_nomination_and_the_tracker_s_lead_change_the_count_of_mine(pmo_world, client_for):
    viewer = pmo_world.viewer
    client = client_for(viewer)
    assert _list(client) == (1, 0)
    nominate(pmo_world.project, viewer)
    assert _list(client) == (1, 1)
    EditorNomination.objects.filter(account_id=viewer.account_id).delete()
    assert _list(client) == (1, 0)
    tracked = LocalProject.objects.get(key=pmo_world.project.key)
    tracked.lead = LocalAccount.objects.get(account_id=viewer.account_id)
    tracked.save()  # the tracker's lead of the moment, before the mirror follows
    assert _list(client) == (1, 1)


def test_an_exception_written_past_the_model_shows_at_once(pmo_world, client_for):
    client = client_for(pmo_world.site_admin)
    assert _page(client).summary["inException"] == 0
    Project.objects.filter(key="RED").update(exception_opened_at=timezone.now())
    assert _page(client).summary["inException"] == 1


def test_the_site_s_themes_show_at_once(pmo_world, client_for):
    client = client_for(pmo_world.site_admin)
    assert {"name": "Strategic", "disabled": False} in _page(client).themes
    site = SiteSettings.load()
    site.themes = [{"name": t["name"], "enabled": t["name"] != "Strategic"} for t in site.themes]
    site.save()
    assert {"name": "Strategic", "disabled": True} in _page(client).themes


def test_a_governance_group_set_changes_who_sees_what(pmo_world, client_for):
    admin, pmo = client_for(pmo_world.site_admin), client_for(pmo_world.pmo)
    assert _list(admin)[0] == 4 and _list(pmo)[0] == 1
    set_governance_group(PMO_GROUP)  # the administrator is not a member, nor on a committee
    assert _list(admin)[0] == 0
    assert _page(pmo).total == 1 and _list(pmo)[0] == 1


def test_each_reader_reads_their_own(pmo_world, client_for):
    second = UserFactory(username="second_admin", admin=True)
    LocalProject.objects.get(key="RED").browsers.add(
        LocalAccount.objects.get(account_id=second.account_id)
    )
    admin, other = client_for(pmo_world.site_admin), client_for(second)
    assert _page(admin).total == 4 and _list(admin)[0] == 4
    assert _page(other).total == 1 and _list(other)[0] == 1
    assert _page(admin).total == 4 and _list(admin)[0] == 4
    assert _list(client_for(pmo_world.viewer)) == (1, 0)
    assert _list(client_for(UserFactory(username="nobody_here"))) == (0, 0)


def test_a_row_that_expires_is_derived_again(pmo_world, client_for, monkeypatch):
    client = client_for(pmo_world.site_admin)
    assert _page(client).total == 4
    soonest = ProjectHealth.objects.order_by("valid_until").values_list("valid_until", flat=True)[0]
    later = soonest + dt.timedelta(minutes=1)
    monkeypatch.setattr(timezone, "now", lambda: later)
    assert _page(client).total == 4
    assert ProjectHealth.objects.filter(valid_until__gt=later).count() == 4  # derived again
    stored = StoredSummary.objects.get(user=pmo_world.site_admin, name="portfolio")
    assert stored.valid_until is None or stored.valid_until > later


def test_the_revision_moves_with_the_writer_s_transaction(db):
    summaries_changed()  # the row, even after a test that emptied every table
    before = SummaryRevision.objects.get(pk=1).stamp
    with pytest.raises(RuntimeError), transaction.atomic():
        summaries_changed()
        assert SummaryRevision.objects.get(pk=1).stamp != before
        raise RuntimeError("rolled back")
    assert SummaryRevision.objects.get(pk=1).stamp == before


def test_a_read_a_write_overtook_is_read_again_and_only_then_stored(pmo_world, rf):
    request = rf.get("/")
    request.user = pmo_world.site_admin
    calls = []

    def compute():
        calls.append(1)
        if len(calls) == 1:
            summaries_changed()  # a write lands while the first read is under way
        return {"n": len(calls)}, None

    assert summaries.read(request, "test", compute) == {"n": 2}
    assert summaries.read(request, "test", compute) == {"n": 2}  # stored: not computed again
    assert len(calls) == 2

    def always_overtaken():
        summaries_changed()
        return {"n": 0}, None

    assert summaries.read(request, "other", always_overtaken) == {"n": 0}
    assert not StoredSummary.objects.filter(name="other").exists()  # answered, never stored


def test_the_value_reads_back_as_the_first_answer_gave_it(pmo_world, rf):
    request = rf.get("/")
    request.user = pmo_world.site_admin
    value = {"b": (1, 2), "a": {"z": 1, "y": 2}, 3: "three"}
    first = summaries.read(request, "shape", lambda: (value, None))
    again = summaries.read(request, "shape", lambda: ({}, None))
    assert first == again == {"b": [1, 2], "a": {"z": 1, "y": 2}, "3": "three"}
    assert list(again["a"]) == ["z", "y"]  # keys in the order written


def test_the_periodic_refresh_s_rows_show_at_once(pmo_world, client_for):
    """The periodic job rewrites rows with no write of a fact before it (a figure the clock
    moved): its own write of the rows raises the revision."""
    from status import health

    client = client_for(pmo_world.site_admin)
    assert _overall(client)["Red"] == 1
    # A fact changed past every signal, then the row derived again as the periodic job does.
    ProjectStatus.objects.filter(project__key="GRN").update(overall_rag="Red")
    health.refresh([Project.objects.get(key="GRN").pk])
    assert _overall(client)["Red"] == 2


def test_the_investment_ranks_follow_a_score(cast, rf):
    """The rank column's ranks are kept for the reader; a score written reads them again."""
    from investment import columns, services
    from tests.investment.conftest import caller, criterion, govern, make_project, proposal

    governed = govern(cast)
    services.model_version_create(
        user=governed.site_admin,
        data={"why": "People", "criteria": [criterion("strategy", weight=1)]},
    )
    made = [make_project(key, governed, sponsor=governed.sponsor) for key in ("AAA", "BBB")]
    for project in made:
        proposal(project)
    request = rf.get("/portfolio/")
    request.user = governed.pmo

    def ranks():
        found = columns.values(request, [p.pk for p in made])
        return [found[p.pk]["rank"] for p in made]

    assert ranks() == [1, 2]  # both unscored: by key
    services.score_set(
        caller=caller(governed.pmo, made[1]),
        data={"criterion": "strategy", "value": 5, "reason": "r"},
    )
    assert ranks() == [2, 1]


def test_money_reads_back_to_the_cent(pmo_world, rf):
    """An amount a float cannot hold (9999999999999999.99) is stored and read back with its
    digits, as the API writes it (`cleaning.Money`)."""
    from decimal import Decimal

    from governance.cleaning import Money, decimal_to_json, json_text

    request = rf.get("/")
    request.user = pmo_world.site_admin
    value = {"big": decimal_to_json(Decimal("9999999999999999.99")), "cpi": 0.89, "n": 3}
    assert isinstance(value["big"], Money)
    for _ in range(2):  # computed, then read back
        found = summaries.read(request, "money", lambda: (value, None))
        assert json_text(found) == '{"big": 9999999999999999.99, "cpi": 0.89, "n": 3}'
        assert isinstance(found["big"], Money) and type(found["cpi"]) is float


def test_health_rows_deleted_in_bulk_are_derived_again(pmo_world, client_for):
    client = client_for(pmo_world.site_admin)
    assert _page(client).total == 4
    assert not hasattr(ProjectHealth.objects, "delete")  # as Django's: on a queryset only
    ProjectHealth.objects.all().delete()  # one raise of the revision, Django's fast delete kept
    assert _page(client).total == 4
    assert ProjectHealth.objects.count() >= 4
