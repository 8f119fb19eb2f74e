from collections.abc import Mapping
from typing import Any

from django import template

from agent import catalogue
from agent.present import preview_rows as _preview_rows
from governance.errors import DomainError

register = template.Library()

STATE_WORDS = {
    "Pending": "Awaiting your confirmation",
    "Applied": "Done",
    "Refused": "Refused",
    "Dismissed": "Dismissed",
    "Expired": "Expired",
}


@register.filter
def preview_rows(preview: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return _preview_rows(preview or [])


@register.filter
def proposal_state(state: str) -> str:
    return STATE_WORDS.get(state, state)


@register.filter
def field_errors(error: DomainError | None, name: str) -> list[str]:
    """The messages of one field of a refused action (none when there is no error)."""
    if error is None:
        return []
    fields: dict[str, list[str]] = getattr(error, "fields", {})
    return fields.get(name, [])


@register.filter
def dictitem(mapping: Mapping[str, Any] | None, key: str) -> Any:
    return (mapping or {}).get(key, "")


@register.filter
def cannot_undo(proposal: Any) -> bool:
    """Whether the proposed write cannot be taken back (the catalogue's destructive hint)."""
    found = catalogue.CATALOGUE.get(getattr(proposal, "action", ""))
    return bool(found and found.hints.destructive)


@register.filter
def answered_in(proposal: Any) -> str:
    """Where the answer to Confirm or Dismiss goes: a form's own section, else the
    conversation."""
    if getattr(proposal, "origin", "") == "form":
        return f"#action-{proposal.action}"
    return "#conversation"
