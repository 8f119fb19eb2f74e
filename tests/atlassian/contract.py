"""Atlassian's own OpenAPI documents (contracts/atlassian) as an in-process mock: every
request a backend makes is matched to an operation and validated (path, query parameters,
authentication, JSON body) and refused when it does not match; every answer a test hands
back is validated against the documented response schema. Prism does the same out of
process (`make contract-prism`); this keeps the suite offline and fast."""

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import jsonschema
import responses

CONTRACTS = Path(__file__).resolve().parents[2] / "contracts" / "atlassian"
JIRA = "jira-platform-v3.subset.json"
CONFLUENCE_V2 = "confluence-v2.subset.json"
CONFLUENCE_V1 = "confluence-v1-search.subset.json"


class ContractViolation(AssertionError):
    pass


def _openapi_to_jsonschema(node, *, relax: bool):
    """OpenAPI 3.0 schema dialect to JSON Schema: `nullable`; for responses, no
    `additionalProperties: false` (real answers carry undocumented fields)."""
    if isinstance(node, list):
        return [_openapi_to_jsonschema(n, relax=relax) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _openapi_to_jsonschema(v, relax=relax) for k, v in node.items()}
    if out.pop("nullable", False) and "type" in out:
        out["type"] = [out["type"], "null"]
    if relax and out.get("additionalProperties") is False:
        del out["additionalProperties"]
    return out


@dataclass
class Operation:
    method: str
    template: str
    regex: re.Pattern
    spec: dict
    doc: "Contract"
    params: list = field(default_factory=list)

    @property
    def operation_id(self) -> str:
        return self.spec["operationId"]


class Contract:
    def __init__(self, name: str):
        self.name = name
        self.raw = json.loads((CONTRACTS / name).read_text())
        self.request_doc = _openapi_to_jsonschema(self.raw, relax=False)
        self.response_doc = _openapi_to_jsonschema(self.raw, relax=True)
        self.operations: list[Operation] = []
        self._validators: dict = {}
        for template, item in self.raw["paths"].items():
            shared = item.get("parameters", [])
            pattern = "^" + re.sub(r"\\{[^}]+\\}", "([^/]+)", re.escape(template)) + "$"
            for method, spec in item.items():
                if method == "parameters":
                    continue
                self.operations.append(
                    Operation(
                        method.upper(),
                        template,
                        re.compile(pattern),
                        spec,
                        self,
                        [*shared, *spec.get("parameters", [])],
                    )
                )
        # Literal paths before templated ones (/field/search before /field/{fieldId}).
        self.operations.sort(key=lambda o: o.template.count("{"))

    def _resolve(self, node: dict) -> dict:
        while isinstance(node, dict) and "$ref" in node:
            target = self.raw
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    def match(self, method: str, path: str) -> Operation:
        for op in self.operations:
            if op.method == method and op.regex.match(path):
                return op
        raise ContractViolation(f"{method} {path} is not an operation of {self.name}.")

    def _validate(self, doc: dict, schema: dict, value, what: str):
        key = (id(doc), json.dumps(schema, sort_keys=True))
        validator = self._validators.get(key)
        if validator is None:
            wrapper = {"components": doc.get("components", {}), "allOf": [schema]}
            validator = self._validators[key] = jsonschema.Draft4Validator(wrapper)
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            where = "/".join(str(p) for p in first.path)
            raise ContractViolation(f"{what}: {first.message} (at /{where})")

    def validate_request(self, op: Operation, path: str, query: dict, headers, body):
        what = f"{op.operation_id} request"
        raw_params = {p2["name"]: p2 for p2 in (self._resolve(p) for p in op.params)}
        for name, values in query.items():
            param = raw_params.get(name)
            if param is None or param["in"] != "query":
                raise ContractViolation(f"{what}: unknown query parameter {name!r}.")
            schema = param.get("schema", {})
            for value in values:
                item = schema.get("items", schema) if schema.get("type") == "array" else schema
                self._check_scalar(what, name, item, value)
        for name, param in raw_params.items():
            if param.get("required") and param["in"] == "query" and name not in query:
                raise ContractViolation(f"{what}: missing required query parameter {name!r}.")
        if op.spec.get("security") != [] and "Authorization" not in headers:
            raise ContractViolation(f"{what}: no Authorization header.")
        request_body = self._resolve(op.spec.get("requestBody") or {})
        if body is None:
            if request_body.get("required"):
                raise ContractViolation(f"{what}: the body is required.")
            return
        if not request_body:
            raise ContractViolation(f"{what}: this operation takes no body.")
        schema = request_body["content"]["application/json"]["schema"]
        self._validate(self.request_doc, _openapi_to_jsonschema(schema, relax=False), body, what)

    def _check_scalar(self, what, name, schema, value: str):
        schema = self._resolve(schema)
        kind = schema.get("type")
        if kind == "integer" and not re.fullmatch(r"-?\d+", value):
            raise ContractViolation(f"{what}: {name}={value!r} is not an integer.")
        if kind == "boolean" and value not in ("true", "false"):
            raise ContractViolation(f"{what}: {name}={value!r} is not a boolean.")
        if "enum" in schema and value not in schema["enum"]:
            raise ContractViolation(f"{what}: {name}={value!r} is not one of {schema['enum']}.")

    def validate_response(self, op: Operation, status: int, body):
        responses_ = op.spec.get("responses", {})
        spec = self._resolve(responses_.get(str(status)) or {})
        if not spec:
            if 200 <= status < 300:
                raise ContractViolation(f"{op.operation_id} never answers {status}.")
            return
        content = (spec.get("content") or {}).get("application/json")
        if content is None or body is None:
            return
        schema = _openapi_to_jsonschema(content["schema"], relax=True)
        self._validate(self.response_doc, schema, body, f"{op.operation_id} response {status}")


