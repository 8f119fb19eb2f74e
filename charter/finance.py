"""The financial case: normalise what a client sends (mode attached, builtin or none; an
invalid mode becomes none) and compute the builtin model's metrics. The formulas are written
down in docs/decisions/0159 ("Financial case formulas"); they live here and nowhere else."""

import itertools
import math
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.utils import timezone

from governance.cleaning import (
    FieldErrors,
    bounded_integer,
    decimal_to_json,
    finite_decimal,
    http_url,
    known_object,
    optional_text,
    signed_number,
    text,
)

FINANCIAL_MODES = ["attached", "builtin", "none"]
DEFAULT_CURRENCY = "EUR"
DEFAULT_DISCOUNT_RATE_PCT = 8
DEFAULT_HORIZON_YEARS = 5
HORIZON_MAX = 30
LABEL_MAX = 200
METRICS = ["totalCost", "totalBenefit", "npv", "irr", "paybackYears", "roiPct"]
# Headline figures of an attached model: entered by hand, signed (a negative NPV is a fact).
HEADLINE_FIGURES = METRICS
# The members the financial case takes at each level (any other is refused); the API's
# schema of the field (charter.specs.FINANCIAL_CASE_SCHEMA) is made from these.
CASE_MEMBERS = ("mode", "attached", "builtin", "boardPaperPageId", "createdAt", "updatedAt")
BUILTIN_MEMBERS = ("currency", "discountRatePct", "horizonYears", "lines", "computed")
ATTACHED_MEMBERS = ("label", "url", "pageId", *HEADLINE_FIGURES)


def empty_builtin() -> dict[str, Any]:
    return {
        "currency": DEFAULT_CURRENCY,
        "discountRatePct": DEFAULT_DISCOUNT_RATE_PCT,
        "horizonYears": DEFAULT_HORIZON_YEARS,
        "lines": [],
    }


def empty_attached() -> dict[str, Any]:
    return {"label": "", "url": None, "pageId": None, **dict.fromkeys(HEADLINE_FIGURES)}


def fresh() -> dict[str, Any]:
    """What a never-saved business case serves: an empty builtin model."""
    return {
        "mode": "builtin",
        "attached": empty_attached(),
        "builtin": {**empty_builtin(), "computed": compute(empty_builtin())},
        "boardPaperPageId": None,
        "createdAt": None,
        "updatedAt": None,
    }


