"""People in an import file as a migrated register writes them: by display name or e-mail as
well as accountId, in a column named by the API (ownerAccountId), by the page's label
(Owner) or as a name or e-mail column (ownerName, "Owner e-mail"); nothing ignored silently,
and a row naming no one, or two people, refused with the candidates."""

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from openpyxl import Workbook

from governance.permissions import caller_for
from registers import vocabulary
from registers.models import Risk, WorkPackage
from registers.services.imports import import_preview
from tests.factories import UserFactory


@pytest.fixture
def api(cast, bearer):
    client, auth = Client(), bearer(cast.lead)

    def call(path, content, name="file.csv", **data):
        data["file"] = SimpleUploadedFile(name, content)
        return client.post(f"/api/v1/projects/ALPHA/{path}", data=data, **auth)

    return call


def _csv(rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue().encode()


def _xlsx(rows: list[list[str]]) -> bytes:
    book = Workbook()
    for row in rows:
        book.active.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _commit(api, register: str, content: bytes, name: str = "file.csv"):
    preview = api(f"{register}/import?dryRun=true", content, name=name)
    assert preview.status_code == 200, preview.content
    body = preview.json()
    committed = api(f"{register}/import", content, name=name, previewDigest=body["previewDigest"])
    return body, committed


def _owners(model=Risk) -> dict[str, str]:
    key = "title" if model is Risk else "name"
    return dict(model.objects.values_list(key, "owner_account_id"))


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_column_of_names_headed_by_the_label_sets_the_owners(cast, api, fmt):
    rows = [
        ["Title", "Description", "Owner", "Impact", "Likelihood", "Treatment"],
        ["Vendor late", "Supplier slips", "Eddie Editor", "3", "4", "Mitigate"],
        ["Budget cut", "Funding drops", "  vera   VIEWER ", "2", "2", "Accept"],
        ["No owner", "Nobody yet", "", "1", "1", "Accept"],
    ]
    content = _csv(rows) if fmt == "csv" else _xlsx(rows)
    preview, committed = _commit(api, "risks", content, name=f"risks.{fmt}")
    assert preview["errors"] == [] and preview["create"] == 3
    assert committed.status_code == 201, committed.content
    assert _owners() == {
        "Vendor late": cast.editor.account_id,
        "Budget cut": cast.viewer.account_id,
        "No owner": None,
    }


@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_an_owner_name_column_alone_is_read_not_ignored(cast, api, fmt):
    rows = [["name", "ownerName"], ["Survey", "Lena Lead"], ["Design", "Sam Sponsor"]]
    content = _csv(rows) if fmt == "csv" else _xlsx(rows)
    preview, committed = _commit(api, "work-packages", content, name=f"wp.{fmt}")
    assert not [w for w in preview["warnings"] if w["field"] == "ownerName"]
    assert committed.status_code == 201, committed.content
    assert _owners(WorkPackage) == {
        "Survey": cast.lead.account_id,
        "Design": cast.sponsor.account_id,
    }


def test_an_email_column_and_an_account_id_column_are_read(cast, api):
    rows = [
        ["title", "description", "Owner e-mail", "impact", "likelihood", "treatment"],
        ["A", "a", "EDITOR@Example.test", "1", "1", "Accept"],
    ]
    _, committed = _commit(api, "risks", _csv(rows))
    assert committed.status_code == 201, committed.content
    assert _owners() == {"A": cast.editor.account_id}
    rows = [["name", "Owner"], ["Build", cast.pmo.account_id]]
    _, committed = _commit(api, "work-packages", _csv(rows))
    assert committed.status_code == 201, committed.content
    assert _owners(WorkPackage) == {"Build": cast.pmo.account_id}


def test_two_people_with_one_name_refuse_the_row_naming_their_emails(cast, api):
    twin = UserFactory(username="twin", display_name="Eddie Editor")
    from governance.tracker.local import scripting

    scripting.ensure_project("ALPHA", name="Alpha programme", lead="lead", browsers=["twin"])
    rows = [["name", "ownerName"], ["Survey", "Eddie Editor"], ["Design", "Lena Lead"]]
    preview = api("work-packages/import?dryRun=true", _csv(rows)).json()
    assert preview["create"] == 0
    assert preview["errors"] == [
        {
            "row": 2,
            "field": "ownerName",
            "message": "Row 2, Owner: 2 people are called “Eddie Editor”: "
            f"{cast.editor.email}, {twin.email} — write the e-mail.",
        }
    ]
    refused = api("work-packages/import", _csv(rows))
    assert refused.status_code == 422
    assert not WorkPackage.objects.exists()
    # The e-mail settles it.
    rows[1][1] = twin.email.upper()
    _, committed = _commit(api, "work-packages", _csv(rows))
    assert committed.status_code == 201, committed.content
    assert _owners(WorkPackage)["Survey"] == twin.account_id


def test_an_unknown_name_is_refused_naming_the_row_and_the_label(cast, api):
    rows = [
        ["summary", "Proposer", "Approver"],
        ["Move go-live", "Lena Lead", "Someone Else"],
    ]
    preview = api("changes/import?dryRun=true", _csv(rows)).json()
    assert preview["errors"] == [
        {
            "row": 2,
            "field": "Approver",
            "message": "Row 2, Approver: No one in this project is called “Someone Else”.",
        }
    ]


def test_two_columns_of_one_person_must_agree(cast, api):
    rows = [
        ["name", "ownerAccountId", "ownerName"],
        ["Agree", cast.editor.account_id, "Eddie Editor"],
        ["Disagree", cast.editor.account_id, "Lena Lead"],
        ["Renamed since", cast.editor.account_id, "Edward Editor"],
    ]
    preview = api("work-packages/import?dryRun=true", _csv(rows)).json()
    assert preview["errors"] == [
        {
            "row": 3,
            "field": "ownerName",
            "message": "The columns “ownerAccountId” and “ownerName” both give Owner and "
            "disagree: keep one, or make them name the same value.",
        }
    ]
    notes = [w for w in preview["warnings"] if w["row"] == 4]
    assert notes == [
        {
            "row": 4,
            "field": "ownerName",
            "message": "No one in this project is called “Edward Editor”. Owner is read "
            "from “ownerAccountId”.",
        }
    ]


def test_a_column_of_a_read_only_person_is_ignored_saying_why(cast, api):
    rows = [
        ["title", "description", "owner", "acceptedByName", "impact", "likelihood", "treatment"],
        ["A", "a", "Lena Lead", "Sam Sponsor", "1", "1", "Accept"],
    ]
    preview = api("risks/import?dryRun=true", _csv(rows)).json()
    assert preview["errors"] == []
    assert {
        "row": 1,
        "field": "acceptedByName",
        "message": "Read-only: ignored (the server sets it).",
    } in preview["warnings"]


def test_hostile_people_cells_are_refused_not_crashed_on(cast, api):
    rows = [
        ["name", "Owner"],
        ["Nul", "Lena\x00Lead"],
        ["Noncharacter", "Lena Lead\ufffe"],
        ["Long", "L" * 30_000],
        ["Fine", "Lena Lead"],
    ]
    content = "\n".join(",".join(r) for r in rows).encode()
    preview = api("work-packages/import?dryRun=true", content).json()
    assert preview["create"] == 0
    refused = {e["row"]: e["message"] for e in preview["errors"]}
    assert sorted(refused) == [2, 3, 4]
    assert "control character" in refused[2]
    assert "noncharacter" in refused[3]
    assert refused[4] == (
        "Row 4, Owner: Too long to be a person (30,000 characters): write their e-mail "
        "address, display name or account id."
    )


def test_labels_head_every_column(cast, api):
    header = [
        vocabulary.column_label("work-packages", f)
        for f in ["name", "plannedStartDate", "plannedEndDate", "budget", "ownerAccountId"]
    ]
    rows = [header, ["Survey", "2027-01-04", "2027-02-26", "1,200", "Lena Lead"]]
    _, committed = _commit(api, "work-packages", _csv(rows))
    assert committed.status_code == 201, committed.content
    package = WorkPackage.objects.get()
    assert (str(package.planned_start_date), package.budget, package.owner_account_id) == (
        "2027-01-04",
        1200,
        cast.lead.account_id,
    )


def test_people_are_looked_up_once_per_import_not_per_row(cast):
    caller = caller_for(cast.lead, cast.project)
    names = ["Lena Lead", "Eddie Editor", "SPONSOR@example.TEST", ""]

    def upload(n):
        rows = [["name", "Owner"]] + [[f"P{i}", names[i % 4]] for i in range(n)]
        return SimpleUploadedFile("w.csv", _csv(rows))

    import_preview(caller=caller, register="work-packages", upload=upload(3))
    counts = []
    for n in (10, 300):
        with CaptureQueriesContext(connection) as queries:
            outcome = import_preview(caller=caller, register="work-packages", upload=upload(n))
        assert outcome.errors == []
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1]


