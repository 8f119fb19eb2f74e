"""Earned value: planned value to date, earned value and actual cost, per work package and
rolled up per project and portfolio, with the indices and estimates read from them (CPI, SPI,
the cost-performance estimate BAC / CPI, the atypical estimate AC + (BAC - EV), VAC, TCPI).
Neither estimate is called EAC: the estimate at completion is the cost dimension's forecast
(`status.derive.derive_cost`: the packages' forecasts or the project manager's revised
forecast), and `estimates_compared` says how far this one differs from it. The rules are in
docs/product.md (section 3, "Earned value"); they live here and nowhere else: the status page,
its API, the portfolio (page, API, exports) and the assistant all show what `project_values`
returns.

Inputs, all already held by the app:

- BAC, a package's budget at completion: its `budgetBaseline` (written by the business case's
  approval and by applying a change to the package's baseline). A package without one is not
  counted (it was added after approval, or nothing is approved yet).
- PV, planned value to date: BAC times the share of the package's time-phasing planned
  through today. The phasing is its `budgetPhasing` (month by month, each month's amount
  spread evenly over its days), else its baselined planned dates (the plan baseline's
  plannedStartDate and plannedEndDate for the package, else its own planned dates), spread
  evenly over their days.
- EV, earned value: `progress` (percent) times BAC. A package with no progress reads 0 % when
  Not Started and 100 % when Complete.
- AC, actual cost: `budgetActual`. A Not Started package with none reads 0.

A project's PV, EV and AC are the sums over its counted packages; when one package lacks an
input, that figure is not given, and `missing` names the input and the packages.
"""

import calendar
import datetime as dt
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from governance import formatting
from governance.cleaning import decimal_to_json, finite_decimal
from registers.derive import baseline_entry, iso_day, plan_baselines_of
from registers.models import WorkPackage

ZERO = Decimal(0)
ONE = Decimal(1)
CENT = Decimal("0.01")
MAX_NAMED = 3  # packages named in a sentence before "and N more"

# The figures, in the order they are shown: key -> (abbreviation, name, formula).
FIGURES = {
    "bac": ("BAC", "Budget at completion", "BAC = the sum of the baselined budgets"),
    "pv": (
        "PV",
        "Planned value",
        "PV = BAC \u00d7 the share of the budget phasing planned through today",
    ),
    "ev": ("EV", "Earned value", "EV = progress (%) \u00d7 BAC"),
    "ac": ("AC", "Actual cost", "AC = the actual cost spent to date (budgetActual)"),
    "cv": ("CV", "Cost variance", "CV = EV \u2212 AC"),
    "sv": ("SV", "Schedule variance", "SV = EV \u2212 PV"),
    "cpi": ("CPI", "Cost performance index", "CPI = EV \u00f7 AC"),
    "spi": ("SPI", "Schedule performance index", "SPI = EV \u00f7 PV"),
    "costPerformanceEstimate": (
        "BAC / CPI",
        "Cost-performance estimate",
        "Cost-performance estimate = BAC \u00f7 CPI (not the EAC: that is the forecast)",
    ),
    "atypicalEstimate": (
        "AC + (BAC \u2212 EV)",
        "Atypical estimate, if the variance so far does not recur",
        "Atypical estimate = AC + (BAC \u2212 EV)",
    ),
    "vac": (
        "VAC",
        "Variance at completion",
        "VAC = BAC \u2212 cost-performance estimate (BAC \u00f7 CPI)",
    ),
    "tcpi": (
        "TCPI",
        "To-complete performance index",
        "TCPI = (BAC \u2212 EV) \u00f7 (BAC \u2212 AC)",
    ),
}
MONEY_KEYS = (
    "bac",
    "pv",
    "ev",
    "ac",
    "cv",
    "sv",
    "costPerformanceEstimate",
    "atypicalEstimate",
    "vac",
)
# The figures whose abbreviation is a formula, not a name: a heading spells out the name too.
ESTIMATE_KEYS = ("costPerformanceEstimate", "atypicalEstimate")
INDEX_KEYS = ("cpi", "spi", "tcpi")
# What each figure needs (besides BAC).
NEEDS = {
    "pv": ("pv",),
    "ev": ("ev",),
    "ac": ("ac",),
    "cv": ("ev", "ac"),
    "sv": ("ev", "pv"),
    "cpi": ("ev", "ac"),
    "spi": ("ev", "pv"),
    "costPerformanceEstimate": ("ev", "ac"),
    "atypicalEstimate": ("ev", "ac"),
    "vac": ("ev", "ac"),
    "tcpi": ("ev", "ac"),
}
INPUT_WORDS = {
    "pv": ("phasing", "no budget phasing and no baselined dates"),
    "ev": ("progress", "no progress"),
    "ac": ("actuals", "no actual cost"),
}


