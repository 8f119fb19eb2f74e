"""Outbound tasks of the registers, run after commit by the outbox (governance/outbox.py)."""

from typing import Any

from governance import outbox
from governance.tracker import get_tracker
from registers.selectors import package_linking
from registers.services.common import WRITE_BACK_TASK


@outbox.handler(WRITE_BACK_TASK, "Write the 'Work Package' field on an issue")
def write_work_package_field(payload: dict[str, Any]) -> None:
    """Make the issue's 'Work Package' field match the register now: the name of the package
    that links it, or empty. Recomputed at run time, so retries and duplicates are harmless
    and a later change wins whatever order the tasks run in."""
    wp = package_linking(payload["projectId"], payload["issueKey"])
    get_tracker().set_work_package_field(payload["issueKey"], wp.name if wp else None)
