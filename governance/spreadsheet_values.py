"""Values as a spreadsheet writes them into a file's cells: money with the site currency's
symbol or code and thousands grouping (`€130,500.00`, `EUR 130,500`, `1 250 000`), and dates
with the day and month in the order of the program's locale (`01/04/2027`).

For imported files only: a cell's text is how a spreadsheet shows a number. The JSON API keeps
its own rule (`cleaning.nullable_number`: a string that is not a number becomes null, with a
warning). Each reader answers (value for the field's service, refusal, note): the value is
plain text the field's own cleaner takes (`130500.00`, `2027-04-01`), a refusal says what was
read and what is expected, and a note says how a value was read when that was not the text
as it stands (the import's preview lists it)."""

import datetime as dt
import re

from django.conf import settings

# Symbols of the currencies people meet most; a three-letter code is recognised as a code.
# A symbol shared by several currencies (`$`, `¥`, `kr`) is accepted when the site's currency
# is one of them.
CURRENCY_SYMBOLS: dict[str, tuple[str, ...]] = {
    "EUR": ("€",),
    "USD": ("$", "US$"),
    "GBP": ("£",),
    "JPY": ("¥", "JP¥"),
    "CNY": ("¥", "CN¥", "元"),
    "CHF": ("Fr.", "SFr.", "Fr"),
    "CAD": ("$", "CA$", "C$"),
    "AUD": ("$", "A$", "AU$"),
    "NZD": ("$", "NZ$"),
    "MXN": ("$", "MX$"),
    "SGD": ("$", "S$"),
    "HKD": ("$", "HK$"),
    "INR": ("₹",),
    "SEK": ("kr",),
    "NOK": ("kr",),
    "DKK": ("kr.", "kr"),
    "ISK": ("kr",),
    "PLN": ("zł",),
    "CZK": ("Kč",),
    "HUF": ("Ft",),
    "BRL": ("R$",),
    "ZAR": ("R",),
    "KRW": ("₩",),
    "ILS": ("₪",),
    "RUB": ("₽",),
    "UAH": ("₴",),
    "TRY": ("₺",),
    "NGN": ("₦",),
    "PHP": ("₱",),
    "THB": ("฿",),
    "VND": ("₫",),
}
KNOWN_SYMBOLS = {symbol for symbols in CURRENCY_SYMBOLS.values() for symbol in symbols}
SPACES = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2009": " ", "\u2212": "-"})
# The number: a sign, digits, and separators; the currency (a symbol or a code) before or after.
AMOUNT = re.compile(
    r"(?P<sign1>[+-]?)\s*(?P<pre>[^\d\s.,'+()-]{1,4}\.?)?\s*(?P<sign2>[+-]?)\s*"
    r"(?P<number>\d[\d.,' ]*)\s*(?P<post>[^\d\s.,'+()-]{1,4}\.?)?"
)
PLAIN = re.compile(r"\d+(\.\d+)?")
GROUPED = {
    ",": re.compile(r"\d{1,3}(,\d{3})+(\.\d+)?"),
    " ": re.compile(r"\d{1,3}( \d{3})+(\.\d+)?"),
    "'": re.compile(r"\d{1,3}('\d{3})+(\.\d+)?"),
}
MAX_AMOUNT_CHARS = 64
EXAMPLES = "130500, 130500.00, 130,500.00, 1 250 000"


def money(text: str, currency: str) -> tuple[str, str | None, str | None]:
    """A money cell's text as a plain number (`€130,500.00` -> `130500.00`). The site's
    currency (`currency`, an ISO code) may be written by its symbol or its code, before or
    after the number; thousands may be grouped by commas, spaces or apostrophes, in groups of
    three (an amount keeps at most two decimal places, so `45,000` is forty-five thousand);
    the decimal separator is a point. Refused, saying what was read: another currency, a
    decimal comma (`12,50`), a point followed by three digits (`1.234`: thousands or
    decimals?), and grouping in any other shape. Text that is not an amount at all is
    passed on as it is, for the field's own rule."""
    raw = text
    value = text.translate(SPACES).strip()
    if len(value) > MAX_AMOUNT_CHARS:
        return raw, None, None  # no amount is written that long: the field's rule says
    negative = False
    if len(value) > 2 and value[0] == "(" and value[-1] == ")":  # accounting negative
        value, negative = value[1:-1].strip(), True
    match = AMOUNT.fullmatch(value)
    if not match:
        return raw, None, None
    pre, post = match["pre"], match["post"]
    if pre and post:
        return raw, None, None
    symbol = pre or post
    if match["sign1"] and match["sign2"]:
        return raw, None, None
    if (match["sign1"] or match["sign2"]) == "-":
        negative = not negative
    if symbol is not None:
        if is_site_currency(symbol, currency):
            pass
        elif is_other_currency(symbol, currency):
            return (
                raw,
                f"Read “{raw}”: an amount in {symbol}, which is not this site's currency "
                f"({currency}). Convert it to {currency} and write the number (such as "
                f"{EXAMPLES}).",
                None,
            )
        else:
            return raw, None, None  # not an amount: the field's own rule says what it is
    number = match["number"].rstrip(" ")
    plain = _plain(number)
    if plain is None:
        return raw, _ambiguous(raw, number), None
    if negative:
        plain = "-" + plain
    if plain == raw.strip():
        return plain, None, None
    return plain, None, f"Read “{raw}” as {plain}" + (f" ({currency})." if symbol else ".")


