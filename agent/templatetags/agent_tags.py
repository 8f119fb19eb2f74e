from django import template

from agent.present import preview_rows as _preview_rows

register = template.Library()

STATE_WORDS = {
    "Pending": "Awaiting your confirmation",
    "Applied": "Done",
    "Refused": "Refused",
    "Dismissed": "Dismissed",
    "Expired": "Expired",
}


@register.filter
def preview_rows(preview):
    return _preview_rows(preview or [])


@register.filter
def proposal_state(state):
    return STATE_WORDS.get(state, state)


@register.filter
def field_errors(error, name: str):
    """The messages of one field of a refused action (none when there is no error)."""
    if error is None:
        return []
    return getattr(error, "fields", {}).get(name, [])


@register.filter
def dictitem(mapping, key: str):
    return (mapping or {}).get(key, "")
