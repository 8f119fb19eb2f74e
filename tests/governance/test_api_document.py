"""The OpenAPI document is the whole contract: every operation declares its success answer
(derived from the resource's declaration where there is one), If-Match where the view reads
it, ETag where the view sets it, and `readOnly` on what a body may send back and the server
ignores; real answers match their declared schemas, key for key."""

import inspect
import json
import re

import jsonschema
import pytest
from django.test import Client

from charter.specs import CharterSpec
from config.api import api
from governance import specs
from governance.api import IF_MATCH_PARAMETER, UNSAFE
from governance.models import SiteSettingsSpec
from registers.specs import ChangeSpec, DecisionSpec, RiskSpec, WorkPackageSpec
from status.specs import StatusReportSpec, StatusSpec
from tests.factories import ChangeRequestFactory, DecisionFactory, RiskFactory, WorkPackageFactory

BASE = "/api/v1"


@pytest.fixture(scope="module")
def document():
    return json.loads(json.dumps(api.get_openapi_schema()))


def _operations(document):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def _view_functions():
    for _prefix, router in api._routers:
        for path_view in router.path_operations.values():
            for operation in path_view.operations:
                yield operation.view_func


def test_every_success_answer_declares_its_body(document):
    components = document["components"]["schemas"]
    for path, method, operation in _operations(document):
        successes = {c: r for c, r in operation["responses"].items() if str(c).startswith("2")}
        assert successes, (method, path)
        for code, response in successes.items():
            if str(code) == "204":
                assert "content" not in response
                continue
            content = response.get("content")
            assert content, (method, path, code)
            for media, body in content.items():
                schema = body["schema"]
                assert schema, (method, path, code, media)
                ref = schema.get("$ref") or schema.get("items", {}).get("$ref")
                if ref:
                    assert ref.rsplit("/", 1)[1] in components, ref


def test_if_match_is_declared_on_every_write_that_reads_it_and_only_there(document):
    honouring = {
        view.__name__ for view in _view_functions() if getattr(view, "honours_if_match", False)
    }
    declared = 0
    for path, method, operation in _operations(document):
        names = [p["name"] for p in operation.get("parameters", []) if p["in"] == "header"]
        view = operation["operationId"]
        expects = method in UNSAFE and any(view.endswith(name) for name in honouring)
        if "If-Match" in names:
            declared += 1
            assert "412" in operation["responses"], (method, path)
            assert method in UNSAFE, (method, path)
        elif expects and "agent" not in path:
            pytest.fail(f"{method} {path} reads If-Match and does not declare it")
    assert declared >= 40
    # The pattern is what the server parses: an ETag of this API (weak or not), `*`, or none.
    pattern = re.compile(IF_MATCH_PARAMETER["schema"]["pattern"])
    for good in ['"3"', 'W/"12"', "*", ""]:
        assert pattern.search(good), good
    for bad in ['"a"', "3", '"3", "4"']:
        assert not pattern.search(bad), bad


ETAG_SETTERS = (
    "with_etag(",
    "register.answer(response",
    "_charter(response",
    "_case_write(",
    "_checklist_act(",
    "_report_write(",
    "_report_response(",
    "_status_response(",
    "_exception_response(",
    "scenario_view(",
)


def test_the_etag_header_is_declared_exactly_where_a_view_sets_it(document):
    by_id = {op["operationId"]: op for _, _, op in _operations(document)}
    for view in _view_functions():
        source = inspect.getsource(view)
        sets = any(setter in source for setter in ETAG_SETTERS)
        declared = getattr(view, "answers", {}).get("etag", False)
        assert sets == declared, view.__name__
        operation = next((op for key, op in by_id.items() if key.endswith(view.__name__)), None)
        if operation is None:
            continue  # the agent's action route: the document lists one path per action
        for code, response in operation["responses"].items():
            if str(code).startswith("2") and str(code) != "204":
                assert ("ETag" in response.get("headers", {})) == sets, view.__name__


# --- every answered field typed -----------------------------------------------------------------


def _typed(schema) -> bool:
    """A schema that says what the value is: a type, a reference, a closed set, or a choice of
    branches that each say it."""
    if not isinstance(schema, dict):
        return False
    if {"type", "$ref", "enum", "const"} & schema.keys():
        return True
    branches = [b for key in ("anyOf", "oneOf", "allOf") for b in schema.get(key, [])]
    return bool(branches) and all(_typed(branch) for branch in branches)


