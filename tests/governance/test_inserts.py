"""`governance.inserts.insert_many`: the rows `save()` would insert, one COPY on PostgreSQL."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.inserts import insert_many
from governance.models import AuditEntry
from registers.models import Risk


def test_audit_entries_are_stored_in_the_order_given_with_their_values(cast):
    entries = [
        AuditEntry(
            actor_account_id="a",
            project_key=cast.project.key,
            kind="x.created",
            target_type="x",
            target_id=str(n),
            changes={"text": {"before": None, "after": f'a "quoted"\tline\n\\ {n}'}},
        )
        for n in range(3)
    ]
    with CaptureQueriesContext(connection) as queries:
        insert_many(AuditEntry, entries, 2)
    stored = list(AuditEntry.objects.filter(kind="x.created").order_by("id"))
    assert [e.target_id for e in stored] == ["0", "1", "2"]
    assert stored[2].changes == {"text": {"before": None, "after": 'a "quoted"\tline\n\\ 2'}}
    assert all(not e._state.adding for e in entries)
    words = [q["sql"].split()[0] for q in queries.captured_queries]
    assert words == (["COPY"] if connection.vendor == "postgresql" else ["INSERT", "INSERT"])


def test_records_get_their_auto_dates_and_generated_columns(cast):
    risks = [
        Risk(project=cast.project, title=f"Risk {n}", impact=3, likelihood=n + 1) for n in range(2)
    ]
    insert_many(Risk, risks, 500)
    assert [r.inherent_score for r in risks] == [3, 6]  # as the database generated them
    assert all(r.created_at is not None and r.updated_at is not None for r in risks)
    stored = {r.title: r for r in Risk.objects.filter(project=cast.project)}
    assert {title: r.inherent_score for title, r in stored.items()} == {
        "Risk 0": 3,
        "Risk 1": 6,
    }
    assert stored["Risk 0"].created_at == risks[0].created_at
    risks[0].title = "Renamed"
    risks[0].save()  # stored: an update, not a second insert
    assert Risk.objects.filter(project=cast.project).count() == 2


@pytest.mark.parametrize("ids", [[None, 7], [None, None]])
def test_ids_left_to_the_database(cast, ids):
    entries = [
        AuditEntry(id=pk, actor_account_id="a", kind="y.created", target_type="y") for pk in ids
    ]
    insert_many(AuditEntry, entries, 500)
    assert AuditEntry.objects.filter(kind="y.created").count() == 2