_CONTRACTS: dict[str, Contract] = {}


def contract(name: str) -> Contract:
    if name not in _CONTRACTS:
        _CONTRACTS[name] = Contract(name)
    return _CONTRACTS[name]


class AtlassianMock:
    """A `responses` mock of one Atlassian product at `base`: tests give a handler per
    operationId, `(request, params) -> (status, body[, headers])`; the mock validates both
    directions against the contract and records every call."""

    def __init__(self, rsps: responses.RequestsMock, base: str, specs: list[tuple[str, str]]):
        self.base = base.rstrip("/")
        self.specs = [(prefix, contract(name)) for prefix, name in specs]
        self.handlers: dict[str, object] = {}
        self.calls: list[tuple[str, dict, object]] = []
        # The answer of operations without a handler (None: a contract violation).
        self.default = None
        self.violations: list[str] = []
        # `(request) -> (status, body) | None`: an answer before any handler (credentials a
        # real site refuses, e.g. fake_tokens.py); None lets the request through.
        self.gate = None
        # Operations outside the trimmed documents (named in the report as uncontracted).
        self.uncontracted: dict[tuple[str, str], object] = {}
        pattern = re.compile(re.escape(self.base) + r"(/.*)?$")
        for method in ("GET", "POST", "PUT", "DELETE"):
            rsps.add_callback(method, pattern, callback=self._callback)

    def on(self, operation_id: str, handler):
        self.handlers[operation_id] = handler
        return self

    def count(self, operation_id: str) -> int:
        return sum(1 for name, _, _ in self.calls if name == operation_id)

    def bodies(self, operation_id: str) -> list:
        return [body for name, _, body in self.calls if name == operation_id]

    def params(self, operation_id: str) -> list[dict]:
        return [query for name, query, _ in self.calls if name == operation_id]

    def _operation(self, method: str, path: str) -> tuple[Operation, str]:
        misses = []
        for prefix, doc in self.specs:
            if not path.startswith(prefix):
                continue
            local = path[len(prefix) :] or "/"
            try:
                return doc.match(method, local), local
            except ContractViolation as exc:
                misses.append(str(exc))
        raise ContractViolation("; ".join(misses) or f"{method} {path}: no contract.")

    def _callback(self, request):
        parts = urlsplit(request.url)
        path = parts.path[len(urlsplit(self.base).path) :]
        query = parse_qs(parts.query, keep_blank_values=True)
        body = json.loads(request.body) if request.body else None
        extra = self.uncontracted.get((request.method, path))
        if extra is not None:
            self.calls.append((f"{request.method} {path}", query, body))
            status, payload = extra(request, query, body)
            return status, {"Content-Type": "application/json"}, json.dumps(payload)
        try:
            op, _ = self._operation(request.method, path)
            op.doc.validate_request(op, path, query, request.headers, body)
        except ContractViolation as exc:
            self.violations.append(str(exc))
            return 400, {}, json.dumps({"errorMessages": [f"contract: {exc}"]})
        self.calls.append((op.operation_id, query, body))
        refused = self.gate(request) if self.gate is not None else None
        if refused is not None:
            return refused[0], {"Content-Type": "application/json"}, json.dumps(refused[1])
        handler = self.handlers.get(op.operation_id, self.default)
        if handler is None:
            message = f"no handler for {op.operation_id}"
            self.violations.append(message)
            return 501, {}, json.dumps({"errorMessages": [message]})
        answer = handler(request, query, body) if callable(handler) else handler
        status, payload, headers = (
            (*answer, {})[:3]
            if isinstance(answer, tuple)
            else (
                200,
                answer,
                {},
            )
        )
        if 200 <= status < 300:
            try:
                op.doc.validate_response(op, status, copy.deepcopy(payload))
            except ContractViolation as exc:
                self.violations.append(str(exc))
                raise
        text = "" if payload is None else json.dumps(payload)
        return status, {"Content-Type": "application/json", **headers}, text
