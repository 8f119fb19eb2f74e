"""factory_boy factories. People and projects go through the local tracker's scripting
functions, so a test user is exactly what `local_tracker user` would make."""

import factory

from governance import mirror
from governance.models import EditorNomination, Project, User
from governance.tracker import get_tracker
from governance.tracker.local import scripting

PASSWORD = "test-pass-1"


class UserFactory(factory.Factory):
    class Meta:
        model = User

    username = factory.Sequence(lambda n: f"user{n}")
    display_name = factory.LazyAttribute(lambda o: o.username.replace("_", " ").title())
    admin = False

    @classmethod
    def _create(cls, model_class, username, display_name, admin):
        return scripting.ensure_user(
            username,
            display_name=display_name,
            admin=admin,
            password=PASSWORD,
            email=f"{username}@example.test",
        )


class ProjectFactory(factory.Factory):
    """A tracker project and its governance mirror."""

    class Meta:
        model = Project

    key = factory.Sequence(lambda n: f"PRJ{n}")
    name = factory.LazyAttribute(lambda o: f"Project {o.key}")
    lead = factory.SubFactory(UserFactory)
    browsers = factory.List([])

    @classmethod
    def _create(cls, model_class, key, name, lead, browsers):
        scripting.ensure_project(
            key, name=name, lead=lead.username, browsers=[b.username for b in browsers]
        )
        return mirror.sync_project(get_tracker().get_project(key))


def nominate(project: Project, user: User, by: User | None = None) -> EditorNomination:
    return EditorNomination.objects.create(
        project=project,
        account_id=user.account_id,
        nominated_by_account_id=(by.account_id if by else project.lead_account_id),
    )


# --- registers and business case: plain model factories (they bypass the services, for
# arranging state; tests of rules go through the services) ----------------------------------

import datetime as dt  # noqa: E402
from decimal import Decimal  # noqa: E402

from factory.django import DjangoModelFactory  # noqa: E402

from charter.models import BusinessCase  # noqa: E402
from registers.models import (  # noqa: E402
    ChangeRequest,
    Decision,
    Risk,
    SteeringMinutes,
    WorkPackage,
)


class WorkPackageFactory(DjangoModelFactory):
    class Meta:
        model = WorkPackage

    project = factory.SubFactory(ProjectFactory)
    name = factory.Sequence(lambda n: f"Work package {n}")
    planned_start_date = dt.date(2026, 1, 1)
    planned_end_date = dt.date(2026, 6, 30)
    budget = Decimal("1000.00")


class RiskFactory(DjangoModelFactory):
    class Meta:
        model = Risk

    project = factory.SubFactory(ProjectFactory)
    title = factory.Sequence(lambda n: f"Risk {n}")
    impact = 3
    likelihood = 3


class DecisionFactory(DjangoModelFactory):
    class Meta:
        model = Decision

    project = factory.SubFactory(ProjectFactory)
    decision = factory.Sequence(lambda n: f"Decision {n}")


class ChangeRequestFactory(DjangoModelFactory):
    class Meta:
        model = ChangeRequest

    project = factory.SubFactory(ProjectFactory)
    summary = factory.Sequence(lambda n: f"Change {n}")


class SteeringMinutesFactory(DjangoModelFactory):
    class Meta:
        model = SteeringMinutes

    project = factory.SubFactory(ProjectFactory)
    title = factory.Sequence(lambda n: f"Steering committee {n}")
    held_on = dt.date(2026, 2, 1)


class BusinessCaseFactory(DjangoModelFactory):
    class Meta:
        model = BusinessCase

    project = factory.SubFactory(ProjectFactory)


# --- project status ------------------------------------------------------------------------

from status.models import ProjectStatus, StatusReport  # noqa: E402


class ProjectStatusFactory(DjangoModelFactory):
    class Meta:
        model = ProjectStatus

    project = factory.SubFactory(ProjectFactory)


class StatusReportFactory(DjangoModelFactory):
    """A draft report (publish it through the services)."""

    class Meta:
        model = StatusReport

    project = factory.SubFactory(ProjectFactory)
    title = factory.Sequence(lambda n: f"Status report {n}")
