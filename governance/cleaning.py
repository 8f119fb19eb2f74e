"""The spec's input conventions as small functions: sanitised text, nullable numbers, ISO
dates in the accepted range, enums, seats and links. Each raises nothing; each returns
(value, error). The one side effect: a nullable number notes what it coerced
(`note_coercion`), so the API can say it and the audit entry can keep what was sent."""

import contextlib
import datetime as dt
import io
import json
import math
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any
from urllib.parse import urlsplit

from defusedxml.ElementTree import iterparse as _defused_iterparse

from governance.errors import ValidationFailed
from governance.scoped import holding

Error = str | None

# The accepted dates: every date taken (API, forms, import, agent) lies in this range, so
# every drawing and every date sum has room on either side. Dates stored before the rule are
# drawn clamped to it (governance.charts).
DATE_MIN = dt.date(1900, 1, 1)
DATE_MAX = dt.date(2199, 12, 31)
DATE_RANGE_MESSAGE = f"Must be a date between {DATE_MIN.isoformat()} and {DATE_MAX.isoformat()}."
MONTH_RANGE_MESSAGE = f"Must be a month between {DATE_MIN:%Y-%m} and {DATE_MAX:%Y-%m}."


class FieldErrors(dict[str, list[str]]):
    """Collects messages per field name; `raise_if_any` raises ValidationFailed."""

    def add(self, field: str, message: str) -> None:
        self.setdefault(field, []).append(message)

    def raise_if_any(self) -> None:
        if self:
            raise ValidationFailed(dict(self))


def whole_number(raw: Any, *, max_digits: int = 18) -> int | None:
    """A whole number written in ASCII digits, as a form field, a header, an id or a file
    writes one (at most `max_digits`, so it fits a 64-bit column), else None. Not
    `str.isdigit`: it also takes '²', which `int()` refuses, and '٣', which it reads."""
    text = "" if raw is None else str(raw)
    if text.isascii() and text.isdigit() and len(text) <= max_digits:
        return int(text)
    return None


# A project key is the column's 32 characters at most (Jira's are 10).
PROJECT_KEY_MAX = 32
PROJECT_KEY_MESSAGE = f"Must be a project key (at most {PROJECT_KEY_MAX} characters), e.g. APOLLO."


def project_key(value: Any) -> tuple[str | None, Error]:
    """The project key a path, a body or an action names, trimmed and upper-cased; refused
    (before any query) when not text, blank, past the column, or holding a character no text
    holds (a control character, a lone surrogate, a noncharacter: `text_error`)."""
    if not isinstance(value, str) or not value.strip():
        return None, PROJECT_KEY_MESSAGE
    error = text_error(value)
    if error:
        return None, error
    key = value.strip().upper()
    if len(key) > PROJECT_KEY_MAX:
        return None, PROJECT_KEY_MESSAGE
    return key, None


def only(data: Iterable[str], *keys: str) -> None:
    """Refuse (422, "Unknown field.") the members of a body that are not among `keys`."""
    errors = FieldErrors()
    for key in data:
        if key not in keys:
            errors.add(key, "Unknown field.")
    errors.raise_if_any()


def known_object(
    raw: Any, members: Iterable[str], errors: FieldErrors, prefix: str, shape: str
) -> bool:
    """Whether `raw` is an object (else refused at `prefix` as not of `shape`); each member
    of it not among `members` is refused as unknown."""
    if not isinstance(raw, Mapping):
        errors.add(prefix, f"Must be an object {{{shape}}}.")
        return False
    known = set(members)
    for key in raw:
        if key not in known:
            errors.add(f"{prefix}.{key}", "Unknown field.")
    return True


# C0 control characters other than tab, line feed and carriage return. NUL cannot be stored
# in PostgreSQL text at all; the others are never typed by a person.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
CONTROL_MESSAGE = "Must not contain control characters (such as NUL); only tabs and line breaks."


def control_error(value: Any) -> Error:
    """The refusal for a string holding a control character, a lone surrogate or a Unicode
    noncharacter (`text_error`), else None."""
    if isinstance(value, str):
        return text_error(value)
    return None


