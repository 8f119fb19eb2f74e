"""Every business-case write, one function per rule: `<thing>_<act>(*, caller, ...)`. Each is
atomic and audited, checks the caller against the lifecycle table (charter.acts), keeps the
kernel's project mirror current in the same transaction, and raises a domain error
(governance.errors) when it refuses; a refused write changes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from charter.models import BusinessCase


from typing import Any

from charter.services.baseline import change_apply_to_baseline
from charter.services.closeout import (
    charter_close,
    closeout_return,
    closeout_start,
    closeout_submit,
    closeout_update,
    handover_acknowledge,
    handover_escalate,
)
from charter.services.common import current_case, sync_mirror
from charter.services.lifecycle import (
    charter_approve,
    charter_archive,
    charter_draft,
    charter_kill,
    charter_reopen,
    charter_return,
    charter_steerco_confirm,
    charter_steerco_schedule,
    charter_submit,
    return_note_address,
    submission_missing,
)
from charter.services.minutes import minutes_list, minutes_record
from charter.services.realisation import (
    kpi_resolve,
    maintenance_retire,
    maintenance_start,
    realisation_review,
    realisation_start,
    realisation_update,
    realisation_verdict,
)
from charter.services.thesis import (
    charter_update,
    link_add,
    link_from_template,
    link_remove,
    steering_member_add,
    steering_member_remove,
)
from governance.errors import NotFound
from governance.permissions import Caller

# POST /projects/{key}/charter/{act}: the act name -> its service.
ACT_SERVICES = {
    "draft": charter_draft,
    "submit": charter_submit,
    "return": charter_return,
    "approve": charter_approve,
    "reopen": charter_reopen,
    "archive": charter_archive,
    "kill": charter_kill,
    "closeout-start": closeout_start,
    "closeout-submit": closeout_submit,
    "closeout-return": closeout_return,
    "close": charter_close,
    "handover-acknowledge": handover_acknowledge,
    "handover-escalate": handover_escalate,
    "realisation-start": realisation_start,
    "realisation-review": realisation_review,
    "kpi-resolve": kpi_resolve,
    "verdict": realisation_verdict,
    "maintenance-start": maintenance_start,
    "maintenance-retire": maintenance_retire,
    "steerco-schedule": charter_steerco_schedule,
    "steerco-confirm": charter_steerco_confirm,
}


def charter_act(
    *, caller: Caller, act: str, data: Any = None, expected_revision: int | None = None
) -> BusinessCase:
    """Take one lifecycle act by name (the API's and the pages' single entry point)."""
    service = ACT_SERVICES.get(act)
    if service is None:
        raise NotFound(f"No business-case act called '{act}'.")
    return service(caller=caller, data=data, expected_revision=expected_revision)


__all__ = [
    "ACT_SERVICES",
    "change_apply_to_baseline",
    "charter_act",
    "charter_update",
    "closeout_update",
    "current_case",
    "link_add",
    "link_from_template",
    "link_remove",
    "minutes_list",
    "minutes_record",
    "realisation_update",
    "return_note_address",
    "steering_member_add",
    "steering_member_remove",
    "submission_missing",
    "sync_mirror",
]
