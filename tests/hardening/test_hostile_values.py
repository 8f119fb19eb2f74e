"""Hostile bytes, numbers and dates (second hardening round). Each case answered 500, stored
something no page could draw, or leaked an exception's text; each now answers 4xx with the
error body naming the field, and what was stored already is drawn."""

import datetime as dt
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from mcp import Client as McpClient

from agent import catalogue
from agent.mcp_server import build_server
from governance import cleaning
from governance.models import AuditEntry
from governance.tracker.local import scripting
from registers.models import ChangeRequest, Risk, WorkPackage
from tests.agent.conftest import EVERYONE, use_group
from tests.conftest import run_async
from tests.factories import WorkPackageFactory

BASE = "/api/v1/projects/ALPHA"
FAR = "9999-12-31"


@pytest.fixture
def lead(cast, bearer):
    client = Client()
    auth = bearer(cast.lead)

    def send(method, path, body=None, content_type="application/json"):
        if method == "GET":
            return client.get(BASE + path, **auth)
        data = body if isinstance(body, str | bytes) else json.dumps(body)
        return client.generic(method, BASE + path, data, content_type=content_type, **auth)

    return send


@pytest.fixture
def everyone(cast):
    """The assistant open to the whole cast."""
    scripting.ensure_group(EVERYONE, members=["lead", "editor", "viewer"])
    use_group(EVERYONE)


def _refused(response, status=422, field=None):
    assert response.status_code == status, response.content[:400]
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert error["message"]
    if field is not None:
        assert field in error["fields"], error
    return error


# --- 2. dates outside the accepted range ---------------------------------------------------


@pytest.mark.parametrize("value", [FAR, "0001-01-01", "1899-12-31", "2200-01-01"])
def test_a_date_outside_the_range_is_refused_naming_the_range(value):
    assert cleaning.iso_date(value) == (None, cleaning.DATE_RANGE_MESSAGE)


@pytest.mark.parametrize("value", ["1900-01-01", "2199-12-31", "2026-05-01"])
def test_a_date_inside_the_range_is_read(value):
    assert cleaning.iso_date(value) == (dt.date.fromisoformat(value), None)


@pytest.mark.parametrize("field", ["plannedEndDate", "forecastEndDate", "actualEnd"])
def test_the_api_refuses_a_far_work_package_date(cast, lead, field):
    wp = WorkPackageFactory(project=cast.project)
    error = _refused(lead("PATCH", f"/work-packages/{wp.pk}", {field: FAR}), field=field)
    assert error["fields"][field] == [cleaning.DATE_RANGE_MESSAGE]
    _refused(lead("POST", "/work-packages", {"name": "Far", field: FAR}), field=field)
    assert WorkPackage.objects.count() == 1


