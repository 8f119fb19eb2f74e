"""Every register write, one function per rule: `<thing>_<act>(*, caller, ...)`. Each is
atomic and audited, checks the caller's role through `governance.permissions.Caller`, refuses
frozen registers, and raises a domain error (governance.errors) when it refuses."""

from registers.services.changes import (
    change_adjudicate,
    change_create,
    change_delete,
    change_update,
)

__all__ = ["change_adjudicate", "change_create", "change_delete", "change_update"]