# --- inputs -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PackageInputs:
    id: Any
    name: str
    status: str
    progress: int | None
    bac: Decimal | None
    actual: Decimal | None
    phasing: Any = None
    start: dt.date | None = None  # baselined planned dates (else the package's own)
    end: dt.date | None = None


def _month_days(period: str) -> tuple[dt.date, int] | None:
    try:
        year, month = int(period[:4]), int(period[5:7])
        first = dt.date(year, month, 1)
    except (TypeError, ValueError):
        return None
    return first, calendar.monthrange(year, month)[1]


def planned_share(inputs: PackageInputs, today: dt.date) -> Decimal | None:
    """The share (0 to 1) of the package's work planned through the end of `today`, or None
    when it has no phasing and no baselined dates."""
    weights: list[tuple[dt.date, int, Decimal]] = []  # (first day, days, amount)
    for entry in inputs.phasing if isinstance(inputs.phasing, list) else []:
        if not isinstance(entry, Mapping):
            continue
        amount = finite_decimal(entry.get("amount"))
        month = _month_days(str(entry.get("period") or ""))
        if amount is not None and amount > 0 and month is not None:
            weights.append((month[0], month[1], amount))
    if not weights and inputs.start and inputs.end:
        first, last = sorted((inputs.start, inputs.end))
        weights.append((first, (last - first).days + 1, ONE))
    total = sum((amount for _, _, amount in weights), ZERO)
    if not total:
        return None
    done = ZERO
    for first, days, amount in weights:
        elapsed = min(max((today - first).days + 1, 0), days)
        done += amount * elapsed / days
    return done / total


def package_progress(inputs: PackageInputs) -> Decimal | None:
    if inputs.progress is not None:
        return Decimal(min(max(inputs.progress, 0), 100)) / 100
    if inputs.status == "Complete":
        return ONE
    if inputs.status == "Not Started":
        return ZERO
    return None


def package_actual(inputs: PackageInputs) -> Decimal | None:
    if inputs.actual is not None:
        return inputs.actual
    return ZERO if inputs.status == "Not Started" else None


# --- figures ----------------------------------------------------------------------------------


def _divide(a: Decimal, b: Decimal) -> Decimal | None:
    return a / b if b else None


def indices(
    bac: Decimal | None, pv: Decimal | None, ev: Decimal | None, ac: Decimal | None
) -> dict[str, Decimal | None]:
    """Every figure from BAC, PV, EV and AC (exact; rounded only when shown). A figure whose
    inputs are missing, or that divides by zero, is None."""
    out: dict[str, Decimal | None] = {"bac": bac, "pv": pv, "ev": ev, "ac": ac}
    out["cv"] = ev - ac if ev is not None and ac is not None else None
    out["sv"] = ev - pv if ev is not None and pv is not None else None
    out["cpi"] = _divide(ev, ac) if ev is not None and ac is not None else None
    out["spi"] = _divide(ev, pv) if ev is not None and pv is not None else None
    cpi = out["cpi"]
    estimate = _divide(bac, cpi) if bac is not None and cpi else None
    out["costPerformanceEstimate"] = estimate
    out["atypicalEstimate"] = (
        ac + (bac - ev) if bac is not None and ev is not None and ac is not None else None
    )
    out["vac"] = bac - estimate if bac is not None and estimate is not None else None
    out["tcpi"] = None
    if bac is not None and ev is not None and ac is not None and bac - ac > 0:
        out["tcpi"] = (bac - ev) / (bac - ac)
    return out


