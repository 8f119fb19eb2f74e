"""Work packages through their services: every rule of the spec's table, roles, freeze,
stale writes, ordering, issue links and the 'Work Package' write-back."""

import datetime as dt
import uuid
from decimal import Decimal

import pytest
from django.utils import timezone

from governance import outbox
from governance.errors import Forbidden, Frozen, NotFound, Stale, ValidationFailed
from governance.models import AuditEntry, OutboundTask
from governance.permissions import caller_for
from governance.tracker import TrackerError
from governance.tracker.local import scripting
from governance.tracker.local.backend import LocalTracker
from governance.tracker.local.models import LocalIssue
from registers import selectors
from registers.models import WorkPackage
from registers.services import (
    work_package_create,
    work_package_delete,
    work_package_link_issue,
    work_package_move,
    work_package_reorder,
    work_package_unlink_issue,
    work_package_update,
)
from tests.factories import ProjectFactory, WorkPackageFactory


def lead(cast):
    return caller_for(cast.lead, cast.project)


def create(cast, **data):
    return work_package_create(caller=lead(cast), data={"name": "Build", **data})


def update(cast, wp, **data):
    return work_package_update(caller=lead(cast), wp_id=wp.pk, data=data)


def refused(excinfo):
    return set(excinfo.value.fields)


@pytest.fixture
def issues(cast):
    for n in range(1, 6):
        scripting.ensure_issue(f"ALPHA-{n}", summary=f"Epic {n}")
    scripting.ensure_issue("OTHER-1", summary="Not ours")


def test_defaults_and_audit(cast):
    wp = create(cast, name="  Discovery  ")
    assert (wp.name, wp.status, wp.rag, wp.progress) == ("Discovery", "Not Started", "None", None)
    assert wp.updated_by_account_id == cast.lead.account_id and wp.revision == 1
    entry = AuditEntry.objects.get(kind="work_package.created")
    assert entry.target_id == str(wp.pk) and entry.changes["name"]["after"] == "Discovery"


def test_client_may_choose_the_id(cast):
    chosen = uuid.uuid4()
    assert create(cast, id=str(chosen)).pk == chosen
    with pytest.raises(ValidationFailed) as excinfo:
        create(cast, name="Other", id=str(chosen))
    assert refused(excinfo) == {"id"}
    with pytest.raises(ValidationFailed) as excinfo:
        create(cast, name="Other", id="nope")
    assert refused(excinfo) == {"id"}


def test_name_required_capped_and_unique_per_project_ignoring_case(cast):
    create(cast, name="Build")
    for name, message in (("", "required"), ("x" * 201, "At most 200"), ("BUILD", "called")):
        with pytest.raises(ValidationFailed) as excinfo:
            create(cast, name=name)
        assert message in excinfo.value.fields["name"][0]
    other = ProjectFactory(lead=cast.lead)
    work_package_create(caller=caller_for(cast.lead, other), data={"name": "Build"})


def test_every_bad_field_is_named_and_nothing_is_saved(cast):
    with pytest.raises(ValidationFailed) as excinfo:
        create(
            cast,
            type="t" * 201,
            commentary="c" * 2001,
            ownerAccountId="nobody",
            plannedStartDate="2026-13-01",
            status="Done",
            rag="Purple",
            progress=55,
            budgetPhasing="monthly",
            linkedIssueKeys="ALPHA-1",
            sortOrder="first",
            colour="blue",
        )
    assert refused(excinfo) == {
        "type",
        "commentary",
        "ownerAccountId",
        "plannedStartDate",
        "status",
        "rag",
        "progress",
        "budgetPhasing",
        "linkedIssueKeys",
        "sortOrder",
        "colour",
    }
    assert not WorkPackage.objects.exists() and not AuditEntry.objects.exists()


