"""The demo holds a project at each kind of gate, built through the services: one passed
cleanly, one waiting for the sponsor with two criteria unmet, one on hold, one recycled, one
stopped at its gate (HARBOUR, killed there)."""

from gates import selectors
from gates.models import GateReview
from governance.models import Notification, Project, User


def test_the_demo_has_every_kind_of_gate(demo):
    def review(key):
        return selectors.reviews(Project.objects.get(key=key))[0]

    clean = review("LUMEN")
    assert (clean.outcome, clean.unmet_named) == ("Go", [])
    assert selectors.current_stage(clean.stage.project).name == "Design"
    waiting = review("BRIDGE")
    assert waiting.state == "Requested"
    sofia = User.objects.get(username="sofia")
    assert Notification.objects.filter(
        kind="gate_review", recipient_account_id=sofia.account_id, project_key="BRIDGE"
    ).exists()
    plan = selectors.stage_plan(waiting.stage.project)
    unmet = plan[0].unmet("exit") + plan[1].unmet("entry")
    assert len(unmet) == 2
    held = review("MOSAIC")
    assert held.outcome == "Hold" and held.hold_until > held.decided_at.date()
    assert review("NIMBUS").outcome == "Recycle"
    stopped = review("HARBOUR")
    assert stopped.outcome == "Stop" and stopped.stage.state == "Stopped"
    assert stopped.stage.project.approval_status == "Archived"
    assert GateReview.objects.filter(decision__isnull=False).count() == 4