@dataclass
class EarnedValue:
    """The figures of a package, a project or the portfolio, and why any is missing."""

    figures: dict[str, Decimal | None]
    missing: list[dict[str, Any]] = field(default_factory=list)
    counted: int = 0  # packages (or projects) counted
    left_out: list[str] = field(default_factory=list)  # packages without a baseline budget
    name: str = ""
    id: Any = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: money rounded to cents, indices to two places."""
        body: dict[str, Any] = {key: shown(key, self.figures.get(key)) for key in FIGURES}
        body["missing"] = [dict(m) for m in self.missing]
        body["counted"] = self.counted
        if self.left_out:
            body["notCounted"] = list(self.left_out)
        return body


def shown(key: str, value: Decimal | None) -> float | None:
    """A figure as every surface shows it: money to cents, an index to two places."""
    if value is None:
        return None
    places = CENT if key in MONEY_KEYS else Decimal("0.01")
    return decimal_to_json(value.quantize(places, rounding=ROUND_HALF_UP))


def _names(names: Sequence[str], total: int | None = None) -> str:
    """The first MAX_NAMED of `names` quoted, and how many more of `total` (default: all of
    `names`) there are."""
    total = len(names) if total is None else total
    quoted = [f"“{n}”" for n in names[:MAX_NAMED]]
    if total > MAX_NAMED:
        quoted.append(f"{total - MAX_NAMED} more")
    if len(quoted) == 1:
        return quoted[0]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


Amounts = tuple[Decimal | None, Decimal | None, Decimal | None, Decimal | None]


def package_amounts(inputs: PackageInputs, today: dt.date) -> Amounts:
    """A package's BAC, PV, EV and AC (each None when not given; all None without a baseline
    budget): what its figures (`package_values`) and its project's sums (`rollup`) read."""
    bac = inputs.bac
    if bac is None:
        return None, None, None, None
    share = planned_share(inputs, today)
    progress = package_progress(inputs)
    pv = bac * share if share is not None else None
    ev = bac * progress if progress is not None else None
    return bac, pv, ev, package_actual(inputs)


def package_values(
    inputs: PackageInputs, today: dt.date, amounts: Amounts | None = None
) -> EarnedValue:
    """A package's figures, from its `package_amounts` (computed when not given)."""
    bac, pv, ev, ac = amounts if amounts is not None else package_amounts(inputs, today)
    if bac is None:
        return EarnedValue(
            figures=dict.fromkeys(FIGURES),
            missing=[missing_baseline()],
            name=inputs.name,
            id=inputs.id,
        )
    missing = []
    for key, value in (("pv", pv), ("ev", ev), ("ac", ac)):
        if value is None:
            word, why = INPUT_WORDS[key]
            missing.append({"input": word, "text": f"Has {why}.", "packages": [inputs.name]})
    return EarnedValue(
        figures=indices(bac, pv, ev, ac),
        missing=missing,
        counted=1,
        name=inputs.name,
        id=inputs.id,
    )


def missing_baseline() -> dict[str, Any]:
    return {
        "input": "baseline",
        "text": "No approved baseline budget (the business case sets it when approved).",
        "packages": [],
    }


def rollup(packages: Sequence[EarnedValue], left_out: Sequence[str] = ()) -> EarnedValue:
    """A project's figures from its packages' (`summed`)."""
    return summed([(p.name, _amounts_of(p.figures)) for p in packages], left_out)


def _amounts_of(figures: Mapping[str, Decimal | None]) -> Amounts:
    return figures.get("bac"), figures.get("pv"), figures.get("ev"), figures.get("ac")


