"""An import locks its project once and writes its records and their audit entries in
multi-row statements after the last row: the statements a file costs do not grow with its
rows, the records and entries are the same as one-by-one creates would write, the project's
stored health follows, and a refused file writes nothing."""

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.errors import ValidationFailed
from governance.models import AuditEntry
from governance.permissions import caller_for
from registers.models import ChangeRequest, Decision, Risk
from registers.services.imports import register_import
from registers.services.risks import risk_create
from status.models import ProjectHealth

HEADERS = {
    "risks": ["title", "impact", "likelihood"],
    "decisions": ["decision", "madeOn"],
    "changes": ["summary", "impactBudget"],
}
ROW = {
    "risks": lambda n: [f"Risk {n}", 5, 4],
    "decisions": lambda n: [f"Decision {n}", "2026-01-15"],
    "changes": lambda n: [f"Change {n}", 100 + n],
}
MODELS = {"risks": Risk, "decisions": Decision, "changes": ChangeRequest}


def _csv(register: str, rows: int, bad_row: int | None = None) -> SimpleUploadedFile:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(HEADERS[register])
    for n in range(rows):
        cells = ROW[register](n)
        if n == bad_row:
            cells[0] = ""  # the required text
        writer.writerow(cells)
    return SimpleUploadedFile(f"{register}.csv", buffer.getvalue().encode())


def _inserts(queries) -> int:
    """INSERTs of records and audit entries (a change routed to its approver also notifies
    them, once per change, as a create one by one does)."""
    tables = ('"registers_', '"governance_auditentry"')
    return sum(
        q["sql"].startswith("INSERT INTO") and q["sql"].split()[2].startswith(tables)
        for q in queries.captured_queries
    )


@pytest.mark.parametrize("register", sorted(HEADERS))
def test_an_import_writes_its_rows_in_a_few_statements_and_locks_once(cast, register):
    caller = caller_for(cast.lead, cast.project)
    counts = []
    for rows in (3, 120):
        MODELS[register].objects.filter(project=cast.project).delete()
        with CaptureQueriesContext(connection) as queries:
            assert register_import(caller=caller, register=register, upload=_csv(register, rows))
        locks = [q["sql"] for q in queries.captured_queries if "FOR UPDATE" in q["sql"]]
        counts.append(
            (
                _inserts(queries),
                sum('FROM "governance_project"' in sql for sql in locks),
                len(locks),
            )
        )
        assert MODELS[register].objects.filter(project=cast.project).count() == rows
    # One by one, 120 rows wrote 240 INSERTs (a record and an audit entry each); batched, a
    # multi-row statement per model and batch (SQLite's bound-parameter limit splits them).
    assert counts[1][0] <= counts[0][0] + 8, counts
    if connection.features.has_select_for_update:
        assert counts[1][1] == 1  # the project locked once, not once per row
        # Nor any other row once per row: the stored summaries' revision (`governance.summaries`)
        # is raised a few times a transaction, whatever its size.
        assert counts[1][2] <= counts[0][2], counts


def test_imported_records_and_their_audit_entries_are_those_of_one_by_one_creates(cast):
    caller = caller_for(cast.lead, cast.project)
    one = risk_create(caller=caller, data={"title": "Alone", "impact": 2, "likelihood": 3})
    single = AuditEntry.objects.get(target_id=str(one.pk))
    register_import(caller=caller, register="risks", upload=_csv("risks", 4))
    imported = list(Risk.objects.filter(project=cast.project, imported=True))
    assert sorted(r.title for r in imported) == [f"Risk {n}" for n in range(4)]
    entries = list(
        AuditEntry.objects.filter(kind="risk.created").exclude(pk=single.pk).order_by("pk")
    )
    # One entry per row, in the file's order, of the same shape as a single create's.
    assert [e.changes["title"]["after"] for e in entries] == [f"Risk {n}" for n in range(4)]
    assert {e.target_id for e in entries} == {str(r.pk) for r in imported}
    for entry in entries:
        assert entry.actor_account_id == cast.lead.account_id
        assert entry.project_key == cast.project.key
        assert set(entry.changes) - {"imported"} == set(single.changes) - {"imported"}


def test_the_stored_health_follows_an_import(cast):
    caller = caller_for(cast.lead, cast.project)
    risk_create(caller=caller, data={"title": "Small", "impact": 1, "likelihood": 1})
    assert ProjectHealth.objects.get(project=cast.project).derived_risk_rag == "Green"
    register_import(caller=caller, register="risks", upload=_csv("risks", 2))  # scores of 20
    assert ProjectHealth.objects.get(project=cast.project).derived_risk_rag == "Red"


@pytest.mark.parametrize("register", sorted(HEADERS))
def test_a_refused_row_writes_nothing_of_the_file(cast, register):
    caller = caller_for(cast.lead, cast.project)
    entries = AuditEntry.objects.count()
    with pytest.raises(ValidationFailed) as refused:
        register_import(caller=caller, register=register, upload=_csv(register, 30, bad_row=17))
    assert [row["row"] for row in refused.value.extra["rows"]] == [19]  # the header is row 1
    assert not MODELS[register].objects.filter(project=cast.project).exists()
    assert AuditEntry.objects.count() == entries


