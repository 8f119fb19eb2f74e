"""Seat objects of the spec: a tracker person {accountId, displayName, avatarUrl} or an
external person {displayName, email}. Tracker seats take their name and avatar from the
tracker, whatever a client sends; pages show the tracker's current name at render time."""

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email

from governance.cleaning import FieldErrors, text
from governance.people import resolve


def clean_seats(raw: Mapping[str, Any], errors: FieldErrors) -> dict[str, dict[str, Any] | None]:
    """Clean several seats at once (one tracker lookup). Keys are field names used in error
    messages; values are seat objects, accountId strings, or None/{} for an empty seat."""
    cleaned: dict[str, dict[str, Any] | None] = {}
    wanted: dict[str, str] = {}
    for field, value in raw.items():
        if value in (None, "", {}):
            cleaned[field] = None
        elif isinstance(value, str):
            wanted[field] = value.strip()
        elif isinstance(value, Mapping):
            account_id = value.get("accountId")
            if account_id not in (None, ""):  # {}, 0 or false is no accountId: refused
                if not isinstance(account_id, str):
                    errors.add(f"{field}.accountId", "Must be a tracker accountId.")
                else:
                    wanted[field] = account_id.strip()
                continue
            name, error = text(value.get("displayName"), max_length=200, required=True)
            if error:
                errors.add(f"{field}.displayName", error)
                continue
            email = value.get("email") or ""
            if not isinstance(email, str):
                errors.add(f"{field}.email", "Must be an e-mail address.")
                continue
            email = email.strip()
            if email:
                try:
                    validate_email(email)
                except DjangoValidationError:
                    errors.add(f"{field}.email", "Must be an e-mail address.")
                    continue
            cleaned[field] = {"accountId": None, "displayName": name, "email": email}
        else:
            errors.add(field, "Must be a person: {accountId} or {displayName, email}.")
    people = resolve(wanted.values())
    for field, account_id in wanted.items():
        person = people.get(account_id)
        if person is None or not person.known:
            errors.add(field, f"No tracker user with accountId {account_id}.")
        else:
            cleaned[field] = person.as_seat()
    return cleaned


def seat_account_id(seat: Mapping[str, Any] | None) -> str | None:
    return (seat or {}).get("accountId") or None


def seat_is_actionable(seat: Mapping[str, Any] | None) -> bool:
    """A tracker account, or an external person with a usable e-mail address."""
    if not seat:
        return False
    if seat.get("accountId"):
        return True
    email = seat.get("email") or ""
    try:
        validate_email(email)
    except DjangoValidationError:
        return False
    return True