def summed(
    packages: Sequence[tuple[str, Amounts]],
    left_out: Sequence[str] = (),
) -> EarnedValue:
    """A project's figures: the sums of its counted packages' BAC, PV, EV and AC (each
    package as its name and `package_amounts`); a sum is not given when any counted package
    lacks its input."""
    counted = [(name, amounts) for name, amounts in packages if amounts[0] is not None]
    if not counted:
        return EarnedValue(
            figures=dict.fromkeys(FIGURES), missing=[missing_baseline()], left_out=list(left_out)
        )
    sums: dict[str, Decimal | None] = {"bac": sum((a[0] or ZERO for _, a in counted), ZERO)}
    missing = []
    for at, key in ((1, "pv"), (2, "ev"), (3, "ac")):
        lacking = [name for name, a in counted if a[at] is None]
        if lacking:
            sums[key] = None
            word, why = INPUT_WORDS[key]
            subject = "work package has" if len(lacking) == 1 else "work packages have"
            missing.append(
                {
                    "input": word,
                    "text": f"{FIGURES[key][1]} is not given: {len(lacking)} {subject} {why}"
                    f" ({_names(lacking)}).",
                    "packages": lacking,
                }
            )
        else:
            sums[key] = sum((a[at] or ZERO for _, a in counted), ZERO)
    return EarnedValue(
        figures=indices(sums["bac"], sums["pv"], sums["ev"], sums["ac"]),
        missing=missing,
        counted=len(counted),
        left_out=list(left_out),
    )


def portfolio_values(rows: Iterable[Mapping[str, Any]]) -> EarnedValue:
    """The portfolio's figures from its rows' `earnedValue` (as stored): the sums over the
    projects that give all of BAC, PV, EV and AC; the others are named in `missing`."""
    sums = dict.fromkeys(("bac", "pv", "ev", "ac"), ZERO)
    counted, lacking = 0, []
    for row in rows:
        values = row.get("earnedValue") or {}
        if any(values.get(key) is None for key in sums):
            lacking.append(row.get("projectKey") or "")
            continue
        counted += 1
        for key in sums:
            sums[key] += Decimal(str(values[key]))
    return portfolio_totals(sums, counted, len(lacking), lacking[:MAX_NAMED])


def portfolio_totals(
    sums: Mapping[str, Decimal | None], counted: int, lacking: int, named: Sequence[str]
) -> EarnedValue:
    """The portfolio's figures from the sums of BAC, PV, EV and AC over the `counted`
    projects that give all four (summed in SQL by the portfolio, or by `portfolio_values`);
    `lacking` projects are not counted, the first of them `named`."""
    missing = []
    if lacking:
        subject = "project is" if lacking == 1 else "projects are"
        missing.append(
            {
                "input": "projects",
                "text": f"{lacking} {subject} not counted: their figures are incomplete"
                f" ({_names(named, lacking)}).",
                "packages": [],
            }
        )
    if not counted:
        return EarnedValue(figures=dict.fromkeys(FIGURES), missing=missing)
    return EarnedValue(
        figures=indices(*(Decimal(str(sums[key] or 0)) for key in ("bac", "pv", "ev", "ac"))),
        missing=missing,
        counted=counted,
    )


# --- readings in words ------------------------------------------------------------------------


def _n(value: Any) -> str:
    return f"{Decimal(str(value)):.2f}"


def _m(value: Any) -> str:
    return formatting.money(abs(Decimal(str(value))))


# A variance's sentence by its sign: below zero, above zero, zero ({} takes the amount).
_BY_SIGN = {
    "cv": (
        "The work done cost {} more than its budget.",
        "The work done cost {} less than its budget.",
        "The work done cost exactly its budget.",
    ),
    "sv": (
        "Work worth {} less than planned by today is done.",
        "Work worth {} more than planned by today is done.",
        "Exactly the work planned by today is done.",
    ),
    "vac": (
        "At the cost performance so far, {} over budget at the end.",
        "At the cost performance so far, {} under budget at the end.",
        "At the cost performance so far, on budget at the end.",
    ),
}


# A figure's sentence ({} takes it, as money or as an index).
_SENTENCES = {
    "bac": ("The approved budget of the work counted: {}.", _m),
    "pv": ("Work worth {} was planned to be done by today.", _m),
    "ev": ("Work worth {} of the budget is done.", _m),
    "ac": ("{} spent so far.", _m),
    "cpi": ("For each 1.00 spent, {} of planned work done.", _n),
    "spi": ("For each 1.00 of work planned by today, {} done.", _n),
    "costPerformanceEstimate": (
        "At the cost performance so far, the work would cost {} in all.",
        _m,
    ),
    "atypicalEstimate": (
        "If the variance so far does not recur, the work would cost {} in all.",
        _m,
    ),
    "tcpi": ("Each 1.00 still to spend must do {} of planned work to finish on budget.", _n),
}