@pytest.mark.parametrize(
    ("status", "progress", "ok"),
    [
        ("Not Started", None, True),
        ("Not Started", 0, True),
        ("Not Started", 10, False),
        ("In Progress", 10, True),
        ("In Progress", 90, True),
        ("In Progress", 0, False),
        ("In Progress", 100, False),
        ("In Progress", None, False),
        ("Blocked", 50, True),
        ("Blocked", None, False),
        ("Complete", 100, True),
        ("Complete", 90, False),
        ("Complete", None, False),
    ],
)
def test_progress_must_agree_with_status(cast, status, progress, ok):
    if ok:
        assert create(cast, status=status, progress=progress).progress == progress
    else:
        with pytest.raises(ValidationFailed) as excinfo:
            create(cast, status=status, progress=progress)
        assert refused(excinfo) == {"progress"}


@pytest.mark.parametrize("progress", [15, 101, -10, 50.5, "half"])
def test_progress_off_step_or_out_of_range_is_refused_never_rounded(cast, progress):
    with pytest.raises(ValidationFailed) as excinfo:
        create(cast, status="In Progress", progress=progress)
    assert refused(excinfo) == {"progress"}


def test_status_change_is_checked_against_the_stored_progress(cast):
    wp = create(cast, status="In Progress", progress=50)
    with pytest.raises(ValidationFailed) as excinfo:
        update(cast, wp, status="Complete")
    assert "progress 100" in excinfo.value.fields["progress"][0]
    assert update(cast, wp, status="Complete", progress=100).status == "Complete"


def test_nullable_numbers_become_null_when_empty_negative_or_non_numeric(cast):
    wp = create(cast, budget="", budgetForecast=-5, budgetActual="abc")
    assert (wp.budget, wp.budget_forecast, wp.budget_actual) == (None, None, None)
    wp = update(cast, wp, budget="1,250.50", budgetForecast=1300, budgetActual="0")
    assert (wp.budget, wp.budget_forecast, wp.budget_actual) == (
        Decimal("1250.50"),
        Decimal("1300.00"),
        Decimal("0.00"),
    )
    # More decimal places than the column keeps: rounded half-even, as the document's
    # nullable number (no longer refused; the API says so in `warnings`).
    wp = update(cast, wp, budget="10.555")
    assert wp.budget == Decimal("10.56")
    with pytest.raises(ValidationFailed) as excinfo:
        update(cast, wp, budget=10**16)
    assert refused(excinfo) == {"budget"}


def test_budget_phasing_one_bad_entry_refuses_the_array_naming_it(cast):
    wp = create(cast, budgetPhasing=[{"period": "2026-01", "amount": 100}])
    with pytest.raises(ValidationFailed) as excinfo:
        update(
            cast,
            wp,
            budgetPhasing=[
                {"period": "2026-02", "amount": 100},
                {"period": "2026-13", "amount": 5},
                {"period": "2026-04", "amount": "lots"},
                {"period": "2026-02", "amount": 1},
                "2026-05",
                {"period": "2026-06", "amount": 1, "note": "x"},
                {"period": "2026-07"},
                {"period": "2026-08", "amount": -1},
            ],
        )
    assert refused(excinfo) == {
        "budgetPhasing[1].period",
        "budgetPhasing[2].amount",
        "budgetPhasing[3].period",
        "budgetPhasing[4]",
        "budgetPhasing[5].note",
        "budgetPhasing[6].amount",
        "budgetPhasing[7].amount",
    }
    wp.refresh_from_db()
    assert wp.budget_phasing == [{"period": "2026-01", "amount": 100}]
    assert update(cast, wp, budgetPhasing=None).budget_phasing is None


def test_budget_baseline_and_lock_stamps_are_kept_whatever_the_client_sends(cast):
    stamp = dt.datetime(2025, 3, 1, tzinfo=dt.UTC)
    wp = WorkPackageFactory(
        project=cast.project,
        budget_baseline=Decimal("900"),
        budget_baseline_locked_at=stamp,
        planned_dates_baseline_locked_at=stamp,
    )
    update(
        cast,
        wp,
        budget=1200,
        budgetBaseline=5,
        budgetBaselineLockedAt=None,
        plannedDatesBaselineLockedAt="2026-01-01T00:00:00Z",
    )
    wp.refresh_from_db()
    assert wp.budget == Decimal("1200") and wp.budget_baseline == Decimal("900")
    assert wp.budget_baseline_locked_at == stamp == wp.planned_dates_baseline_locked_at
    fresh = create(cast, name="New", budgetBaseline=77, budgetBaselineLockedAt=stamp.isoformat())
    assert fresh.budget_baseline is None and fresh.budget_baseline_locked_at is None


