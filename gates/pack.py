"""The stage section of the steering pack (`governance.signals.steering_pack`): the stage
under way and its gate's criteria as they stand when the pack is made (judged on the pack's
own derived status), the gate review waiting, and the last decision at a gate. Frozen with the
pack when its report is published."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gates import selectors
from gates.models import GateReview, Stage

if TYPE_CHECKING:
    from governance.models import Project
    from status.derive import StatusView


def stage_section(project: Project, view: StatusView) -> dict[str, Any] | None:
    """The pack's stage section, or None when the project has no stage plan."""
    stages = list(Stage.objects.filter(project_id=project.pk).order_by("position"))
    if not stages:
        return None
    current = next((s for s in stages if s.state == "Current"), None)
    criteria: list[dict[str, Any]] = []
    if current is not None:
        evaluated = selectors.evaluate_stage(current, view)
        following = next((s for s in stages if s.position > current.position), None)
        found = [c for c in evaluated.criteria if c.record.kind == "exit"]
        if following is not None:
            found += [
                c
                for c in selectors.evaluate_stage(following, view).criteria
                if c.record.kind == "entry"
            ]
        for c in found:
            criteria.append(
                {
                    "label": c.criterion.label if c.criterion else c.record.key,
                    "kind": c.record.kind,
                    "met": None if c.dismissed else not c.unmet,
                    "summary": c.result.summary if c.result else c.record.dismissal_reason,
                }
            )
    waiting = selectors.open_review(project)
    last = (
        GateReview.objects.filter(stage__project_id=project.pk, state="Decided")
        .select_related("stage")
        .order_by("-decided_at")
        .first()
    )
    return {
        "currentStage": current.name if current else None,
        "stages": [{"name": s.name, "state": s.state} for s in stages],
        "criteria": criteria,
        "unmet": sum(1 for c in criteria if c["met"] is False),
        "awaitingSince": waiting.requested_at if waiting else None,
        "daysAtGate": selectors.days_at_gate(project, view.now),
        "lastDecision": {
            "stage": last.stage.name,
            "outcome": last.outcome,
            "decidedAt": last.decided_at,
            "holdUntil": last.hold_until,
            "comment": last.comment or None,
        }
        if last is not None
        else None,
    }


def on_steering_pack(
    sender: object, *, project: Project, view: StatusView, **kwargs: Any
) -> dict[str, Any]:
    section = stage_section(project, view)
    return {"stage": section} if section is not None else {}