# A lone UTF-16 surrogate (JSON's "\ud800" without its pair) is no character: it cannot be
# encoded as UTF-8, so PostgreSQL (text or jsonb) cannot store it.
SURROGATES = re.compile("[\ud800-\udfff]")
SURROGATE_MESSAGE = (
    "Must be valid text: it holds a lone surrogate (such as \\ud800), which is no character."
)
NOT_FINITE_MESSAGE = "Must be a finite number (NaN, Infinity and numbers past 1e308 are not)."

# Unicode's 66 noncharacters: U+FDD0..U+FDEF, and the last two code points of every plane
# (U+FFFE, U+FFFF, U+1FFFE, U+1FFFF, ... U+10FFFE, U+10FFFF). No text holds them: XML (and so
# XLSX) refuses U+FFFE and U+FFFF, and a workbook holding one is corrupt.
NONCHARACTER_LIST = [
    *map(chr, range(0xFDD0, 0xFDF0)),
    *(chr(plane * 0x10000 + low) for plane in range(17) for low in (0xFFFE, 0xFFFF)),
]
NONCHARACTERS = re.compile("[" + "".join(NONCHARACTER_LIST) + "]")
NONCHARACTER_MESSAGE = (
    "Must be valid text: it holds a Unicode noncharacter (such as U+FFFE or U+FDD0), "
    "which is no character."
)


# Every character `text_error` refuses is one of these ranges (a control character, or a code
# point from the surrogates up): a search for a range is fast, and text with none of them
# (nearly all text) is passed without the noncharacter class, whose 66 code points make a
# search of 2,000 characters cost a quarter of a millisecond.
_SUSPECT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\U0010ffff]")


def text_error(value: str) -> Error:
    """The refusal for text holding a control character, a lone surrogate or a Unicode
    noncharacter, else None."""
    if value.isascii():
        return CONTROL_MESSAGE if CONTROL_CHARACTERS.search(value) else None
    if not _SUSPECT.search(value):
        return None
    if CONTROL_CHARACTERS.search(value):
        return CONTROL_MESSAGE
    if SURROGATES.search(value):
        return SURROGATE_MESSAGE
    if NONCHARACTERS.search(value):
        return NONCHARACTER_MESSAGE
    return None


def file_text(value: str) -> str:
    """Text as a file may hold it: each lone surrogate or noncharacter (stored before they
    were refused) replaced by U+FFFD, so no stored row can corrupt an export."""
    value = SURROGATES.sub("\ufffd", value)
    return NONCHARACTERS.sub("\ufffd", value)


def control_characters(value: Any) -> list[str]:
    """The paths (`field`, `field[2]`, `field.key`) of every string in a JSON value, keys
    included, that holds a control character. Iterative: any depth is walked."""
    return sorted(path for path, message in refusals(value).items() if message == CONTROL_MESSAGE)


def refusals(value: Any) -> dict[str, str]:
    """Path (`field`, `field[2]`, `field.key`) -> refusal for every value in a JSON value that
    no field takes: text or a key holding a control character or a lone surrogate, a number
    that is not finite. Iterative: any depth is walked."""
    found: dict[str, str] = {}
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            error = text_error(item)
            if error:
                found[path or "request"] = error
        elif isinstance(item, float):
            if not math.isfinite(item):
                found[path or "request"] = NOT_FINITE_MESSAGE
        elif isinstance(item, dict):
            for key, child in item.items():
                name = f"{path}.{key}" if path else str(key)
                error = text_error(str(key))
                if error == CONTROL_MESSAGE:
                    found[name] = error
                elif error:  # a lone surrogate cannot be written back: name the parent
                    found[path or "request"] = error
                else:
                    stack.append((child, name))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{index}]") for index, child in enumerate(item))
    return found


