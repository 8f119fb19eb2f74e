"""An import runs the same statements at 10 rows as at 200, for every register: no savepoint,
lookup or insert per row; the rows and their audit entries are one COPY each on PostgreSQL,
and elsewhere multi-row INSERTs split where the backend's bound-parameter limit makes them
(SQLite), exactly as many as that limit needs."""

import csv
import io
import math
from collections import Counter

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance import audit
from governance.models import AuditEntry, Notification, OutboundTask
from governance.permissions import caller_for
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from registers.services.imports import import_file, import_preview
from tests.factories import WorkPackageFactory


def _rows(cast, register: str, n: int) -> tuple[list[str], list[list]]:
    """Rows with people, dates, money and links, so any per-row lookup would show."""
    people = [cast.lead.account_id, cast.editor.account_id, cast.sponsor.account_id, ""]
    if register == "work-packages":
        header = [
            "name",
            "ownerAccountId",
            "status",
            "progress",
            "plannedStartDate",
            "plannedEndDate",
            "budget",
            "budgetPhasing",
        ]
        return header, [
            [
                f"Package {i}",
                people[i % 4],
                "In Progress",
                50,
                "2027-01-04",
                "2027-02-26",
                "1,200",
                '[{"period": "2027-01", "amount": 1200}]',
            ]
            for i in range(n)
        ]
    if register == "risks":
        header = ["title", "description", "ownerAccountId", "impact", "likelihood", "treatment"]
        return header, [
            [f"Risk {i}", "Vendor late", people[i % 4], 1 + i % 5, 1 + i % 5, "Accept"]
            for i in range(n)
        ]
    if register == "decisions":
        header = ["decision", "madeOn", "decidedByAccountId", "rationale"]
        return header, [
            [f"Decision {i}", "2026-01-15" if i % 2 else "", people[i % 4], "Because"]
            for i in range(n)
        ]
    target = str(WorkPackageFactory(project=cast.project).pk)
    header = ["summary", "impactBudget", "targetWorkPackageId", "proposerAccountId"]
    return header, [
        [f"Change {i}", 100 + i, target if i % 2 else "", people[i % 2]] for i in range(n)
    ]


def _file(header, rows) -> SimpleUploadedFile:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return SimpleUploadedFile("rows.csv", buffer.getvalue().encode())


MODELS = {
    "work-packages": WorkPackage,
    "risks": Risk,
    "decisions": Decision,
    "changes": ChangeRequest,
}
# What an import of n rows writes, model by model: a record and an audit entry per row, and
# a change request routed to the sponsor tells them (a notification and its e-mail task).
WRITTEN = {
    "work-packages": (WorkPackage, AuditEntry),
    "risks": (Risk, AuditEntry),
    "decisions": (Decision, AuditEntry),
    "changes": (ChangeRequest, AuditEntry, Notification, OutboundTask),
}


# Written by `governance.inserts` (one COPY on PostgreSQL); the others by `bulk_create`.
COPIED = {WorkPackage, Risk, Decision, ChangeRequest, AuditEntry}


def _batches(model, n: int) -> int:
    """The statements that write n rows of `model` on this backend: one COPY on PostgreSQL
    (`governance.inserts`), else the multi-row INSERTs `bulk_create` needs."""
    if connection.vendor == "postgresql" and model in COPIED:
        return 1
    fields = [f for f in model._meta.concrete_fields if not f.primary_key or f.has_default()]
    size = min(audit.BATCH_SIZE, connection.ops.bulk_batch_size(fields, [None] * n) or n)
    return math.ceil(n / size)


def _statements(queries, written) -> tuple[Counter, int]:
    """(the statements by kind but those writing the rows, the statements writing the rows'
    tables: INSERT INTO or COPY)."""
    tables = {f'"{model._meta.db_table}"' for model in written}
    others, inserts = Counter(), 0
    for query in queries.captured_queries:
        words = query["sql"].split()
        table = {"INSERT": 2, "COPY": 1}.get(words[0])  # INSERT INTO "t", COPY "t"
        if table is not None and words[table] in tables:
            inserts += 1
        else:
            others[words[0]] += 1
    return others, inserts


@pytest.mark.parametrize("register", sorted(MODELS))
@pytest.mark.parametrize("preview", [False, True], ids=["commit", "preview"])
def test_an_import_runs_as_many_statements_at_10_rows_as_at_200(cast, register, preview):
    caller = caller_for(cast.lead, cast.project)
    run = import_preview if preview else import_file
    header, rows = _rows(cast, register, 3)
    run(caller=caller, register=register, upload=_file(header, rows))  # people cached
    found = {}
    for n in (10, 200):
        MODELS[register].objects.filter(project=cast.project).delete()
        header, rows = _rows(cast, register, n)
        with CaptureQueriesContext(connection) as queries:
            outcome = run(caller=caller, register=register, upload=_file(header, rows))
        assert (outcome.created, outcome.errors) == (n, [])
        others, inserts = _statements(queries, WRITTEN[register])
        assert "SAVEPOINT" not in others or others["SAVEPOINT"] == 1  # the import's own only
        # The preview writes nothing at all.
        assert inserts == (0 if preview else sum(_batches(model, n) for model in WRITTEN[register]))
        if preview:
            assert not {"INSERT", "UPDATE", "DELETE"} & set(others)
        found[n] = others
        stored = MODELS[register].objects.filter(project=cast.project).count()
        assert stored == (0 if preview else n)
    assert found[10] == found[200]


def test_the_batched_routing_notifications_are_those_of_one_by_one_creates(cast):
    """Each imported change tells the sponsor once, with its e-mail task; a person who turned
    the kind off is told nothing, as one by one."""
    caller = caller_for(cast.lead, cast.project)
    header, rows = _rows(cast, "changes", 4)
    import_file(caller=caller, register="changes", upload=_file(header, rows))
    changes = ChangeRequest.objects.filter(project=cast.project)
    notes = Notification.objects.filter(kind="change_routed")
    assert sorted(n.dedupe_key for n in notes) == sorted(
        f"change_routed:{c.pk}:{cast.sponsor.account_id}" for c in changes
    )
    assert {n.recipient_account_id for n in notes} == {cast.sponsor.account_id}
    emails = OutboundTask.objects.filter(name="notification.email")
    assert sorted(t.payload["id"] for t in emails) == sorted(n.pk for n in notes)
    from governance.models import NotificationOptOut

    NotificationOptOut.objects.create(account_id=cast.sponsor.account_id, kind="change_routed")
    import_file(caller=caller, register="changes", upload=_file(header, rows))
    assert Notification.objects.filter(kind="change_routed").count() == 4
