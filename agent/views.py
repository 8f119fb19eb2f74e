"""The Assistant page: ask in words (with a language model configured), confirm or dismiss
the writes it proposes, or run any action of the catalogue through its form."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from agent import assistant, catalogue, forms
from agent.present import present
from governance import permissions
from governance.errors import DomainError, NotFound
from governance.http import page, render_htmx

TEMPLATE = "agent/assistant.html"


def _context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    user = permissions.request_user(request)
    actions = catalogue.available(request)
    messages = assistant.transcript(user)
    for message in messages:
        if message.data.get("result") is not None:
            message.shown = present(message.data["result"])
    return {
        "section": "assistant",
        "model": assistant.configured(),
        "messages": messages,
        "reads": [a for a in actions if not a.is_write],
        "writes": [a for a in actions if a.is_write],
        **extra,
    }


def _conversation(request: HttpRequest, status: int = 200) -> HttpResponse:
    if getattr(request, "htmx", False):
        return render_htmx(
            request, TEMPLATE, _context(request), partial="conversation", status=status
        )
    return redirect("assistant")


@page("GET", "POST")
def assistant_page(request: HttpRequest) -> HttpResponse:
    """GET the page; POST a question (`q`) for the model."""
    catalogue.require_agent_access(request)
    if request.method == "POST":
        question = (request.POST.get("q") or "").strip()[:2000]
        if question:
            try:
                assistant.ask(request, permissions.request_user(request), question)
            except assistant.AssistantUnavailable as error:
                user = permissions.request_user(request)
                assistant.say(user, "notice", str(error), {"failed": True})
        return _conversation(request)
    return render_htmx(request, TEMPLATE, _context(request))


@page("POST")
def assistant_clear(request: HttpRequest) -> HttpResponse:
    catalogue.require_agent_access(request)
    assistant.clear(permissions.request_user(request))
    return _conversation(request)


@page("GET", "POST")
def action_form(request: HttpRequest, name: str) -> HttpResponse:
    """An action as a form generated from its schema; POST runs it as the person."""
    catalogue.require_agent_access(request)
    action = catalogue.get(name)
    if action not in catalogue.available(request):
        raise NotFound(f"No action called {name!r}.")
    projects = [(p.key, p.name) for p, _ in permissions.viewable_projects(request)]
    context = {"action": action, "fields": forms.fields(action, request.GET.dict(), projects)}
    status = 200
    if request.method == "POST":
        arguments = forms.arguments(action, request.POST)
        context["fields"] = forms.fields(action, request.POST.dict(), projects)
        try:
            result = assistant.run_form(request, permissions.request_user(request), name, arguments)
        except DomainError as error:
            context["error"] = error
            status = error.status
        else:
            context["shown"] = present(result)
    return render_htmx(
        request,
        "agent/action.html",
        {"section": "assistant", **context},
        partial="form",
        status=status,
    )


@page("POST")
def proposal_confirm(request: HttpRequest, proposal_id: uuid.UUID) -> HttpResponse:
    catalogue.require_agent_access(request)
    assistant.confirm(request, permissions.request_user(request), proposal_id)
    return _conversation(request)


@page("POST")
def proposal_dismiss(request: HttpRequest, proposal_id: uuid.UUID) -> HttpResponse:
    catalogue.require_agent_access(request)
    assistant.dismiss(permissions.request_user(request), proposal_id)
    return _conversation(request)
