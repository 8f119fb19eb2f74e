"""docs/api.md, the API reference, lists exactly the operations of the OpenAPI document."""

import re
from pathlib import Path

from config.api import api

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "api.md"
BASE = "/api/v1"
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
LINE = re.compile(rf"^({'|'.join(METHODS)})\s+(/\S+)")


def _normalise(path: str) -> str:
    """Path parameters compare by position, not by name ({id} and {wp_id} are one slot)."""
    return re.sub(r"\{[^}]+\}", "{}", path.rstrip("/") or "/")


def documented_operations(text: str) -> set[tuple[str, str]]:
    found = set()
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
            continue
        match = LINE.match(line) if in_code else None
        if match:
            found.add((match.group(1), _normalise(match.group(2))))
    return found


def served_operations() -> set[tuple[str, str]]:
    schema = api.get_openapi_schema()
    found = set()
    for path, operations in schema["paths"].items():
        assert path.startswith(BASE), path
        # The document lists one path per agent action; the reference, their one route.
        path = re.sub(r"^(/api/v1/agent/actions/)[a-z_]+$", r"\1{name}", path)
        for method in operations:
            if method.upper() in METHODS:
                found.add((method.upper(), _normalise(path.removeprefix(BASE))))
    return found


def test_every_served_operation_is_documented():
    missing = served_operations() - documented_operations(REFERENCE.read_text())
    assert not missing, f"add to docs/api.md: {sorted(missing)}"


def test_every_documented_operation_is_served():
    extra = documented_operations(REFERENCE.read_text()) - served_operations()
    assert not extra, f"docs/api.md lists operations the API does not serve: {sorted(extra)}"


def test_the_parser_reads_operation_lines_in_code_blocks_only():
    text = (
        "GET /outside/a/block\n"
        "```\n"
        "GET    /projects/{key}/risks/{id}         one item\n"
        "DELETE /projects/{key}/work-packages/{id}/links/{issueKey}   unlink\n"
        "not an operation\n"
        "```\n"
    )
    assert documented_operations(text) == {
        ("GET", "/projects/{}/risks/{}"),
        ("DELETE", "/projects/{}/work-packages/{}/links/{}"),
    }


def test_every_operation_reading_if_match_is_declared_and_only_those():
    """The OpenAPI document lists 412 for the operations marked `honours_if_match`; a view
    that reads If-Match without the mark (or the mark without reading it) would make the
    document lie, so the views' code is checked here, never by the document's builder."""
    import inspect

    undeclared, unread = [], []
    for _prefix, router in api._routers:
        for path_view in router.path_operations.values():
            for operation in path_view.operations:
                source = inspect.getsource(operation.view_func)
                reads = any(
                    reader in source
                    for reader in (
                        "If-Match",
                        "_if_match(request",
                        "_case_write(",
                        "_checklist_act(",
                        "_report_write(",
                    )
                )
                marked = getattr(operation.view_func, "honours_if_match", False)
                name = operation.view_func.__name__
                if reads and not marked:
                    undeclared.append(name)
                if marked and not reads:
                    unread.append(name)
    assert undeclared == [] and unread == []
    document = api.get_openapi_schema()
    with_412 = [
        op["operationId"]
        for item in document["paths"].values()
        for op in item.values()
        if "412" in {str(code) for code in op.get("responses", {})}
    ]
    assert "charter_approve" in with_412 and "charter_api_charter_patch" in with_412
