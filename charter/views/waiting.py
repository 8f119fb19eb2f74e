"""Waiting for me: across every project the person can view, what awaits their decision and
what they can act on now (business cases, change requests, exceptions), and, on their own rows,
what still needs them but cannot be acted on now, saying why and what to do.

A change is approved or rejected from its row with the change register's own service
(`registers.services.change_adjudicate`): the same rules, refusals and audit entry. Every row
action answers with the queue again (HTMX: the queue's box and a notice; without script: a
redirect to the queue with the notice as a message)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.http import HttpResponse


from django.contrib import messages
from django.shortcuts import redirect, render

from charter.selectors import waiting_for
from governance import permissions
from governance.errors import Conflict, Frozen, Stale, ValidationFailed
from governance.http import HtmxHttpRequest, form_revision, page
from governance.people import resolve
from registers import services

TEMPLATE = "charter/waiting.html"
OUTCOME_WORDS = {"Approved": "approved", "Rejected": "rejected"}


def _context(request: HtmxHttpRequest, **extra: Any) -> dict[str, Any]:
    found = waiting_for(request)
    raisers = [c.proposer_account_id or c.created_by_account_id for c in found["changes"]]
    raisers += [
        h.change.proposer_account_id or h.change.created_by_account_id for h in found["held"]
    ]
    return {**found, "people": resolve(raisers), "section": "waiting", **extra}


def _queue(request: HtmxHttpRequest, *, status: int = 200, **extra: Any) -> HttpResponse:
    """The page, or for HTMX only the queue's box (with the notice out of band)."""
    context = _context(request, **extra)
    if request.htmx:
        return render(request, f"{TEMPLATE}#queue-swap", context, status=status)
    return render(request, TEMPLATE, context, status=status)


@page("GET")
def waiting(request: HtmxHttpRequest) -> HttpResponse:
    return _queue(request)


@page("POST")
def change_decide(request: HtmxHttpRequest, key: str, change_id: uuid.UUID) -> HttpResponse:
    """Approve or reject a change from its row in the queue (a reason is required to
    reject): the change register's service decides; a refusal shows on the row, keeping
    what was typed; a decision returns to the queue with a notice."""
    project, caller = permissions.project_for(request, key)
    outcome = request.POST.get("outcome", "")
    comment = request.POST.get("decisionComment", "")
    row = {"row_id": str(change_id), "row_outcome": outcome, "row_comment": comment}
    try:
        change = services.change_adjudicate(
            caller=caller,
            change_id=change_id,
            outcome=outcome if outcome in OUTCOME_WORDS else None,
            decision_comment=comment,
            expected_revision=form_revision(request.POST),
        )
    except ValidationFailed as exc:
        errors = [m for ms in exc.fields.values() for m in ms] or [exc.message]
        return _queue(request, status=422, row_errors=errors, **row)
    except (Stale, Conflict, Frozen) as exc:
        message = (
            "Someone changed this request since you opened the queue; check it and decide again."
            if isinstance(exc, Stale)
            else exc.message
        )
        return _queue(request, status=exc.status, row_errors=[message], **row)
    notice = (
        f"{project.key}: change request “{change.summary}” "
        f"{OUTCOME_WORDS.get(change.status, change.status.lower())}."
    )
    if not request.htmx:
        messages.success(request, notice)
        return redirect("waiting-for-me")
    return _queue(request, notice=notice)
