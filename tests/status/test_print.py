"""The business case and a status report download as a PDF board paper, behind the page's
own permission."""

import pytest

from charter.models import BusinessCase
from charter.services import sync_mirror
from status.models import StatusReport
from tests.charter.conftest import complete_inputs


@pytest.fixture
def case(cast):
    case, _ = BusinessCase.objects.update_or_create(
        project=cast.project,
        defaults={**complete_inputs(cast), "approval_status": "Submitted"},
    )
    sync_mirror(cast.project, case)
    return case


def test_business_case_downloads_as_pdf(cast, case, client_for):
    page = client_for(cast.viewer).get("/projects/ALPHA/charter/")
    assert b"?format=pdf" in page.content and b"data-print" in page.content
    response = client_for(cast.viewer).get("/projects/ALPHA/charter/?format=pdf")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="alpha-business-case.pdf"'
    assert response.content.startswith(b"%PDF-")
    assert client_for(cast.outsider).get("/projects/ALPHA/charter/?format=pdf").status_code == 404


def test_status_report_downloads_as_pdf(cast, client_for):
    report = StatusReport.objects.create(
        project=cast.project,
        title="Week 12",
        state="Published",
        snapshot={"status": {}},
        created_by_account_id=cast.lead.account_id,
    )
    url = f"/projects/ALPHA/status/reports/{report.pk}/"
    assert b"?format=pdf" in client_for(cast.viewer).get(url).content
    response = client_for(cast.viewer).get(url + "?format=pdf")
    assert response.status_code == 200 and response.content.startswith(b"%PDF-")
    assert "alpha-status-report-week-12.pdf" in response["Content-Disposition"]
    assert client_for(cast.outsider).get(url + "?format=pdf").status_code == 404
