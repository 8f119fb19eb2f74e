"""The registers' demo: realistic rows in every demo project, every state shown somewhere,
written through the services, and idempotent."""

from django.db import transaction
from django.utils import timezone

from governance import demo as kernel_demo
from governance import signals
from governance.tracker.local.models import LocalIssue
from registers import demo
from registers.derive import change_application_state, decision_state
from registers.models import (
    APPLICATION_STATES,
    CHANGE_STATUSES,
    RISK_DIRECTIONS,
    RISK_TREATMENTS,
    WP_STATUSES,
    ChangeRequest,
    Decision,
    Risk,
    WorkPackage,
)


def seed(ctx):
    """The registers' demo seeded as `seed_demo` seeds it: each project's stored health derived
    once when its rows are in, not again after each row (its `NO_EXCEPTION_MOVES`)."""
    with transaction.atomic(), signals.deferred_project_changes():
        demo.seed(ctx)


def counts():
    return tuple(m.objects.count() for m in (WorkPackage, Risk, Decision, ChangeRequest))


def test_demo_registers_cover_every_state_and_run_twice_safely(
    db, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        ctx = kernel_demo.seed()
        seed(ctx)
    first = counts()
    for project in ctx.projects.values():
        rows = sum(
            m.objects.filter(project=project).count()
            for m in (WorkPackage, Risk, Decision, ChangeRequest)
        )
        # An early project has not identified its risks yet; the others have a few dozen rows.
        assert rows >= (18 if project.key in demo.EARLY else 24), project.key
        if project.key in demo.EARLY:
            assert not Risk.objects.filter(project=project).exists()
        project.refresh_from_db()
        assert project.sponsor_account_id == ctx.account("sofia")
    assert set(WorkPackage.objects.values_list("status", flat=True)) == set(WP_STATUSES)
    assert set(WorkPackage.objects.values_list("rag", flat=True)) == {
        "Red",
        "Amber",
        "Green",
        "Blue",
        "None",
    }
    assert set(Risk.objects.values_list("status", flat=True)) == {"Open", "Closed"}
    assert set(Risk.objects.values_list("direction", flat=True)) == set(RISK_DIRECTIONS)
    treatments = set(Risk.objects.values_list("treatment", flat=True))
    assert treatments >= {t for ts in RISK_TREATMENTS.values() for t in ts}
    assert Risk.objects.filter(materialised=True).exists()
    assert Risk.objects.exclude(accepted_at=None).exists()
    states = {decision_state(d.made_on) for d in Decision.objects.all()}
    assert states == {"Pending", "Made"}
    assert Decision.objects.exclude(treated_risk_id=None).exists()
    assert Decision.objects.exclude(notes=[]).exists()
    assert Decision.objects.filter(made_by_account_id=None).exists()
    assert set(ChangeRequest.objects.values_list("status", flat=True)) == set(CHANGE_STATUSES)
    assert {change_application_state(c) for c in ChangeRequest.objects.all()} == set(
        APPLICATION_STATES
    )
    decided = ChangeRequest.objects.filter(status__in=["Approved", "Rejected"])
    assert set(decided.values_list("decided_by_account_id", flat=True)) == {ctx.account("sofia")}
    assert LocalIssue.objects.filter(
        key="APOLLO-1", work_package="Discovery and requirements"
    ).exists()

    with django_capture_on_commit_callbacks(execute=True):
        seed(kernel_demo.seed())
    assert counts() == first


def test_demo_projects_differ_in_shape(db, django_capture_on_commit_callbacks):
    """Calm projects have no blocked work and no pending scope change; the troubled one has a
    risk scored 16 and a scope request that has waited six weeks."""
    with django_capture_on_commit_callbacks(execute=True):
        ctx = kernel_demo.seed()
        seed(ctx)
    for key in demo.CALM:
        project = ctx.projects[key]
        assert not WorkPackage.objects.filter(project=project, status="Blocked").exists()
        pending = ChangeRequest.objects.filter(project=project, status="Proposed")
        assert not [c for c in pending if "Scope" in c.dimensions]
    troubled = ctx.projects["BRIDGE"]
    assert Risk.objects.filter(project=troubled, residual_impact=4, residual_likelihood=4).exists()
    waiting = ChangeRequest.objects.get(project=troubled, status="Proposed", impact_scope__gt="")
    assert (timezone.now() - waiting.created_at).days >= 41


def test_one_demo_project_has_its_plan_imported_from_microsoft_project(demo):
    """FALCON's eight phases came from a 200-task Microsoft Project plan through the import:
    what finished before today is complete, what has not started is not, budgets are the
    baseline costs and the forecasts the current ones."""
    import datetime as dt

    from governance.models import AuditEntry
    from registers.demo import IMPORTED_PLAN

    phases = WorkPackage.objects.filter(project__key=IMPORTED_PLAN, name__regex=r"^\d\. ").order_by(
        "planned_start_date"
    )
    assert phases.count() == 8
    today = timezone.localdate()
    for wp in phases:
        assert wp.commentary.startswith("Phase ")
        assert wp.budget is not None and wp.budget_forecast >= wp.budget
        end = wp.forecast_end_date or wp.planned_end_date
        if end < today:
            assert (wp.status, wp.progress) == ("Complete", 100), wp.name
            assert wp.actual_end_date is not None and wp.actual_end_date <= today
        if wp.planned_start_date > today:
            assert (wp.status, wp.progress) == ("Not Started", 0), wp.name
    assert {wp.status for wp in phases} >= {"Complete", "Not Started"}
    created = AuditEntry.objects.filter(
        kind="work_package.created", target_id__in=[str(wp.pk) for wp in phases]
    )
    assert created.count() == 8
    assert dt.date(2000, 1, 1) < phases[0].planned_start_date < today
