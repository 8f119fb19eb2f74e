"""The stage plan's page: the lead and the editors keep the plan and request reviews, the
sponsor decides, viewers read, outsiders do not see the project."""

from django.utils import timezone

from gates.models import GateReview, Stage, StageCriterion
from tests.permission_matrix import EDIT, READ, SPONSOR_ONLY


def setup(world):
    # A running stage with a criterion and a review the sponsor may decide (not theirs).
    stage = Stage.objects.filter(project=world.project, state="Current").first()
    if stage is None:
        stage = Stage.objects.create(
            project=world.project, position=1, name="Design", state="Current"
        )
        Stage.objects.create(project=world.project, position=2, name="Build")
    world.stage = stage
    world.criterion = StageCriterion.objects.filter(
        stage=stage
    ).first() or StageCriterion.objects.create(stage=stage, key="noOpenException", kind="exit")
    if not GateReview.objects.filter(stage=stage, state="Requested").exists():
        GateReview.objects.create(
            stage=stage, requested_at=timezone.now(), requested_by_account_id="someone"
        )


RESOLVERS = {
    "stage_id": lambda world, user: world.stage.pk,
    "criterion_id": lambda world, user: world.criterion.pk,
}

CELLS = {
    "GET projects/<str:key>/stages/": READ,
    "POST projects/<str:key>/stages/create/": EDIT,
    "POST projects/<str:key>/stages/edit/": EDIT,
    "POST projects/<str:key>/stages/<uuid:stage_id>/criteria/": EDIT,
    "POST projects/<str:key>/stages/<uuid:stage_id>/criteria/<int:criterion_id>/dismiss/": EDIT,
    "POST projects/<str:key>/stages/review/": EDIT,
    "POST projects/<str:key>/stages/review/decision/": SPONSOR_ONLY,
}
