"""A workbook opened and saved again by a spreadsheet program imports the same rows as the
file it came from: every register's CSV and XLSX export, saved again by LibreOffice (CSV as
CSV, XLSX as XLSX, XLSX as CSV, CSV as XLSX and as ODS, keeping the formula guard's apostrophe
as text and typing dates and numbers, XLSX as ODS), committed under tests/fixtures/spreadsheets/ by
`tools/resave_spreadsheets.py`. When `soffice` is installed, the round trip also runs live."""

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from registers import spreadsheets
from tests.factories import ProjectFactory
from tools import resave_spreadsheets as resave

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "spreadsheets"


@pytest.fixture
def lead(db, bearer):
    return resave.fixture_lead()


def _import(lead, bearer, project_key: str, register: str, path: Path):
    client = Client()
    response = client.post(
        f"/api/v1/projects/{project_key}/{register}/import",
        data={"file": SimpleUploadedFile(path.name, path.read_bytes())},
        **bearer(lead),
    )
    assert response.status_code == 201, (path, response.content)
    return response.json()


def _rows(project, register):
    writable = spreadsheets.WRITABLE[register]
    rows = [
        {key: value for key, value in record.items() if key in writable}
        for record in spreadsheets.records(project, register)
    ]
    return sorted(rows, key=repr)


def _same_rows(lead, bearer, register: str, original: Path, saved_again: Path) -> None:
    first = ProjectFactory(key="FIRST", lead=lead)
    again = ProjectFactory(key="AGAIN", lead=lead)
    before = _import(lead, bearer, "FIRST", register, original)
    after = _import(lead, bearer, "AGAIN", register, saved_again)
    assert before["created"] == after["created"] == len(resave.ROWS[register])
    assert _rows(again, register) == _rows(first, register)
    # Nothing in the saved-again file is read differently from the original (row 1 notes the
    # ignored columns only).
    assert [w for w in after["warnings"] if w["row"] > 1] == [
        w for w in before["warnings"] if w["row"] > 1
    ]


@pytest.mark.parametrize("register", resave.REGISTERS)
@pytest.mark.parametrize("kind", list(resave.KINDS))
def test_a_file_saved_again_by_libreoffice_imports_the_same_rows(lead, bearer, register, kind):
    source_format, target_filter = resave.KINDS[kind]
    original = FIXTURES / "original" / f"{register}.{source_format}"
    saved_again = FIXTURES / kind / f"{register}.{target_filter.split(':', 1)[0]}"
    _same_rows(lead, bearer, register, original, saved_again)


def test_the_fixtures_are_what_libreoffice_writes():
    """The committed files are LibreOffice's: its CSV quotes every text cell and has no BOM;
    its XLSX names the program in the workbook's properties."""
    csv = (FIXTURES / "libreoffice-csv" / "risks.csv").read_bytes()
    assert not csv.startswith(b"\xef\xbb\xbf") and csv.startswith(b'"id","projectKey"')
    import zipfile

    with zipfile.ZipFile(FIXTURES / "libreoffice-xlsx" / "risks.xlsx") as workbook:
        assert b"LibreOffice" in workbook.read("docProps/app.xml")


@pytest.mark.skipif(resave.soffice() is None, reason="LibreOffice (soffice) is not installed")
@pytest.mark.parametrize(
    "kind",
    ["libreoffice-csv", "libreoffice-xlsx", "libreoffice-csv-to-xlsx", "libreoffice-csv-to-ods"],
)
def test_a_live_round_trip_through_libreoffice(lead, bearer, kind, tmp_path):
    from governance.permissions import caller_for

    project = ProjectFactory(key="ALPHA", lead=lead)
    resave.build(caller_for(lead, project, can_browse=True))
    register = "work-packages"
    source_format, target_filter = resave.KINDS[kind]
    originals = resave.exports(project, tmp_path / "original")
    saved_again = resave.resave(originals[register, source_format], target_filter, tmp_path / kind)
    _same_rows(lead, bearer, register, originals[register, source_format], saved_again)