def json_depth(value: Any) -> int:
    """How deeply a JSON value nests (a scalar is 0, [] or {} is 1). Iterative."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth) for child in children)
    return deepest


# How deeply untrusted JSON may nest (a request body, a registration, a webhook, a file's
# cell): 32 levels holds every body the app takes; Python's parser recurses once per level.
MAX_JSON_DEPTH = 32
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(rb"[^\[\]{}]+")
_INNERMOST = re.compile(rb"[\[{][\]}]")


# How deeply untrusted XML may nest its elements (a Microsoft Project plan nests 8, an
# OpenDocument spreadsheet's content about 10): every XML reader reads through `xml_events`,
# so the bound is kept once, as JSON's is by `json_loads`.
MAX_XML_DEPTH = 32
XML_DEPTH_MESSAGE = (
    f"The file nests XML elements more than {MAX_XML_DEPTH} levels deep; it is refused unread."
)


class XmlRefused(ValueError):
    """An XML document `xml_events` stops reading: it nests elements past MAX_XML_DEPTH."""


def xml_events(source: bytes) -> Iterator[tuple[str, Any]]:
    """The ("start" | "end", element) events of an untrusted XML document, streamed by
    defusedxml (a DTD or entities raise its DefusedXmlException, malformed text a
    ParseError); nesting past MAX_XML_DEPTH raises XmlRefused before anything deeper is read.
    The reader clears what it has read; nothing recurses, whatever the depth."""
    depth = 0
    for event, element in _defused_iterparse(
        io.BytesIO(source), events=("start", "end"), forbid_dtd=True
    ):
        if event == "start":
            depth += 1
            if depth > MAX_XML_DEPTH:
                raise XmlRefused(XML_DEPTH_MESSAGE)
        else:
            depth -= 1
        yield event, element


class JsonRefused(ValueError):
    """Text `json_loads` refuses before parsing: it nests too deeply or is too long. A
    ValueError, as the parser's own refusal of text that is not JSON is; its text says what
    was found and the limit, for a person to act on."""


def json_nesting(raw: str | bytes, limit: int | None = None) -> int:
    """How deeply JSON text nests ([] and {} are 1, an unclosed bracket counts; brackets in
    strings do not), counted without parsing: each pass of a regular expression takes off
    the innermost pairs, so the work is the text's length times the depth, never recursion.
    With `limit`, counting stops past it (the answer is then limit + 1)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    brackets = _NOT_BRACKET.sub(b"", _JSON_STRING.sub(b"", data))
    depth = 0
    while brackets:
        if limit is not None and depth > limit:
            return depth
        inner = _INNERMOST.sub(b"", brackets)
        if len(inner) == len(brackets):  # unbalanced: each opener left is a level more
            return depth + inner.count(b"[") + inner.count(b"{")
        brackets, depth = inner, depth + 1
    return depth


def json_loads(
    raw: str | bytes,
    *,
    max_depth: int = MAX_JSON_DEPTH,
    max_chars: int | None = None,
    what: str = "The JSON",
    **options: Any,
) -> Any:
    """Untrusted JSON text parsed: the one reader of every door (request bodies, OAuth
    registrations, webhooks, spreadsheet cells, form fields). Text longer than `max_chars`
    or nesting deeper than `max_depth` is refused with `JsonRefused` (its words name `what`
    and the limit) before the parser runs, so no depth reaches a RecursionError. Text that
    is not JSON raises the parser's ValueError; `options` go to `json.loads`."""
    import json

    if isinstance(raw, bytes | bytearray):
        raw = bytes(raw).decode(json.detect_encoding(raw), "surrogatepass")
    if max_chars is not None and len(raw) > max_chars:
        raise JsonRefused(
            f"{what} is {len(raw):,} characters long; at most {max_chars:,} are read."
        )
    if json_nesting(raw, max_depth) > max_depth:
        raise JsonRefused(
            f"{what} nests more than {max_depth} levels deep; at most {max_depth} are read."
        )
    return json.loads(raw, **options)