def is_site_currency(symbol: str, currency: str) -> bool:
    """Whether a currency symbol or ISO code (`€`, `EUR`, `$`) may be the site's currency
    (`currency`, an ISO code): a symbol shared by several currencies is the site's when the
    site's currency is one of them."""
    accepted = {currency.upper(), *CURRENCY_SYMBOLS.get(currency.upper(), ())}
    return symbol.upper() in accepted or symbol in accepted


def is_other_currency(symbol: str, currency: str) -> bool:
    """The rule of every importer (a spreadsheet's cells, a Microsoft Project plan's
    CurrencyCode or CurrencySymbol): amounts written in a currency that is not the site's
    are refused, never converted nor taken as the site's. True when `symbol` is a known
    symbol or a three-letter code that cannot be the site's currency."""
    symbol = symbol.strip()
    if not symbol or is_site_currency(symbol, currency):
        return False
    return symbol in KNOWN_SYMBOLS or bool(re.fullmatch(r"[A-Z]{3}", symbol))


def _plain(number: str) -> str | None:
    """The digits of a grouped number with a decimal point, or None when its shape is not
    one this reader reads without guessing."""
    if PLAIN.fullmatch(number):
        if re.fullmatch(r"\d{1,3}\.\d{3}", number):
            return None  # 1.234: a point grouping thousands, or three decimals?
        return number
    for separator, pattern in GROUPED.items():
        if pattern.fullmatch(number):
            return number.replace(separator, "")
    return None


def _ambiguous(raw: str, number: str) -> str:
    if re.fullmatch(r"\d{1,3}\.\d{3}", number) or re.fullmatch(r"\d{1,3}(\.\d{3})+(,\d+)?", number):
        reading = "a point here could group thousands or mark decimals"
    elif re.search(r",\d{1,2}$", number):
        reading = "a comma before the last one or two digits is a decimal comma"
    else:
        reading = "its thousands are not grouped in threes by one separator"
    return (
        f"Read “{raw}”: {reading}, so the amount is not read by guessing. Write it with a "
        f"point for decimals and, if you like, commas or spaces between thousands (such as "
        f"{EXAMPLES})."
    )


# --- dates -----------------------------------------------------------------------------------

DAY_ORDERS = {"DMY": "day first", "MDY": "month first"}
SLASHED = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4})")
YEAR_FIRST = re.compile(r"(\d{4})([/.])(\d{1,2})\2(\d{1,2})")
ISO_WITH_MIDNIGHT = re.compile(r"(\d{4}-\d{2}-\d{2})[ T]00:00(:00)?")


def day_order() -> str:
    """The setting `IMPORT_DATE_ORDER`: DMY or MDY, or "" (such dates are refused)."""
    order = (getattr(settings, "IMPORT_DATE_ORDER", "") or "").upper()
    return order if order in DAY_ORDERS else ""


def date(text: str) -> tuple[str, str | None, str | None]:
    """A date cell's text as YYYY-MM-DD. `01/04/2027` (slashes, points or hyphens, the year
    last) is read in the order the setting IMPORT_DATE_ORDER gives (DMY or MDY), and refused
    without it, naming the form expected; `2027/04/01` and a date at midnight
    (`2027-04-01 00:00:00`) are read as they stand. Anything else is passed on for the
    field's own rule (YYYY-MM-DD)."""
    value = text.strip()
    midnight = ISO_WITH_MIDNIGHT.fullmatch(value)
    if midnight:
        return midnight[1], None, f"Read “{text}” as {midnight[1]}."
    year_first = YEAR_FIRST.fullmatch(value)
    if year_first:
        iso = _iso(int(year_first[1]), int(year_first[3]), int(year_first[4]))
        if iso:
            return iso, None, f"Read “{text}” as {iso}."
        return text, None, None
    slashed = SLASHED.fullmatch(value)
    if not slashed:
        return text, None, None
    first, second, year = int(slashed[1]), int(slashed[3]), int(slashed[4])
    order = day_order()
    if not order:
        day_first, month_first = _iso(year, second, first), _iso(year, first, second)
        readings = [r for r in (day_first, month_first) if r]
        choices = " or ".join(dict.fromkeys(readings)) or "YYYY-MM-DD"
        return (
            text,
            f"Read “{text}”: dates are written YYYY-MM-DD (here {choices}), because the order "
            "of day and month cannot be told from the file. An administrator can set the day "
            "order such files use (IMPORT_DATE_ORDER).",
            None,
        )
    day, month = (first, second) if order == "DMY" else (second, first)
    iso = _iso(year, month, day)
    if iso is None:
        return (
            text,
            f"Read “{text}” {DAY_ORDERS[order]} (IMPORT_DATE_ORDER={order}): no such date. "
            "Write dates as YYYY-MM-DD.",
            None,
        )
    return iso, None, f"Read “{text}” {DAY_ORDERS[order]} as {iso}."


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None
