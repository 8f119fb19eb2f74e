"""Each register resource's fields are declared once (registers/specs.py): no hand-written
schema, writable-field list or label table names them anywhere else. The test walks each
declaration's fields and parses every module of the apps that read them: a dict literal
keyed by two or more of one resource's camelCase fields whose values are schemas or labels
(a schema, a label table), or a list, set or tuple literal of two or more (a field list), is
a second declaration. A selection handed to
`governance.specs` (a tool's view of the declaration) is not: it picks, the spec defines.
Serialising code that reads a record into its API names is not either (the values are
expressions of the record, not declarations)."""

import ast
from pathlib import Path

import pytest

from config.layers import APPS
from governance import specs
from registers.specs import SPECS

ROOT = Path(__file__).resolve().parent.parent
SCANNED = list(APPS)


def _modules() -> list[Path]:
    found = []
    for app in SCANNED:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" in path.parts or path.name == "specs.py":
                continue
            found.append(path)
    return found


def _names(spec) -> set[str]:
    """The camelCase names a client writes (one word, "status", is any app's word too; the
    read-only names are answered, and serialising code names them)."""
    written = specs.writable(spec) + specs.create_only(spec)
    return {api for api in written if api != api.lower()}


def _strings(nodes) -> list[str]:
    return [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]


SCHEMA_WORDS = {"type", "enum", "description", "properties", "items", "format", "$ref", "anyOf"}


def _schema_like(value: ast.expr) -> bool:
    if isinstance(value, ast.Dict):
        return bool(SCHEMA_WORDS & set(_strings(value.keys)))
    if isinstance(value, ast.Name):
        return value.id.isupper()  # a schema constant (TEXT, SCORE)
    return isinstance(value, ast.Call) and getattr(value.func, "id", "").endswith("_schema")


def _declaring(node: ast.Dict) -> bool:
    """A dict that declares: a schema (every value a schema), or a label table (every value
    text). Not data (a demo record, an audit change) nor a record read into its API names."""
    values = [value for value in node.values if value is not None]  # None: ** unpacking
    texts = [v for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return bool(values) and (all(map(_schema_like, values)) or len(texts) == len(values))


# The assistant's schema builders, which hand the names they are given to
# `governance.specs.tool_schema` with the spec (agent/actions.py): a selection, not a declaration.
SELECTORS = {"_creating", "_updating"}


def _selections(tree: ast.AST) -> set[int]:
    """The ids of literals passed to governance.specs (views select fields by name), directly
    or through one of SELECTORS."""
    chosen = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") == "specs")
            or (isinstance(node.func, ast.Name) and node.func.id in SELECTORS)
        ):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                chosen.add(id(arg))
    return chosen


def _second_declarations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    chosen = _selections(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in chosen:
            continue
        if isinstance(node, ast.Dict) and _declaring(node):
            strings = _strings(node.keys)  # a schema or a label table
        elif isinstance(node, ast.List | ast.Set | ast.Tuple):
            strings = _strings(node.elts)  # a field list
        else:
            continue
        for slug, spec in SPECS.items():
            named = sorted(set(strings) & _names(spec))
            if len(named) >= 2:
                relative = path.relative_to(ROOT)
                found.append(f"{relative}:{node.lineno} declares {slug} fields {named}")
    return found


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_the_declaration_names_every_model_field(slug):
    """Each field the API writes maps to a model attribute or is a declared alias."""
    spec = SPECS[slug]
    model = {
        "work-packages": "WorkPackage",
        "risks": "Risk",
        "decisions": "Decision",
        "changes": "ChangeRequest",
    }[slug]
    from registers import models

    attributes = {f.name for f in getattr(models, model)._meta.get_fields()} | {"id"}
    for api in specs.writable(spec) + specs.create_only(spec):
        field = specs.fields(spec)[api]
        assert field.name in attributes or field.has(specs.NotStored), (slug, api)


def test_no_field_is_declared_twice():
    found = [line for path in _modules() for line in _second_declarations(path)]
    assert not found, "\n".join(found)
