"""Each field of the business case, the close-out, the realisation record, the project status,
the status report and the site settings is declared once (charter.specs, status.specs,
governance.models.SiteSettingsSpec): no other module of those apps writes their names out
again as a table. The walk reads the source and fails on
- a module-level table (a name saying labels, fields, writable, read-only, schema, body, keys,
  seats) whose literal holds two or more field names of one declaration;
- a hand-written schema anywhere: a dict literal mapping two or more writable field names of
  one declaration to schemas (dict literals or schema constants).
Demo data, serialised answers and page context name fields too; they are data, not tables."""

import ast
import re
from pathlib import Path

import pytest

from charter.acts import ACTS
from charter.forms import act_body
from charter.specs import (
    ACT_SPECS,
    CharterSpec,
    CloseoutSpec,
    LessonsSpec,
    LinkFromTemplateSpec,
    MinutesSpec,
    RealisationSpec,
    ReturnNoteSpec,
)
from governance import specs
from governance.models import SiteSettingsSpec
from status.specs import CommentarySpec, StatusReportSpec, StatusSpec

ROOT = Path(__file__).resolve().parent.parent
DECLARATIONS = [
    CharterSpec,
    CloseoutSpec,
    LessonsSpec,
    RealisationSpec,
    *dict.fromkeys(ACT_SPECS.values()),
    MinutesSpec,
    LinkFromTemplateSpec,
    ReturnNoteSpec,
    StatusSpec,
    StatusReportSpec,
    CommentarySpec,
    SiteSettingsSpec,
]
MODULES = [
    *sorted((ROOT / "charter").glob("*.py")),
    *sorted((ROOT / "charter" / "services").glob("*.py")),
    *sorted((ROOT / "charter" / "views").glob("*.py")),
    *sorted((ROOT / "status").glob("*.py")),
    ROOT / "governance" / "api.py",
    ROOT / "governance" / "services.py",
    ROOT / "agent" / "actions.py",
]
DECLARING = {ROOT / "charter" / "specs.py", ROOT / "status" / "specs.py"}
TABLE = re.compile(
    r"LABEL|FIELD|WRITABLE|READ_ONLY|SCHEMA|BODY|BODIES|PROPERT|KEYS|SEATS|PROSE|SNAPSHOT"
)
# (module, table) -> why it is no copy of a declaration.
ALLOWED = {
    # Who may sit where (a rule kept with the seats' cleaning): the seats that take an
    # external person.
    ("charter/services/thesis.py", "EXTERNAL_SEATS"),
    # The stored health row of the portfolio (status.models.ProjectHealth.row): a shape of
    # its own, read by the portfolio's one query.
    ("status/health.py", "ROW_KEYS"),
    # The columns the derivation reads (model attributes, loaded with .only()): a query's
    # projection, not the fields a client writes.
    ("status/selectors.py", "STATUS_FIELD_NAMES"),
    ("status/selectors.py", "CASE_FIELD_NAMES"),
    ("status/selectors.py", "RISK_FIELDS"),
}
# Modules of the kernel and the agent may name any app's fields; an app's module is read
# against its own app's declarations (the steering minutes share `id` and `createdAt` with a
# status report without copying it).
ANY_APP = {"governance", "agent"}


def _names(spec: type[specs.Spec], *, writable_only: bool = False) -> set[str]:
    return set(specs.writable(spec) if writable_only else specs.fields(spec))


def _strings(node: ast.AST) -> list[str]:
    """The string keys and members of every dict, list, set or tuple literal in `node`."""
    found = []
    for child in ast.walk(node):
        if isinstance(child, ast.Dict):
            items = child.keys
        elif isinstance(child, ast.List | ast.Set | ast.Tuple):
            items = child.elts
        else:
            continue
        found += [
            i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)
        ]
    return found


def _is_schema(node: ast.AST | None) -> bool:
    if isinstance(node, ast.Dict):
        keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
        return bool(keys & {"type", "enum", "description", "oneOf", "anyOf", "$ref"})
    return isinstance(node, ast.Name) and node.id.isupper()


def _schema_names(node: ast.Dict) -> list[str]:
    return [
        key.value
        for key, value in zip(node.keys, node.values, strict=True)
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and _is_schema(value)
    ]


def _read_against(relative: str) -> list[type[specs.Spec]]:
    app = relative.split("/")[0]
    if app in ANY_APP:
        return DECLARATIONS
    return [spec for spec in DECLARATIONS if spec.__module__.split(".")[0] == app]