def text(value: Any, *, max_length: int, required: bool = False) -> tuple[str, Error]:
    """Sanitised text: trimmed; over the cap is refused (never cut), naming the cap; control
    characters other than tab and line breaks are refused."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        # A JSON number is not text (the OpenAPI document says string); spreadsheet cells
        # holding numbers reach here as text (registers.spreadsheets).
        return "", "Must be text."
    error = text_error(value)
    if error:
        return "", error
    value = value.strip()
    if required and not value:
        return "", "This field is required."
    if len(value) > max_length:
        return value, f"At most {max_length} characters (this has {len(value)})."
    return value, None


# The schema of `text(required=True)`: text the services refuse blank (trimmed by str.strip, then
# empty) holds at least one character that is neither a control character nor whitespace
# (the characters str.isspace accepts), and no control character or noncharacter (written
# as the characters themselves, which every pattern dialect reads).
_ALLOWED_CHARACTER = "[^\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f" + "".join(NONCHARACTER_LIST) + "]"
_NOT_BLANK_CHARACTER = (
    "[^\\x00-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
)
NOT_BLANK_TEXT = f"^{_ALLOWED_CHARACTER}*{_NOT_BLANK_CHARACTER}{_ALLOWED_CHARACTER}*$"


def required_text_schema(max_length: int) -> dict[str, Any]:
    """The schema of a text field the services refuse blank: a string (never null), with at
    least one character that is not whitespace, and no control characters."""
    return {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": NOT_BLANK_TEXT}


def required_texts(
    raw: list[Any], *, max_length: int
) -> tuple[list[str] | None, dict[str, list[str]]]:
    """Each member of a list a text the services refuse blank (`text`, required): the texts,
    or the refusals under the members' places ("[2]")."""
    found, texts = FieldErrors(), []
    for index, item in enumerate(raw):
        value, error = text(item, max_length=max_length, required=True)
        if error:
            found.add(f"[{index}]", error)
        texts.append(value)
    return (None, dict(found)) if found else (texts, {})


def required_texts_schema(max_length: int, *, min_items: int, max_items: int) -> dict[str, Any]:
    """The schema of a list of `min_items` to `max_items` texts the services refuse blank."""
    return {
        "type": "array",
        "items": required_text_schema(max_length),
        "minItems": min_items,
        "maxItems": max_items,
    }


def optional_text(value: Any, *, max_length: int) -> tuple[str | None, Error]:
    """Like `text`, but blank becomes None."""
    cleaned, error = text(value, max_length=max_length)
    return (cleaned or None), error


# A comma is read as a thousands separator only where it cannot be anything else: groups of
# three with a decimal point after them (1,234.5) or more than one group (1,234,567). Any other
# comma in something number-like (12,5 or 1,234) could be a decimal comma: refused, not guessed.
GROUPED_NUMBER = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")
# Digits and commas with at least one digit, written so that a failed match backtracks
# linearly (`[\d,]*\d[\d,]*` is quadratic on a long run of digits followed by a letter).
NUMBER_LIKE_WITH_COMMA = re.compile(r"[+-]?,*\d[\d,]*(\.\d*)?")
AMBIGUOUS_MESSAGE = (
    "Ambiguous number: a comma here could separate thousands or decimals. "
    "Write it without thousands separators, with a point for decimals (1234.5)."
)


def _ambiguous(value: Any) -> bool:
    if not isinstance(value, str) or "," not in value:
        return False
    value = value.strip()
    if not NUMBER_LIKE_WITH_COMMA.fullmatch(value):
        return False  # not number-like at all: the field's own rule applies
    clear = GROUPED_NUMBER.fullmatch(value) and ("." in value or value.count(",") > 1)
    return not clear


# --- coercions: what the spec's lenient fields changed, said rather than lost ----------------


class Coercions(list[dict[str, Any]]):
    """The coercions of one request, each {field, received, stored, message}, in order.
    `audited` counts those an audit entry has recorded already."""

    audited = 0

    def unaudited(self) -> list[dict[str, Any]]:
        fresh = self[self.audited :]
        self.audited = len(self)
        return fresh


_COERCIONS: ContextVar[Coercions | None] = ContextVar("coercions", default=None)


@contextlib.contextmanager
def noting_coercions() -> Iterator[Coercions]:
    """Collect, inside the block, the coercions of the spec's lenient fields: the API answers
    them as `warnings`, the audit entry of the write records the values received."""
    notes = Coercions()
    with holding(_COERCIONS, notes):
        yield notes


