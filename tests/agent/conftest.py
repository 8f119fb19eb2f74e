import dataclasses
import datetime as dt

import pytest
from django.utils import timezone

from charter.models import BusinessCase
from governance.permissions import caller_for
from governance.tracker.local import scripting
from registers import sample_plan
from status import exceptions
from status.models import ProjectException
from tests.conftest import set_governance_group
from tests.factories import (
    ChangeRequestFactory,
    DecisionFactory,
    RiskFactory,
    WorkPackageFactory,
)

EVERYONE = "everyone"
# A Microsoft Project plan (MSPDI XML) of 20 tasks in two phases: two work packages at outline
# level 1, sixteen at level 2.
PLAN_XML = sample_plan.plan(20, start=dt.date(2027, 1, 4), today=dt.date(2027, 2, 1)).decode()


@pytest.fixture
def world(cast):
    """ALPHA with a work package, a risk and a pending decision; a group holding the whole cast
    (the outsider too, so the per-project gate is what hides ALPHA from them)."""
    return build_world(cast)


def build_world(cast):
    """The `world` fixture's rows on the cast, for a module that builds them once."""
    project = cast.project
    cast.wp = WorkPackageFactory(project=project)
    cast.risk = RiskFactory(project=project, title="Vendor lock-in", impact=4, likelihood=4)
    cast.decision = DecisionFactory(project=project)
    cast.awaiting_change = lambda: approved_change_on_baseline(cast)
    cast.reported_exception = lambda: reported_exception(cast)
    # An open exception, for the lead's exception report.
    ProjectException.objects.create(project=project, opened_at=timezone.now())
    scripting.ensure_group(
        EVERYONE,
        members=["lead", "editor", "viewer", "sponsor", "outsider", "site_admin", "pmo"],
    )
    return cast


def approved_change_on_baseline(cast):
    """An approved Scope change awaiting application that names the world's work package, on
    an approved business case whose plan baseline holds that package."""
    BusinessCase.objects.update_or_create(
        project=cast.project,
        defaults={
            "approval_status": "Approved",
            "plan_baseline": {
                "version": 1,
                "workPackages": {
                    str(cast.wp.pk): {
                        "budget": 1000,
                        "plannedStartDate": "2026-01-05",
                        "plannedEndDate": "2026-03-31",
                    }
                },
                "totalBudget": 1000,
            },
        },
    )
    return ChangeRequestFactory(
        project=cast.project,
        status="Approved",
        dimensions=["Scope"],
        impact_scope="Adds an export",
        target_work_package_id=cast.wp.pk,
    )


def reported_exception(cast) -> ProjectException:
    """The world's open exception reported by the Project Lead, with an exception plan (its
    change request routed to the sponsor). Written as the lead whatever the governance group
    (which the matrix sets before it), as it would have been before that group was set."""
    lead = dataclasses.replace(caller_for(cast.lead, cast.project), can_view=True)
    return exceptions.exception_report(
        caller=lead,
        data={
            "cause": "Supplier late.",
            "consequences": "A month later.",
            "options": ["Accept the delay"],
            "recommendation": "Accept the delay.",
            "planScheduleDays": 30,
            "planBudget": 200,
        },
    )


def use_group(name: str) -> None:
    set_governance_group(name)