def test_actual_end_mirrors_actual_end_date(cast):
    wp = create(cast, actualEnd="2026-03-01")
    assert wp.actual_end_date == dt.date(2026, 3, 1)
    # A read-modify-write round trip: the edited one of the two wins.
    wp = update(cast, wp, actualEndDate="2026-03-05", actualEnd="2026-03-01")
    assert wp.actual_end_date == dt.date(2026, 3, 5)
    wp = update(cast, wp, actualEndDate="2026-03-05", actualEnd="2026-03-09")
    assert wp.actual_end_date == dt.date(2026, 3, 9)
    with pytest.raises(ValidationFailed) as excinfo:
        update(cast, wp, actualEndDate="2026-04-01", actualEnd="2026-04-02")
    assert refused(excinfo) == {"actualEnd"}


def test_start_not_after_end_within_each_pair(cast):
    with pytest.raises(ValidationFailed) as excinfo:
        create(
            cast,
            plannedStartDate="2026-05-01",
            plannedEndDate="2026-04-30",
            actualStartDate="2026-05-01",
            actualEndDate="2026-04-01",
            forecastStartDate="2026-05-01",
            forecastEndDate="2026-01-01",
        )
    assert refused(excinfo) == {"plannedEndDate", "actualEndDate", "forecastEndDate"}
    wp = create(cast, plannedStartDate="2026-05-01", plannedEndDate="2026-05-01")
    with pytest.raises(ValidationFailed) as excinfo:
        update(cast, wp, plannedStartDate="2026-06-01")
    assert refused(excinfo) == {"plannedEndDate"}


def test_linked_issue_keys_upper_cased_deduplicated_and_checked(cast, issues):
    wp = create(cast, linkedIssueKeys=[" alpha-1", "ALPHA-2", "Alpha-1"])
    assert wp.linked_issue_keys == ["ALPHA-1", "ALPHA-2"]
    with pytest.raises(ValidationFailed) as excinfo:
        create(
            cast,
            name="Other",
            linkedIssueKeys=["ALPHA-99", "OTHER-1", "nonsense", "ALPHA-2", 7],
        )
    assert excinfo.value.fields == {
        "linkedIssueKeys[0]": ["The tracker has no issue ALPHA-99."],
        "linkedIssueKeys[1]": ["OTHER-1 is not an issue of project ALPHA."],
        "linkedIssueKeys[2]": ["Must be an issue key such as ABC-12."],
        "linkedIssueKeys[3]": ["ALPHA-2 is already linked to the work package 'Build'."],
        "linkedIssueKeys[4]": ["Must be an issue key such as ABC-12."],
    }


