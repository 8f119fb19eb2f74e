"""The hostile-value property at the service boundary: every writable field of every resource
(read from the OpenAPI document the code serves, so a new field or endpoint is covered without
touching this test) given a lone surrogate, a noncharacter, NaN or an infinity, 2^31, 2^63,
10^400, a far date or a 10 MB string answers 4xx, and nothing is stored (no row, no audit
entry).

Values go where they are hostile: every field gets one of the surrogates, the non-finite
literals and the 10 MB string; fields the document types or describes as numbers also get one
of the integers past the columns; date fields also get one of the far dates. Bounded: one
example per field, one value of each kind (seeded per field, so the run is deterministic
and each field draws its own values), no deadline."""

import datetime as dt
import json
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from django.apps import apps
from django.db import connection
from django.test import Client
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from charter.models import BusinessCase
from config.api import api
from config.layers import APPS
from gates.models import Stage, StageCriterion
from status.models import StatusReport
from tests.agent.conftest import EVERYONE, use_group
from tests.conftest import bearer_headers, build_cast, fresh
from tests.factories import WorkPackageFactory

EXAMPLES_PER_FIELD = 1
UNSAFE = ("post", "put", "patch")
AGENT = "/api/v1/agent/actions/"


class Raw(str):
    """JSON text put into the body as it is (NaN, 1e400: no Python value writes them)."""


SURROGATE = "a\ud800b"
TEN_MB = "x" * 10_000_000
EVERYWHERE = [
    SURROGATE,
    "\udfff",
    "Cost\ufffeOut",  # Unicode noncharacters: the BMP's, the U+FDD0 block's, an astral plane's
    "\ufdd0",
    "a\U0010ffffb",
    Raw("NaN"),
    Raw("Infinity"),
    Raw("-Infinity"),
    Raw("1e400"),
    Raw("-1e400"),
    TEN_MB,
]
NUMBERS = [2**31, -(2**31) - 1, 2**63, -(2**63) - 1, 10**400, -(10**400)]
DATES = ["9999-12-31", "0001-01-01", "1899-12-31", "2200-01-01", "9999-12"]


@dataclass(frozen=True)
class Field:
    method: str
    path: str
    name: str  # dotted under `arguments` for the agent's actions
    schema: dict

    @property
    def hostile(self) -> list[list[Any]]:
        """The kinds of hostile value this field gets: one of each kind is sent."""
        kinds = [EVERYWHERE]
        types = self.schema.get("type") or []
        types = {types} if isinstance(types, str) else set(types)
        described = self.schema.get("description", "").lower()
        if "amount" in described:  # an amount holds 2^31: past 16 digits is hostile
            kinds.append([n for n in NUMBERS if abs(n) > 10**16])
        elif types & {"integer", "number"} or "number" in described:
            kinds.append(NUMBERS)
        if self.schema.get("format") == "date" or "date" in self.name.lower():
            kinds.append(DATES)
        return kinds


def _resolve(document: dict, node: dict) -> dict:
    while isinstance(node, dict) and "$ref" in node:
        node = document["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def writable_fields() -> list[Field]:
    """Every member of every JSON body the API document lists; for the agent's actions, every
    argument. Not the `readOnly` ones: the document says they are ignored when sent back
    (tests/governance/test_api_document.py holds the server to it)."""
    document = api.get_openapi_schema()
    fields = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in UNSAFE:
                continue
            content = operation.get("requestBody", {}).get("content", {})
            schema = _resolve(document, content.get("application/json", {}).get("schema", {}))
            for name, member in schema.get("properties", {}).items():
                if member.get("readOnly"):
                    continue
                member = _resolve(document, member)
                if path.startswith(AGENT) and name == "arguments":
                    for argument, inner in member.get("properties", {}).items():
                        fields.append(Field(method, path, f"arguments.{argument}", inner))
                else:
                    fields.append(Field(method, path, name, member))
    return fields


FIELDS = writable_fields()
OPERATIONS = sorted({(f.method, f.path) for f in FIELDS})


def test_the_field_list_is_read_from_the_document_and_covers_every_body():
    names = {(f.path, f.name) for f in FIELDS}
    assert ("/api/v1/projects/{key}/work-packages", "budget") in names
    assert ("/api/v1/projects/{key}/changes", "impactScheduleDays") in names
    assert ("/api/v1/projects/{key}/status", "projectMetrics") in names
    assert ("/api/v1/agent/actions/add_risk", "arguments.title") in names
    assert len(OPERATIONS) > 40 and len(FIELDS) > 200


def _body(fields: dict[str, Any]) -> str:
    raws: dict[str, str] = {}

    def swap(value):
        if isinstance(value, Raw):
            marker = f"__raw_{len(raws)}__"
            raws[marker] = str(value)
            return marker
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        return value

    text = json.dumps(swap(fields))
    for marker, raw in raws.items():
        text = text.replace(f'"{marker}"', raw)
    return text


def _stored() -> tuple[int, ...]:
    """Rows per table of the apps that keep project data, and the audit entries: one query."""
    tables = [
        model._meta.db_table
        for label in APPS
        for model in apps.get_app_config(label).get_models()
        if not model._meta.proxy
    ]
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {table})" for table in tables))
        return tuple(cursor.fetchone())