def coercions() -> Coercions:
    """The coercions noted so far in this request (empty outside `noting_coercions`)."""
    return _COERCIONS.get() or Coercions()


def note_coercion(field: str | None, received: Any, stored: Any, message: str) -> None:
    notes = _COERCIONS.get()
    if field and notes is not None:
        notes.append({"field": field, "received": received, "stored": stored, "message": message})


# A nullable number takes a number of 0 or more, or nothing; anything else is stored as null.
NULLABLE_NUMBER = "the field takes a number of 0 or more, or nothing"
NOT_A_NUMBER_NOTE = f"Not a number: stored as null ({NULLABLE_NUMBER})."
NEGATIVE_NOTE = f"Negative: stored as null ({NULLABLE_NUMBER})."


def nullable_number_schema(places: int = 2) -> dict[str, Any]:
    """The OpenAPI schema of a nullable number: any value is taken; the description says what
    becomes of it."""
    return {
        "description": (
            f"The spec's nullable number (stored with {places} decimal places). Empty, negative "
            "or non-numeric input (a comma that could be a decimal comma, 12,5, included) is "
            f"stored as null; more than {places} decimal places are rounded half-even. Each "
            "coercion is named in the answer's `warnings` ([{field, received, stored, "
            "message}]) and the audit entry records the value received. Past "
            f"{MAX_AMOUNT} either way is refused (422)."
        )
    }


def nullable_number(
    value: Any, *, places: int = 2, field: str | None = None
) -> tuple[Decimal | None, Error]:
    """The spec's nullable number: empty, negative or non-numeric input becomes null (an
    ambiguous comma, 12,5, is non-numeric); more decimal places than the column keeps are
    rounded half-even. Only a number past the column's range is refused. Each coercion is
    noted under `field` (`note_coercion`): nothing is lost silently."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    number = None if _ambiguous(value) else _to_decimal(value)
    if number is None:
        note_coercion(field, value, None, NOT_A_NUMBER_NOTE)
        return None, None
    if number < 0:
        note_coercion(field, value, None, NEGATIVE_NOTE)
        return None, None
    if number > MAX_AMOUNT:  # non-negative here; abs() overflows on 1e999999999
        return None, TOO_LARGE_MESSAGE
    rounded = number.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
    if rounded != number:
        note_coercion(
            field,
            value,
            decimal_to_json(rounded),
            f"More than {places} decimal places: rounded half-even to {rounded}.",
        )
    return rounded, None


def signed_number(value: Any, *, places: int = 2) -> tuple[Decimal | None, Error]:
    """A signed amount (savings allowed). Blank is null; non-numeric is refused."""
    number, error = _decimal(value, "Must be a number.")
    if number is None:
        return None, error
    return _checked(number, places)


WHOLE_NUMBER_MESSAGE = "Must be a whole number."


def _decimal(value: Any, not_a_number: str) -> tuple[Decimal | None, Error]:
    """`value` as a Decimal; (None, None) when blank; (None, the reason) when it is ambiguous
    (`AMBIGUOUS_MESSAGE`) or not a number (`not_a_number`)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if _ambiguous(value):
        return None, AMBIGUOUS_MESSAGE
    number = _to_decimal(value)
    if number is None:
        return None, not_a_number
    return number, None


def _whole_decimal(value: Any) -> tuple[Decimal | None, Error]:
    """`value` as a whole Decimal (not yet int(), which is quadratic in the digits), as
    `_decimal` answers it; a fraction is refused."""
    number, error = _decimal(value, WHOLE_NUMBER_MESSAGE)
    if number is not None and number != number.to_integral_value():
        return None, WHOLE_NUMBER_MESSAGE
    return number, error


# Schedule deltas in days: at most the span of the accepted dates either way (far inside the
# 32-bit column), so a delta between any two accepted dates is taken and no other.
SCHEDULE_DAYS_MAX = (DATE_MAX - DATE_MIN).days  # 109572
SCHEDULE_DAYS_MESSAGE = (
    f"Must be a whole number of days between -{SCHEDULE_DAYS_MAX} and {SCHEDULE_DAYS_MAX}."
)


