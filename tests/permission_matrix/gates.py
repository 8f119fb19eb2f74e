"""Stage gates: the lead and the editors keep the plan and request reviews, the sponsor
decides, viewers read, outsiders do not see the project."""

from django.utils import timezone

from gates.models import GateReview, Stage, StageCriterion
from tests.permission_matrix import EDIT, READ, SPONSOR_ONLY


def setup(world):
    # A running stage with a criterion and a review the sponsor may decide (not theirs).
    world.stage = Stage.objects.create(
        project=world.project, position=1, name="Design", state="Current"
    )
    Stage.objects.create(project=world.project, position=2, name="Build")
    world.criterion = StageCriterion.objects.create(
        stage=world.stage, key="noOpenException", kind="exit"
    )
    GateReview.objects.create(
        stage=world.stage, requested_at=timezone.now(), requested_by_account_id="someone"
    )


RESOLVERS = {
    "stage_id": lambda world, user: world.stage.pk,
    "criterion_id": lambda world, user: world.criterion.pk,
}

CELLS = {
    "GET api/v1/projects/<key>/stages": READ,
    "POST api/v1/projects/<key>/stages": EDIT,
    "PUT api/v1/projects/<key>/stages": EDIT,
    "POST api/v1/projects/<key>/stages/<stage_id>/criteria": EDIT,
    "POST api/v1/projects/<key>/stages/<stage_id>/criteria/<criterion_id>/dismissal": EDIT,
    "GET api/v1/projects/<key>/gate-reviews": READ,
    "POST api/v1/projects/<key>/gate-reviews": EDIT,
    "POST api/v1/projects/<key>/gate-reviews/decision": SPONSOR_ONLY,
}
