"""Demo stage plans and gates, built through the services as the demo cast would: the plans
are made from the site's default stages before the business cases are approved (approval
starts each first stage), then the gates are reached (`seed_gates`, once every project runs
and reports):

- LUMEN passed its Initiation gate cleanly (every criterion met) and runs its Design stage;
- BRIDGE waits at its Initiation gate for Sofia, the sponsor, with two criteria unmet;
- MOSAIC is on hold at its gate until a date three weeks ahead;
- NIMBUS was recycled: it stays in its stage to re-plan;
- HARBOUR was stopped at its gate (the business case's Kill act, with its reason).

Running twice changes nothing: a project with a plan, or with a gate review, is left alone."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from gates import selectors, services
from gates.models import GateReview, Stage

if TYPE_CHECKING:
    from governance.demo import DemoContext
    from governance.models import Project

PLANNED = ["BRIDGE", "HARBOUR", "LUMEN", "MOSAIC", "NIMBUS"]
STOP_REASON = "The port authority is building its own booking platform."
UNMET_AT_BRIDGE = 2
LESSONS = {
    "LUMEN": "A pilot branch first saved a month of rework.",
    "BRIDGE": "Agree the landing zone's guardrails before the first migration wave.",
    "MOSAIC": "The data owners need a named deputy each.",
    "NIMBUS": "The archive mailboxes were larger than the inventory said.",
    "HARBOUR": "Check what the port authority plans before committing.",
}


def _lead(ctx: DemoContext, project: Project) -> str:
    return "lena" if project.lead_account_id == ctx.account("lena") else "marco"


def seed(ctx: DemoContext) -> None:
    """The stage plans, before the business cases exist (so they may still be edited): the
    site's default stages, planned a quarter each from the project's start."""
    for key in PLANNED:
        project = ctx.projects.get(key)
        if project is None or Stage.objects.filter(project=project).exists():
            continue
        lead = ctx.caller(_lead(ctx, project), project)
        services.stage_plan_create(caller=lead)
        start = timezone.localdate() - dt.timedelta(weeks=10)
        body: list[dict[str, Any]] = []
        for index, stage in enumerate(selectors.stages(project)):
            begins = start + dt.timedelta(weeks=12 * index)
            body.append(
                {
                    "id": str(stage.pk),
                    "name": stage.name,
                    "plannedStart": begins.isoformat(),
                    "plannedEnd": (begins + dt.timedelta(weeks=12, days=-1)).isoformat(),
                    "toleranceDays": 5,
                    "toleranceCostPercent": 5,
                }
            )
        services.stage_plan_update(
            caller=ctx.caller(_lead(ctx, project), project), data={"stages": body}
        )


def _unmet(project: Project) -> list[selectors.EvaluatedCriterion]:
    """The criteria a Go at the current gate would go through unmet (its exit, the next
    stage's entry)."""
    plan = selectors.stage_plan(project)
    current = next((e for e in plan if e.stage.state == "Current"), None)
    if current is None:
        return []
    unmet = current.unmet("exit")
    after = [e for e in plan if e.stage.position > current.stage.position]
    if after:
        unmet += after[0].unmet("entry")
    return unmet


def _request(ctx: DemoContext, project: Project) -> GateReview:
    lead = ctx.caller(_lead(ctx, project), project)
    return services.gate_review_request(caller=lead, data={"lessons": LESSONS[project.key]})


def _decide(ctx: DemoContext, project: Project, data: dict[str, Any]) -> GateReview:
    return services.gate_review_decide(caller=ctx.caller("sofia", project), data=data)


def _dismiss(ctx: DemoContext, project: Project, keep: int, reason: str) -> None:
    """Dismiss, with a reason, the unmet criteria beyond the first `keep`."""
    lead = ctx.caller(_lead(ctx, project), project)
    for c in _unmet(project)[keep:]:
        services.criterion_dismiss(
            caller=lead,
            stage_id=c.record.stage_id,
            criterion_id=c.record.pk,
            data={"reason": reason},
        )


def seed_gates(ctx: DemoContext) -> None:
    """Each project brought to its kind of gate (see the module's docstring)."""
    for key in PLANNED:
        project = ctx.projects.get(key)
        if project is None or GateReview.objects.filter(stage__project=project).exists():
            continue
        if selectors.current_stage(project) is None:
            continue
        if key == "LUMEN":
            _request(ctx, project)
            _decide(ctx, project, {"outcome": "Go", "comment": "A clean gate: on to design."})
        elif key == "BRIDGE":
            # The lead names the board paper on this gate too: none is linked yet.
            stage = selectors.current_stage(project)
            assert stage is not None
            services.criterion_add(
                caller=ctx.caller(_lead(ctx, project), project),
                stage_id=stage.pk,
                data={"key": "documentsLinked", "kind": "exit", "parameter": "boardPaper"},
            )
            _dismiss(ctx, project, UNMET_AT_BRIDGE, "Judged at the next gate with the auditors.")
            _request(ctx, project)
        elif key == "MOSAIC":
            _request(ctx, project)
            back = timezone.localdate() + dt.timedelta(days=21)
            _decide(
                ctx,
                project,
                {
                    "outcome": "Hold",
                    "holdUntil": back.isoformat(),
                    "comment": "Come back once the data owners are named.",
                },
            )
        elif key == "NIMBUS":
            _request(ctx, project)
            _decide(
                ctx,
                project,
                {"outcome": "Recycle", "comment": "Re-plan the migration waves by mailbox size."},
            )
        elif key == "HARBOUR":
            _request(ctx, project)
            _decide(ctx, project, {"outcome": "Stop", "comment": STOP_REASON})