def schedule_days(value: Any) -> tuple[int | None, Error]:
    """A signed whole number of days within +-SCHEDULE_DAYS_MAX, or null when blank."""
    number, error = signed_integer(value)
    if error == INTEGER_TOO_LARGE or (number is not None and abs(number) > SCHEDULE_DAYS_MAX):
        return None, SCHEDULE_DAYS_MESSAGE
    return number, error


INTEGER_TOO_LARGE = "Too large."


def signed_integer(value: Any) -> tuple[int | None, Error]:
    number, error = _whole_decimal(value)
    if number is None:
        return None, error
    if not -MAX_AMOUNT <= number <= MAX_AMOUNT:
        return None, INTEGER_TOO_LARGE  # before int(), which is quadratic in the digits
    return int(number), None


def bounded_integer(value: Any, *, low: int, high: int, step: int = 1) -> tuple[int | None, Error]:
    """An integer in [low, high] on the given step, or null when blank. Refused, never rounded."""
    number, error = _whole_decimal(value)
    if number is None:
        return None, error
    if number < low or number > high:  # compared before int(), quadratic in the digits
        return None, f"Must be between {low} and {high}."
    integer = int(number)
    if (integer - low) % step:
        return None, f"Must be in steps of {step}."
    return integer, None


def iso_date(value: Any) -> tuple[dt.date | None, Error]:
    """An ISO date (YYYY-MM-DD) within DATE_MIN..DATE_MAX, or null when blank."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    day = None
    if isinstance(value, dt.datetime):
        day = value.date()
    elif isinstance(value, dt.date):
        day = value
    elif isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        with contextlib.suppress(ValueError):
            day = dt.date.fromisoformat(value.strip())
    if day is None:
        return None, "Must be a date as YYYY-MM-DD."
    if not DATE_MIN <= day <= DATE_MAX:
        return None, DATE_RANGE_MESSAGE
    return day, None


def iso_month(value: Any) -> tuple[str | None, Error]:
    """An ISO month (YYYY-MM) within the accepted dates."""
    if isinstance(value, str) and re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", value.strip()):
        month = value.strip()
        if not f"{DATE_MIN:%Y-%m}" <= month <= f"{DATE_MAX:%Y-%m}":
            return None, MONTH_RANGE_MESSAGE
        return month, None
    return None, "Must be a month as YYYY-MM."


def clamp_date(day: dt.date) -> dt.date:
    """A stored date brought into the accepted range, for drawing and date arithmetic (a row
    saved before the range was enforced may hold 9999-12-31 or 0001-01-01)."""
    return min(max(day, DATE_MIN), DATE_MAX)


def add_days(day: dt.date, days: int) -> dt.date:
    """`day` plus `days`, clamped to the accepted range (never OverflowError)."""
    offset = (clamp_date(day) - DATE_MIN).days + days
    return DATE_MIN + dt.timedelta(days=max(0, min((DATE_MAX - DATE_MIN).days, offset)))


def enum(
    value: Any, choices: Iterable[str], *, default: str | None = None
) -> tuple[str | None, Error]:
    choices = list(choices)
    if value is None or value == "":
        if default is not None:
            return default, None
        return None, None
    if value in choices:
        return value, None
    return None, f"Must be one of: {', '.join(choices)}."


def enum_schema(choices: Iterable[str]) -> dict[str, Any]:
    """The schema of `enum`: one of the choices, or null or empty text (the default)."""
    return {"enum": [*choices, None, ""]}


def coerce_enum(value: Any, choices: Iterable[str], *, fallback: str | None) -> str | None:
    """For the spec's lenient enums (invalid becomes a fallback rather than an error)."""
    return value if isinstance(value, str) and value in set(choices) else fallback


def boolean(value: Any) -> tuple[bool, Error]:
    if isinstance(value, bool):
        return value, None
    if value in (None, "", "false", "False", "0", 0, "off", "no"):
        return False, None
    if value in ("true", "True", "1", 1, "on", "yes"):
        return True, None
    return False, "Must be true or false."


