"""The refusal order over every write of the API (docs/api.md: 401, 404, 403, 409, 412, and
only then the body): each write the URL resolver answers (the permission matrix's discovery,
so a new endpoint is walked without being listed here), sent a JSON object its fields refuse (an
unknown member; every declared member of the wrong type; for an import, a spreadsheet with an
unknown column), answers 403 to a viewer it refuses and 404 to an outsider, and stores
nothing. The same holds for a body that cannot be read at all (not JSON, NaN, a NUL in a
property name, nesting past the bound): the caller is judged first, and a caller who may
write hears the body's refusal (400 or 422) in words, nothing stored."""

import json
import re
from types import SimpleNamespace

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from governance.api import api
from governance.models import AuditEntry
from tests.conftest import build_cast, fresh
from tests.permission_matrix import DENY, HIDE, OK, ROLES
from tests.test_permission_matrix import CELLS, DISCOVERED, SETUPS, _url

WRITES = sorted(
    case
    for case in DISCOVERED
    if case.split(" ", 1)[1].startswith("api/")
    and not case.startswith("GET ")
    and case in CELLS
    and (CELLS[case]["viewer"] == DENY or CELLS[case]["outsider"] == HIDE)
)
GARBAGE = [
    ("a body that is not JSON", b"{"),
    ("NaN", b'{"amount": NaN}'),
    ("a NUL in a property name", b'{"\\u0000": 1}'),
    ("40-deep nesting", b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}"),
    ("a body that is not an object", b"[1]"),
]
WRONG = [[{}]]  # no member of any body takes a list of lists of objects


def _json_body(case: str) -> dict | None:
    """The JSON body the OpenAPI document declares for this write, if it takes one."""
    method, route = case.split(" ", 1)
    path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
    operation = api.get_openapi_schema()["paths"].get(path, {}).get(method.lower(), {})
    content = operation.get("requestBody", {}).get("content", {})
    return content.get("application/json", {}).get("schema")


def _declared(case: str) -> list[str]:
    """The body members the OpenAPI document declares for this write."""
    return sorted((_json_body(case) or {}).get("properties", {}))


def _bodies(case: str) -> list[tuple[str, bytes | dict]]:
    declared = _declared(case)
    bodies: list[tuple[str, bytes | dict]] = [
        ("an unknown member", b'{"unknownMember": 1}'),
    ]
    if declared:
        bodies.append(
            ("every member of the wrong type", json.dumps(dict.fromkeys(declared, WRONG)).encode())
        )
    bodies.extend(GARBAGE)
    if case.endswith("/import"):
        bodies.append(("a file with an unknown column", {"file": b"title,colour\nA,red\n"}))
    return bodies


def _send(client: Client, method: str, url: str, body: bytes | dict):
    if isinstance(body, dict):
        upload = SimpleUploadedFile("bad.csv", body["file"])
        return client.post(url, {"file": upload})
    return client.generic(method, url, data=body, content_type="application/json")


@pytest.fixture(scope="module")
def built_world(module_db):
    """The cast and one of each record the walk's paths name, built once for the module."""
    cast = build_cast()
    world = SimpleNamespace(cast=cast, project=cast.project)
    for setup in SETUPS:
        setup(world)
    return world


@pytest.fixture
def world(db, built_world):
    return fresh(built_world)


def test_the_walk_finds_the_writes():
    """The walk is not empty: it holds the register, business-case and status writes."""
    assert len(WRITES) > 40, WRITES
    assert len([case for case in WRITES if _json_body(case) is not None]) > 40
    for expected in ("reorder", "adjudicate", "apply-to-baseline", "status"):
        assert any(expected in case for case in WRITES), expected


@pytest.mark.parametrize("case", WRITES)
def test_a_refused_caller_hears_403_or_404_whatever_the_body(case, world):
    method, route = case.split(" ", 1)
    audit_before = AuditEntry.objects.count()
    failures = []
    for role, expected_status, outcome in (("viewer", 403, DENY), ("outsider", 404, HIDE)):
        if CELLS[case][role] != outcome:
            continue
        user = world.cast.user(role)
        client = Client()
        client.force_login(user)
        url = _url(route, world, user)
        for name, body in _bodies(case):
            response = _send(client, method, url, body)
            if response.status_code != expected_status:
                failures.append(
                    f"{role}, {name}: {response.status_code} (expected {expected_status}) "
                    f"{response.content[:200]!r}"
                )
    assert not failures, f"{case}\n" + "\n".join(failures)
    assert AuditEntry.objects.count() == audit_before


def _writer(case: str) -> str | None:
    """A role the permission matrix lets through this write's gate, if any."""
    return next((role for role in ROLES if role != "anonymous" and CELLS[case][role] == OK), None)


@pytest.mark.parametrize("case", WRITES)
def test_a_caller_who_may_write_hears_the_unreadable_body_in_words(case, world):
    """For a caller the gate lets through, an unreadable body is refused 400 or 422 with a
    message (unless the state or revision is refused first: 409, 412, 428), nothing stored."""
    role = _writer(case)
    if role is None or _json_body(case) is None:
        pytest.skip("no role writes here, or the write takes no JSON body")
    method, route = case.split(" ", 1)
    user = world.cast.user(role)
    client = Client()
    client.force_login(user)
    url = _url(route, world, user)
    audit_before = AuditEntry.objects.count()
    failures = []
    for name, body in GARBAGE:
        response = _send(client, method, url, body)
        if response.status_code in (409, 412, 428):
            continue
        error = response.json().get("error", {}) if response.status_code < 500 else {}
        if response.status_code not in (400, 422) or not error.get("message"):
            failures.append(f"{role}, {name}: {response.status_code} {response.content[:200]!r}")
    assert not failures, f"{case}\n" + "\n".join(failures)
    assert AuditEntry.objects.count() == audit_before
