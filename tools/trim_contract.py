"""Add operations, verbatim, from one of Atlassian's whole OpenAPI documents to its trimmed copy
in contracts/atlassian/, with every component they reference, and list them in
operations-index.json.

    python3 tools/trim_contract.py WHOLE.json SUBSET.json OPERATION_ID [OPERATION_ID ...]

WHOLE.json is the whole document as Atlassian publishes it (e.g. jira-platform-v3.json),
SUBSET.json the file name under contracts/atlassian/. Operations already there are left as
they are. The patches contracts/atlassian/README.md describes are applied to what is added
(media-type `example` strings parsed into JSON; a `default` outside its enum dropped) and
recorded under `info.x-subset.patches`. Standard library only; idempotent.
"""

import json
import sys
from pathlib import Path

CONTRACTS = Path(__file__).resolve().parent.parent / "contracts" / "atlassian"
METHODS = ("get", "put", "post", "delete", "patch")


def pointer(path: list[str]) -> str:
    return "#/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in path)


def refs(node, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            found.add(ref)
        for value in node.values():
            refs(value, found)
    elif isinstance(node, list):
        for value in node:
            refs(value, found)


def resolve(doc: dict, ref: str):
    target = doc
    for part in ref[2:].split("/"):
        target = target[part.replace("~1", "/").replace("~0", "~")]
    return target


def patch(node, path: list[str], notes: list[str]) -> None:
    """Example strings parsed into JSON; a `default` that its own enum does not allow dropped."""
    if isinstance(node, dict):
        example = node.get("example")
        if path and path[-1] == "application/json" and isinstance(example, str):
            try:
                node["example"] = json.loads(example)
                notes.append(f"{pointer([*path, 'example'])} (example string parsed)")
            except ValueError:
                pass
        if "enum" in node and "default" in node and node["default"] not in node["enum"]:
            del node["default"]
            notes.append(f"{pointer(path)} (default outside its enum dropped)")
        for key, value in node.items():
            patch(value, [*path, key], notes)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            patch(value, [*path, str(index)], notes)


def index_entry(spec_name: str, method: str, path: str, op: dict, doc: dict) -> dict:
    params = [p if "$ref" not in p else resolve(doc, p["$ref"]) for p in op.get("parameters", [])]
    body = op.get("requestBody") or {}
    if "$ref" in body:
        body = resolve(doc, body["$ref"])
    required_fields = None
    if body:
        schema = (body.get("content") or {}).get("application/json", {}).get("schema", {})
        if "$ref" in schema:
            schema = resolve(doc, schema["$ref"])
        required_fields = list(schema.get("required") or [])
    success = {}
    for status, answer in (op.get("responses") or {}).items():
        if status.startswith("2"):
            schema = ((answer.get("content") or {}).get("application/json") or {}).get("schema")
            success[status] = (schema or {}).get("$ref")
    states: dict[str, list[str]] = {}
    for entry in op.get("x-atlassian-oauth2-scopes") or []:
        states.setdefault(entry.get("state", "Current"), []).extend(entry.get("scopes") or [])
    connect = (op.get("x-atlassian-connect-scope") or "") or None
    return {
        "spec": spec_name,
        "method": method.upper(),
        "path": path,
        "operationId": op["operationId"],
        "deprecated": bool(op.get("deprecated")),
        "experimental": bool(op.get("x-experimental")),
        "required_params": [f"{p['name']}({p['in']})" for p in params if p.get("required")],
        "request_body_required_fields": required_fields,
        "success": success,
        "oauth2_scopes_classic": states.get("Current", []) if "Beta" in states else [],
        "oauth2_scopes_granular": states.get("Beta", states.get("Current", [])),
        "oauth2_scope_states": states,
        "anonymous_allowed": op.get("security") == []
        or any(s == {} for s in op.get("security", [])),
        "connect_scope": connect,
    }


def main(whole_path: str, subset_name: str, wanted: list[str]) -> None:
    whole = json.loads(Path(whole_path).read_text())
    subset_file = CONTRACTS / subset_name
    subset = json.loads(subset_file.read_text())
    index_file = CONTRACTS / "operations-index.json"
    index = json.loads(index_file.read_text())
    have = {
        op.get("operationId")
        for item in subset["paths"].values()
        for m, op in item.items()
        if m in METHODS
    }
    notes: list[str] = []
    added = []
    for path, item in whole["paths"].items():
        for method in METHODS:
            op = item.get(method)
            if not op or op.get("operationId") not in wanted or op["operationId"] in have:
                continue
            op = json.loads(json.dumps(op))
            patch(op, ["paths", path, method], notes)
            target = subset["paths"].setdefault(path, {})
            if "parameters" in item and "parameters" not in target:
                target["parameters"] = item["parameters"]
            target[method] = op
            added.append((method, path, op))
    missing = set(wanted) - have - {op["operationId"] for _, _, op in added}
    if missing:
        raise SystemExit(f"not in {whole_path}: {', '.join(sorted(missing))}")
    # The closure of local $refs, taken from the whole document.
    seen: set[str] = set()
    todo: set[str] = set()
    refs(subset["paths"], todo)
    while todo:
        ref = todo.pop()
        if ref in seen or not ref.startswith("#/components/"):
            continue
        seen.add(ref)
        parts = ref[2:].split("/")
        holder = subset
        for part in parts[:-1]:
            holder = holder.setdefault(part, {})
        if parts[-1] not in holder:
            node = json.loads(json.dumps(resolve(whole, ref)))
            patch(node, parts, notes)
            holder[parts[-1]] = node
        refs(holder[parts[-1]], todo)
    used_tags = {t for _, _, op in added for t in op.get("tags", [])}
    known = {t["name"] for t in subset.get("tags", [])}
    for tag in whole.get("tags", []):
        if tag["name"] in used_tags and tag["name"] not in known:
            subset.setdefault("tags", []).append(tag)
    subset["info"]["x-subset"].setdefault("patches", []).extend(notes)
    subset_file.write_text(json.dumps(subset, indent=1, ensure_ascii=False) + "\n")
    for method, path, op in added:
        index["operations"].append(index_entry(subset_name, method, path, op, whole))
    index_file.write_text(json.dumps(index, indent=1, ensure_ascii=False))
    for method, path, op in added:
        print(f"added {op['operationId']}: {method.upper()} {path}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
