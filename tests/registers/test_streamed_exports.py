"""The register exports stream every row: a StreamingHttpResponse on the page and in the API,
the CSV sent in pieces as the rows are read (`EXPORT_CHUNK` at a time, in the register's
order), the XLSX written row by row and sent from a temporary file; what they send imports back
into another project to the same rows."""

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.http import StreamingHttpResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext
from openpyxl import load_workbook

from registers import selectors, spreadsheets
from registers.models import Risk
from tests.factories import ProjectFactory
from tests.registers.test_queries import REGISTERS, fill

API = "/api/v1/projects"
TITLE = {
    "work-packages": "name",
    "risks": "title",
    "decisions": "decision",
    "changes": "summary",
}
IN_ORDER = {
    "work-packages": selectors.work_packages,
    "risks": selectors.risks,
    "decisions": selectors.decisions,
    "changes": selectors.changes,
}


@pytest.mark.parametrize("register", REGISTERS)
@pytest.mark.parametrize("file_format", ["csv", "xlsx"])
def test_an_export_streams_and_imports_back_into_another_project(
    cast, bearer, register, file_format, monkeypatch
):
    monkeypatch.setattr(spreadsheets, "EXPORT_CHUNK", 4)
    auth = bearer(cast.lead)
    client = Client()
    for number in range(11):
        created = client.post(
            f"{API}/ALPHA/{register}",
            json.dumps({TITLE[register]: f"Row {number}"}),
            content_type="application/json",
            **auth,
        )
        assert created.status_code == 201, created.content
    response = client.get(f"{API}/ALPHA/{register}/export?format={file_format}&shape=api", **auth)
    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Disposition"].startswith('attachment; filename="ALPHA-')
    pieces = list(response.streaming_content)
    content = b"".join(pieces)
    if file_format == "csv":
        assert len(pieces) >= 3  # 11 rows, 4 at a time: the file was sent as it was written
        rows = list(csv.DictReader(io.StringIO(content.decode("utf-8-sig"))))
    else:
        assert int(response["Content-Length"]) == len(content)
        sheet = load_workbook(io.BytesIO(content), read_only=True).worksheets[0]
        table = [list(r) for r in sheet.iter_rows(values_only=True)]
        rows = [dict(zip(table[0], r, strict=True)) for r in table[1:]]
    # Every row once, in the register's order.
    assert [r["id"] for r in rows] == [str(r.pk) for r in IN_ORDER[register](cast.project)]
    ProjectFactory(key="BETA", lead=cast.lead)
    back = client.post(
        f"{API}/BETA/{register}/import",
        {"file": SimpleUploadedFile(f"back.{file_format}", content)},
        **auth,
    )
    assert back.status_code == 201, back.content
    assert back.json()["created"] == 11
    listed = client.get(f"{API}/BETA/{register}?pageSize=500", **auth).json()["items"]
    field = TITLE[register]
    assert sorted(r[field] for r in listed) == sorted(str(r[field]) for r in rows)


def test_the_page_export_streams_too(cast, client_for):
    fill(cast, "risks", 3)
    response = client_for(cast.viewer).get("/projects/ALPHA/registers/risks/export/?format=xlsx")
    assert response.status_code == 200 and isinstance(response, StreamingHttpResponse)
    assert response.getvalue()[:2] == b"PK"


def test_the_rows_are_read_in_chunks_and_no_chunk_reads_per_row(cast, bearer, monkeypatch):
    """An export reads its rows a chunk at a time (a query per chunk, and for the risks one
    for the decisions treating them), never one per row."""
    monkeypatch.setattr(spreadsheets, "EXPORT_CHUNK", 10)
    fill(cast, "risks", 40)
    auth = bearer(cast.viewer)

    def queries(rows: int) -> int:
        with CaptureQueriesContext(connection) as ctx:
            response = Client().get(f"{API}/ALPHA/risks/export?format=csv", **auth)
            body = response.getvalue()
        assert body.count(b"\n") == rows + 1
        return len(ctx.captured_queries)

    forty = queries(40)
    fill(cast, "risks", 20)  # two chunks more
    assert Risk.objects.count() == 60
    assert queries(60) - forty <= 2 * 2 + 2  # per chunk (rows, treating), and a cursor's own


def test_the_export_keeps_the_file_out_of_memory(cast, monkeypatch):
    """The XLSX is written to a temporary file, and sent from it in pieces."""
    fill(cast, "decisions", 5)
    pieces, content_type, name, size = spreadsheets.export_stream(cast.project, "decisions", "xlsx")
    assert not isinstance(pieces, list | bytes)
    content = b"".join(pieces)
    assert size == len(content) and content[:2] == b"PK"
    assert name.endswith(".xlsx") and content_type.startswith("application/vnd.openxml")
