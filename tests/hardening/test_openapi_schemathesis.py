"""The OpenAPI document tells the truth: every operation, called by schemathesis as the lead
of one project with bounded generated examples, answers only what it documents (status codes,
content types, headers, and each answer's body against its declared schema, success answers
included) and never a server error.

Each path's record ids are records of the project (a work package, a risk, a decision, a
change, a status report, a return note), so the reads and writes reach the resource and their
success answers are checked against the schema, not only the 404.

Bounds: a few examples per operation (fuzzing phase, deterministic; OPENAPI_MAX_EXAMPLES sets
them), so the whole run stays within a few minutes. `positive_data_acceptance` also accepts
422: the schema cannot say every rule (an existing id, every package listed in a reorder, the
business case's state), and those refusals are the error body with the field named, which the
checks verify. It accepts 400 too: a list's `cursor` is opaque, any string fits its schema, and
only the cursors the list gave are read (any other is 400 `bad_request`, saying so)."""

import os
import re

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from governance import cleaning
from governance.api import ERROR_CODES
from governance.cleaning import NOT_BLANK_TEXT
from tests.conftest import build_cast, fresh

MAX_EXAMPLES = int(os.environ.get("OPENAPI_MAX_EXAMPLES", "4"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    positive_data_acceptance,
]

CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
    {
        "parameters": {"key": "ALPHA", "register": "risks"},
        "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none"},
        "phases": {
            "examples": {"enabled": False},
            "coverage": {"enabled": False},
            "stateful": {"enabled": False},
        },
        "checks": {
            "positive_data_acceptance": {
                "expected-statuses": [
                    *("2xx", "400", "401", "403", "404", "409", "412", "422", "429")
                ]
            }
        },
    }
)

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", WSGIHandler(), config=CONFIG)


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """Django's test client stops each request from closing the database connection; the
    plain WSGI handler schemathesis calls does not, so do the same here."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(scope="module")
def built_records(module_db):
    """One record of each kind in ALPHA (and a return note on its business case), so a path
    naming a record reaches it; the lead's token: built once for the module's tests."""
    cast = build_cast()
    import uuid

    from charter.models import BusinessCase
    from governance.services import token_create
    from status.models import StatusReport
    from tests.factories import (
        ChangeRequestFactory,
        DecisionFactory,
        RiskFactory,
        WorkPackageFactory,
    )

    note_id = str(uuid.uuid4())
    note = {"id": note_id, "section": "outcome", "ask": "Say more.", "severity": "Minor"}
    BusinessCase.objects.update_or_create(
        project=cast.project, defaults={"return_notes": [{**note, "addressed": False}]}
    )
    report = StatusReport.objects.create(
        project=cast.project, title="Week 12", created_by_account_id=cast.lead.account_id
    )
    return {
        "token": token_create(user=cast.lead, name="schemathesis")[1],
        "wp_id": str(WorkPackageFactory(project=cast.project).pk),
        "risk_id": str(RiskFactory(project=cast.project).pk),
        "decision_id": str(DecisionFactory(project=cast.project).pk),
        "change_id": str(ChangeRequestFactory(project=cast.project).pk),
        "report_id": str(report.pk),
        "note_id": note_id,
    }


@pytest.fixture
def records(db, built_records):
    return fresh(built_records)


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_what_its_document_says(case, records):
    for name in case.path_parameters or {}:
        if name in records:
            case.path_parameters[name] = records[name]
    # The WSGI transport does not undo Content-Encoding: ask for the body as it is.
    response = case.call_and_validate(
        headers={"Authorization": f"Bearer {records['token']}", "Accept-Encoding": "identity"},
        checks=CHECKS,
    )
    assert response.status_code < 500
    if response.status_code >= 400:
        assert response.json()["error"]["code"] in ERROR_CODES


def test_the_document_lists_every_error_answer_with_the_error_schema(client):
    document = client.get("/api/v1/openapi.json").json()
    assert "Error" in document["components"]["schemas"]
    for path, item in document["paths"].items():
        for method, operation in item.items():
            codes = set(operation["responses"])
            expected = {"400", "401", "403", "404", "422", "429", "500"}
            if method != "get":
                expected |= {"409"}
            assert expected <= codes, (method, path, expected - codes)
            ref = operation["responses"]["422"]["content"]["application/json"]["schema"]
            assert ref == {"$ref": "#/components/schemas/Error"}
    charter_patch = document["paths"]["/api/v1/projects/{key}/charter"]["patch"]
    assert "412" in charter_patch["responses"]
    create = document["paths"]["/api/v1/projects/{key}/risks"]["post"]
    body = create["requestBody"]["content"]["application/json"]["schema"]
    # Optional text reads null as empty; required text is never null, nor blank.
    assert body["properties"]["description"]["type"] == ["string", "null"]
    assert body["properties"]["title"]["type"] == "string"
    assert body["properties"]["title"]["pattern"] == NOT_BLANK_TEXT


REQUIRED_TEXT = [
    ("/api/v1/projects/{key}/work-packages", "post", "name"),
    ("/api/v1/projects/{key}/work-packages/{wp_id}", "patch", "name"),
    ("/api/v1/projects/{key}/risks", "post", "title"),
    ("/api/v1/projects/{key}/decisions", "post", "decision"),
    ("/api/v1/projects/{key}/changes", "post", "summary"),
    ("/api/v1/projects/{key}/decisions/{decision_id}/notes", "post", "text"),
    ("/api/v1/projects/{key}/status/reports", "post", "title"),
    ("/api/v1/agent/actions/add_decision", "post", "arguments.decision"),
    ("/api/v1/agent/actions/add_risk", "post", "arguments.title"),
    ("/api/v1/agent/actions/raise_change_request", "post", "arguments.summary"),
    ("/api/v1/agent/actions/add_decision_note", "post", "arguments.text"),
]


@pytest.mark.parametrize(("path", "method", "field"), REQUIRED_TEXT)
def test_text_the_services_refuse_blank_is_documented_as_not_blank(client, path, method, field):
    document = client.get("/api/v1/openapi.json").json()
    node = document["paths"][path][method]["requestBody"]["content"]["application/json"]
    node = node["schema"]
    for name in field.split("."):
        while "$ref" in node:
            node = document["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
        node = node["properties"][name]
    assert node["type"] == "string" and node["pattern"] == NOT_BLANK_TEXT


WHITESPACE = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())


@pytest.mark.parametrize(
    "value",
    [
        "",
        " ",
        WHITESPACE,
        "\x00",
        "a\x00",
        "\x07 b",
        "a",
        " a ",
        "\ufeff",
        "\x7f",
        "x\ty\n",
        "\xa0b\u3000",
        *WHITESPACE,
    ],
)
def test_the_not_blank_pattern_accepts_exactly_what_the_text_cleaner_accepts(value):
    accepted_by_schema = re.search(NOT_BLANK_TEXT, value) is not None
    accepted_by_server = cleaning.text(value, max_length=50, required=True)[1] is None
    assert accepted_by_schema == accepted_by_server