@pytest.fixture(scope="module")
def built_world(module_db):
    """One of each thing a path names, and the assistant open to the lead: built once for
    the module's tests."""
    cast = build_cast()
    bearer = bearer_headers
    project = cast.project
    wp = WorkPackageFactory(project=project)
    from registers.models import ChangeRequest, Decision, Risk

    risk = Risk.objects.create(project=project, title="Vendor")
    decision = Decision.objects.create(project=project, decision="Go")
    change = ChangeRequest.objects.create(project=project, summary="More")
    case, _ = BusinessCase.objects.get_or_create(project=project)
    report = StatusReport.objects.create(project=project, title="May")
    stage = Stage.objects.create(project=project, position=1, name="Design")
    criterion = StageCriterion.objects.create(stage=stage, key="noOpenException")
    from governance.tracker.local import scripting

    scripting.ensure_group(EVERYONE, members=["lead", "site_admin"])
    use_group(EVERYONE)
    from investment.models import Criterion, ModelVersion, PortfolioDecision, Scenario

    # A model in force with a criterion a person scores: a score's body is read, not refused
    # for want of a model.
    Criterion.objects.create(
        version=ModelVersion.objects.create(number=1, why="Hostile"),
        key="strategy",
        name="Strategy",
        points=["a", "b", "c", "d", "e"],
        weight=1,
    )

    scenario = Scenario.objects.create(name="Hostile", budget_total=100)
    made = PortfolioDecision.objects.create(
        decision="Prioritise",
        made_on=dt.date(2026, 11, 1),
        made_by_account_id="someone",
        minutes_ref={"title": "Board"},
        scenario=Scenario.objects.create(name="Chosen", budget_total=100),
        scenario_name="Chosen",
        scenario_revision=1,
    )
    ids = {
        "scenario_id": scenario.pk,
        "portfolio_decision_id": made.pk,
        "key": "ALPHA",
        "wp_id": wp.pk,
        "risk_id": risk.pk,
        "decision_id": decision.pk,
        "change_id": change.pk,
        "report_id": report.pk,
        "stage_id": stage.pk,
        "criterion_id": criterion.pk,
        "note_id": uuid.uuid4(),
        "register": "risks",
    }
    arguments = {
        "projectKey": "ALPHA",
        "workPackageId": str(wp.pk),
        "riskId": str(risk.pk),
        "decisionId": str(decision.pk),
        "changeId": str(change.pk),
        "register": "risks",
    }
    return {
        "ids": ids,
        "arguments": arguments,
        "lead": bearer(cast.lead),
        "admin": bearer(cast.site_admin),
        "case": case,
    }


@pytest.fixture
def world(db, built_world):
    return fresh(built_world)


def _send(world, field: Field, value: Any):
    path = field.path.format(**world["ids"])
    if field.name.startswith("arguments."):
        name = field.name.partition(".")[2]
        body = {"arguments": {**world["arguments"], name: value}}
    else:
        body = {field.name: value}
    auth = world["admin"] if "site-settings" in path else world["lead"]
    return Client().generic(
        field.method.upper(), path, _body(body), content_type="application/json", **auth
    )


def _refuses_hostile_values(world, field: Field, number: int):
    # Seeded per field: deterministic, and each field draws its own values.
    @seed(number)
    @given(st.tuples(*(st.sampled_from(kind) for kind in field.hostile)))
    @settings(
        max_examples=EXAMPLES_PER_FIELD,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def check(values):
        for value in values:
            before = _stored()
            response = _send(world, field, value)
            text = str(value)
            shown = value if len(text) < 40 else f"{text[:20]}... ({len(text)} characters)"
            assert 400 <= response.status_code < 500, (field.name, shown, response.content[:300])
            assert response.json()["error"]["message"]
            assert _stored() == before, (field.name, shown)

    check()


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_every_writable_field_refuses_hostile_values_and_stores_nothing(world, method, path):
    for number, field in enumerate(FIELDS):
        if (field.method, field.path) == (method, path):
            _refuses_hostile_values(world, field, number)