def present(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """The stored financial case as the API and pages show it: every key present, the mode
    read leniently, the builtin metrics recomputed from the lines."""
    if not stored:
        return fresh()
    builtin = {**empty_builtin(), **(stored.get("builtin") or {})}
    builtin.pop("computed", None)
    return {
        "mode": mode(stored.get("mode")),
        "attached": {**empty_attached(), **(stored.get("attached") or {})},
        "builtin": {**builtin, "computed": compute(builtin)},
        "boardPaperPageId": stored.get("boardPaperPageId"),
        "createdAt": stored.get("createdAt"),
        "updatedAt": stored.get("updatedAt"),
    }


def storable(stored: Mapping[str, Any] | None) -> dict[str, Any]:
    """The stored shape of a financial case: as presented, without the computed metrics
    (recomputed on every read) and without the timestamps."""
    shown = present(stored)
    builtin = {k: v for k, v in shown["builtin"].items() if k != "computed"}
    return {
        "mode": shown["mode"],
        "attached": shown["attached"],
        "builtin": builtin,
        "boardPaperPageId": shown["boardPaperPageId"],
    }


def stamped(value: Mapping[str, Any], stored: Mapping[str, Any] | None) -> dict[str, Any]:
    now = timezone.now().isoformat()
    return {**value, "createdAt": (stored or {}).get("createdAt") or now, "updatedAt": now}


def mode(value: Any) -> str:
    """attached, builtin or none; anything else is none (the spec's lenient rule)."""
    return value if value in FINANCIAL_MODES else "none"


# --- cleaning --------------------------------------------------------------------------------


def _non_negative(value: Any) -> tuple[Decimal, str | None]:
    """A line amount: blank is 0; a negative or non-numeric amount is refused."""
    number, error = signed_number(value)
    if error:
        return Decimal(0), error
    if number is None:
        return Decimal(0), None
    if number < 0:
        return Decimal(0), "Must be 0 or more (enter costs and benefits as positive amounts)."
    return number, None


def clean_builtin(
    raw: Any, errors: FieldErrors, prefix: str = "financialCase.builtin"
) -> dict[str, Any]:
    if not known_object(
        raw, BUILTIN_MEMBERS, errors, prefix, "currency, discountRatePct, horizonYears, lines"
    ):
        return empty_builtin()
    model = empty_builtin()
    currency = raw.get("currency", DEFAULT_CURRENCY)
    if not isinstance(currency, str) or not (
        len(currency.strip()) == 3 and currency.strip().isalpha()
    ):
        errors.add(f"{prefix}.currency", "Must be a three-letter currency code, e.g. EUR.")
    else:
        model["currency"] = currency.strip().upper()
    if "discountRatePct" in raw:
        rate, error = signed_number(raw["discountRatePct"])
        if error or rate is None or rate < 0 or rate > 100:
            errors.add(f"{prefix}.discountRatePct", error or "Must be between 0 and 100.")
        else:
            model["discountRatePct"] = decimal_to_json(rate)
    if "horizonYears" in raw:
        years, error = bounded_integer(raw["horizonYears"], low=1, high=HORIZON_MAX)
        if error or years is None:
            errors.add(f"{prefix}.horizonYears", error or f"Must be between 1 and {HORIZON_MAX}.")
        else:
            model["horizonYears"] = years
    lines = raw.get("lines", [])
    if lines is None:
        lines = []
    if not isinstance(lines, list):
        errors.add(f"{prefix}.lines", "Must be a list of {year, cost, benefit}.")
        return model
    seen: set[int] = set()
    cleaned = []
    for index, line in enumerate(lines):
        where = f"{prefix}.lines[{index}]"
        if not known_object(
            line, ("year", "cost", "benefit"), errors, where, "year, cost, benefit"
        ):
            continue
        year, error = bounded_integer(line.get("year"), low=0, high=model["horizonYears"])
        if error or year is None:
            errors.add(
                f"{where}.year",
                error or f"Required: a year from 0 to the horizon ({model['horizonYears']}).",
            )
            continue
        if year in seen:
            errors.add(f"{where}.year", f"Year {year} appears twice.")
            continue
        seen.add(year)
        cost, cost_error = _non_negative(line.get("cost"))
        benefit, benefit_error = _non_negative(line.get("benefit"))
        if cost_error:
            errors.add(f"{where}.cost", cost_error)
        if benefit_error:
            errors.add(f"{where}.benefit", benefit_error)
        cleaned.append(
            {"year": year, "cost": decimal_to_json(cost), "benefit": decimal_to_json(benefit)}
        )
    model["lines"] = sorted(cleaned, key=lambda line: line["year"])
    return model


def clean_attached(
    raw: Any, errors: FieldErrors, prefix: str = "financialCase.attached"
) -> dict[str, Any]:
    if not known_object(
        raw, ATTACHED_MEMBERS, errors, prefix, "label, url, pageId, and headline figures"
    ):
        return empty_attached()
    model = empty_attached()
    model["label"], error = text(raw.get("label"), max_length=LABEL_MAX)
    if error:
        errors.add(f"{prefix}.label", error)
    if raw.get("url") not in (None, ""):
        model["url"], error = http_url(raw["url"])
        if error:
            errors.add(f"{prefix}.url", error)
    model["pageId"], error = optional_text(raw.get("pageId"), max_length=64)
    if error:
        errors.add(f"{prefix}.pageId", error)
    for key in HEADLINE_FIGURES:
        number, error = signed_number(raw.get(key))
        if error:
            errors.add(f"{prefix}.{key}", error)
        elif (
            number is not None
            and key in ("totalCost", "totalBenefit", "paybackYears")
            and (number < 0)
        ):
            errors.add(f"{prefix}.{key}", "Must be 0 or more.")
        else:
            model[key] = decimal_to_json(number)
    return model


def clean(raw: Any, stored: Mapping[str, Any] | None, errors: FieldErrors) -> dict[str, Any]:
    """Merge a client's financialCase onto the stored one: keys present replace, keys absent
    keep the stored value. An invalid mode becomes none. Timestamps are the server's."""
    result = storable(stored)
    if not known_object(
        raw, CASE_MEMBERS, errors, "financialCase", "mode, attached, builtin, boardPaperPageId"
    ):
        return result
    if "mode" in raw:
        result["mode"] = mode(raw["mode"])
    if "attached" in raw:
        result["attached"] = clean_attached(raw["attached"], errors)
    if "builtin" in raw:
        result["builtin"] = clean_builtin(raw["builtin"], errors)
    if "boardPaperPageId" in raw:
        result["boardPaperPageId"], error = optional_text(raw["boardPaperPageId"], max_length=64)
        if error:
            errors.add("financialCase.boardPaperPageId", error)
    return result


# --- computation -----------------------------------------------------------------------------


def net_flows(builtin: Mapping[str, Any]) -> list[float]:
    """Net cash flow (benefit - cost) for every year from 0 to the last year with a line;
    years without a line count as 0."""
    lines = builtin.get("lines") or []
    if not lines:
        return []
    last = max(int(line["year"]) for line in lines)
    flows = [0.0] * (last + 1)
    for line in lines:
        flows[int(line["year"])] += float(line.get("benefit") or 0) - float(line.get("cost") or 0)
    return flows


def npv(flows: list[float], rate: float) -> float:
    """Sum of flow_t / (1 + rate)^t, year 0 undiscounted."""
    return sum(flow / (1 + rate) ** year for year, flow in enumerate(flows))


def irr(flows: list[float]) -> float | None:
    """The rate that makes the NPV zero, or None when the flows never change sign (no rate
    does) or no root lies between -99 % and +1,000,000 % a year. Found by bisection on the
    first bracket of a sign change, scanning upward from -99 %, so with several roots the
    lowest is returned."""
    if not (any(f > 0 for f in flows) and any(f < 0 for f in flows)):
        return None
    grid = [-0.99, -0.9, -0.75, -0.5, -0.25, 0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 1e4]
    values = [npv(flows, r) for r in grid]
    for index, (low, high) in enumerate(itertools.pairwise(grid)):
        f_low, f_high = values[index], values[index + 1]
        if f_low == 0:
            return low
        if f_low * f_high < 0:
            for _ in range(200):
                mid = (low + high) / 2
                f_mid = npv(flows, mid)
                if f_mid == 0 or (high - low) < 1e-12:
                    return mid
                if f_low * f_mid < 0:
                    high = mid
                else:
                    low, f_low = mid, f_mid
            return (low + high) / 2
    if values[-1] == 0:
        return grid[-1]
    return None


def payback_years(flows: list[float]) -> float | None:
    """Undiscounted payback: the first point, counted in years from year 0, at which the
    cumulative net flow reaches 0, interpolated linearly within the year it happens; 0 when
    it never goes below 0; None when it never recovers."""
    if not flows:
        return None
    cumulative = 0.0
    ever_negative = False
    for year, flow in enumerate(flows):
        previous = cumulative
        cumulative += flow
        if cumulative < 0:
            ever_negative = True
            continue
        if not ever_negative:
            return 0.0
        # previous < 0 <= cumulative, so flow > 0: the year's share that recovers the rest.
        return (year - 1) + (-previous / flow)
    return None


def _round(value: float | None, places: int = 2) -> float | None:
    if value is None or math.isnan(value) or math.isinf(value):
        return None
    rounded = round(value, places)
    return rounded + 0.0  # no negative zero


def _line_total(lines: list[Any], key: str) -> float:
    return sum(float(line.get(key) or 0) for line in lines)


def _stated_total(stored: Mapping[str, Any] | None, key: str) -> Decimal | None:
    """The total `key` ("cost" or "benefit") a financial case states: the builtin model's
    computed total (the sum of its lines, as `compute` gives it), the attached model's
    headline figure entered by hand, or None (mode none, no lines, no figure)."""
    shown = mode((stored or {}).get("mode")) if stored else "builtin"
    value: Any = None
    if shown == "builtin":
        lines = ((stored or {}).get("builtin") or {}).get("lines") or []
        value = _round(_line_total(lines, key)) if lines else None
    elif shown == "attached":
        value = ((stored or {}).get("attached") or {}).get(f"total{key.capitalize()}")
    return finite_decimal(value)


def total_benefit(stored: Mapping[str, Any] | None) -> Decimal | None:
    """The total benefit a financial case states (`_stated_total`). Read at approval (frozen
    into the plan baseline) and on every status (the benefit forecast)."""
    return _stated_total(stored, "benefit")


def total_cost(stored: Mapping[str, Any] | None) -> Decimal | None:
    """The total cost a financial case states (`_stated_total`): the approval panel sets it
    beside the budget of the plan being frozen."""
    return _stated_total(stored, "cost")


def compute(builtin: Mapping[str, Any]) -> dict[str, Any]:
    """{totalCost, totalBenefit, npv, irr, paybackYears, roiPct} from the builtin model; all
    null while there are no lines. irr and roiPct are percentages; money is in the model's
    currency, rounded to cents."""
    lines = builtin.get("lines") or []
    if not lines:
        return dict.fromkeys(METRICS)
    total_cost = _line_total(lines, "cost")
    total_benefit = _line_total(lines, "benefit")
    flows = net_flows(builtin)
    rate = float(builtin.get("discountRatePct") or 0) / 100
    found = irr(flows)
    return {
        "totalCost": _round(total_cost),
        "totalBenefit": _round(total_benefit),
        "npv": _round(npv(flows, rate)),
        "irr": _round(found * 100) if found is not None else None,
        "paybackYears": _round(payback_years(flows)),
        "roiPct": _round((total_benefit - total_cost) / total_cost * 100) if total_cost else None,
    }