def reading(key: str, values: Mapping[str, Any]) -> str:
    """One line in words for a figure of `values` (as shown: `EarnedValue.as_dict`); what is
    missing when it is not given."""
    value = values.get(key)
    if value is None:
        return _why_not(key, values)
    if key in _BY_SIGN:
        below, above, even = _BY_SIGN[key]
        if value < 0:
            return below.format(_m(value))
        return above.format(_m(value)) if value else even
    if key in _SENTENCES:
        sentence, shown = _SENTENCES[key]
        return sentence.format(shown(value))
    return ""


def _why_not(key: str, values: Mapping[str, Any]) -> str:
    missing = values.get("missing") or []
    if values.get("bac") is None and any(m.get("input") == "projects" for m in missing):
        return "Not given: no project gives all of its figures yet."
    if any(m.get("input") == "baseline" for m in missing) or values.get("bac") is None:
        return "Not given: no approved baseline budget."
    lacking = [INPUT_WORDS[need][0] for need in NEEDS.get(key, ()) if values.get(need) is None]
    if lacking:
        return "Not given: " + " and ".join(f"no {word}" for word in lacking) + "."
    if key in ("cpi", "costPerformanceEstimate", "vac"):
        return "Not given: nothing spent yet."
    if key == "spi":
        return "Not given: no work was planned by today."
    if key == "tcpi":
        return "Not given: the budget is spent, no efficiency finishes the work within it."
    return "Not given."


def heading(key: str) -> str:
    """A figure's column heading (an export's, a table's): its abbreviation, or for an estimate
    its name with its formula ("Cost-performance estimate (BAC / CPI)"), never "EAC"."""
    abbr, name, _ = FIGURES[key]
    if key in ESTIMATE_KEYS:
        return f"{name.split(',')[0]} ({abbr})"
    return abbr


ESTIMATE_SOURCES = {
    "workPackages": "the work packages' forecasts",
    "revisedForecast": "the project manager's revised forecast",
}


def estimates_compared(eac: Any, source: str, estimate: Any) -> str | None:
    """How the estimate at completion (the cost dimension's forecast: the packages' forecasts,
    or the project manager's revised forecast) and the cost-performance estimate (BAC / CPI)
    differ, in one sentence: what each is and by how much. None when either is not given."""
    if eac is None or estimate is None:
        return None
    eac = Decimal(str(eac)).quantize(CENT, rounding=ROUND_HALF_UP)
    estimate = Decimal(str(estimate)).quantize(CENT, rounding=ROUND_HALF_UP)
    says = ESTIMATE_SOURCES.get(source, ESTIMATE_SOURCES["workPackages"])
    first = (
        f"At the cost performance so far (BAC / CPI) the work would cost {_m(estimate)}; "
        f"{says} put the estimate at completion (EAC) at {_m(eac)}"
    )
    gap = eac - estimate
    if not gap:
        return f"{first}: the two agree."
    more = "more" if gap > 0 else "less"
    return f"{first}, {_m(gap)} {more}."


def readings(values: Mapping[str, Any]) -> dict[str, str]:
    return {key: reading(key, values) for key in FIGURES}


