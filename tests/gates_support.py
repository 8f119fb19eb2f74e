"""Helpers of the stage-gate tests: the cast's business case in a state, a caller, a plan
made from the site's defaults, and a running project (approved: the first stage under way)."""

from charter.models import BusinessCase
from charter.services import charter_approve, sync_mirror
from gates import selectors, services
from gates.models import Stage
from governance.permissions import Caller, caller_for
from tests.charter.conftest import complete_inputs


def case_in(cast, status: str = "Draft", **fields) -> BusinessCase:
    """The cast's business case in `status` (plain model writes), the mirror in sync."""
    values = {**complete_inputs(cast), "approval_status": status, **fields}
    case, _ = BusinessCase.objects.update_or_create(project=cast.project, defaults=values)
    sync_mirror(cast.project, case)
    cast.project.refresh_from_db()
    return case


def caller(cast, user) -> Caller:
    cast.project.refresh_from_db()
    return caller_for(user, cast.project)


def make_plan(cast) -> list[Stage]:
    case_in(cast, "Draft")
    services.stage_plan_create(caller=caller(cast, cast.lead))
    return selectors.stages(cast.project)


def make_running(cast, **tolerances) -> list[Stage]:
    """A plan, then the business case approved (10 days, 10 % unless told): stage 1 runs."""
    make_plan(cast)
    case_in(cast, "Submitted")
    body = {"toleranceDays": 10, "toleranceCostPercent": 10, **tolerances}
    charter_approve(caller=caller(cast, cast.sponsor), data=body)
    return selectors.stages(cast.project)


def unmet_named(cast, reason: str = "Accepted by the board.") -> list[dict[str, str]]:
    """Every criterion a Go at the current gate would go through unmet, named with a reason."""
    stage = selectors.current_stage(cast.project)
    assert stage is not None
    plan = {e.stage.pk: e for e in selectors.stage_plan(cast.project)}
    unmet = plan[stage.pk].unmet("exit")
    following = Stage.objects.filter(project=cast.project, position=stage.position + 1).first()
    if following is not None:
        unmet += plan[following.pk].unmet("entry")
    return [{"key": c.record.key, "kind": c.record.kind, "reason": reason} for c in unmet]
