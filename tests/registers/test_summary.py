"""The register summary (registers.summary): every change of a project's registers stores it
at the revision the change raised, equal to what the rows give now; the pages answer from it
only while that revision is the project's, draw the same page from it as from the rows, and
never write it."""

import datetime as dt
import re
from decimal import Decimal

import pytest
from django.db import transaction
from django.test.utils import CaptureQueriesContext

from governance import permissions, signals
from governance.models import Project
from registers import services, summary
from registers.models import RegisterSummary, WorkPackage
from registers.revision import bump_registers_revision
from tests.factories import ChangeRequestFactory, DecisionFactory, RiskFactory, WorkPackageFactory

pytestmark = pytest.mark.django_db

PAGE = "/projects/ALPHA/registers/work-packages/"


def _fresh(cast) -> Project:
    return Project.objects.get(pk=cast.project.pk)


def _caller(cast):
    return permissions.caller_for(cast.lead, _fresh(cast), can_browse=True)


def _same(stored, live) -> None:
    assert stored.counts == live.counts
    assert {slug: sorted(ids) for slug, ids in stored.owners.items()} == {
        slug: sorted(ids) for slug, ids in live.owners.items()
    }
    assert stored.money == live.money
    assert stored.budget == live.budget


def _current(cast):
    found = summary.current(_fresh(cast))
    assert found is not None, "the last change stored the summary at its revision"
    _same(found, summary.live(cast.project.pk))
    return found


def _packages(cast):
    owner = cast.lead.account_id
    WorkPackageFactory(
        project=cast.project,
        name="Phased",
        owner_account_id=owner,
        budget=Decimal("1200.50"),
        budget_forecast=Decimal("1300"),
        budget_actual=Decimal("10.25"),
        budget_phasing=[{"period": "2026-01", "amount": 600}, {"period": "2026-02", "amount": 600}],
        planned_start_date=dt.date(2026, 1, 5),
        planned_end_date=dt.date(2026, 2, 20),
    )
    WorkPackageFactory(
        project=cast.project,
        name="Even",
        budget=Decimal("99.99"),
        budget_forecast=None,
        budget_actual=None,
        planned_start_date=dt.date(2026, 3, 1),
        planned_end_date=dt.date(2026, 5, 31),
    )
    return WorkPackageFactory(
        project=cast.project, name="Bare", budget=None, planned_start_date=None
    )


def test_every_kind_of_change_stores_the_summary_the_rows_give(cast):
    bare = _packages(cast)
    found = _current(cast)
    assert found.counts["work-packages"] == 3
    assert found.money["budget"] == Decimal("1300.49")
    assert found.money["actual"] == Decimal("10.25")
    assert [group.budget_phasing is not None for group in found.budget][:1] == [True]
    caller = _caller(cast)
    services.work_package_update(caller=caller, wp_id=bare.pk, data={"budget": "5"})
    assert _current(cast).money["budget"] == Decimal("1305.49")
    RiskFactory(project=cast.project, owner_account_id=cast.sponsor.account_id)
    DecisionFactory(project=cast.project)
    ChangeRequestFactory(project=cast.project)
    assert _current(cast).owners["risks"] == [cast.sponsor.account_id]
    services.work_package_delete(caller=_caller(cast), wp_id=bare.pk, expected_revision=None)
    found = _current(cast)
    assert found.counts == {"work-packages": 2, "risks": 1, "decisions": 1, "changes": 1}
    # A batch (an import, a bulk edit) stores it once, when the batch ends.
    with transaction.atomic(), signals.deferred_project_changes():
        WorkPackageFactory(project=cast.project, name="In a batch", budget=Decimal("1"))
        WorkPackageFactory(project=cast.project, name="In a batch too", budget=Decimal("2"))
    assert _current(cast).counts["work-packages"] == 4


def test_a_revision_raised_another_way_is_not_answered_from_it(cast, client_for):
    _packages(cast)
    assert summary.current(_fresh(cast)) is not None
    Project.objects.filter(pk=cast.project.pk).update(registers_revision=12345)
    assert summary.current(_fresh(cast)) is None
    # A write that bypasses the models and announces nothing: the page reads the rows.
    WorkPackage.objects.filter(project=cast.project, name="Bare").update(budget=Decimal("7"))
    page = client_for(cast.lead).get(PAGE).content.decode()
    assert "1,307.49" in page


