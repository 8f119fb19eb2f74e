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


def test_the_pdfs_take_a_personal_api_token(cast, case, monkeypatch):
    """A client with a personal API token fetches both PDFs, as the JSON API takes it (not a
    302 to the sign-in page), under the same gates: 404 for a project it may not see."""
    from django.test import Client

    from governance import oauth
    from governance.services import token_create

    report = StatusReport.objects.create(
        project=cast.project,
        title="Status report March",
        state="Published",
        snapshot={"status": {}},
        created_by_account_id=cast.lead.account_id,
    )
    urls = [
        "/projects/ALPHA/charter/?format=pdf",
        f"/projects/ALPHA/status/reports/{report.pk}/?format=pdf",
    ]
    client = Client()
    _, viewer = token_create(user=cast.viewer, name="reports")
    _, outsider = token_create(user=cast.outsider, name="reports")
    for url in urls:
        response = client.get(url, HTTP_AUTHORIZATION=f"Bearer {viewer}")
        assert response.status_code == 200 and response.content.startswith(b"%PDF-")
        assert client.get(url, HTTP_AUTHORIZATION=f"Bearer {outsider}").status_code == 404
        bad = client.get(url, HTTP_AUTHORIZATION="Bearer not-a-token")
        assert bad.status_code == 401 and bad.json()["error"]["code"] == "unauthenticated"
        assert bad["WWW-Authenticate"] == "Bearer"
    # The words are not repeated in the file name.
    assert 'filename="alpha-status-report-march.pdf"' in response["Content-Disposition"]
    # The page itself (no PDF asked for) still wants a session.
    page = client.get(urls[1].split("?")[0], HTTP_AUTHORIZATION=f"Bearer {viewer}")
    assert page.status_code == 302
    # An OAuth access token is for /mcp only.
    monkeypatch.setattr(oauth, "user_for_access_token", lambda request, raw: object())
    mcp_only = client.get(urls[0], HTTP_AUTHORIZATION="Bearer from-a-connector")
    assert mcp_only.status_code == 401 and "/mcp only" in mcp_only.json()["error"]["message"]


def test_pdf_file_names_say_each_word_once():
    from governance.pdf import file_name

    assert file_name("ALPHA status report Status report 12") == "alpha-status-report-12"
    assert file_name("ALPHA business case") == "alpha-business-case"
    assert file_name("") == "page"


def test_every_refusal_of_a_pdf_asked_for_with_a_token_is_the_api_error_body(cast, case):
    """A token's caller is a program: each PDF's refusals (a bad token, a project or a report
    it may not see or that does not exist, too many bad tokens from its address) answer the
    API's JSON error body with the API's status and headers, never an HTML page."""
    import uuid

    from django.conf import settings
    from django.test import Client

    from governance.api import ERROR_CODES
    from governance.services import token_create

    report = StatusReport.objects.create(
        project=cast.project,
        title="Week 12",
        state="Published",
        snapshot={"status": {}},
        created_by_account_id=cast.lead.account_id,
    )
    _, viewer = token_create(user=cast.viewer, name="reports")
    _, outsider = token_create(user=cast.outsider, name="reports")
    pdfs = [
        "/projects/{key}/charter/?format=pdf",
        "/projects/{key}/status/reports/{report}/?format=pdf",
    ]
    cases = [
        ("ALPHA", report.pk, "Bearer not-a-token", 401, "unauthenticated"),
        ("ALPHA", report.pk, f"Bearer {outsider}", 404, "not_found"),
        ("NOPE", report.pk, f"Bearer {viewer}", 404, "not_found"),
        ("ALPHA", uuid.uuid4(), f"Bearer {viewer}", 404, "not_found"),
    ]
    client = Client()
    for template in pdfs:
        for key, report_id, authorization, status, code in cases:
            if key == "ALPHA" and "{report}" not in template and report_id != report.pk:
                continue
            url = template.format(key=key, report=report_id)
            response = client.get(url, HTTP_AUTHORIZATION=authorization, REMOTE_ADDR="10.9.9.1")
            assert response.status_code == status, (url, authorization)
            assert response["Content-Type"] == "application/json", (url, authorization)
            assert response.json()["error"]["code"] == code, (url, response.content[:200])
            assert response.json()["error"]["code"] in ERROR_CODES
    # Past the limit of bad tokens from one address: 429 with Retry-After, as the API says.
    for number in range(settings.API_TOKEN_FAILURE_LIMIT + 1):
        client.get(pdfs[0].format(key="ALPHA"), HTTP_AUTHORIZATION=f"Bearer gov_bad{number}")
    for template in pdfs:
        url = template.format(key="ALPHA", report=report.pk)
        throttled = client.get(url, HTTP_AUTHORIZATION="Bearer gov_bad")
        assert throttled.status_code == 429, url
        assert throttled["Content-Type"] == "application/json"
        assert throttled.json()["error"]["code"] == "throttled"
        assert int(throttled["Retry-After"]) > 0
        # The right token still passes from that address.
        fetched = client.get(url, HTTP_AUTHORIZATION=f"Bearer {viewer}")
        assert fetched.status_code == 200 and fetched.content.startswith(b"%PDF-")
