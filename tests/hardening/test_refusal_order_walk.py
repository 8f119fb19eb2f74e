"""The refusal order over every write of the API (docs/api.md: 401, 404, 403, 409, 412, and
only then the body): each write the URL resolver answers (the permission matrix's discovery,
so a new endpoint is walked without being listed here), sent a JSON object its fields refuse (an
unknown member; every declared member of the wrong type; for an import, a spreadsheet with an
unknown column), answers 403 to a viewer it refuses and 404 to an outsider, and stores
nothing."""

import json
import re
from types import SimpleNamespace

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from governance.api import api
from governance.models import AuditEntry
from tests.permission_matrix import DENY, HIDE
from tests.test_permission_matrix import CELLS, DISCOVERED, SETUPS, _url

WRITES = sorted(
    case
    for case in DISCOVERED
    if case.split(" ", 1)[1].startswith("api/")
    and not case.startswith("GET ")
    and case in CELLS
    and (CELLS[case]["viewer"] == DENY or CELLS[case]["outsider"] == HIDE)
)
WRONG = [[{}]]  # no member of any body takes a list of lists of objects


def _declared(case: str) -> list[str]:
    """The body members the OpenAPI document declares for this write."""
    method, route = case.split(" ", 1)
    path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
    operation = api.get_openapi_schema()["paths"].get(path, {}).get(method.lower(), {})
    content = operation.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema", {})
    return sorted(schema.get("properties", {}))


def _bodies(case: str) -> list[tuple[str, bytes | dict]]:
    declared = _declared(case)
    bodies: list[tuple[str, bytes | dict]] = [
        ("an unknown member", b'{"unknownMember": 1}'),
    ]
    if declared:
        bodies.append(
            ("every member of the wrong type", json.dumps(dict.fromkeys(declared, WRONG)).encode())
        )
    if case.endswith("/import"):
        bodies.append(("a file with an unknown column", {"file": b"title,colour\nA,red\n"}))
    return bodies


def _send(client: Client, method: str, url: str, body: bytes | dict):
    if isinstance(body, dict):
        upload = SimpleUploadedFile("bad.csv", body["file"])
        return client.post(url, {"file": upload})
    return client.generic(method, url, data=body, content_type="application/json")


@pytest.fixture
def world(cast):
    world = SimpleNamespace(cast=cast, project=cast.project)
    for setup in SETUPS:
        setup(world)
    return world


def test_the_walk_finds_the_writes():
    """The walk is not empty: it holds the register, business-case and status writes."""
    assert len(WRITES) > 40, WRITES
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
