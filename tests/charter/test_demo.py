"""The business-case demo: a case in every lifecycle state, reached through the services,
and idempotent."""

from io import StringIO

from django.core.management import call_command

from charter.models import APPROVAL_STATUSES, ApprovedVersion, BusinessCase
from governance.models import AuditEntry, Project
from registers.models import ChangeRequest, SteeringMinutes


def snapshot():
    return {
        "cases": sorted(
            BusinessCase.objects.values_list("project__key", "approval_status", "version",
                                             "revision")
        ),
        "audit": AuditEntry.objects.count(),
        "changes": ChangeRequest.objects.count(),
        "minutes": SteeringMinutes.objects.count(),
        "versions": ApprovedVersion.objects.count(),
    }  # fmt: skip


def test_demo_has_every_state_and_runs_twice_unchanged(demo):
    first = snapshot()
    assert {status for _, status, _, _ in first["cases"]} == set(APPROVAL_STATUSES)
    sofia = Project.objects.values_list("sponsor_account_id", flat=True).distinct()
    assert len(set(sofia)) == 1  # one sponsor for every case
    bridge = BusinessCase.objects.get(project__key="BRIDGE")
    assert bridge.version == 2 and bridge.approved_versions.count() == 2
    assert Project.objects.get(key="CEDAR").registers_frozen
    call_command("seed_demo", stdout=StringIO())
    assert snapshot() == first
