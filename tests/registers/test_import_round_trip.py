"""CSV is read as RFC 4180 (only the delimiter is guessed, from the start of the file, not
its first line), and every register exported to CSV and to XLSX imports back to the same
rows: quotes, commas, line breaks, non-ASCII text and formula-guarded cells included."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from registers import spreadsheets
from registers.models import Risk
from tests.factories import ProjectFactory

TEXTS = [
    'Vendor "X", late',
    "two lines\nof text",
    "carriage return\r\nline feed",
    "Zürich, 東京 ✓ naïve",
    '=HYPERLINK("http://example.test","x")',
    "+44 scope",
    "-5 days",
    "@mention",
    "'=typed with its apostrophe",
    "'quoted by hand'",
    "''two apostrophes",
    "literal _x000D_ and _x005F_ text",
    "semi; colon\tand tab",
]
# The fields that hold text, per register: (the required one, a long one).
TEXT_FIELDS = {
    "work-packages": ("name", "commentary"),
    "risks": ("title", "description"),
    "decisions": ("decision", "rationale"),
    "changes": ("summary", "reason"),
}
EXTRA = {
    "work-packages": {
        "budget": 1234.5,
        "plannedStartDate": "2026-02-01",
        "progress": 30,
        "status": "In Progress",
    },
    "risks": {"impact": 4, "likelihood": 2, "mitigation": "Hedge, then wait"},
    "decisions": {"madeOn": "2026-01-15"},
    "changes": {"impactBudget": -250, "impactScheduleDays": -3, "dimensions": ["Scope"]},
}


def _post(client, auth, path, **kwargs):
    return client.post(f"/api/v1/projects/{path}", **kwargs, **auth)


@pytest.fixture
def lead(cast, bearer):
    client, auth = Client(), bearer(cast.lead)

    def call(method, path, body=None, upload=None):
        if upload is not None:
            return _post(client, auth, path, data={"file": SimpleUploadedFile(*upload)})
        if method == "GET":
            return client.get(f"/api/v1/projects/{path}", **auth)
        return _post(client, auth, path, data=body, content_type="application/json")

    return call


def _rows(project, register):
    """The register's rows as the import writes them: its writable fields, in a stable order."""
    writable = spreadsheets.WRITABLE[register]
    rows = [
        {key: value for key, value in record.items() if key in writable}
        for record in spreadsheets.records(project, register)
    ]
    return sorted(rows, key=repr)


@pytest.mark.parametrize("shape", ["api", "people"])
@pytest.mark.parametrize("file_format", ["csv", "xlsx"])
@pytest.mark.parametrize("register", list(TEXT_FIELDS))
def test_every_register_exported_imports_back_to_the_same_rows(
    cast, lead, register, file_format, shape
):
    """Both shapes: the API's columns, and the one for people (labels, names, typed cells)."""
    required, long_text = TEXT_FIELDS[register]
    for index, text in enumerate(TEXTS):
        body = {required: text, long_text: TEXTS[-1 - index], **EXTRA[register]}
        response = lead("POST", f"ALPHA/{register}", body)
        assert response.status_code == 201, response.content
    exported = lead("GET", f"ALPHA/{register}/export?format={file_format}&shape={shape}")
    exported = exported.getvalue()
    beta = ProjectFactory(key="BETA", lead=cast.lead)
    response = lead("POST", f"BETA/{register}/import", upload=(f"back.{file_format}", exported))
    assert response.status_code == 201, response.content
    assert response.json()["created"] == len(TEXTS)
    # Only the export's read-only and name columns are noted (row 1): every value reads as is.
    assert {w["row"] for w in response.json()["warnings"]} == {1}
    original, imported = _rows(cast.project, register), _rows(beta, register)
    assert imported == original
    assert {row[required] for row in imported} == set(TEXTS)


def test_the_export_guards_formulas_and_apostrophes_in_csv_only(cast, lead):
    for text in ("=SUM(A1)", "'=typed", "plain 'quote'"):
        lead("POST", "ALPHA/risks", {"title": text})
    exported = lead("GET", "ALPHA/risks/export?format=csv&shape=api").getvalue().decode("utf-8-sig")
    assert "'=SUM(A1)" in exported and "''=typed" in exported
    assert "'plain" not in exported


def _import(lead, content: bytes, name: str = "risks.csv"):
    return lead("POST", "ALPHA/risks/import", upload=(name, content))


def test_the_issue_row_keeps_its_quotes_commas_and_second_cell(cast, lead):
    content = b'title,description\n"Vendor ""X"", late",desc one\n'
    response = _import(lead, content)
    assert response.status_code == 201, response.content
    risk = Risk.objects.get()
    assert (risk.title, risk.description) == ('Vendor "X", late', "desc one")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'title;description\n"Vendor; late";"a, b"\n', ("Vendor; late", "a, b")),
        (b'title\tdescription\n"Vendor\tlate"\t"a; b, c"\n', ("Vendor\tlate", "a; b, c")),
        (b'title,description\r\n"Line one\r\nline two","x;y"\r\n', ("Line one\r\nline two", "x;y")),
        (b'\xef\xbb\xbftitle,description\n"Zu\xcc\x88rich, \xe6\x9d\xb1",""""\n', None),
    ],
    ids=["semicolon", "tab", "crlf", "bom and non-ascii"],
)
def test_quoted_cells_are_read_whole_whatever_the_delimiter(cast, lead, content, expected):
    response = _import(lead, content)
    assert response.status_code == 201, response.content
    risk = Risk.objects.get()
    if expected is None:
        expected = ("Zu\u0308rich, \u6771", '"')
    assert (risk.title, risk.description) == expected


def test_the_delimiter_comes_from_the_rows_not_the_header_alone(cast, lead):
    """A one-column header splits on nothing; the rows are read as comma-separated text."""
    response = _import(lead, b'title\n"Vendor, late"\n"Another ""one"""\n')
    assert response.status_code == 201, response.content
    assert sorted(Risk.objects.values_list("title", flat=True)) == [
        'Another "one"',
        "Vendor, late",
    ]


def test_a_hand_typed_guard_is_taken_off_once(cast, lead):
    response = _import(lead, b"title\n'=1+1\n'plain\n''=2\n")
    assert response.status_code == 201, response.content
    assert sorted(Risk.objects.values_list("title", flat=True)) == ["'=2", "'plain", "=1+1"]
