"""How pages write dates and amounts: one date format, the locale's (LANGUAGE_CODE en-gb:
"22 Nov 2026", with a 24-hour time when it matters) and every amount with the site's currency
("EUR 12,500").
Templates use the `day`, `moment` and `money` filters; Python that writes sentences for
people (drivers, checklist details) calls these functions. The API keeps ISO dates and plain
numbers."""

import datetime as dt
from contextvars import ContextVar
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from django.core.cache import cache
from django.core.signals import request_finished, request_started, setting_changed
from django.utils import formats, timezone, translation
from django.utils.html import escape
from django.utils.safestring import mark_safe

CURRENCY_CACHE_KEY = "site:currency"
DEFAULT_CURRENCY = "EUR"


def _parse(value: Any) -> Any:
    if isinstance(value, str) and value:
        try:
            if len(value) == 10:
                return dt.date.fromisoformat(value)
            return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
    return value


def day(value: Any) -> str:
    """A date (or the date of a timestamp, or an ISO string) as "22 Nov 2026"; "" for none."""
    if type(value) is dt.date:  # the common case: a register row writes thousands
        return _date_text(value, translation.get_language())
    value = _parse(value)
    if isinstance(value, dt.datetime):
        value = timezone.localtime(value) if timezone.is_aware(value) else value
        value = value.date()
    if isinstance(value, dt.date):
        return _date_text(value, translation.get_language())
    return value or ""


@lru_cache(maxsize=8192)
def _date_text(value: dt.date, language: str | None) -> str:
    """A date in the locale's format. A page of a hundred rows writes a few hundred dates,
    mostly the same few: each (date, language) is formatted once per process."""
    return formats.date_format(value, "DATE_FORMAT")


def date_span(start: dt.date | None, end: dt.date | None) -> str:
    """ "start to end" as HTML, each date kept on one line ("…" for a missing end); "" when
    both are missing."""
    if not start and not end:
        return ""
    return _span_html(start, end, translation.get_language())


@lru_cache(maxsize=16384)
def _span_html(start: dt.date | None, end: dt.date | None, language: str | None) -> str:
    """Formatted once per process: a register of a thousand rows writes three spans a row,
    mostly the same few hundred."""
    first, last = escape(day(start) or "…"), escape(day(end) or "…")
    return mark_safe(f'<span class="date">{first}</span> to <span class="date">{last}</span>')


def moment(value: Any) -> str:
    """A timestamp (or ISO string) as "22 Nov 2026, 14:05", in the site's time zone."""
    value = _parse(value)
    if isinstance(value, dt.datetime):
        value = timezone.localtime(value) if timezone.is_aware(value) else value
        return f"{_date_text(value.date(), translation.get_language())}, {value:%H:%M}"
    if isinstance(value, dt.date):
        return day(value)
    return value or ""


# Within one request the currency is read from the shared cache once: a page of a thousand
# amounts asks for it a thousand times. The memo lives from request_started to
# request_finished (outside a request, e.g. in the worker, every call reads the cache). Under
# WSGI (gunicorn, the test client) the signal runs in the request's own context; under ASGI
# Django sends it from a copied context, so there the memo never starts and every call reads
# the cache: slower, never wrong.
_request_memo: ContextVar[dict[str, str] | None] = ContextVar(
    "formatting_request_memo", default=None
)


def _start_memo(**kwargs: Any) -> None:
    _request_memo.set({})


def _end_memo(**kwargs: Any) -> None:
    _request_memo.set(None)


def _forget_formats(*, setting: str, **kwargs: Any) -> None:
    if setting in ("DATE_FORMAT", "LANGUAGE_CODE", "USE_I18N", "FORMAT_MODULE_PATH"):
        _date_text.cache_clear()
        _span_html.cache_clear()


request_started.connect(_start_memo, dispatch_uid="formatting-memo-start")
setting_changed.connect(_forget_formats, dispatch_uid="formatting-forget-formats")
request_finished.connect(_end_memo, dispatch_uid="formatting-memo-end")


def currency() -> str:
    """The site's currency (Portfolio settings), read once and kept in the cache."""
    memo = _request_memo.get()
    if memo is not None and "currency" in memo:
        return memo["currency"]
    code: str | None = cache.get(CURRENCY_CACHE_KEY)
    if code is None:
        from governance.models import SiteSettings

        code = (
            SiteSettings.objects.filter(pk=1).values_list("currency", flat=True).first()
            or DEFAULT_CURRENCY
        )
        cache.set(CURRENCY_CACHE_KEY, code, 300)
    if memo is not None:
        memo["currency"] = code
    return code


def forget_currency() -> None:
    cache.delete(CURRENCY_CACHE_KEY)
    memo = _request_memo.get()
    if memo is not None:
        memo.pop("currency", None)


def number(value: Any) -> str:
    """12500 -> "12,500"; 12500.5 -> "12,500.50"."""
    try:
        value = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return str(value)
    if value == value.to_integral_value():
        return f"{int(value):,}"
    return f"{value:,.2f}"


def percent_figure(value: Any) -> str:
    """A derived percentage as it was computed, to its own precision: 5.001 -> "5.001",
    4.2 -> "4.2", 20.0 -> "20" (the derivation chose the places that agree with its colour)."""
    if value is None:
        return ""
    try:
        exact = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return str(value)
    if not exact.is_finite():
        return str(value)
    if exact == exact.to_integral_value():
        return str(int(exact))
    text = f"{exact:f}".rstrip("0")
    return "0" if text in ("-0.", "0.") else text


def money(value: Any, code: str | None = None, *, signed: bool = False, empty: str = "") -> str:
    """The one way an amount is written, with its currency: "EUR 12,500"; `empty` for none
    (pages and sentences pass "—"). `signed` writes "+" on a positive amount (a change's
    impact)."""
    if value is None or value == "":
        return empty
    text = number(value)
    if signed and not text.startswith("-") and Decimal(str(value)) > 0:
        text = f"+{text}"
    return f"{code or currency()}\u00a0{text}"


def age(value: Any, now: dt.datetime | None = None) -> str:
    """How long something has waited, in words: "today", "1 day", "12 days"."""
    value = _parse(value)
    if isinstance(value, dt.datetime):
        value = timezone.localtime(value).date() if timezone.is_aware(value) else value.date()
    if not isinstance(value, dt.date):
        return ""
    today = timezone.localdate(now) if now else timezone.localdate()
    days = (today - value).days
    if days <= 0:
        return "today"
    return "1 day" if days == 1 else f"{days} days"


# Words that start with a vowel letter but a consonant sound ("a unique", "a one-off"), and
# words that start with a silent h ("an hour").
_CONSONANT_SOUNDS = ("uni", "use", "usu", "uti", "eu", "one", "once")
_VOWEL_SOUNDS = ("hour", "honest", "honour", "heir")


def plural(count: int, word: str) -> str:
    """The count and the word, an s added unless the count is one: "1 risk", "3 risks"."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def with_article(word: str, *, capital: bool = False) -> str:
    """`word` after the indefinite article its sound takes: "a Blocked", "an Opportunity",
    "an In Progress", "a unit". With `capital`, the article starts a sentence ("An Amber")."""
    lowered = word.strip().lower()
    if lowered.startswith(_VOWEL_SOUNDS):
        article = "an"
    elif lowered.startswith(_CONSONANT_SOUNDS):
        article = "a"
    else:
        article = "an" if lowered[:1] in ("a", "e", "i", "o", "u") else "a"
    if capital:
        article = article.capitalize()
    return f"{article} {word}"