def untyped_answer_fields(document) -> list[str]:
    """Every property (at any depth) of every success answer's body that says nothing of its
    value: a client generated from the document would read it as `unknown`."""
    components = document["components"]["schemas"]
    found: list[str] = []
    seen: set[str] = set()
    stack: list[tuple[dict, str]] = []
    for path, method, operation in _operations(document):
        for code, response in operation["responses"].items():
            if str(code).startswith("2"):
                for media, body in response.get("content", {}).items():
                    stack.append((body.get("schema", {}), f"{method} {path} {code} {media}"))
    while stack:
        schema, where = stack.pop()
        if not isinstance(schema, dict):
            continue
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            if name not in seen:
                seen.add(name)
                stack.append((components[name], name))
            continue
        for name, member in schema.get("properties", {}).items():
            if not _typed(member):
                found.append(f"{where}.{name}")
            stack.append((member, f"{where}.{name}"))
        for key in ("anyOf", "oneOf", "allOf"):
            stack.extend((branch, where) for branch in schema.get(key, []))
        for key, suffix in (("items", "[]"), ("additionalProperties", "{}")):
            member = schema.get(key)
            if isinstance(member, dict) and member:
                if not _typed(member):
                    found.append(where + suffix)
                stack.append((member, where + suffix))
    return sorted(set(found))


def test_every_field_of_every_answer_says_its_type(document):
    assert document["openapi"].startswith("3.1")  # null is a type of the list (no `nullable`)
    assert untyped_answer_fields(document) == []


def test_the_typed_field_check_finds_an_untyped_field():
    document = {
        "paths": {
            "/x": {
                "get": {
                    "responses": {
                        "200": {
                            "content": {
                                "application/json": {"schema": {"$ref": "#/components/schemas/X"}}
                            }
                        }
                    }
                }
            }
        },
        "components": {
            "schemas": {
                "X": {
                    "type": "object",
                    "properties": {
                        "typed": {"type": ["number", "null"]},
                        "choice": {"anyOf": [{"type": "string"}, {"description": "any"}]},
                        "bare": {"readOnly": True, "title": "Bare"},
                        "nested": {"type": "object", "properties": {"inner": {}}},
                        "list": {"type": "array", "items": {"title": "item"}},
                    },
                }
            }
        },
    }
    assert untyped_answer_fields(document) == ["X.bare", "X.choice", "X.list[]", "X.nested.inner"]


def test_the_seats_say_one_shape_each(document):
    """A seat is empty, an accountId (text or object) or a person named in words: each value a
    seat takes matches a branch, and never two of a oneOf (an answered seat is {accountId,
    displayName, avatarUrl}, which once matched two)."""
    body = _body_properties(document, "/projects/{key}/charter", "patch")
    validator_for = jsonschema.Draft202012Validator
    components = {"components": document["components"]}
    seats = [
        name
        for name in body
        if name
        in ("decisionAuthority", "projectManager", "customerRep", "supplierRep", "adoptionOwner")
    ]
    assert len(seats) == 5
    answered = _resolve(document, _schema_for(document, "get", "/projects/{key}/charter", 200))
    values = [
        None,
        "712020:abc",
        {},
        {"accountId": "712020:abc"},
        {"accountId": "712020:abc", "displayName": "Sofia Santos", "avatarUrl": ""},
        {"accountId": None, "displayName": "Ann External", "email": "ann@example.com"},
        {"displayName": "Ann External"},
    ]
    for name in seats:
        for schema in (body[name], answered["properties"][name]):
            exclusive = "oneOf" in schema
            branches = schema.get("oneOf") or schema.get("anyOf")
            assert branches, name
            for value in values:
                matching = [
                    b for b in branches if validator_for({**b, **components}).is_valid(value)
                ]
                # oneOf: exactly one branch; anyOf may overlap (null is text's too in a body).
                assert len(matching) == 1 if exclusive else matching, (name, value, matching)


# --- real answers against their declared schemas ------------------------------------------------


def _schema_for(document, method, template, status):
    template = template.replace("{name}", "find_projects")
    operation = document["paths"][BASE + template][method]
    content = operation["responses"][str(status)]["content"]["application/json"]
    return content["schema"]


def _resolve(document, schema):
    ref = schema.get("$ref")
    return document["components"]["schemas"][ref.rsplit("/", 1)[1]] if ref else schema


