"""The portfolio's CSV and XLSX exports are streamed: the CSV sent in pieces as it is written,
the XLSX written row by row (write-only) to a temporary file and sent from it; both read back."""

import csv
import io

import openpyxl
from django.http import StreamingHttpResponse

from portfolio import exports


def test_the_csv_export_is_sent_in_pieces_and_reads_back(cast, client_for, monkeypatch):
    monkeypatch.setattr(exports, "CHUNK", 1)
    response = client_for(cast.site_admin).get("/portfolio/export/?format=csv")
    assert response.status_code == 200 and isinstance(response, StreamingHttpResponse)
    pieces = list(response.streaming_content)
    assert len(pieces) >= 2
    header, *body = list(csv.reader(io.StringIO(b"".join(pieces).decode("utf-8-sig"))))
    assert header[:2] == ["Project key", "Project"]
    assert "ALPHA" in [row[0] for row in body]


def test_the_xlsx_export_is_streamed_from_its_file_and_reads_back(cast, client_for):
    response = client_for(cast.site_admin).get("/portfolio/export/?format=xlsx")
    assert response.status_code == 200 and isinstance(response, StreamingHttpResponse)
    content = response.getvalue()
    assert int(response["Content-Length"]) == len(content)
    sheet = openpyxl.load_workbook(io.BytesIO(content))["Portfolio"]
    assert sheet.freeze_panes == "C2"
    values = list(sheet.values)
    assert values[0][0] == "Project key" and "ALPHA" in [row[0] for row in values[1:]]
