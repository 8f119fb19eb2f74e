"""Numbers typed into the pages. The API keeps the spec's nullable-number rule (empty,
negative or unreadable becomes null, more decimal places are rounded, each said in
`warnings`); a person typing into a form is told instead, next to the field, when the page
cannot read what they typed ("12k", "abc", "-5000", "12.345"). Thousands separators are read;
the value the services receive is the plain number. An amount is read as the importers read a
money cell (`governance.spreadsheet_values.money`): the site's currency by symbol or code
(`€18,500`, `18 500 EUR`), an accounting negative, and another currency refused by name."""

import re
from collections.abc import Iterable, MutableMapping
from decimal import Decimal, InvalidOperation
from typing import Any

from governance.models import SiteSettings
from governance.spreadsheet_values import money

# 12000, 12000.50, 12,000, 12 000, 12 000.50 (comma, space, no-break or thin space groups).
_PLAIN = re.compile(r"[+-]?\d+(?:\.\d+)?")
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:([,\u00a0\u202f ])\d{3})(?:\1\d{3})*(?:\.\d+)?")

UNREADABLE = "Write a number, like 12000 or 12,500.50 (no letters, units or symbols)."
UNREADABLE_AMOUNT = "Write a number, like 12000, 12,500.50 or {example} (no letters or units)."
NEGATIVE = "Must not be negative."
WHOLE = "Write a whole number of days, like 14 or -7."
PLACES = 2
TOO_PRECISE = f"At most {PLACES} decimal places, like 12500.50."


def read_number(raw: str) -> tuple[str | None, str | None]:
    """(plain number text, error). Blank is (None, None): the field is being cleared."""
    value = (raw or "").strip()
    if not value:
        return None, None
    if _PLAIN.fullmatch(value) or _GROUPED.fullmatch(value):
        plain = re.sub(r"[,\u00a0\u202f ]", "", value)
        try:
            Decimal(plain)
        except InvalidOperation:  # pragma: no cover - the patterns admit only numbers
            return None, UNREADABLE
        return plain.lstrip("+"), None
    return None, UNREADABLE


def read_amount(raw: str, currency: str) -> tuple[str | None, str | None]:
    """(plain number text, error) of an amount typed into a page: what an import reads in a
    money cell (`money`), then `read_number`. Blank is (None, None)."""
    value = (raw or "").strip()
    if not value:
        return None, None
    plain, error, _note = money(value, currency)
    if error:
        return None, error
    found, error = read_number(plain)
    if error == UNREADABLE:
        symbol = "€" if currency == "EUR" else currency + " "
        return None, UNREADABLE_AMOUNT.format(example=f"{symbol}12,500")
    return found, error


def check_numbers(
    data: MutableMapping[str, Any],
    errors: MutableMapping[str, list[str]],
    *,
    amounts: Iterable[str] = (),
    signed: Iterable[str] = (),
    whole: Iterable[str] = (),
) -> None:
    """Read the named fields of `data` in place: `amounts` must be numbers not below zero,
    `signed` any number, `whole` a signed whole number. What cannot be read is removed from
    `data` and its message added to `errors` under the field's name."""
    currency = ""
    for names, allow_negative, integer in (
        (amounts, False, False),
        (signed, True, False),
        (whole, True, True),
    ):
        for name in names:
            if name not in data or not isinstance(data[name], str):
                continue
            if integer:
                plain, error = read_number(data[name])
            else:
                currency = currency or SiteSettings.load().currency
                plain, error = read_amount(data[name], currency)
            if error is None and plain is not None:
                if not allow_negative and plain.startswith("-"):
                    error = NEGATIVE
                elif integer and "." in plain:
                    error = WHOLE
                elif len(plain.partition(".")[2]) > PLACES:
                    # The API rounds (the spec's nullable number); a person is asked instead.
                    error = TOO_PRECISE
            if error:
                errors.setdefault(name, []).append(WHOLE if integer else error)
                del data[name]
            else:
                data[name] = "" if plain is None else plain
