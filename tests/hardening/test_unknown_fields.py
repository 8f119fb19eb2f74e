"""Every JSON body refuses the fields it does not know (422, named), as the OpenAPI document
says (`additionalProperties: false` at the top of every body), also where the view hands
single values to its service."""

import json

import pytest

from tests.factories import ChangeRequestFactory, DecisionFactory, WorkPackageFactory

pytestmark = pytest.mark.django_db


def _cases(cast):
    wp = WorkPackageFactory(project=cast.project)
    decision = DecisionFactory(project=cast.project)
    change = ChangeRequestFactory(project=cast.project)
    base = "/api/v1/projects/ALPHA"
    return [
        ("post", f"{base}/work-packages/reorder", {"ids": [str(wp.pk)]}),
        ("post", f"{base}/work-packages/{wp.pk}/links", {"issueKey": "ALPHA-1"}),
        ("post", f"{base}/decisions/{decision.pk}/notes", {"text": "Noted."}),
        ("post", f"{base}/changes/{change.pk}/adjudicate", {"outcome": "Withdrawn"}),
        ("put", f"{base}/editors", {"accountIds": []}),
    ]


def test_views_that_take_single_values_refuse_unknown_fields(cast, client, bearer):
    headers = bearer(cast.lead)
    for method, url, body in _cases(cast):
        response = getattr(client, method)(
            url,
            data=json.dumps({**body, "colour": "blue"}),
            content_type="application/json",
            **headers,
        )
        assert response.status_code == 422, (url, response.content)
        assert response.json()["error"]["fields"] == {"colour": ["Unknown field."]}, url


def test_every_json_body_is_closed_and_nested_members_are_clean_json(client):
    document = client.get("/api/v1/openapi.json").json()
    assert "CleanJson" in document["components"]["schemas"]
    bodies = 0
    for path, item in document["paths"].items():
        for method, operation in item.items():
            content = operation.get("requestBody", {}).get("content", {})
            schema = content.get("application/json", {}).get("schema")
            if schema is None:
                continue
            bodies += 1
            assert schema.get("additionalProperties") is False, (method, path)
    assert bodies > 50
    closeout = document["paths"]["/api/v1/projects/{key}/charter/closeout"]["patch"]
    body = closeout["requestBody"]["content"]["application/json"]["schema"]
    dispositions = body["properties"]["scopeDispositions"]
    assert dispositions["additionalProperties"] == {"$ref": "#/components/schemas/CleanJson"}


def test_the_document_says_what_the_cleaners_take(client):
    document = client.get("/api/v1/openapi.json").json()

    def body(path, method):
        operation = document["paths"][path][method]
        return operation["requestBody"]["content"]["application/json"]["schema"]["properties"]

    status = body("/api/v1/projects/{key}/status", "patch")
    # Any value (the spec's lenient fields): any clean JSON value.
    assert status["projectMetrics"]["$ref"] == "#/components/schemas/CleanJson"
    # cleaning.enum: null or empty text is the default.
    assert None in status["overallRag"]["enum"] and "" in status["overallRag"]["enum"]
    assert None not in status["reportingCadence"]["enum"]  # refused: it has no default
    assert status["structuredCommentary"]["additionalProperties"] is False
    packages = body("/api/v1/projects/{key}/work-packages", "post")
    assert {None, ""} <= set(packages["status"]["enum"])
    # A list's members are not fields: null is refused there, not read as empty.
    editors = body("/api/v1/projects/{key}/editors", "put")
    assert editors["accountIds"]["items"]["type"] == "string"
    changes = body("/api/v1/projects/{key}/changes", "post")
    assert changes["dimensions"]["type"] == ["array", "null"]


def test_null_and_empty_enums_take_the_default(cast, client, bearer):
    response = client.patch(
        "/api/v1/projects/ALPHA/status",
        data=json.dumps({"overallRag": None}),
        content_type="application/json",
        **bearer(cast.lead),
    )
    assert response.status_code == 200 and response.json()["overallRag"] == "None"
    response = client.patch(
        "/api/v1/projects/ALPHA/status",
        data=json.dumps({"reportingCadence": None}),
        content_type="application/json",
        **bearer(cast.lead),
    )
    assert response.status_code == 422
