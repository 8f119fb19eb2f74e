"""Investment decisions' fixtures: a scoring model with one person criterion and one data
criterion, proposals with phased work packages."""

import datetime as dt
from decimal import Decimal

import pytest

from charter.models import BusinessCase
from governance.permissions import caller_for
from investment import services
from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import ProjectFactory, WorkPackageFactory

WORDS = ["None", "Little", "Some", "Much", "All"]


def criterion(key, source="person", weight=1, **extra):
    return {
        "key": key,
        "name": key.title(),
        "measures": f"What {key} measures",
        "points": WORDS,
        "weight": weight,
        "source": source,
        **extra,
    }


def steering(project, *users):
    """Once a governance group is set, the lead and the sponsor see the project as members of
    its steering committee (the view rule)."""
    project.steering_account_ids = [u.account_id for u in users]
    project.save(update_fields=["steering_account_ids"])


@pytest.fixture
def governed(cast):
    """The governance group is the PMO group; the PMO is in it."""
    return govern(cast)


def govern(cast):
    set_governance_group(PMO_GROUP)
    steering(cast.project, cast.lead, cast.sponsor)
    return cast


@pytest.fixture
def model(governed):
    return first_model(governed)


def first_model(governed):
    return services.model_version_create(
        user=governed.site_admin,
        data={
            "why": "The first model",
            "criteria": [
                criterion("strategy", weight=3),
                criterion("adoption", source="adoptionInputs", weight=1),
            ],
        },
    )


def proposal(project, status="Exploring", financial_case=None):
    case, _ = BusinessCase.objects.get_or_create(project=project)
    case.approval_status = status
    case.financial_case = financial_case
    case.save()
    return case


def phased(project, amounts):
    """One work package whose phasing is {period: amount}."""
    return WorkPackageFactory(
        project=project,
        budget=sum(Decimal(a) for a in amounts.values()),
        budget_phasing=[{"period": p, "amount": a} for p, a in amounts.items()],
        planned_start_date=dt.date(2027, 1, 1),
        planned_end_date=dt.date(2028, 12, 31),
    )


def caller(user, project):
    return caller_for(user, project)


def make_project(key, cast, sponsor=None):
    project = ProjectFactory(
        key=key, lead=cast.lead, browsers=[cast.sponsor, cast.site_admin, cast.pmo, cast.viewer]
    )
    if sponsor is not None:
        project.sponsor_account_id = sponsor.account_id
        project.save(update_fields=["sponsor_account_id"])
    steering(project, cast.lead, cast.sponsor)
    return project


def builtin(*lines, rate=0):
    return {
        "mode": "builtin",
        "builtin": {
            "currency": "EUR",
            "discountRatePct": rate,
            "horizonYears": 5,
            "lines": [{"year": y, "cost": c, "benefit": b} for y, c, b in lines],
        },
    }


def three_proposals(cast):
    """A, B and C: proposals scored 5, 4, 3; A costs 60 in 2027, B 30 in 2027 and 50 in
    2028, C 20 in 2027."""
    made = {}
    for key, value, amounts in (
        ("AAA", 5, {"2027-03": 60}),
        ("BBB", 4, {"2027-06": 30, "2028-02": 50}),
        ("CCC", 3, {"2027-09": 20}),
    ):
        project = make_project(key, cast, sponsor=cast.sponsor)
        proposal(project, financial_case=builtin((0, 1, 0), (1, 0, value * 10)))
        phased(project, amounts)
        services.score_set(
            caller=caller(cast.pmo, project),
            data={"criterion": "strategy", "value": value, "reason": f"{key} reason"},
        )
        made[key] = project
    return made
