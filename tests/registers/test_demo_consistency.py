"""The demo's facts agree: a delivered project (its business case closing or past closing)
has finished every package on plan, and no package is past its planned finish without being
complete or forecast late."""

from decimal import Decimal

from django.utils import timezone

from charter.models import BusinessCase
from governance.models import Project
from registers.derive import schedule_variance_days
from registers.models import WorkPackage
from status import earned_value

DELIVERED_STATES = {
    "ClosingSubmitted",
    "Closed",
    "InRealisation",
    "Realised",
    "NotRealised",
    "InMaintenance",
}


def _delivered() -> set[str]:
    return set(
        BusinessCase.objects.filter(approval_status__in=DELIVERED_STATES).values_list(
            "project__key", flat=True
        )
    )


def test_a_delivered_demo_project_finished_every_package_on_plan(demo):
    delivered = _delivered()
    assert delivered >= {"CEDAR", "DELTA", "EMBER", "IRIS", "JUNIPER", "KESTREL"}
    today = timezone.localdate()
    projects = Project.objects.filter(key__in=delivered)
    values = earned_value.for_projects([p.pk for p in projects], today)
    for project in projects:
        packages = list(WorkPackage.objects.filter(project=project))
        assert packages, project.key
        for wp in packages:
            facts = (wp.status, wp.progress, wp.actual_end_date is not None)
            assert facts == ("Complete", 100, True), (project.key, wp.name)
            assert wp.actual_end_date <= today and wp.planned_end_date <= today
            assert wp.budget_actual is not None and wp.budget_actual > 0, (project.key, wp.name)
        total = values[project.pk].total.as_dict()
        spi = total["spi"]
        assert spi is not None and Decimal("0.95") <= Decimal(str(spi)) <= Decimal("1.05"), (
            project.key,
            spi,
        )


def test_no_demo_package_is_past_its_planned_finish_unnoticed(demo):
    """Past its planned end, a package is complete or its forecast end says how late."""
    today = timezone.localdate()
    for wp in WorkPackage.objects.select_related("project"):
        if wp.planned_end_date is None or wp.planned_end_date >= today or wp.status == "Complete":
            continue
        late = schedule_variance_days(wp.planned_end_date, wp.forecast_end_date)
        assert late is not None and late > 0, (wp.project.key, wp.name, wp.status)