def _check_keys(document, schema, body, where):
    """The answer's keys are the declared ones: each required one there, none undeclared
    (`warnings`, the coercion notes of a write, aside)."""
    schema = _resolve(document, schema)
    if schema.get("type") == "array":
        for item in body:
            _check_keys(document, schema["items"], item, where)
        return
    declared = schema.get("properties")
    if not declared or not isinstance(body, dict):
        return
    missing = set(schema.get("required", [])) - set(body)
    assert not missing, (where, missing)
    assert set(body) - {"warnings"} <= set(declared), (where, set(body) - set(declared))


def conforms(document, response, method, template, status=200):
    assert response.status_code == status, (method, template, response.content[:500])
    schema = _schema_for(document, method, template, status)
    body = response.json()
    validator = jsonschema.Draft202012Validator(
        {**schema, "components": document["components"]},
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
    assert not errors, (method, template, errors[:5])
    _check_keys(document, schema, body, f"{method} {template}")
    return body


@pytest.mark.django_db
def test_real_answers_match_their_declared_schemas(document, cast, bearer):
    lead = Client(headers={"Authorization": bearer(cast.lead)["HTTP_AUTHORIZATION"]})
    admin = Client(headers={"Authorization": bearer(cast.site_admin)["HTTP_AUTHORIZATION"]})
    viewer = Client(headers={"Authorization": bearer(cast.viewer)["HTTP_AUTHORIZATION"]})
    project = cast.project
    WorkPackageFactory(project=project)
    RiskFactory(project=project)
    DecisionFactory(project=project)
    ChangeRequestFactory(project=project)

    def send(client, method, template, body=None, status=200, **values):
        url = BASE + template.format(key="ALPHA", **values)
        data = json.dumps(body) if body is not None else None
        kwargs = {"content_type": "application/json"} if data is not None else {}
        response = getattr(client, method)(url, data=data, **kwargs) if data else None
        if response is None:
            response = getattr(client, method)(url)
        return conforms(document, response, method, template, status)

    send(lead, "get", "/me")
    send(lead, "get", "/projects")
    send(lead, "get", "/projects/{key}")
    send(lead, "get", "/projects/{key}/audit")
    send(admin, "get", "/site-settings")
    send(viewer, "get", "/site-settings")
    send(admin, "patch", "/site-settings", {"currency": "EUR"})
    for register, spec_path, new in [
        ("work-packages", "wp_id", {"name": "Build"}),
        ("risks", "risk_id", {"title": "Late supplier"}),
        ("decisions", "decision_id", {"decision": "Go"}),
        ("changes", "change_id", {"summary": "More scope"}),
    ]:
        send(lead, "get", f"/projects/{{key}}/{register}")
        created = send(lead, "post", f"/projects/{{key}}/{register}", new, status=201)
        template = f"/projects/{{key}}/{register}/{{{spec_path}}}"
        send(lead, "get", template, **{spec_path: created["id"]})
        send(lead, "patch", template, new, **{spec_path: created["id"]})
    send(lead, "get", "/projects/{key}/charter")
    send(lead, "patch", "/projects/{key}/charter", {"outcome": "Faster invoices"})
    send(lead, "get", "/projects/{key}/status")
    send(lead, "patch", "/projects/{key}/status", {"overallRag": "Amber"})
    report = send(lead, "post", "/projects/{key}/status/reports", {"title": "May"}, status=201)
    send(lead, "get", "/projects/{key}/status/reports")
    send(lead, "get", "/projects/{key}/status/reports/{report_id}", report_id=report["id"])
    send(lead, "get", "/projects/{key}/minutes")
    send(lead, "get", "/projects/{key}/exception")
    send(lead, "get", "/projects/{key}/exceptions")
    send(admin, "get", "/agent/actions")
    send(admin, "post", "/agent/actions/{name}", {"arguments": {}}, name="find_projects")
    send(admin, "get", "/portfolio")
    send(admin, "get", "/portfolio/lessons")


# --- the one rule of what a body may send back ---------------------------------------------------

PATCHED = [
    ("/projects/{key}/work-packages/{wp_id}", WorkPackageSpec),
    ("/projects/{key}/risks/{risk_id}", RiskSpec),
    ("/projects/{key}/decisions/{decision_id}", DecisionSpec),
    ("/projects/{key}/changes/{change_id}", ChangeSpec),
    ("/projects/{key}/charter", CharterSpec),
    ("/projects/{key}/status", StatusSpec),
    ("/projects/{key}/status/reports/{report_id}", StatusReportSpec),
    ("/site-settings", SiteSettingsSpec),
]


def _body_properties(document, template, method):
    operation = document["paths"][BASE + template][method]
    return operation["requestBody"]["content"]["application/json"]["schema"]["properties"]


@pytest.mark.parametrize(("template", "spec"), PATCHED)
def test_the_document_says_what_a_patch_writes_and_ignores_as_the_declaration_does(
    document, template, spec
):
    properties = _body_properties(document, template, "patch")
    writable = [name for name, schema in properties.items() if not schema.get("readOnly")]
    ignored = [name for name, schema in properties.items() if schema.get("readOnly")]
    assert writable == specs.writable(spec)
    assert ignored == specs.ignored(spec, creating=False)
    # What the API answers is all declared: a body may send back any of it (`warnings`, the
    # coercion notes of a write, is no field of the resource).
    answered = _resolve(document, _schema_for(document, "get", template, 200))["properties"]
    assert set(answered) - {"warnings"} <= set(properties)
    for name in specs.read_only(spec):
        assert answered[name]["readOnly"] is True


@pytest.mark.parametrize(
    ("template", "register", "spec"),
    [
        ("/projects/{key}/work-packages", "wp", WorkPackageSpec),
        ("/projects/{key}/risks", "risk", RiskSpec),
        ("/projects/{key}/decisions", "decision", DecisionSpec),
        ("/projects/{key}/changes", "change", ChangeSpec),
    ],
)
def test_a_create_takes_the_create_only_fields_and_ignores_the_read_only_ones(
    document, template, register, spec
):
    properties = _body_properties(document, template, "post")
    writable = [name for name, schema in properties.items() if not schema.get("readOnly")]
    assert set(writable) == set(specs.writable(spec)) | set(specs.create_only(spec))
    ignored = {name for name, schema in properties.items() if schema.get("readOnly")}
    assert ignored == set(specs.read_only(spec))


@pytest.mark.django_db
def test_a_patch_with_the_whole_representation_is_taken_and_its_read_only_fields_ignored(
    document, cast, bearer
):
    lead = Client(headers={"Authorization": bearer(cast.lead)["HTTP_AUTHORIZATION"]})
    admin = Client(headers={"Authorization": bearer(cast.site_admin)["HTTP_AUTHORIZATION"]})
    project = cast.project
    report = lead.post(
        f"{BASE}/projects/ALPHA/status/reports",
        data=json.dumps({"title": "May"}),
        content_type="application/json",
    ).json()
    ids = {
        "wp_id": WorkPackageFactory(project=project).pk,
        "risk_id": RiskFactory(project=project).pk,
        "decision_id": DecisionFactory(project=project).pk,
        "change_id": ChangeRequestFactory(project=project).pk,
        "report_id": report["id"],
    }
    for template, spec in PATCHED:
        client = admin if template == "/site-settings" else lead
        url = BASE + template.format(key="ALPHA", **ids)
        read = client.get(url)
        whole = read.json()
        sent_back = client.patch(
            url, data=json.dumps(whole), content_type="application/json", HTTP_IF_MATCH=read["ETag"]
        )
        assert sent_back.status_code == 200, (template, sent_back.content[:800])
        # Every read-only field sent with another value: ignored, never refused; but those
        # declared refused when changed (a state moved by its own operation), named.
        guarded = specs.refused_when_changed(spec)
        properties = _body_properties(document, template, "patch")
        for name in guarded:
            assert properties[name]["description"] == specs.GUARDED_DESCRIPTION
            response = client.patch(
                url, data=json.dumps({name: "changed"}), content_type="application/json"
            )
            assert response.status_code == 422, (template, name)
            assert list(response.json()["error"]["fields"]) == [name]
        ignored = [n for n in specs.ignored(spec, creating=False) if n not in guarded]
        assert all(properties[n]["description"] == specs.IGNORED_DESCRIPTION for n in ignored)
        changed = {name: "changed by the client" for name in ignored}
        response = client.patch(url, data=json.dumps(changed), content_type="application/json")
        assert response.status_code == 200, (template, response.content[:800])
        after = response.json()
        assert not [n for n in ignored if after.get(n) == "changed by the client"], template
        # A name the document does not list: refused, named.
        response = client.patch(
            url, data=json.dumps({"colour": "blue"}), content_type="application/json"
        )
        assert response.status_code == 422, template
        assert list(response.json()["error"]["fields"]) == ["colour"], template
