"""The action catalogue as JSON (mounted at /api/v1): list the actions the caller may use,
run one. Behind the API's tokens and error body; every action behind both gates."""

import copy
from typing import Any

from django.http import HttpRequest
from ninja import Router

from agent import catalogue
from governance import cleaning, specs
from governance.api import (
    ERROR_DESCRIPTIONS,
    FREE_OBJECT,
    answers,
    api,
    body_schema,
    component,
    document_body_text,
    json_object,
    list_of,
    other_members,
)
from governance.errors import ValidationFailed

router = Router(tags=["agent"])

ACTION = component(
    "AgentAction",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "title": {"type": "string"},
            "description": {"type": "string"},
            "kind": {"enum": ["read", "write"]},
            "inputSchema": {**FREE_OBJECT, "description": "The JSON Schema of its arguments."},
        },
        "required": ["name", "title", "description", "kind", "inputSchema"],
    },
)
ACTION_RESULT = component(
    "AgentActionResult",
    {
        "type": "object",
        "properties": {
            "result": {
                **specs.ANY_JSON_SCHEMA,
                "description": "What the action answers (any JSON value).",
            },
            "warnings": specs.WARNINGS_SCHEMA,
        },
        "required": ["result"],
    },
)


def context_for(request: HttpRequest) -> catalogue.Context:
    client = request.headers.get("X-Client-Name") or request.headers.get("User-Agent") or "api"
    return catalogue.Context(
        request=request, client=f"api: {client}", base_url=request.build_absolute_uri("/")
    )


@router.get("/agent/actions")
@answers(list_of(ACTION))
def action_list(request: HttpRequest) -> list[dict[str, Any]]:
    """The catalogue: name, title, a description written for a language model, kind (read or
    write) and the JSON Schema of its arguments; only the actions the caller may use (a write
    where they may use it on some project they view: most, they edit it; the sponsor's
    decisions, they sponsor it; a score, they sponsor it or govern investment). 403 outside
    the portfolio/agent gate."""
    return [a.describe() for a in catalogue.available(request)]


@router.post(
    "/agent/actions/{name}",
    openapi_extra=body_schema(
        {"arguments": {"type": "object", "description": "As the action's inputSchema."}},
        closed=True,
    ),
)
@answers(ACTION_RESULT)
def action_run(request: HttpRequest, name: str) -> dict[str, Any]:
    """Run one action as the caller: {"arguments": {...}} -> {"result": ...}. Refusals answer
    exactly as the API does (403, 404, 409, 412, 422 with the one error body). Writes are
    audited with the channel `agent`. Text the arguments may not hold (a control character,
    a noncharacter, a lone surrogate, at any depth) is refused after the action's gate, so
    a viewer hears 403 and an unknown project 404 whatever they hold."""
    body = json_object(request, walk_text=False)
    ctx = context_for(request)
    refused = cleaning.refusals(body)
    if refused:  # the body's words, named from its top (`arguments.title`), after the gates
        catalogue.judge_caller(ctx, name, body.get("arguments"))
        raise ValidationFailed({path: [message] for path, message in sorted(refused.items())})
    result = catalogue.run(
        ctx, name, body.get("arguments"), other_members=other_members(body, "arguments")
    )
    return {"result": result}


# --- the catalogue in the OpenAPI document -----------------------------------------------------

GENERIC_PATH = "/api/v1/agent/actions/{name}"


def document_actions(schema: dict[str, Any]) -> None:
    """One path per action in place of `POST /agent/actions/{name}`, each with its arguments'
    own schema, so that a client (or a fuzzer) knows what each accepts. The server routes them
    all through `action_run`."""
    paths = schema.get("paths", {})
    generic = paths.pop(GENERIC_PATH, None)
    if not generic:
        return
    template = generic["post"]
    for name, act in sorted(catalogue.CATALOGUE.items()):
        operation = copy.deepcopy(template)
        operation["operationId"] = f"{template.get('operationId', 'agent_action_run')}_{name}"
        operation["summary"] = act.title
        operation["description"] = f"{act.description}\n\n{template.get('description', '')}"
        operation["parameters"] = [
            p for p in operation.get("parameters", []) if p.get("name") != "name"
        ]
        # The action's own arguments are not nullable text: its validator refuses null.
        arguments = document_body_text(copy.deepcopy(act.schema), nullable=False)
        if not act.schema.get("required"):
            arguments["type"] = ["object", "null"]  # null: no arguments
        body: dict[str, Any] = {
            "type": "object",
            "properties": {"arguments": arguments},
            "additionalProperties": False,
        }
        if act.schema.get("required"):
            body["required"] = ["arguments"]
        operation["requestBody"] = {
            "required": bool(act.schema.get("required")),
            "content": {"application/json": {"schema": body}},
        }
        if act.is_write:  # a write given an expectedRevision that is not the current one
            operation["responses"].setdefault(
                "412",
                {
                    "description": ERROR_DESCRIPTIONS["412"],
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                },
            )
        paths[f"/api/v1/agent/actions/{name}"] = {"post": operation}


api.schema_hooks.append(document_actions)
