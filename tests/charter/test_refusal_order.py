"""A refused request answers for the most basic reason first: 404 (not viewable), 403 (the
wrong person), 409 (the wrong state), 412 (a stale revision), and only then 422 (the body).
Every act of the lifecycle table and every other business-case endpoint, with a body that
would itself be refused."""

import json

import pytest

from charter.models import BusinessCase
from governance.models import AuditEntry
from tests.charter.conftest import closeout_record
from tests.charter.test_lifecycle_table import IDS, ROWS, post

API = "/api/v1/projects/ALPHA"
INVALID = {"x": 1}  # every business-case body refuses an unknown field (422)


def _unchanged(case):
    stored = BusinessCase.objects.get(pk=case.pk)
    assert stored.revision == case.revision
    assert stored.approval_status == case.approval_status
    assert not AuditEntry.objects.filter(target_type="businessCase").exists()


def _invalid(body: dict) -> dict:
    return {**body, **INVALID}


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_the_body_is_valid_but_for_the_unknown_field(row, cast, arrange, client, bearer):
    """The premise of the tests below: from the right person in the right state, the
    invalid body is refused for itself (422 naming the field)."""
    act, state, fields, actor, body, *_ = row
    case = arrange(state, **(fields(cast) if fields else {}))
    response = post(client, bearer(getattr(cast, actor)), act, _invalid(body))
    assert response.status_code == 422, response.content
    assert "x" in response.json()["error"]["fields"]
    _unchanged(case)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_an_invalid_body_from_the_wrong_person_is_403(row, cast, arrange, client, bearer):
    act, state, fields, _, body, _, _, wrong_actor, _ = row
    case = arrange(state, **(fields(cast) if fields else {}))
    response = post(client, bearer(getattr(cast, wrong_actor)), act, _invalid(body))
    assert response.status_code == 403, response.content
    assert response.json()["error"]["code"] == "forbidden"
    _unchanged(case)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_an_invalid_body_in_the_wrong_state_is_409(row, cast, arrange, client, bearer):
    act, _, fields, actor, body, _, _, _, wrong_state = row
    case = arrange(wrong_state, **(fields(cast) if fields else {}))
    response = post(client, bearer(getattr(cast, actor)), act, _invalid(body))
    assert response.status_code == 409, response.content
    assert response.json()["error"]["code"] == "conflict"
    _unchanged(case)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_an_invalid_body_on_a_stale_revision_is_412(row, cast, arrange, client, bearer):
    act, state, fields, actor, body, *_ = row
    case = arrange(state, **(fields(cast) if fields else {}))
    response = post(
        client,
        bearer(getattr(cast, actor)),
        act,
        _invalid(body),
        HTTP_IF_MATCH=f'"{case.revision + 5}"',
    )
    assert response.status_code == 412, response.content
    assert response.json()["error"]["code"] == "stale"
    _unchanged(case)


def test_an_outsider_gets_404_whatever_the_body(cast, arrange, client, bearer):
    case = arrange("Draft")
    response = post(client, bearer(cast.outsider), "submit", INVALID)
    assert response.status_code == 404
    _unchanged(case)


# --- the other endpoints ---------------------------------------------------------------------


def _send(client, headers, method, path, body, **extra):
    return getattr(client, method)(
        f"{API}/{path}", data=json.dumps(body), content_type="application/json", **headers, **extra
    )


NOTE = {"id": "n1", "section": "outcome", "ask": "Say more.", "severity": "Minor"}
CLOSEOUT_NOTE = {"id": "c1", "section": "lessons", "ask": "Say more.", "severity": "Minor"}

# endpoint, method, body refused for itself, the right person, the right state and fields,
# the wrong person, the wrong state and fields
ENDPOINTS = [
    ("charter", "patch", {"businessProblem": 5, "x": 1}, "editor",
     ("Draft", {}), "viewer", ("Submitted", {})),
    ("charter/closeout", "patch", {"asBuiltOutcome": 5, "x": 1}, "lead",
     ("Approved", {"close_out": closeout_record()}), "sponsor",
     ("Approved", {"close_out": None})),
    ("charter/realisation", "patch", {"brOwner": 5, "x": 1}, "sponsor",
     ("InRealisation", {}), "viewer", ("Closed", {})),
    ("charter/return-notes/n1", "patch", {"addressed": "perhaps", "x": 1}, "lead",
     ("Draft", {"return_notes": [NOTE]}), "sponsor",
     ("Submitted", {"return_notes": [NOTE]})),
    ("charter/return-notes/c1", "patch", {"x": 1}, "editor",
     ("Approved", {"close_out": closeout_record(), "closeout_return_notes": [CLOSEOUT_NOTE]}),
     "viewer",
     ("ClosingSubmitted",
      {"close_out": closeout_record(), "closeout_return_notes": [CLOSEOUT_NOTE]})),
]  # fmt: skip
ENDPOINT_IDS = [f"{e[1].upper()} {e[0]}" for e in ENDPOINTS]


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=ENDPOINT_IDS)
def test_endpoint_refuses_the_body_last(endpoint, cast, arrange, client, bearer):
    path, method, body, actor, (state, fields), wrong_actor, (wrong_state, wrong_fields) = endpoint
    # The right person in the right state: the body is what is wrong (422).
    case = arrange(state, **fields)
    response = _send(client, bearer(getattr(cast, actor)), method, path, body)
    assert response.status_code == 422, response.content
    _unchanged(case)
    # The wrong person: 403, whatever the body.
    response = _send(client, bearer(getattr(cast, wrong_actor)), method, path, body)
    assert response.status_code == 403, response.content
    _unchanged(case)
    # A stale revision: 412 before the body.
    response = _send(
        client,
        bearer(getattr(cast, actor)),
        method,
        path,
        body,
        HTTP_IF_MATCH=f'"{case.revision + 5}"',
    )
    assert response.status_code == 412, response.content
    _unchanged(case)
    # The right person in the wrong state: 409, whatever the body.
    case = arrange(wrong_state, **wrong_fields)
    response = _send(client, bearer(getattr(cast, actor)), method, path, body)
    assert response.status_code == 409, response.content
    assert response.json()["error"]["code"] == "conflict"
    _unchanged(case)


def test_create_from_template_judges_the_state_before_the_kind(cast, arrange, client, bearer):
    path = "charter/supporting-links/from-template"
    case = arrange("Closed")
    response = _send(client, bearer(cast.viewer), "post", path, {"templateKind": "poem"})
    assert response.status_code == 403
    response = _send(client, bearer(cast.lead), "post", path, {"templateKind": "poem"})
    assert response.status_code == 409, response.content
    _unchanged(case)
    case = arrange("Draft")
    response = _send(client, bearer(cast.lead), "post", path, {"templateKind": "poem"})
    assert response.status_code == 422 and "templateKind" in response.json()["error"]["fields"]
    response = _send(client, bearer(cast.lead), "post", path, {"templateKind": "lessons"})
    assert response.status_code == 409  # the kind is valid, its state is not
    _unchanged(case)


def test_minutes_refuse_a_viewer_before_the_body(cast, arrange, client, bearer):
    case = arrange("Draft")
    response = _send(client, bearer(cast.viewer), "post", "minutes", {"heldOn": "soon", "x": 1})
    assert response.status_code == 403
    response = _send(client, bearer(cast.lead), "post", "minutes", {"heldOn": "soon", "x": 1})
    assert response.status_code == 422
    assert set(response.json()["error"]["fields"]) >= {"heldOn", "x"}
    _unchanged(case)
