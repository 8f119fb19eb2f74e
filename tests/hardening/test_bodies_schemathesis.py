"""The request bodies of the registers, the business case and the status against their
OpenAPI document, with schemathesis's positive and negative data: a body the document
allows is taken (or refused only for the state it meets: 401, 403, 404, 409, 412, 429, never
422), a body it forbids is refused (4xx), never a server error, and every answer's status is
one the document lists. The bodies are the declarations' (governance.specs), so a
disagreement is fixed at the declaration.

Slow (a few hundred calls): run by `make test-bodies`, skipped otherwise."""

import os
import re

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import negative_data_rejection, status_code_conformance

from governance.api import ERROR_CODES

pytestmark = pytest.mark.skipif(
    not os.environ.get("BODIES_SCHEMATHESIS"), reason="slow: run by make test-bodies"
)
MAX_EXAMPLES = int(os.environ.get("BODIES_MAX_EXAMPLES", "25"))
WRITES = r"^/api/v1/projects/\{key\}/(work-packages|risks|decisions|changes|charter|minutes|status)"
# A body the document allows meets state the document cannot say (the case's lifecycle
# state, a record's id, a tracker user): those refusals are not 422.
ACCEPTED = ["2xx", "401", "403", "404", "409", "412", "428", "429"]
# A body the document forbids is refused, by the body's own 400 or 422, or for what the
# refusal order puts before the body (the caller, the state, the revision).
REFUSED = ["400", "401", "403", "404", "405", "406", "409", "412", "415", "422", "428", "429"]

CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
    {
        "parameters": {"key": "ALPHA"},
        "generation": {
            "mode": "all",
            "max-examples": MAX_EXAMPLES,
            "deterministic": True,
            "database": "none",
        },
        "phases": {
            "examples": {"enabled": False},
            "coverage": {"enabled": False},
            "stateful": {"enabled": False},
        },
        "checks": {
            "positive_data_acceptance": {"expected-statuses": ACCEPTED},
            # A body is judged last (docs/api.md): a stale If-Match answers 412 first.
            "negative_data_rejection": {"expected-statuses": REFUSED},
        },
    }
)

schema = schemathesis.openapi.from_wsgi(
    "/api/v1/openapi.json", WSGIHandler(), config=CONFIG
).include(path_regex=WRITES, method=["POST", "PATCH", "PUT"])
CHECKS = [not_a_server_error, status_code_conformance, negative_data_rejection]
# The refusals of a body the document allows that need state or several fields, which a
# JSON Schema does not say: a tracker user, a name already taken, a record of the project,
# every package in a reorder, the treatment a direction takes, the submission gate, the
# minutes' source (a URL, a wiki page or the template) and their title.
STATEFUL = re.compile(
    "|".join(
        [
            r"^No tracker user with accountId ",
            r"^Another work package of \w+ is called ",
            r"^Every work package must be listed",
            r"^Must be a work package of this project",
            r"^No such change request in this project",
            r"^An? (Risk|Opportunity) is treated by one of",
            r"^Not a work package of this project",
            r"^[A-Z][A-Z0-9_]*-[0-9]+ is not an issue of project ",
            r"^Must not be before ",
            r"^Must be one of the steering minutes of ",
            r"^The proposer is recorded when the change is raised",
            r"^An? [\w ]+ work package has progress ",
            r"^Minutes record a meeting that has been held",
            r" appears twice\.$",
            r"^Only wiki links \(.confluence.\) carry a pageId",
            r"^Give the minutes' URL, pick a wiki page",
            r"^No wiki page with id ",
        ]
    )
)


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def records(cast):
    """One record of each kind in ALPHA, so an update's body is read (not a 404)."""
    from governance.services import token_create
    from tests.factories import (
        ChangeRequestFactory,
        DecisionFactory,
        RiskFactory,
        WorkPackageFactory,
    )

    return {
        "token": token_create(user=cast.lead, name="bodies")[1],
        "wp_id": str(WorkPackageFactory(project=cast.project).pk),
        "risk_id": str(RiskFactory(project=cast.project).pk),
        "decision_id": str(DecisionFactory(project=cast.project).pk),
        "change_id": str(ChangeRequestFactory(project=cast.project).pk),
    }


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_a_request_body_is_taken_or_refused_as_its_document_says(case, records):
    if isinstance(case.body, str | bytes) and not case.body.strip():
        return  # a blank body is no body (governance.api.json_object), which the document allows
    for name in case.path_parameters or {}:
        if name in records:
            case.path_parameters[name] = records[name]
    response = case.call_and_validate(
        headers={"Authorization": f"Bearer {records['token']}", "Accept-Encoding": "identity"},
        checks=CHECKS,
    )
    assert response.status_code < 500
    if case.meta and case.meta.generation.mode.name == "POSITIVE" and response.status_code == 422:
        error = response.json()["error"]
        assert error["code"] == "gate" or all(
            STATEFUL.search(message) or (path == "title" and "minutes" in case.path)
            for path, messages in error["fields"].items()
            for message in messages
        ), error
    if response.status_code >= 400 and re.match(
        "application/json", response.headers.get("Content-Type", "")
    ):
        assert response.json()["error"]["code"] in ERROR_CODES
