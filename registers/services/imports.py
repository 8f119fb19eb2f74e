"""Bulk import of a register: all rows or none. Each row goes through the register's own
create service (imported rows are marked imported); any refused row refuses the file."""

from collections.abc import Callable
from typing import Any

from django.db import transaction

from governance import signals
from governance.errors import ValidationFailed
from governance.permissions import Caller
from registers import spreadsheets
from registers.services.changes import change_create
from registers.services.common import batch, require_editor
from registers.services.decisions import decision_create
from registers.services.risks import risk_create
from registers.services.work_packages import work_package_create

REGISTERS = ["work-packages", "risks", "decisions", "changes"]

CREATORS: dict[str, Callable[..., Any]] = {
    # The work-package record has no `imported` field in the spec.
    "work-packages": lambda caller, data: work_package_create(caller=caller, data=data),
    "risks": lambda caller, data: risk_create(caller=caller, data=data, imported=True),
    "decisions": lambda caller, data: decision_create(caller=caller, data=data, imported=True),
    "changes": lambda caller, data: change_create(caller=caller, data=data, imported=True),
}


def register_import(*, caller: Caller, register: str, upload: Any) -> int:
    """Create one record per row of the uploaded CSV or XLSX file (`upload`: an uploaded
    file, or None), in one transaction. The editor check (403) and the freeze check (409)
    come before the file is read; a file that cannot be read, or refused rows, answer 422
    (rows reported as [{row, field, message}] on the error's `rows`), and nothing is
    created."""
    require_editor(caller)
    caller.project.assert_registers_unfrozen()
    create = CREATORS[register]
    rows = spreadsheets.read_rows(register, upload)
    if not rows:
        raise ValidationFailed({"file": ["The file has no rows to import under its header."]})
    # The project is locked once, the records and their audit entries are written in multi-row
    # statements after the last row, and the project's health is derived once.
    with transaction.atomic(), signals.deferred_project_changes(), batch(caller):
        problems: list[dict[str, Any]] = []
        for number, data in rows:
            try:
                create(caller, data)
            except ValidationFailed as exc:
                for field, messages in exc.fields.items():
                    problems.extend(
                        {"row": number, "field": field, "message": message} for message in messages
                    )
        if problems:
            failed = len({p["row"] for p in problems})
            raise ValidationFailed(
                {"file": [f"{failed} of {len(rows)} rows have errors; nothing was imported."]},
                rows=problems,
            )
    return len(rows)
