"""The import benchmark (bench/bench_imports.py) runs: small, its honest files are imported
whole and its hostile ones are refused, and each line says what it measured."""

from bench import bench_imports
from registers import spreadsheets
from registers.models import Risk


def test_the_import_benchmark_imports_the_largest_files_and_refuses_the_hostile_ones(db):
    lines = bench_imports.run(rows=20, repeat=1)
    assert len(lines) == 7
    assert lines[0].startswith("CSV, largest allowed") and "20 rows created" in lines[0]
    assert lines[1].startswith("XLSX, largest allowed") and "20 rows created" in lines[1]
    assert "refused (characters per cell)" in lines[2]
    assert "refused (characters of text per file)" in lines[3]
    assert "refused (rows per" in lines[4]
    assert "outline level 1, 8 work packages: preview" in lines[5]
    assert "outline level 2, 192 work packages: preview" in lines[6]
    assert all("median of 1" in line for line in lines)
    for line in (lines[0], lines[1], lines[5], lines[6]):  # what a person waits for, judged
        assert "preview" in line and "+ commit" in line
        assert "target 5 s for preview plus commit: met" in line or "MISSED" in line
    assert not Risk.objects.exists()


def test_the_largest_files_are_at_the_limits():
    csv_file = bench_imports.largest_csv(200, 200_000)
    assert 199_000 < len(csv_file) <= 200_000
    rows = spreadsheets.read_rows("risks", _upload("largest.csv", csv_file))
    assert len(rows) == 200
    xlsx_file = bench_imports.largest_xlsx(200, 400_000)
    rows = spreadsheets.read_rows("risks", _upload("largest.xlsx", xlsx_file))
    text = sum(len(v) for _, data in rows for v in data.values() if isinstance(v, str))
    assert 399_000 - 4 * 200 < text <= 400_000


def _upload(name, content):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content)
