"""The Assistant page: ask in words (with a language model configured), confirm or dismiss
the writes it proposes, or run any action of the catalogue through its form."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from agent import assistant, catalogue, forms
from agent.models import Proposal
from agent.present import present
from governance import gatelist, permissions, picker
from governance.errors import DomainError, NotFound, ValidationFailed
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


# Past this many viewable projects, a form's project is typed by its key: a choice among
# them all would send every one (an action's form at 10,000 projects: 1.1-1.3 s, record 0307).
PROJECT_CHOICES = 200


def _projects(request: HttpRequest) -> list[tuple[str, str]] | None:
    """The project choices of a form, (key, name) with the tracker's name, in key order; None
    past `PROJECT_CHOICES` (the key is typed)."""
    found = list(
        gatelist.viewable(request, shown=True, page=True).order_by("key")[: PROJECT_CHOICES + 1]
    )
    if len(found) > PROJECT_CHOICES:
        return None
    return [(p.key, p.name) for p, _ in gatelist.page_callers(request, found)]


def _people(
    request: HttpRequest, action: catalogue.Action, values: dict[str, Any]
) -> list[tuple[str, str]]:
    """The people picker's choices: the chosen project's people; for a filter across
    projects (the lead of find_projects), the leads of the projects the person can see."""
    names = action.schema.get("properties", {})
    if not any(forms.is_person(name) for name in names):
        return []
    if "projectKey" not in names:
        return picker.choices_of(gatelist.leads_of(gatelist.viewable(request)))
    try:
        # The project as the action will read it (a typed key in any case, a former key).
        project, _ = catalogue.project_of(request, values.get("projectKey"))
    except DomainError:  # none named, or not one they can view: nobody offered
        return []
    return picker.people_choices(project)


def _form(
    request: HttpRequest,
    action: catalogue.Action,
    values: dict[str, Any],
    *,
    status: int = 200,
    **extra: Any,
) -> HttpResponse:
    """The action's section: its form with `values`, and what `extra` adds (an error, a
    result, a proposal to confirm)."""
    projects = _projects(request)
    if projects is not None and len(projects) == 1 and not values.get("projectKey"):
        values = {**values, "projectKey": projects[0][0]}
    context = {
        "section": "assistant",
        "action": action,
        "hint": forms.in_words(action.description),
        "fields": forms.fields(action, values, projects, _people(request, action, values)),
        **extra,
    }
    return render_htmx(request, "agent/action.html", context, partial="form", status=status)


def _strangers(request: HttpRequest, arguments: dict[str, Any]) -> None:
    """Refuse (422, on each field) a person picked who is not among the project's people."""
    named = forms.people_named(arguments)
    named.pop("lead", None)  # a filter, not a person written
    if not named:
        return
    try:
        # The project the action will write to (a typed key in any case, a former key).
        project, _ = catalogue.project_of(request, arguments.get("projectKey"))
    except DomainError:
        return  # the action itself refuses the project, in its own words
    refused = picker.strangers(project, named)
    if refused:
        raise ValidationFailed(refused)


@page("GET", "POST")
def action_form(request: HttpRequest, name: str) -> HttpResponse:
    """An action as a form generated from its schema. GET: the form (values from the query:
    the project chosen refreshes the people picker). POST: a read runs as the person; a write
    is previewed (a proposal, nothing written) and runs only on Confirm."""
    catalogue.require_agent_access(request)
    action = catalogue.get(name)
    if action not in catalogue.available(request):
        raise NotFound(f"No action called {name!r}.")
    if request.method != "POST":
        return _form(request, action, forms.values_of(action, request.GET))
    values = forms.values_of(action, request.POST)
    arguments = forms.arguments(action, request.POST)
    user = permissions.request_user(request)
    try:
        if action.is_write:
            _strangers(request, arguments)
            proposal = assistant.propose(request, user, name, arguments, origin="form")
        else:
            result = assistant.run_form(request, user, name, arguments)
    except DomainError as error:
        return _form(request, action, values, status=error.status, error=error)
    if action.is_write:
        return render_htmx(
            request,
            "agent/action.html",
            {"section": "assistant", "action": action, "proposal": proposal},
            partial="form",
        )
    return _form(request, action, values, shown=present(result))


def _form_outcome(request: HttpRequest, proposal: Proposal) -> HttpResponse:
    """A form's proposal after Confirm or Edit: the form again, with the result (a fresh
    form) or with the values the proposal held (Edit, or a refusal) and the reason."""
    action = catalogue.get(proposal.action)
    kept = forms.values_of(action, proposal.arguments)
    if proposal.state == "Applied":
        values = {"projectKey": kept["projectKey"]} if "projectKey" in kept else {}
        return _form(request, action, values, shown={**present(proposal.result), "done": True})
    if proposal.state == "Refused":
        body = proposal.result.get("error", {})
        error = DomainError(body.get("message"), fields=body.get("fields"))
        return _form(request, action, kept, error=error)
    return _form(request, action, kept)


@page("POST")
def proposal_confirm(request: HttpRequest, proposal_id: uuid.UUID) -> HttpResponse:
    catalogue.require_agent_access(request)
    proposal = assistant.confirm(request, permissions.request_user(request), proposal_id)
    if proposal.origin == "form":
        return _form_outcome(request, proposal)
    return _conversation(request)


@page("POST")
def proposal_dismiss(request: HttpRequest, proposal_id: uuid.UUID) -> HttpResponse:
    """Dismiss a proposal: the conversation; for a form's, its form with the values kept."""
    catalogue.require_agent_access(request)
    proposal = assistant.dismiss(permissions.request_user(request), proposal_id)
    if proposal.origin == "form":
        return _form_outcome(request, proposal)
    return _conversation(request)
