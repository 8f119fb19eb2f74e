"""Inputs a fuzzer found answering 500: an offset past bigint, an object or array where a
name is expected, a body nested 100,000 deep. Each now answers 400/422 with the error body;
anything unexpected under /api/ answers the error body (`internal`, 500) with a request id."""

import json

import pytest
from django.test import Client

from governance import api as api_module

BASE = "/api/v1/projects/ALPHA"


@pytest.fixture
def lead(cast, bearer):
    client = Client()
    auth = bearer(cast.lead)

    def send(method, path, body=None):
        if method == "GET":
            return client.get(BASE + path, **auth)
        data = body if isinstance(body, str | bytes) else json.dumps(body)
        return client.generic(method, BASE + path, data, content_type="application/json", **auth)

    return send


def _error(response, status, code):
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()["error"]
    assert body["code"] == code and body["message"]
    return body


@pytest.mark.parametrize("offset", ["9223372036854775808", "1" + "0" * 40])
def test_an_audit_offset_past_bigint_is_a_422(lead, offset):
    body = _error(lead("GET", f"/audit?offset={offset}"), 422, "validation")
    assert "offset" in body["fields"]


def test_an_audit_offset_within_bounds_still_reads(lead):
    assert lead("GET", "/audit?offset=1000000000").json() == []


@pytest.mark.parametrize("kind", [{"boardPaper": 1}, ["boardPaper"], 7, True])
def test_template_kind_given_as_anything_but_a_name_is_a_422(lead, kind):
    response = lead("POST", "/charter/supporting-links/from-template", {"templateKind": kind})
    body = _error(response, 422, "validation")
    assert "templateKind" in body["fields"]


@pytest.mark.parametrize("depth", [100_000, 5_000, 40])
def test_a_deeply_nested_body_is_a_400(lead, depth):
    body = "[" * depth
    _error(lead("PATCH", "/status", body), 400, "bad_request")
    nested = '{"phase": ' + "[" * depth + "]" * depth + "}"
    _error(lead("PATCH", "/status", nested), 400, "bad_request")


def test_an_unexpected_failure_under_the_api_is_the_error_body_with_a_request_id(
    cast, bearer, monkeypatch
):
    def broken(request):
        raise RuntimeError("database on fire")

    monkeypatch.setattr(api_module.permissions, "request_user", broken)
    response = Client().get("/api/v1/me", **bearer(cast.lead))
    body = _error(response, 500, "internal")
    assert body["requestId"] == response["X-Request-ID"] and len(body["requestId"]) == 32
    assert "fire" not in response.content.decode()


def test_every_response_carries_a_request_id(cast, client_for):
    first = client_for(cast.lead).get("/")
    second = client_for(cast.lead).get("/")
    assert first["X-Request-ID"] != second["X-Request-ID"]


def test_errors_outside_the_endpoints_are_json_under_the_api(cast, bearer):
    # Django refuses an unknown host before any view: still the error body, not a page.
    response = Client(HTTP_HOST="evil.example").get("/api/v1/me", **bearer(cast.lead))
    _error(response, 400, "bad_request")
    _error(Client().get("/api/v1/no-such-thing"), 404, "not_found")
    response = Client().generic("PROPFIND", "/api/v1/me", **bearer(cast.lead))
    assert response.status_code in (400, 405) and response.json()["error"]["message"]