def test_outside_an_import_a_create_writes_at_once(cast):
    caller = caller_for(cast.lead, cast.project)
    risk = risk_create(caller=caller, data={"title": "Now", "impact": 2, "likelihood": 2})
    assert Risk.objects.filter(pk=risk.pk).exists()
    assert AuditEntry.objects.filter(target_id=str(risk.pk), kind="risk.created").exists()


def test_two_rows_of_one_file_cannot_link_the_same_issue(cast):
    """An issue's 'Work Package' field holds one reference: the second row that links it is
    refused, as a second create one by one would be, although the file's rows are written
    without a savepoint each."""
    from governance.tracker.local import scripting
    from registers.models import WorkPackage

    scripting.ensure_issue("ALPHA-1", summary="Epic 1")
    upload = SimpleUploadedFile(
        "work-packages.csv",
        b"name,linkedIssueKeys\nBuild,ALPHA-1\nRun,ALPHA-1\n",
    )
    with pytest.raises(ValidationFailed) as refused:
        register_import(
            caller=caller_for(cast.lead, cast.project), register="work-packages", upload=upload
        )
    assert [(p["row"], p["message"]) for p in refused.value.extra["rows"]] == [
        (3, "ALPHA-1 is already linked to the work package 'Build'.")
    ]
    assert not WorkPackage.objects.exists()


WRITES = ("INSERT", "UPDATE", "DELETE")


@pytest.mark.parametrize(
    ("register", "content"),
    [
        (
            "work-packages",
            b"id,name,linkedIssueKeys,budget,status,progress\n"
            b"11111111-1111-4111-8111-111111111111,Build,ALPHA-1,100,,\n"
            b"11111111-1111-4111-8111-111111111111,build,ALPHA-1,x,,\n"
            b",Run,ALPHA-2,5,Complete,40\n"
            b",Stored,,,,\n"
            b",Test,ALPHA-9,,,\n",
        ),
        ("risks", b"title,impact,likelihood,treatment\nOne,5,4,\n,9,4,\nTwo,3,3,Exploit\n"),
        ("decisions", b"decision,madeOn\nGo,2026-01-15\n,2026-01-15\nStop,yesterday\n"),
        ("changes", b"summary,impactBudget\nMore,100\n,5\nLess,lots\n"),
    ],
)
def test_the_preview_shows_every_error_the_commit_would_and_writes_nothing(cast, register, content):
    """The preview runs every check the import makes, on the same rows in the same order
    (within the file too: a name, an id or an issue taken by an earlier row), and sends no
    INSERT, UPDATE or DELETE; the import then refuses exactly the rows the preview named."""
    from governance.tracker.local import scripting
    from registers.models import WorkPackage
    from registers.services.imports import import_preview

    for key in ("ALPHA-1", "ALPHA-2"):
        scripting.ensure_issue(key, summary=f"Epic {key}")
    caller = caller_for(cast.lead, cast.project)
    if register == "work-packages":
        WorkPackage.objects.create(project=cast.project, name="Stored")
    entries = AuditEntry.objects.count()
    with CaptureQueriesContext(connection) as queries:
        preview = import_preview(
            caller=caller, register=register, upload=SimpleUploadedFile("f.csv", content)
        )
    written = [
        q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith(WRITES)
    ]
    assert written == []
    assert preview.errors
    assert AuditEntry.objects.count() == entries
    with pytest.raises(ValidationFailed) as refused:
        register_import(
            caller=caller, register=register, upload=SimpleUploadedFile("f.csv", content)
        )
    assert refused.value.extra["rows"] == preview.errors
    if register == "work-packages":
        # Rows 3 (the name and issue of row 2), 4 (progress), 5 (a stored name), 6 (no issue).
        assert sorted({e["row"] for e in preview.errors}) == [3, 4, 5, 6]
        assert {e["field"] for e in preview.errors if e["row"] == 3} >= {
            "name",
            "linkedIssueKeys[0]",
        }
        assert WorkPackage.objects.filter(project=cast.project).count() == 1


def test_a_clean_preview_writes_nothing_and_its_import_creates_what_it_listed(cast):
    from registers.services.imports import import_file, import_preview

    caller = caller_for(cast.lead, cast.project)
    content = b"title,impact,likelihood\nOne,5,4\nTwo,3,3\n"
    with CaptureQueriesContext(connection) as queries:
        preview = import_preview(
            caller=caller, register="risks", upload=SimpleUploadedFile("r.csv", content)
        )
    assert not [q for q in queries.captured_queries if q["sql"].lstrip().upper().startswith(WRITES)]
    assert (preview.created, preview.errors) == (2, [])
    assert not Risk.objects.filter(project=cast.project).exists()
    done = import_file(
        caller=caller,
        register="risks",
        upload=SimpleUploadedFile("r.csv", content),
        expected_digest=preview.digest,
    )
    assert done.created == 2 and done.listed == preview.listed
    assert sorted(Risk.objects.filter(project=cast.project).values_list("title", flat=True)) == [
        "One",
        "Two",
    ]