def test_the_templates_person_columns_offer_the_projects_people(cast, api, bearer):
    from openpyxl import load_workbook

    UserFactory(username="twin", display_name="Eddie Editor")
    from governance.tracker.local import scripting

    scripting.ensure_project("ALPHA", name="Alpha programme", lead="lead", browsers=["twin"])
    response = Client().get(
        "/api/v1/projects/ALPHA/risks/template?format=xlsx", **bearer(cast.lead)
    )
    book = load_workbook(io.BytesIO(response.content))
    people = book["People"]
    assert people.sheet_state == "hidden"
    listed = [row[0] for row in people.iter_rows(values_only=True)]
    # Two Eddie Editors: each is offered by e-mail, which the import tells apart.
    assert "Lena Lead" in listed and "Otto Outsider" not in listed
    assert {"editor@example.test", "twin@example.test"} <= set(listed)
    assert "Eddie Editor" not in listed
    sheet = book.active
    header = [c.value for c in sheet[1]]
    column = sheet.cell(row=1, column=header.index("ownerAccountId") + 1).column_letter
    rules = [v for v in sheet.data_validations.dataValidation if "People" in (v.formula1 or "")]
    assert len(rules) == 1 and str(rules[0].sqref).startswith(f"{column}2:")
    # Rows filled from the drop-down import with their owners.
    for row in sheet.iter_rows(min_row=2):
        for cell in row:
            cell.value = None
    values = {"title": "Picked", "description": "d", "impact": 1, "likelihood": 1}
    values |= {"treatment": "Accept", "ownerAccountId": "twin@example.test"}
    for field, value in values.items():
        sheet.cell(row=2, column=header.index(field) + 1).value = value
    buffer = io.BytesIO()
    book.save(buffer)
    _, committed = _commit(api, "risks", buffer.getvalue(), name="risks.xlsx")
    assert committed.status_code == 201, committed.content
    assert _owners()["Picked"] == scripting.LocalAccount.objects.get(name="twin").account_id


def test_hostile_names_on_the_templates_people_sheet_stay_text(cast, monkeypatch):
    """A name as a tracker may hold it (a formula, a control character, a noncharacter) is
    written as text a workbook can hold, never as a formula, never a 500."""
    from openpyxl import load_workbook

    from registers import import_templates

    hostile = ['=HYPERLINK("http://x")', "Ann\x01 Lee\ufffe", "+cmd"]
    monkeypatch.setattr(import_templates, "people_choices", lambda people: hostile)
    content, _, _ = import_templates.template(cast.project, "risks", "xlsx")
    listed = load_workbook(io.BytesIO(content))["People"]
    cells = [row[0] for row in listed.iter_rows(min_row=1)]
    assert [c.value for c in cells] == [hostile[0], "Ann Lee\ufffd", "+cmd"]
    assert {c.data_type for c in cells} == {"s"}