def http_url(value: Any) -> tuple[str, Error]:
    if not isinstance(value, str) or not value.strip():
        return "", "A URL is required."
    value = value.strip()
    error = text_error(value)
    if error:
        return value, error
    if len(value) > 2000:
        return value, "At most 2000 characters."
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return value, "Must be an http or https URL."
    return value, None


def account_id(value: Any) -> tuple[str | None, Error]:
    if value is None or value == "":
        return None, None
    error = control_error(value)
    if error:
        return None, error
    if not isinstance(value, str) or len(value) > 128 or not value.strip():
        return None, "Must be a tracker accountId."
    return value.strip(), None


def finite_decimal(value: Any) -> Decimal | None:
    """A number (or its text) as a finite Decimal; None for None, a boolean, text that is no
    number, an infinity or NaN."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except (ArithmeticError, ValueError):
        return None
    return number if number.is_finite() else None


def _to_decimal(value: Any) -> Decimal | None:
    if isinstance(value, str):
        value = value.strip().replace(",", "")
        if not value:
            return None
    return finite_decimal(value)


# Amounts are numeric(18, 2) columns: 16 digits before the point.
MAX_AMOUNT = Decimal("9999999999999999.99")
TOO_LARGE_MESSAGE = f"Too large: at most {MAX_AMOUNT} either way."


def _checked(number: Decimal, places: int) -> tuple[Decimal | None, Error]:
    if not -MAX_AMOUNT <= number <= MAX_AMOUNT:  # abs() overflows on 1e999999999
        return None, TOO_LARGE_MESSAGE
    quantum = Decimal(1).scaleb(-places)
    if number != number.quantize(quantum):
        return None, f"At most {places} decimal places."
    return number.quantize(quantum), None


class Money(float):
    """An amount a float cannot hold exactly (9999999999999999.99 is 1e16 as a float): the
    nearest float, for arithmetic, carrying its exact fixed-point `text`, which `repr` and
    `str` give (so the CSV writer and the pages write it), `json_text` writes as the JSON
    number and the XLSX writers as a text cell (a spreadsheet's number is a float too)."""

    text: str

    def __new__(cls, value: Decimal) -> "Money":
        money = super().__new__(cls, value)
        money.text = format(value, "f")
        _MONEY_MADE[0] = True
        return money

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


# Set, for the process, once a Money is made (one may be kept for a later answer, in any
# thread): `json_text` walks the data only in a process that holds amounts past 10^14.
_MONEY_MADE = [False]


def decimal_to_json(value: Decimal | None) -> int | float | None:
    """Money goes out as a JSON number in fixed-point notation: an integer when whole, else a
    float when the float's shortest writing is the amount exactly (12.5), else `Money` (the
    exact digits: 9999999999999999.99, never 1e+16)."""
    if value is None:
        return None
    if not value.is_finite():
        return float(value)  # as before: no column holds one
    if value == value.to_integral_value():
        return int(value)
    number = float(value)
    shortest = repr(number)
    if "e" not in shortest and Decimal(shortest) == value:
        return number
    return Money(value)


# A marker no text can hold (unknown outside this process, and replaced in every answer).
_MONEY_MARK = f"money-{secrets.token_hex(12)}:"
_MARKED = re.compile(f'"{_MONEY_MARK}(-?[0-9]+(?:\\.[0-9]+)?)"')


def json_text(data: Any, **options: Any) -> str:
    """`json.dumps(data, **options)`, each Money written as its exact digits (a JSON number in
    fixed-point notation). The data are walked only once a Money was made in this process."""
    if not _MONEY_MADE[0]:
        return json.dumps(data, **options)
    text = json.dumps(_marked(data), **options)
    return _MARKED.sub(r"\1", text)


def _marked(value: Any) -> Any:
    if isinstance(value, Money):
        return _MONEY_MARK + value.text
    if isinstance(value, dict):
        return {key: _marked(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_marked(item) for item in value]
    return value
