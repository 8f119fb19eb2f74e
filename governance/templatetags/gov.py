"""Template helpers: people by accountId (names resolved in bulk by the view), RAG badges."""

import json
from collections.abc import Iterable, Mapping
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from governance import formatting, labels
from governance.people import Person

register = template.Library()

RAG_CLASSES = {"Red": "rag-red", "Amber": "rag-amber", "Green": "rag-green", "Blue": "rag-blue"}


@register.filter
def joined_html(rows: Iterable[Mapping[str, str]]) -> SafeString:
    """Each row's prebuilt, escaped `html`, one a line: a table of a thousand rows without a
    template loop."""
    return mark_safe("\n".join(row["html"] for row in rows))  # each built escaped


@register.filter
def percent_figure(value: Any) -> str:
    """A derived percentage to the precision its derivation chose (5.001, 4.2, 20)."""
    return formatting.percent_figure(value)


@register.filter
def person(people: Mapping[str, Person] | None, account_id: str) -> str:
    """Display name for an accountId from the view's `people` map; a dash when unnamed."""
    if not account_id:
        return "—"
    found = (people or {}).get(account_id)
    return found.display_name if found else account_id


@register.simple_tag
def person_chip(people: Mapping[str, Person] | None, account_id: str) -> SafeString:
    if not account_id:
        return mark_safe('<span class="muted">—</span>')
    found = (people or {}).get(account_id)
    name = found.display_name if found else account_id
    initials = found.initials if found else "?"
    return format_html(
        '<span class="person"><span class="avatar" aria-hidden="true">{}</span>{}</span>',
        initials,
        name,
    )


@register.simple_tag
def rag_badge(value: str | None, label: str = "") -> SafeString:
    value = value or "None"
    css = RAG_CLASSES.get(value, "rag-none")
    text = "No RAG" if value == "None" else value
    if label:
        return format_html('<span class="badge {}">{}: {}</span>', css, label, text)
    return format_html('<span class="badge {}">{}</span>', css, text)


@register.filter
def get_item(mapping: Mapping[str, Any] | None, key: str) -> Any:
    return (mapping or {}).get(key)


@register.simple_tag(takes_context=True)
def query_with(context: dict[str, Any], **changes: Any) -> str:
    """The current query string with some parameters replaced (for sort and filter links)."""
    params = context["request"].GET.copy()
    for key, value in changes.items():
        if value in (None, ""):
            params.pop(key, None)
        else:
            params[key] = value
    encoded = params.urlencode()
    return f"?{encoded}" if encoded else "?"


@register.filter
def audit_value(value: Any) -> Any:
    """An audit before/after value as short readable text."""
    if value is None or value == "":
        return "—"
    if isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 300 else text[:299] + "…"
    return value


@register.filter(name="label")
def label_filter(code: str) -> str:
    """A state, choice or field name as people read it (the API keeps the code)."""
    return labels.label(code)


# Filters that are the project's own functions as they are: a field's name as words, an error
# message with the field names it mentions as words, a date (22 Nov 2026) and a timestamp
# (22 Nov 2026, 14:05) as every page writes them.
register.filter("field_label", labels.field_label)
register.filter("in_message", labels.in_message)
day = register.filter("day", formatting.day)
moment = register.filter("moment", formatting.moment)


@register.filter
def money(value: Any) -> str:
    """An amount with the site's currency: EUR 12,500."""
    return formatting.money(value, empty="—")


@register.filter
def age(value: Any) -> str:
    """How long something has waited: today, 1 day, 12 days."""
    return formatting.age(value)
