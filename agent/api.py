"""The action catalogue as JSON (mounted at /api/v1): list the actions the caller may use,
run one. Behind the API's tokens and error body; every action behind both gates."""

from django.http import HttpRequest
from ninja import Router

from agent import catalogue
from governance.api import body_schema, json_object
from governance.errors import ValidationFailed

router = Router(tags=["agent"])


def context_for(request: HttpRequest) -> catalogue.Context:
    client = request.headers.get("X-Client-Name") or request.headers.get("User-Agent") or "api"
    return catalogue.Context(
        request=request, client=f"api: {client}", base_url=request.build_absolute_uri("/")
    )


@router.get("/agent/actions")
def action_list(request):
    """The catalogue: name, title, a description written for a language model, kind (read or
    write) and the JSON Schema of its arguments; only the actions the caller may use (writes
    only for editors of some project). 403 outside the portfolio/agent gate."""
    return [a.describe() for a in catalogue.available(request)]


@router.post(
    "/agent/actions/{name}",
    openapi_extra=body_schema(
        {"arguments": {"type": "object", "description": "As the action's inputSchema."}}
    ),
)
def action_run(request, name: str):
    """Run one action as the caller: {"arguments": {...}} -> {"result": ...}. Refusals answer
    exactly as the API does (403, 404, 409, 412, 422 with the one error body). Writes are
    audited with the channel `agent`."""
    body = json_object(request)
    unknown = [k for k in body if k != "arguments"]
    if unknown:
        raise ValidationFailed({k: ["Unknown field."] for k in unknown})
    ctx = context_for(request)
    return {"result": catalogue.run(ctx, name, body.get("arguments") or {})}
