"""Input parsing for the register pages: a submitted form becomes the same data dict the
JSON API sends to the services (spec field names), and a record becomes the text values an
edit form shows. No rule lives here: the services validate."""

import re
from collections.abc import Mapping
from typing import Any

from django.http import QueryDict

from governance import labels, specs
from governance.cleaning import decimal_to_json
from governance.pageinput import check_numbers
from governance.specs import (
    Boolean,
    NullableNumber,
    ScheduleDays,
    SignedAmount,
    SignedInteger,
)
from registers.specs import SPECS

# The fields each register's page form shows, and how they are typed, from the declarations.
FIELDS = {slug: specs.on_form(spec) for slug, spec in SPECS.items()}
# Fields shown as a checkbox: absent from a submitted form means unticked.
CHECKBOXES = {api for spec in SPECS.values() for api in specs.with_rule(spec, Boolean)}
# Fields of several choices (ticked boxes): a closed set the value is a list of.
MULTI = {
    api
    for spec in SPECS.values()
    for api in specs.on_form(spec)
    if specs.choices(spec, api) and specs.json_kind(spec, api) == "list"
}
# What an add form's choices start at: the stored defaults (a new work package has no RAG yet,
# not the first colour of the list).
NEW_DEFAULTS = {slug: specs.initial(spec, FIELDS[slug]) for slug, spec in SPECS.items()}


def data_from_post(register: str, post: QueryDict) -> dict[str, Any]:
    """The service payload of a submitted edit or add form. A text field the form did not
    carry is left out (the service keeps the stored value); checkboxes and multiple choices
    read as unticked when absent."""
    data: dict[str, Any] = {}
    for field in FIELDS[register]:
        if field == "budgetPhasing" and GRID_MONTH in post:
            data[field] = parse_phasing(phasing_from_grid(post))
        elif field in MULTI:
            data[field] = post.getlist(field)
        elif field in CHECKBOXES:
            data[field] = post.get(field) == "on"
        elif field not in post:
            continue
        elif field == "budgetPhasing":
            data[field] = parse_phasing(post.get(field, ""))
        elif field == "evidenceLinks":
            data[field] = parse_links(post.get(field, ""))
        elif field == "minutesRef":
            data[field] = {"id": post[field]} if post[field] else None
        else:
            data[field] = post[field]
    return data


# Numbers a person types: amounts (not below zero; the API's nullable numbers), signed
# amounts and signed whole numbers. The page refuses what it cannot read.
NUMBERS = {
    slug: {
        kind: tuple(api for api in specs.with_rule(spec, rule) if api in FIELDS[slug])
        for kind, rule in (
            ("amounts", NullableNumber),
            ("signed", SignedAmount),
            ("whole", (ScheduleDays, SignedInteger)),
        )
    }
    for slug, spec in SPECS.items()
}


def number_errors(register: str, data: dict[str, Any]) -> dict[str, list[str]]:
    """Read the typed numbers of a submitted form in place; the fields it cannot read, with
    why."""
    errors: dict[str, list[str]] = {}
    check_numbers(data, errors, **NUMBERS.get(register, {}))
    return errors


GRID_MONTH, GRID_AMOUNT = "budgetPhasing-month", "budgetPhasing-amount"


def phasing_from_grid(post: QueryDict) -> str:
    """The month grid (a month and an amount per row; empty rows ignored) as phasing text."""
    months, amounts = post.getlist(GRID_MONTH), post.getlist(GRID_AMOUNT)
    lines = []
    for index, month in enumerate(months):
        amount = amounts[index] if index < len(amounts) else ""
        if month.strip() or amount.strip():
            lines.append(f"{month.strip()}: {amount.strip()}")
    return "\n".join(lines)


def phasing_rows(text: str, blank: int = 2) -> list[tuple[str, str]]:
    """Phasing text as (month, amount) rows for the grid, with `blank` empty rows to fill."""
    rows = []
    for line in (text or "").splitlines():
        month, _, amount = line.partition(":")
        if line.strip():
            rows.append((month.strip(), amount.strip()))
    return rows + [("", "")] * blank


