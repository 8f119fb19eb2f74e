"""Every register write, one function per rule: `<thing>_<act>(*, caller, ...)`. Each is
atomic and audited, checks the caller's role through `governance.permissions.Caller`, refuses
frozen registers, and raises a domain error (governance.errors) when it refuses."""

from registers.services.changes import (
    change_adjudicate,
    change_create,
    change_delete,
    change_update,
)
from registers.services.decisions import decision_append_note, decision_create, decision_update
from registers.services.imports import register_import
from registers.services.risks import risk_create, risk_delete, risk_record_decision, risk_update
from registers.services.work_packages import (
    work_package_create,
    work_package_delete,
    work_package_link_issue,
    work_package_move,
    work_package_reorder,
    work_package_unlink_issue,
    work_package_update,
)

__all__ = [
    "change_adjudicate",
    "change_create",
    "change_delete",
    "change_update",
    "decision_append_note",
    "decision_create",
    "decision_update",
    "register_import",
    "risk_create",
    "risk_delete",
    "risk_record_decision",
    "risk_update",
    "work_package_create",
    "work_package_delete",
    "work_package_link_issue",
    "work_package_move",
    "work_package_reorder",
    "work_package_unlink_issue",
    "work_package_update",
]
