import pytest

from governance.tracker.local import scripting
from tests.conftest import set_governance_group
from tests.factories import DecisionFactory, RiskFactory, WorkPackageFactory

EVERYONE = "everyone"


@pytest.fixture
def world(cast):
    """ALPHA with a work package, a risk and a pending decision; a group holding the whole cast
    (the outsider too, so the per-project gate is what hides ALPHA from them)."""
    project = cast.project
    cast.wp = WorkPackageFactory(project=project)
    cast.risk = RiskFactory(project=project, title="Vendor lock-in", impact=4, likelihood=4)
    cast.decision = DecisionFactory(project=project)
    scripting.ensure_group(
        EVERYONE,
        members=["lead", "editor", "viewer", "sponsor", "outsider", "site_admin", "pmo"],
    )
    return cast


def use_group(name: str) -> None:
    set_governance_group(name)