def parse_phasing(raw: str) -> list[dict[str, Any]] | None:
    """One entry per line, "YYYY-MM: amount" (or "=" or a tab between). A line without a
    separator becomes an entry without an amount, which the service refuses, naming it."""
    entries = []
    for line in raw.splitlines():
        line = line.strip()
        if not line:
            continue
        match = re.fullmatch(r"(.*?)\s*[:=\t]\s*(.*)", line)
        if match:
            entries.append({"period": match.group(1), "amount": match.group(2)})
        else:
            entries.append({"period": line, "amount": None})
    return entries or None


def parse_links(raw: str) -> list[dict[str, Any]]:
    """One link per line: "label | url", or the url alone."""
    links = []
    for line in raw.splitlines():
        line = line.strip()
        if not line:
            continue
        label, bar, url = line.rpartition("|")
        links.append({"label": label.strip(), "url": url.strip()} if bar else {"url": line})
    return links


def _text(value: Any) -> str:
    if value is None:
        return ""
    if hasattr(value, "isoformat"):
        text: str = value.isoformat()
        return text
    if isinstance(value, bool):
        return "on" if value else ""
    return str(decimal_to_json(value)) if hasattr(value, "quantize") else str(value)


def phasing_text(entries: list[dict[str, Any]] | None) -> str:
    return "\n".join(f"{e.get('period')}: {e.get('amount')}" for e in entries or [])


def links_text(links: list[dict[str, Any]] | None) -> str:
    lines = []
    for link in links or []:
        label, url = link.get("label") or "", link.get("url") or ""
        lines.append(url if not label or label == url else f"{label} | {url}")
    return "\n".join(lines)


def values_from_record(register: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """The edit form's values from the API representation of a record."""
    values: dict[str, Any] = {}
    for field in FIELDS[register]:
        value = record.get(field)
        if field == "budgetPhasing":
            values[field] = phasing_text(value)
        elif field == "evidenceLinks":
            values[field] = links_text(value)
        elif field == "minutesRef":
            values[field] = (value or {}).get("id", "")
        elif field == "dimensions" and record.get("dimensionsChosen") is False:
            values[field] = []  # inferred, not chosen: unticked, so saving keeps them inferred
        elif field in MULTI:
            values[field] = list(value or [])
        else:
            values[field] = _text(value)
    return values


def blank_values(register: str, prefill: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The add form's values: every field empty (a list for multiple choices), then whatever
    the caller pre-fills."""
    values: dict[str, Any] = {f: [] if f in MULTI else "" for f in FIELDS[register]}
    values.update(NEW_DEFAULTS.get(register, {}))
    values.update({k: v for k, v in (prefill or {}).items() if v is not None})
    return values


def values_from_post(register: str, post: QueryDict) -> dict[str, Any]:
    """The edit form's values as the person typed them (re-shown with errors)."""
    values: dict[str, Any] = {}
    for field in FIELDS[register]:
        if field == "budgetPhasing" and GRID_MONTH in post:
            values[field] = phasing_from_grid(post)
        elif field in MULTI:
            values[field] = post.getlist(field)
        elif field in CHECKBOXES:
            values[field] = "on" if post.get(field) == "on" else ""
        else:
            values[field] = post.get(field, "")
    return values


def errors_by_field(register: str, fields: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """Service errors grouped under the form field that shows them; entries of an array are
    named in the message ("Line 2, period: ...")."""
    grouped: dict[str, list[str]] = {}
    for name, messages in fields.items():
        match = re.fullmatch(r"(\w+)\[(\d+)\](?:\.(\w+))?", name)
        if match:
            field, index, part = match.group(1), int(match.group(2)), match.group(3)
            prefix = f"Line {index + 1}" + (f", {labels.field_label(part).lower()}" if part else "")
            grouped.setdefault(field, []).extend(f"{prefix}: {m}" for m in messages)
        else:
            field = name.split(".", 1)[0]
            grouped.setdefault(field, []).extend(messages)
    return grouped
