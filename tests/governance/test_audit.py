"""The audit log is append-only and records before/after per changed field."""

import datetime as dt
from decimal import Decimal

import pytest

from governance import audit
from governance.models import AuditEntry


def test_entries_cannot_be_changed_or_deleted(db):
    entry = audit.record(actor_account_id="a", kind="x.created", target_type="x", target_id=1)
    entry.kind = "x.forged"
    with pytest.raises(TypeError):
        entry.save()
    with pytest.raises(TypeError):
        entry.delete()
    with pytest.raises(TypeError):
        AuditEntry.objects.filter(pk=entry.pk).update(kind="x.forged")
    with pytest.raises(TypeError):
        AuditEntry.objects.all().delete()
    assert AuditEntry.objects.get(pk=entry.pk).kind == "x.created"


def test_diff_lists_only_changed_fields_as_json():
    changes = audit.diff(
        {"name": "A", "budget": Decimal("10.50"), "start": dt.date(2026, 1, 2), "same": 1},
        {"name": "B", "budget": Decimal("10.50"), "start": None, "same": 1, "new": [1]},
    )
    assert changes == {
        "name": {"before": "A", "after": "B"},
        "start": {"before": "2026-01-02", "after": None},
        "new": {"before": None, "after": [1]},
    }