def test_an_announcement_of_many_projects_raises_their_revisions_and_drops_theirs(
    cast, monkeypatch
):
    _packages(cast)
    read_before = _fresh(cast)
    monkeypatch.setattr(summary, "LIMIT", 0)
    bump_registers_revision(project_ids=[cast.project.pk])
    project = _fresh(cast)
    assert project.registers_revision != read_before.registers_revision
    assert summary.current(project) is None
    # A request that read the project before the change finds none at the old revision.
    assert summary.current(read_before) is None
    assert not RegisterSummary.objects.exists()


def _scrub(html: str) -> str:
    html = re.sub(r'nonce="[^"]+"', "", html)
    return re.sub(r"\b[A-Za-z0-9]{64}\b", "<csrf>", html)


@pytest.mark.parametrize("who", ["lead", "viewer"])
def test_the_page_is_the_same_from_the_summary_as_from_the_rows(cast, client_for, who):
    _packages(cast)
    RiskFactory(project=cast.project, owner_account_id=cast.sponsor.account_id)
    client = client_for(getattr(cast, who))
    client.get(PAGE)  # the session's first request reads its user
    with CaptureQueriesContext(transaction.get_connection()) as stored:
        from_summary = client.get(PAGE).content.decode()
    assert RegisterSummary.objects.count() == 1
    Project.objects.filter(pk=cast.project.pk).update(registers_revision=12345)
    with CaptureQueriesContext(transaction.get_connection()) as live:
        from_rows = client.get(PAGE).content.decode()
    assert _scrub(from_summary) == _scrub(from_rows)
    assert "Budget by month" in from_rows and "1,300.49" in from_rows
    # From the rows: the summary not found, then the counts, the owners, the sums and the
    # curve's groups; from the summary: the one row.
    assert len(live.captured_queries) - len(stored.captured_queries) == 4
    # Reading never writes it.
    assert RegisterSummary.objects.get().revision != 12345
    for query in live.captured_queries:
        assert "registers_registersummary" not in query["sql"] or query["sql"].startswith("SELECT")


def test_a_project_deleted_takes_its_summary(cast):
    _packages(cast)
    assert RegisterSummary.objects.filter(project_id=cast.project.pk).exists()
    Project.objects.filter(pk=cast.project.pk).delete()
    assert not RegisterSummary.objects.exists()


def test_a_summary_read_before_a_register_existed_is_not_answered_from(cast):
    _packages(cast)
    stored = RegisterSummary.objects.get(project_id=cast.project.pk)
    del stored.counts["changes"]
    stored.save(update_fields=["counts"])
    assert summary.current(_fresh(cast)) is None


def test_the_owners_of_every_register_read_at_once_are_each_registers_own(cast):
    from registers import paging
    from registers.models import REGISTER_MODELS

    _packages(cast)
    RiskFactory(project=cast.project, owner_account_id=cast.sponsor.account_id)
    RiskFactory(project=cast.project, owner_account_id="")
    DecisionFactory(project=cast.project, made_by_account_id=cast.editor.account_id)
    ChangeRequestFactory(project=cast.project, proposer_account_id=cast.lead.account_id)
    scopes = {
        slug: model.objects.filter(project=cast.project) for slug, model in REGISTER_MODELS.items()
    }
    together = paging.owners_by_register(scopes)
    assert {slug: sorted(ids) for slug, ids in together.items()} == {
        slug: sorted(paging.owner_ids(slug, scope)) for slug, scope in scopes.items()
    }
    assert together["risks"] == [cast.sponsor.account_id]
    assert together["changes"] == [cast.lead.account_id]


def test_a_page_drawn_after_a_write_in_the_same_request_answers_from_its_summary(cast):
    """A reorder or a bulk edit draws the table again with the project as the request's gate
    read it, before the write raised the revision: the summary the write stored is current."""
    _packages(cast)
    read_before = _fresh(cast)
    services.risk_create(caller=_caller(cast), data={"title": "After the gate read"})
    assert _fresh(cast).registers_revision != read_before.registers_revision
    found = summary.current(read_before)
    assert found is not None and found.counts["risks"] == 1