def test_the_page_form_refuses_a_far_date_next_to_the_field(cast, client_for):
    response = client_for(cast.lead).post(
        "/projects/ALPHA/registers/work-packages/",
        {"name": "Build", "plannedEndDate": FAR, "status": "Not Started"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    assert cleaning.DATE_RANGE_MESSAGE in response.content.decode()
    assert not WorkPackage.objects.exists()


@pytest.mark.parametrize("stored", [dt.date(9999, 12, 31), dt.date(1, 1, 1)])
def test_a_far_date_stored_before_the_rule_is_still_drawn(cast, client_for, stored):
    WorkPackageFactory(project=cast.project, forecast_start_date=stored, forecast_end_date=stored)
    WorkPackageFactory(project=cast.project, planned_end_date=stored, actual_start_date=stored)
    client = client_for(cast.viewer)
    for path in ["/projects/ALPHA/registers/work-packages/", "/projects/ALPHA/status/"]:
        response = client.get(path)
        assert response.status_code == 200, (path, response.content[:300])


def test_an_approved_schedule_variation_past_any_date_still_draws_the_status(cast, client_for):
    WorkPackageFactory(project=cast.project, planned_end_date=dt.date(2199, 12, 1))
    for _ in range(3):
        ChangeRequest.objects.create(
            project=cast.project, summary="Slip", status="Approved", impact_schedule_days=2**31 - 1
        )
    assert client_for(cast.viewer).get("/projects/ALPHA/status/").status_code == 200


def test_csv_import_refuses_a_far_date_naming_the_row_and_field(cast, bearer):
    content = b"name,plannedEndDate\nBuild,2026-06-30\nRun,9999-12-31\n"
    response = Client().post(
        BASE + "/work-packages/import",
        {"file": SimpleUploadedFile("w.csv", content)},
        **bearer(cast.lead),
    )
    assert response.status_code == 422, response.content
    rows = response.json()["error"]["rows"]
    assert rows == [{"row": 3, "field": "plannedEndDate", "message": cleaning.DATE_RANGE_MESSAGE}]
    assert not WorkPackage.objects.exists()


def test_the_agent_refuses_a_far_forecast_date(cast, bearer, everyone):
    wp = WorkPackageFactory(project=cast.project)
    arguments = {"projectKey": "ALPHA", "workPackageId": str(wp.pk), "forecastEndDate": FAR}
    response = Client().post(
        "/api/v1/agent/actions/update_work_package",
        json.dumps({"arguments": arguments}),
        content_type="application/json",
        **bearer(cast.lead),
    )
    error = _refused(response, field="forecastEndDate")
    assert error["fields"]["forecastEndDate"] == [cleaning.DATE_RANGE_MESSAGE]
    wp.refresh_from_db()
    assert wp.forecast_end_date is None


# --- 2/5. numbers past what a column or a computation holds ---------------------------------


@pytest.mark.parametrize("days", [2**31, -(2**31) - 1, 2**63, 10**20])
def test_impact_schedule_days_past_the_column_is_a_422_naming_the_range(lead, days):
    error = _refused(lead("POST", "/changes", {"summary": "More", "impactScheduleDays": days}))
    assert error["fields"]["impactScheduleDays"] == [cleaning.SCHEDULE_DAYS_MESSAGE]
    assert not ChangeRequest.objects.exists()


def test_the_change_page_form_refuses_schedule_days_past_the_column(cast, client_for):
    response = client_for(cast.lead).post(
        "/projects/ALPHA/registers/changes/",
        {"summary": "Extend", "impactScheduleDays": str(2**31)},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    assert cleaning.SCHEDULE_DAYS_MESSAGE in response.content.decode()
    assert not ChangeRequest.objects.exists()


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_non_finite_numbers_anywhere_in_a_body_are_refused(lead, literal):
    body = f'{{"projectMetrics": {{"velocity": {literal}}}}}'
    _refused(lead("PATCH", "/status", body), status=400)
    body = f'{{"name": "Build", "budget": {literal}}}'
    _refused(lead("POST", "/work-packages", body), status=400)
    assert not WorkPackage.objects.exists()


# --- 3. lone surrogates -----------------------------------------------------------------------

SURROGATE = '"a\\ud800b"'
SURROGATE_BODIES = [
    ("POST", "/work-packages", '{"name": %s}', "name"),
    ("POST", "/risks", '{"title": %s}', "title"),
    ("POST", "/decisions", '{"decision": %s}', "decision"),
    ("POST", "/changes", '{"summary": %s}', "summary"),
    ("PATCH", "/charter", '{"businessProblem": %s}', "businessProblem"),
    ("PATCH", "/status", '{"phase": %s}', "phase"),
    ("PATCH", "/status", '{"projectMetrics": {"k": %s}}', "projectMetrics.k"),
    ("POST", "/status/reports", '{"title": %s}', "title"),
    ("PUT", "/editors", '{"accountIds": [%s]}', "accountIds[0]"),
]


@pytest.mark.parametrize(("method", "path", "template", "field"), SURROGATE_BODIES)
def test_a_lone_surrogate_is_a_422_naming_the_field(lead, method, path, template, field):
    before = AuditEntry.objects.count()
    error = _refused(lead(method, path, template % SURROGATE), field=field)
    assert error["fields"][field] == [cleaning.SURROGATE_MESSAGE]
    assert AuditEntry.objects.count() == before


def test_a_lone_surrogate_in_a_property_name_is_a_422(lead):
    _refused(lead("PATCH", "/status", '{"projectMetrics": {"\\udfff": 1}}'), field="projectMetrics")


def test_a_lone_surrogate_in_decision_notes_is_a_422(cast, lead):
    decision = lead("POST", "/decisions", {"decision": "Go"}).json()
    response = lead("POST", f"/decisions/{decision['id']}/notes", f'{{"text": {SURROGATE}}}')
    _refused(response, field="text")


def test_the_text_cleaner_refuses_a_lone_surrogate():
    assert cleaning.text("a\ud800", max_length=10) == ("", cleaning.SURROGATE_MESSAGE)
    assert cleaning.text("a\U0001f600", max_length=10) == ("a\U0001f600", None)


def test_the_agent_refuses_a_lone_surrogate_naming_the_argument(cast, bearer, everyone):
    response = Client().post(
        "/api/v1/agent/actions/add_risk",
        '{"arguments": {"projectKey": "ALPHA", "title": "a\\ud800"}}',
        content_type="application/json",
        **bearer(cast.lead),
    )
    _refused(response, field="arguments.title")
    assert not Risk.objects.exists()


# --- 4. bodies over the upload limit ----------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/work-packages"), ("PATCH", "/status"), ("PATCH", "/charter"), ("POST", "/risks")],
)
def test_a_body_over_the_upload_limit_is_a_413(lead, settings, method, path):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    error = _refused(lead(method, path, {"name": "x" * 2000}), status=413)
    assert error["code"] == "too_large"


# --- 6. agent cursors and the MCP's words -----------------------------------------------------


@pytest.mark.parametrize("cursor", ["9223372036854775808", "1" + "0" * 30])
def test_an_audit_trail_cursor_past_bigint_is_a_422(cast, bearer, everyone, cursor):
    response = Client().post(
        "/api/v1/agent/actions/audit_trail",
        json.dumps({"arguments": {"projectKey": "ALPHA", "cursor": cursor}}),
        content_type="application/json",
        **bearer(cast.lead),
    )
    _refused(response, field="cursor")


@pytest.mark.django_db(transaction=True)
def test_mcp_errors_carry_the_api_words_never_an_exception_text(cast, everyone):
    server = build_server(lambda: catalogue.request_for(cast.lead))

    async def go():
        async with McpClient(server) as session:
            cursor = await session.call_tool(
                "audit_trail", {"projectKey": "ALPHA", "cursor": "9223372036854775808"}
            )
            surrogate = await session.call_tool(
                "add_risk", {"projectKey": "ALPHA", "title": "a\ud800"}
            )
            return cursor, surrogate

    cursor, surrogate = run_async(go)
    for result in (cursor, surrogate):
        assert result.is_error
        text = result.content[0].text
        assert "bigint" not in text and "codec" not in text and "Traceback" not in text
        assert result.structured_content["error"]["code"] == "validation"
    assert "cursor" in cursor.structured_content["error"]["fields"]
    assert "title" in surrogate.structured_content["error"]["fields"]
    assert not Risk.objects.exists()


# --- 7. multipart bodies sent to JSON endpoints -----------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/work-packages"), ("POST", "/risks"), ("PATCH", "/status"), ("PUT", "/editors")],
)
def test_a_multipart_body_to_a_json_endpoint_is_a_415(cast, bearer, method, path):
    client = Client()
    auth = bearer(cast.lead)
    if method == "POST":
        response = client.post(BASE + path, {"name": "Build", "title": "T"}, **auth)
    else:
        response = client.generic(
            method,
            BASE + path,
            b'--b\r\nContent-Disposition: form-data; name="x"\r\n\r\n1\r\n--b--\r\n',
            content_type="multipart/form-data; boundary=b",
            **auth,
        )
    error = _refused(response, status=415)
    assert error["code"] == "unsupported_media_type"
    assert not WorkPackage.objects.exists() and not Risk.objects.exists()


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ('{"projectKey": "ALPHA", "cursor": "9223372036854775808"}', "cursor"),
        ('{"projectKey": "ALPHA", "title": "a\\ud800"}', "title"),
    ],
)
def test_mcp_over_http_answers_the_api_words(cast, bearer, everyone, arguments, field):
    tool = "audit_trail" if field == "cursor" else "add_risk"
    body = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}'
    )
    response = Client().post(
        "/mcp",
        body,
        content_type="application/json",
        HTTP_ACCEPT="application/json, text/event-stream",
        **bearer(cast.lead),
    )
    text = response.content.decode()
    assert "bigint" not in text and "codec" not in text and "Traceback" not in text
    answer = json.loads(text)
    if field == "title" and "error" in answer:
        # The SDK 2.x parser refuses a lone surrogate in the JSON itself: a JSON-RPC parse
        # error (400) before any tool runs, in its words; nothing is stored either way.
        assert response.status_code == 400 and answer["error"]["code"] == -32700
        assert not Risk.objects.exists()
        return
    result = answer["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "validation"
    assert field in result["structuredContent"]["error"]["fields"]
    assert not Risk.objects.exists()


def test_an_empty_body_of_any_type_still_reads_as_no_fields(cast, bearer):
    # A client that sends no body, whatever type it names, still acts.
    response = Client().generic(
        "POST",
        BASE + "/charter/draft",
        b"",
        content_type="application/x-www-form-urlencoded",
        **bearer(cast.lead),
    )
    assert response.status_code in (200, 409), response.content