def test_linking_writes_the_reference_back_after_commit(
    cast, issues, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        wp = create(cast, linkedIssueKeys=["ALPHA-1"])
    assert LocalIssue.objects.get(key="ALPHA-1").work_package == "Build"
    with django_capture_on_commit_callbacks(execute=True):
        work_package_link_issue(caller=lead(cast), wp_id=wp.pk, issue_key="alpha-2")
    assert LocalIssue.objects.get(key="ALPHA-2").work_package == "Build"
    with django_capture_on_commit_callbacks(execute=True):
        update(cast, wp, name="Build phase")
    assert set(
        LocalIssue.objects.filter(key__in=["ALPHA-1", "ALPHA-2"]).values_list(
            "work_package", flat=True
        )
    ) == {"Build phase"}
    with django_capture_on_commit_callbacks(execute=True):
        work_package_unlink_issue(caller=lead(cast), wp_id=wp.pk, issue_key="ALPHA-1")
    assert LocalIssue.objects.get(key="ALPHA-1").work_package is None
    with django_capture_on_commit_callbacks(execute=True):
        update(cast, wp, linkedIssueKeys=["ALPHA-3"])
    assert LocalIssue.objects.get(key="ALPHA-2").work_package is None
    assert LocalIssue.objects.get(key="ALPHA-3").work_package == "Build phase"
    with django_capture_on_commit_callbacks(execute=True):
        work_package_delete(caller=lead(cast), wp_id=wp.pk)
    assert LocalIssue.objects.get(key="ALPHA-3").work_package is None
    assert set(OutboundTask.objects.values_list("state", flat=True)) == {"done"}


def test_tracker_failure_never_loses_or_blocks_the_register_write(
    cast, issues, monkeypatch, django_capture_on_commit_callbacks
):
    def down(self, issue_key, value):
        raise TrackerError("tracker unavailable")

    monkeypatch.setattr(LocalTracker, "set_work_package_field", down)
    with django_capture_on_commit_callbacks(execute=True):
        wp = create(cast, linkedIssueKeys=["ALPHA-1"])
    assert WorkPackage.objects.get(pk=wp.pk).linked_issue_keys == ["ALPHA-1"]
    task = OutboundTask.objects.get()
    assert task.state == "pending" and "tracker unavailable" in task.last_error
    assert task.payload == {"projectId": cast.project.pk, "issueKey": "ALPHA-1"}
    # The worker's retry, once the tracker is back, writes the current name.
    monkeypatch.undo()
    update(cast, wp, name="Renamed meanwhile")
    OutboundTask.objects.filter(pk=task.pk).update(run_after=timezone.now())
    assert outbox.run_task(task.pk) is True
    assert LocalIssue.objects.get(key="ALPHA-1").work_package == "Renamed meanwhile"


def test_link_act_checks_the_key_and_is_idempotent(cast, issues):
    wp = create(cast)
    with pytest.raises(ValidationFailed) as excinfo:
        work_package_link_issue(caller=lead(cast), wp_id=wp.pk, issue_key="ALPHA-99")
    assert refused(excinfo) == {"issueKey"}
    work_package_link_issue(caller=lead(cast), wp_id=wp.pk, issue_key="ALPHA-1")
    again = work_package_link_issue(caller=lead(cast), wp_id=wp.pk, issue_key="alpha-1")
    assert again.linked_issue_keys == ["ALPHA-1"] and again.revision == 2
    with pytest.raises(NotFound):
        work_package_unlink_issue(caller=lead(cast), wp_id=wp.pk, issue_key="ALPHA-2")
    with pytest.raises(Stale):
        work_package_link_issue(
            caller=lead(cast), wp_id=wp.pk, issue_key="ALPHA-2", expected_revision=1
        )


def test_register_order_is_sort_order_then_date_then_name(cast):
    project = cast.project
    late = WorkPackageFactory(
        project=project, name="b late", planned_start_date=dt.date(2026, 5, 1)
    )
    early = WorkPackageFactory(
        project=project, name="z early", planned_start_date=dt.date(2026, 1, 1)
    )
    undated = WorkPackageFactory(project=project, name="a undated", planned_start_date=None)
    same_day = WorkPackageFactory(
        project=project, name="A same", planned_start_date=dt.date(2026, 5, 1)
    )
    pinned = WorkPackageFactory(project=project, name="pinned", sort_order=1)
    names = [wp.name for wp in selectors.work_packages(project)]
    assert names == [pinned.name, early.name, same_day.name, late.name, undated.name]


def test_reorder_needs_every_package_once_and_bumps_moved_revisions(cast):
    a, b, c = (create(cast, name=name) for name in ("A", "B", "C"))
    with pytest.raises(ValidationFailed) as excinfo:
        work_package_reorder(caller=lead(cast), ids=[str(c.pk), str(c.pk), "nope"])
    assert refused(excinfo) == {"ids[1]", "ids[2]"}
    with pytest.raises(ValidationFailed) as excinfo:
        work_package_reorder(caller=lead(cast), ids=[str(c.pk)])
    assert refused(excinfo) == {"ids"}
    work_package_reorder(caller=lead(cast), ids=[str(c.pk), str(a.pk), str(b.pk)])
    assert [wp.name for wp in selectors.work_packages(cast.project)] == ["C", "A", "B"]
    assert WorkPackage.objects.get(pk=c.pk).revision == 2
    assert AuditEntry.objects.filter(kind="work_package.reordered").count() == 1


def test_move_up_and_down_with_the_keyboard_act(cast):
    a, _, c = (create(cast, name=name) for name in ("A", "B", "C"))
    work_package_move(caller=lead(cast), wp_id=c.pk, direction="up")
    assert [wp.name for wp in selectors.work_packages(cast.project)] == ["A", "C", "B"]
    work_package_move(caller=lead(cast), wp_id=a.pk, direction="up")  # already first: stays
    assert [wp.name for wp in selectors.work_packages(cast.project)] == ["A", "C", "B"]
    work_package_move(caller=lead(cast), wp_id=a.pk, direction="down")
    work_package_move(caller=lead(cast), wp_id=a.pk, direction="down")
    work_package_move(caller=lead(cast), wp_id=a.pk, direction="down")  # already last: stays
    assert [wp.name for wp in selectors.work_packages(cast.project)] == ["C", "B", "A"]


def test_only_editors_write_and_frozen_registers_refuse(cast, issues):
    wp = create(cast)
    for user in (cast.viewer, cast.sponsor, cast.site_admin):
        caller = caller_for(user, cast.project)
        with pytest.raises(Forbidden):
            work_package_create(caller=caller, data={"name": "x"})
        with pytest.raises(Forbidden):
            work_package_update(caller=caller, wp_id=wp.pk, data={"name": "x"})
        with pytest.raises(Forbidden):
            work_package_delete(caller=caller, wp_id=wp.pk)
        with pytest.raises(Forbidden):
            work_package_reorder(caller=caller, ids=[str(wp.pk)])
    work_package_update(
        caller=caller_for(cast.editor, cast.project), wp_id=wp.pk, data={"type": "Epic"}
    )
    cast.project.approval_status = "Archived"
    cast.project.save()
    caller = lead(cast)
    for act in (
        lambda: work_package_create(caller=caller, data={"name": "x"}),
        lambda: work_package_update(caller=caller, wp_id=wp.pk, data={"name": "x"}),
        lambda: work_package_delete(caller=caller, wp_id=wp.pk),
        lambda: work_package_link_issue(caller=caller, wp_id=wp.pk, issue_key="ALPHA-1"),
        lambda: work_package_reorder(caller=caller, ids=[str(wp.pk)]),
        lambda: work_package_move(caller=caller, wp_id=wp.pk, direction="down"),
    ):
        with pytest.raises(Frozen):
            act()
    assert WorkPackage.objects.get().name == "Build"


def test_stale_revision_is_refused_and_changes_nothing(cast):
    wp = create(cast)
    work_package_update(
        caller=lead(cast), wp_id=wp.pk, data={"commentary": "first"}, expected_revision=1
    )
    with pytest.raises(Stale) as excinfo:
        work_package_update(
            caller=lead(cast), wp_id=wp.pk, data={"commentary": "second"}, expected_revision=1
        )
    assert excinfo.value.current.commentary == "first"
    with pytest.raises(Stale):
        work_package_delete(caller=lead(cast), wp_id=wp.pk, expected_revision=1)
    assert WorkPackage.objects.get().commentary == "first"


def test_an_edit_that_changes_nothing_keeps_the_revision(cast):
    wp = create(cast, type="Epic")
    assert update(cast, wp, type="Epic", name="Build").revision == 1


def test_foreign_package_is_not_found(cast):
    foreign = WorkPackageFactory(project=ProjectFactory(lead=cast.outsider))
    with pytest.raises(NotFound):
        work_package_update(caller=lead(cast), wp_id=foreign.pk, data={})
    with pytest.raises(NotFound):
        work_package_delete(caller=lead(cast), wp_id="nope")