def _copies() -> list[str]:
    found = []
    for path in MODULES:
        if path in DECLARING:
            continue
        relative = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for target in targets:
                if not isinstance(target, ast.Name) or not TABLE.search(target.id):
                    continue
                if (relative, target.id) in ALLOWED:
                    continue
                names = set(_strings(node.value))
                for spec in _read_against(relative):
                    shared = names & _names(spec)
                    if len(shared) >= 2:
                        found.append(f"{relative}: {target.id} {spec.__name__} {sorted(shared)}")
        for node in ast.walk(tree):
            if not isinstance(node, ast.Dict):
                continue
            names = set(_schema_names(node))
            for spec in _read_against(relative):
                shared = names & _names(spec, writable_only=True)
                if len(shared) >= 2:
                    found.append(
                        f"{relative}:{node.lineno}: schema {spec.__name__} {sorted(shared)}"
                    )
    return found


def test_no_field_of_these_declarations_is_written_out_again():
    assert _copies() == []


@pytest.mark.parametrize("spec", DECLARATIONS, ids=lambda s: s.__name__)
def test_every_writable_field_has_a_rule_and_a_label(spec):
    for api, field in specs.fields(spec).items():
        if field.read_only:
            continue
        assert field.rule is not None, api
        assert spec.model_fields[field.name].title, api


def _body(document: dict, path: str) -> dict:
    operation = document["paths"][f"/api/v1/projects/{{key}}{path}"]
    operation = operation.get("post") or operation.get("patch")
    return operation["requestBody"]["content"]["application/json"]["schema"]


@pytest.mark.parametrize("act", list(ACTS))
def test_an_acts_body_in_the_document_is_its_declaration(client, act):
    """Every act's request body is read from its declaration (ACT_SPECS), or is empty."""
    body = _body(client.get("/api/v1/openapi.json").json(), f"/charter/{act}")
    if act not in ACT_SPECS:
        assert body["properties"] == {}
        return
    _is_declared(body, ACT_SPECS[act])
    assert body["additionalProperties"] is False


def _is_declared(body: dict, spec: type[specs.Spec]) -> None:
    """The body names the declared fields, labelled by their titles, and requires the ones
    a create requires (the document then adds its general rules: no control characters)."""
    properties, required = specs.body(spec, creating=True)
    assert list(body["properties"]) == list(properties)
    assert body.get("required", []) == required
    for api, schema in body["properties"].items():
        assert schema["title"] == specs.fields(spec)[api].label


@pytest.mark.parametrize(
    ("path", "spec"),
    [
        ("/minutes", MinutesSpec),
        ("/charter/supporting-links/from-template", LinkFromTemplateSpec),
        ("/charter/return-notes/{note_id}", ReturnNoteSpec),
    ],
)
def test_the_minutes_template_link_and_note_bodies_are_their_declarations(client, path, spec):
    _is_declared(_body(client.get("/api/v1/openapi.json").json(), path), spec)


def test_the_reasons_and_dates_of_the_act_forms_are_read_by_their_declarations():
    from django.http import QueryDict

    post = QueryDict("reason=Budget%20gone&scheduledFor=2026-03-01&attendees=a&attendees=b&x=1")
    assert act_body("kill", post) == {"reason": "Budget gone"}
    assert act_body("handover-escalate", post) == {"reason": "Budget gone"}
    assert act_body("steerco-schedule", post) == {"scheduledFor": "2026-03-01"}
    assert act_body("steerco-confirm", post) == {"attendees": ["a", "b"]}
    assert act_body("submit", post) == {}


@pytest.mark.django_db
def test_the_status_answer_is_its_declaration_with_the_derived_fields_read_from_the_view(cast):
    from status import selectors
    from status.serializers import status_to_dict

    view = selectors.view_for(cast.project)
    body = status_to_dict(view)
    assert sorted(body) == sorted(specs.fields(StatusSpec))
    derived = specs.derived_values(StatusSpec, view)
    assert list(body)[-len(derived) :] == list(derived)
    assert body["derived"] == view.derived and body["stale"] is view.stale
    assert body["initiationChecklist"] == view.checklist
    assert body["approvalStatus"] == view.facts.approval_status
    assert body["revision"] == view.status.revision
    assert set(body["drivers"]) == {"costRag", "scheduleRag", "scopeRag", "riskRag"}


@pytest.mark.django_db
def test_the_site_settings_answer_is_their_declaration():
    from governance.models import SiteSettings
    from governance.services import rag_thresholds, site_settings_to_dict

    site = SiteSettings.load()
    body = site_settings_to_dict(site)
    assert list(body) == list(specs.fields(SiteSettingsSpec))
    assert body["ragThresholds"] == rag_thresholds(site)
    assert body["governanceGroup"] is None or body["governanceGroup"] == site.governance_group
