"""Every register's export, opened and saved again by LibreOffice, as committed test fixtures.

    python tools/resave_spreadsheets.py [OUT]   # default tests/fixtures/spreadsheets

Builds the registers of one project in a throwaway SQLite database (the rows of `ROWS`: quotes,
commas, line breaks, non-ASCII text, formula-like text, dates, amounts), exports each register
as CSV and XLSX into OUT/original/, and has LibreOffice (headless `soffice`) open and save them
again as a person would: CSV saved as CSV (OUT/libreoffice-csv/), XLSX saved as XLSX
(OUT/libreoffice-xlsx/), XLSX saved as CSV (OUT/libreoffice-xlsx-to-csv/), CSV saved as XLSX
and ODS (OUT/libreoffice-csv-to-xlsx/, OUT/libreoffice-csv-to-ods/) and XLSX saved as ODS
(OUT/libreoffice-xlsx-to-ods/).
`tests/registers/test_spreadsheet_programs.py` imports the committed files (no LibreOffice
needed) and, when `soffice` is there, does the same round trip live with `resave`."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The lead who owns the rows: a fixed tracker account, so the test can sign in as the same one.
LEAD_NAME = "fixture-lead"
LEAD_ACCOUNT_ID = "712020:00000000-0000-4000-8000-00000000f1e1"
REGISTERS = ["work-packages", "risks", "decisions", "changes"]
FORMATS = ["csv", "xlsx"]
# LibreOffice's CSV filter options: comma, double quote, UTF-8 (76), from line 1.
CSV_FILTER = "Text - txt - csv (StarCalc):44,34,76,1"
KINDS = {
    # kind: (source format, LibreOffice's output filter)
    "libreoffice-csv": ("csv", f"csv:{CSV_FILTER}"),
    "libreoffice-xlsx": ("xlsx", "xlsx:Calc MS Excel 2007 XML"),
    "libreoffice-xlsx-to-csv": ("xlsx", f"csv:{CSV_FILTER}"),
    # A CSV export opened in LibreOffice and saved as a workbook: the formula guard's
    # apostrophe becomes text, dates and numbers become typed cells.
    "libreoffice-csv-to-xlsx": ("csv", "xlsx:Calc MS Excel 2007 XML"),
    "libreoffice-csv-to-ods": ("csv", "ods:calc8"),
    "libreoffice-xlsx-to-ods": ("xlsx", "ods:calc8"),
}
TEXTS = [
    'Vendor "X", late',
    "two lines\nof text",
    "Zürich, 東京 ✓ naïve",
    "+44 scope",
    "semi; colon and more",
    "plain text",
]
ROWS = {
    "work-packages": [
        {
            "name": text,
            "commentary": TEXTS[-1 - i],
            "plannedStartDate": "2027-01-04",
            "plannedEndDate": "2027-03-31",
            "status": "In Progress",
            "progress": 30,
            "budget": 130500.5 + i,
            "budgetForecast": 1250000,
            "budgetPhasing": [{"period": "2027-01", "amount": 12000}],
        }
        for i, text in enumerate(TEXTS)
    ],
    "risks": [
        {
            "title": text,
            "description": TEXTS[-1 - i],
            "impact": 4,
            "likelihood": 2,
            "treatment": "Mitigate",
            "mitigation": "Hedge, then wait",
        }
        for i, text in enumerate(TEXTS)
    ],
    "decisions": [
        {"decision": text, "rationale": TEXTS[-1 - i], "madeOn": "2026-01-15"}
        for i, text in enumerate(TEXTS)
    ],
    "changes": [
        {
            "summary": text,
            "reason": TEXTS[-1 - i],
            "impactBudget": -250.25,
            "impactScheduleDays": -3,
            "dimensions": ["Scope", "Budget"],
        }
        for i, text in enumerate(TEXTS)
    ],
}


def soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def resave(source: Path, target_filter: str, out_dir: Path) -> Path:
    """`source` opened and saved again by LibreOffice with `target_filter`, into `out_dir`
    (a profile of its own, so a running LibreOffice is not disturbed)."""
    program = soffice()
    if program is None:
        raise RuntimeError("LibreOffice (soffice) is not installed.")
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        command = [
            program,
            f"-env:UserInstallation=file://{profile}",
            "--headless",
            "--norestore",
        ]
        if source.suffix == ".csv":
            command.append("--infilter=CSV:44,34,76,1")
        command += ["--convert-to", target_filter, "--outdir", str(out_dir), str(source)]
        subprocess.run(command, check=True, capture_output=True, timeout=120)
    extension = target_filter.split(":", 1)[0]
    return out_dir / f"{source.stem}.{extension}"


def fixture_lead():
    """The lead of the fixtures' project, with the fixed account id LEAD_ACCOUNT_ID."""
    from governance.tracker.local.models import LocalAccount
    from tests.factories import UserFactory

    LocalAccount.objects.get_or_create(
        name=LEAD_NAME, defaults={"account_id": LEAD_ACCOUNT_ID, "display_name": "Lena Lead"}
    )
    return UserFactory(username=LEAD_NAME, display_name="Lena Lead")


def build(caller) -> None:
    """The rows of ROWS, through each register's create service."""
    from registers import services

    create = {
        "work-packages": services.work_package_create,
        "risks": services.risk_create,
        "decisions": services.decision_create,
        "changes": services.change_create,
    }
    for register, rows in ROWS.items():
        for data in rows:
            create[register](caller=caller, data=dict(data))


def exports(project, out_dir: Path) -> dict[tuple[str, str], Path]:
    from registers import spreadsheets

    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for register in REGISTERS:
        for file_format in FORMATS:
            content, _, _ = spreadsheets.export(project, register, file_format, "api")
            path = out_dir / f"{register}.{file_format}"
            path.write_bytes(content)
            written[register, file_format] = path
    return written


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch}/db.sqlite3"
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        from django.core.management import call_command

        from governance.permissions import caller_for
        from tests.factories import ProjectFactory

        call_command("migrate", verbosity=0)
        lead = fixture_lead()
        project = ProjectFactory(key="ALPHA", name="Alpha programme", lead=lead)
        build(caller_for(lead, project, can_browse=True))
        originals = exports(project, out / "original")
    for kind, (source_format, target_filter) in KINDS.items():
        for register in REGISTERS:
            resave(originals[register, source_format], target_filter, out / kind)
    print(f"Wrote {out}/original and the files LibreOffice saved again.")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests/fixtures/spreadsheets")
