"""The register pages' revision of a project (`Project.registers_revision`): raised in the
transaction of every change of the facts the pages show, with the register summary read at it
(`registers.summary`), so that no summary read before a change is answered after it. The
changes are announced through the kernel's signal (`signals.project_changed`: the status app
connects every save and delete of a register row, the business case, a status and the
project's approval state to it; a bulk write announces itself)."""

import secrets
from collections.abc import Iterable
from typing import Any

from governance.models import Project
from registers import summary


def bump_registers_revision(
    sender: object = None, *, project_ids: Iterable[Any], **kwargs: Any
) -> None:
    """One UPDATE in the writer's transaction: committed, or rolled back, with the change.
    The new revision is a random 63-bit stamp, not the next number: a number could come back
    (a database restored from a backup, then written to again) and find a summary read from
    other rows under it; a stamp names one state only. The projects' register summaries
    are read at the new stamp in the same transaction (`registers.summary`)."""
    ids = list(project_ids)
    stamp = secrets.randbits(63)
    Project.objects.filter(pk__in=ids).update(registers_revision=stamp)
    summary.store(ids, stamp)