def described(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The figures as a page shows them: abbreviation, name, formula, value and reading."""
    return [
        {
            "key": key,
            "abbr": abbr,
            "name": name,
            "formula": formula,
            "value": values.get(key),
            "index": key in INDEX_KEYS,
            "estimate": key in ESTIMATE_KEYS,
            "reading": reading(key, values),
        }
        for key, (abbr, name, formula) in FIGURES.items()
    ]


# --- loading ----------------------------------------------------------------------------------

PACKAGE_FIELDS = (
    "id",
    "project_id",
    "name",
    "status",
    "progress",
    "budget_baseline",
    "budget_actual",
    "budget_phasing",
    "planned_start_date",
    "planned_end_date",
)


def inputs_of(package: Any, plan: Mapping[str, Any] | None) -> PackageInputs:
    """A package's inputs, read by attribute name (a model instance or a loaded record with
    `PACKAGE_FIELDS`), its dates the baselined ones of the plan baseline in force when it
    names the package."""
    start, end = package.planned_start_date, package.planned_end_date
    entry = baseline_entry(plan, package.id)
    if entry is not None and entry.get("plannedStartDate"):
        start = iso_day(entry.get("plannedStartDate")) or start
        end = iso_day(entry.get("plannedEndDate")) or end
    return PackageInputs(
        id=package.id,
        name=package.name,
        status=package.status,
        progress=package.progress,
        bac=package.budget_baseline,
        actual=package.budget_actual,
        phasing=package.budget_phasing,
        start=start,
        end=end,
    )


def planned_value_on(inputs: Sequence[PackageInputs], day: dt.date) -> Decimal | None:
    """A project's planned value through `day` (the PV of `project_values` on that day), or
    None when a counted package has no phasing."""
    total = ZERO
    for package in inputs:
        if package.bac is None:
            continue
        share = planned_share(package, day)
        if share is None:
            return None
        total += package.bac * share
    return total


def plan_span(inputs: Sequence[PackageInputs]) -> tuple[dt.date, dt.date] | None:
    """The first and last day of the counted packages' phasing, or None."""
    days = []
    for package in inputs:
        if package.bac is None:
            continue
        for entry in package.phasing if isinstance(package.phasing, list) else []:
            month = (
                _month_days(str(entry.get("period") or "")) if isinstance(entry, Mapping) else None
            )
            if month is not None:
                days += [month[0], month[0] + dt.timedelta(days=month[1] - 1)]
        if package.start and package.end:
            days += [package.start, package.end]
    return (min(days), max(days)) if days else None


class ProjectEarnedValue:
    """A project's earned value: `total` (its packages summed) and `packages` (each package's
    figures, made when first read: the portfolio's rows read only the total)."""

    def __init__(
        self,
        total: EarnedValue,
        inputs: Sequence[PackageInputs],
        today: dt.date,
        amounts: Sequence[Amounts],
    ) -> None:
        self.total = total
        self.inputs = list(inputs)
        self._today = today
        self._amounts = list(amounts)

    @functools.cached_property
    def packages(self) -> list[EarnedValue]:
        return [
            package_values(p, self._today, a)
            for p, a in zip(self.inputs, self._amounts, strict=True)
        ]

    def as_dict(self, *, packages: bool = False) -> dict[str, Any]:
        body = self.total.as_dict()
        if packages:
            body["workPackages"] = [
                {"id": str(p.id), "name": p.name, **p.as_dict()} for p in self.packages
            ]
        return body


def project_values(inputs: Sequence[PackageInputs], today: dt.date) -> ProjectEarnedValue:
    """The one function: a project's earned value, per package and rolled up."""
    amounts = [package_amounts(p, today) for p in inputs]
    left_out = [p.name for p in inputs if p.bac is None]
    total = summed([(p.name, a) for p, a in zip(inputs, amounts, strict=True)], left_out)
    return ProjectEarnedValue(total, inputs, today, amounts)


def for_projects(project_ids: Sequence[Any], today: dt.date) -> dict[Any, ProjectEarnedValue]:
    """`project_values` of each project, by id, in two queries whatever their number (the
    status model, `status.selectors.load_facts`, computes the same from the packages it
    loads)."""
    ids = list(project_ids)
    if not ids:
        return {}
    plans = plan_baselines_of(ids)
    inputs: dict[Any, list[PackageInputs]] = {pk: [] for pk in ids}
    rows = (
        WorkPackage.objects.filter(project_id__in=ids)
        .order_by("project_id", "sort_order", "name")
        .only(*PACKAGE_FIELDS)
    )
    for package in rows:
        inputs[package.project_id].append(inputs_of(package, plans.get(package.project_id)))
    return {pk: project_values(inputs[pk], today) for pk in ids}
