"""Every register write, one function per rule: `<thing>_<act>(*, caller, ...)`. Each is
atomic and audited, checks the caller's role through `governance.permissions.Caller`, refuses
frozen registers, and raises a domain error (governance.errors) when it refuses.

The business case's acts change packages and changes too (approval baselines every package,
an amended case's approval or apply-to-baseline applies a change, stopping the case withdraws
the change that enabled the amendment): they call the writers below inside their own
transaction, after their own act's checks, so one module writes each register's rows:
`work_packages_baseline`, `work_package_baseline`, `work_package_for_update`,
`change_for_update`, `change_apply`,
`change_withdraw`, and `changes_awaiting_application` for the re-open form."""

from registers.services.changes import (
    change_adjudicate,
    change_apply,
    change_create,
    change_delete,
    change_for_update,
    change_update,
    change_withdraw,
    changes_awaiting_application,
)
from registers.services.decisions import decision_append_note, decision_create, decision_update
from registers.services.imports import import_file, import_preview, register_import
from registers.services.risks import risk_create, risk_delete, risk_record_decision, risk_update
from registers.services.work_packages import (
    work_package_baseline,
    work_package_create,
    work_package_delete,
    work_package_for_update,
    work_package_link_issue,
    work_package_move,
    work_package_reorder,
    work_package_unlink_issue,
    work_package_update,
    work_packages_baseline,
)

__all__ = [
    "change_adjudicate",
    "change_apply",
    "change_create",
    "change_delete",
    "change_for_update",
    "change_update",
    "change_withdraw",
    "changes_awaiting_application",
    "decision_append_note",
    "decision_create",
    "decision_update",
    "import_file",
    "import_preview",
    "register_import",
    "risk_create",
    "risk_delete",
    "risk_record_decision",
    "risk_update",
    "work_package_baseline",
    "work_package_create",
    "work_package_delete",
    "work_package_for_update",
    "work_package_link_issue",
    "work_package_move",
    "work_package_reorder",
    "work_package_unlink_issue",
    "work_package_update",
    "work_packages_baseline",
]
