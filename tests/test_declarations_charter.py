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

from charter.specs import CharterSpec, CloseoutSpec, LessonsSpec, RealisationSpec
from governance import specs
from governance.models import SiteSettingsSpec
from status.specs import CommentarySpec, StatusReportSpec, StatusSpec

ROOT = Path(__file__).resolve().parent.parent
DECLARATIONS = [
    CharterSpec,
    CloseoutSpec,
    LessonsSpec,
    RealisationSpec,
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
