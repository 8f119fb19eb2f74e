"""Every derived value of project status, computed here once and shown the same on the status
page, in published reports, on the portfolio and in the API (docs/product.md section 3):

- the derived cost, schedule, scope and risk RAG, each with its drivers: a summary with the
  figures that made it what it is (for example "forecast 1,200 vs approved 1,000 + 0
  variations: +20 %") and, on a project's own status, the rows behind it;
- the benefit forecast: the financial case's total benefit now against the approved benefit
  the plan baseline froze, and the shortfall in percent (`derive_benefit`);
- the effective value (the override when set, else derived);
- staleness against the reporting cadence;
- the initiation checklist;
- the realisation review due date from brCadence (else the site default);
- the portfolio figures (approved budget, EAC, slip, top risk score, pending decisions,
  changes awaiting application, adoption gap).

The functions are pure. They read `ProjectFacts`: the rows `selectors.load_facts` loads by
field name for any number of projects at once (work packages, risks, decisions, changes, the
status and the business case with its plan baseline) and the per-project `Figures` that
`figures_of` computes from them here, one function per figure; on a project's own status the
rows also become the listed drivers. They take `now`
so that tests and reports can pin the clock.
"""

import calendar
import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.utils import timezone

from charter.derive import CLOSED_OR_LATER, adoption_gap
from charter.finance import total_benefit
from charter.models import BusinessCase
from governance import formatting, labels
from governance.cleaning import add_days, coerce_enum, finite_decimal
from governance.formatting import plural
from governance.models import RAG_CHOICES, Project
from governance.rag import risk_zone
from registers.derive import (
    BASIS_BASELINE,
    application_state,
    baseline_entries,
    iso_day,
    measured_end,
    package_schedule,
    residual_score,
    variations,
)
from status.earned_value import estimates_compared, readings
from status.models import CONFIDENCES, DIMENSIONS, ProjectStatus

DIMENSION_LABELS = {"cost": "Cost", "schedule": "Schedule", "scope": "Scope", "risk": "Risk"}
# How long a status stays current (docs/product.md section 3).
CADENCE_DAYS = {"Daily": 1, "Weekly": 7, "Monthly": 31}
BR_CADENCE_MONTHS = {"Monthly": 1, "Quarterly": 3, "Annual": 12}
APPROVED_OR_LATER = frozenset({"Approved", "ClosingSubmitted"}) | CLOSED_OR_LATER
# Severity order for sorting and trends: the worst first.
RAG_SEVERITY = {"Red": 0, "Amber": 1, "Green": 2, "Blue": 3, "None": 4}
MAX_DRIVER_ROWS = 5
PENDING_SCOPE_STATES = ("Proposed", "AwaitingApplication")
ZERO = Decimal("0")


# --- inputs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """One project's register figures (`figures_of`)."""

    # Work packages
    packages: int = 0
    complete: int = 0
    blocked: int = 0
    unplanned: int = 0  # without planned start and end dates and a budget
    with_budget_figures: int = 0  # with a budget, a baseline or a forecast
    budget_sum: Decimal = ZERO
    baseline_sum: Decimal = ZERO
    baselined_packages: int = 0
    forecast_sum: Decimal = ZERO  # budgetForecast, falling back to budget
    latest_end: dt.date | None = None  # the latest `registers.derive.measured_end`
    latest_planned_end: dt.date | None = None
    latest_locked_end: dt.date | None = None  # legacy plannedDatesBaselineLockedAt packages
    # Each package's slip against its own baseline (`registers.derive.package_schedule`): the
    # worst of them, and the late ones (slip > 0), the latest first.
    worst_package_slip: int | None = None
    late_packages: tuple["PackageSlip", ...] = ()
    # Risks (direction Risk)
    risks: int = 0  # any status
    open_risks: int = 0
    top_score: int | None = None
    red_risks: int = 0
    amber_risks: int = 0
    unscored_risks: int = 0
    # Decisions
    pending_decisions: int = 0
    # Change requests
    open_changes: int = 0  # Proposed or Approved
    variation_budget: Decimal = ZERO
    variation_days: int = 0
    budget_variations: int = 0  # Approved changes with a budget impact
    awaiting_application: int = 0
    pending_scope: int = 0
    oldest_pending_scope_at: dt.datetime | None = None
    # The earliest Scope change that would be pending but was raised after `now` (it starts to
    # wait then): a moment the scope rule changes its answer.
    next_pending_scope_at: dt.datetime | None = None


@dataclass(slots=True)
class WorkPackageFact:
    """A work package as the status model reads it (`selectors.WP_FIELDS`, by name): what
    the figures, the drivers, the earned value and the status page's pictures need."""

    id: Any
    name: str
    status: str
    budget: Decimal | None = None
    budget_baseline: Decimal | None = None
    budget_forecast: Decimal | None = None
    planned_start_date: dt.date | None = None
    planned_end_date: dt.date | None = None
    forecast_end_date: dt.date | None = None
    project_id: Any = None
    progress: int | None = None
    budget_actual: Decimal | None = None
    budget_phasing: Any = None
    actual_end_date: dt.date | None = None
    planned_dates_baseline_locked_at: dt.datetime | None = None
    # Only a project's own status reads these (`selectors.PAGE_ONLY_FIELDS`): last, so that
    # the portfolio's read fills the fields before them by position.
    type: str = ""
    forecast_start_date: dt.date | None = None
    actual_start_date: dt.date | None = None

    @property
    def pk(self) -> Any:
        return self.id


@dataclass(slots=True)
class RiskFact:
    id: Any
    title: str
    status: str
    direction: str
    materialised: bool
    score: int | None  # the stored risk score (registers.models.RISK_SCORE)
    project_id: Any = None
    # Where the risk matrices place it (a project's own status only).
    impact: int | None = None
    likelihood: int | None = None
    residual_impact: int | None = None
    residual_likelihood: int | None = None


@dataclass(slots=True)
class ChangeFact:
    """A Proposed or Approved change: what the scope rule, the application state and the
    approved variations (`registers.derive.counts_as_variation`) read."""

    id: Any
    summary: str
    status: str
    dimensions: list[Any]
    application_record: dict[str, Any] | None
    created_at: dt.datetime
    project_id: Any = None
    decided_at: dt.datetime | None = None
    impact_budget: Decimal | None = None
    impact_schedule_days: int | None = None
    impact_scope: str = ""


@dataclass(slots=True)
class DecisionFact:
    made_on: dt.date | None
    treated_risk_id: str | None
    project_id: Any = None


@dataclass(frozen=True)
class PackageSlip:
    """A package's slip in days against its own baseline end (its planned end before any
    approval, or when added after it), the end measured and what it is (actual, forecast or
    planned), and the end it is measured against and what that is."""

    id: Any
    name: str
    days: int
    end: dt.date
    source: str
    baseline_end: dt.date | None
    basis: str = BASIS_BASELINE


@dataclass
class ProjectFacts:
    """What the derivations of one project read. `status` is an unsaved default when the
    project has none yet; `case` is None for a never-saved business case. On the portfolio's
    path both are plain records with the models' attribute names (only the columns the
    derivations read). `untreated` lists the
    open materialised risks without a treating decision (id, title). `detailed` is True when the
    register rows were loaded too (a project's own status): they become the listed drivers."""

    project: Project
    status: ProjectStatus
    case: BusinessCase | None
    figures: Figures = field(default_factory=Figures)
    untreated: list[tuple[Any, str]] = field(default_factory=list)
    # The approved planBaseline, read by the loader: whether there is one, its version and its
    # latest plannedEndDate.
    has_plan_baseline: bool = False
    plan_baseline_version: Any = None
    plan_baseline_end: dt.date | None = None
    # When the plan baseline in force was approved.
    plan_baseline_approved_at: dt.datetime | None = None
    # The approved benefit the plan baseline froze (its totalBenefit): whether the baseline
    # recorded the key at all (baselines approved before it was frozen did not) and its amount
    # (None when the financial case stated none).
    plan_baseline_benefit_recorded: bool = False
    plan_baseline_benefit: Decimal | None = None
    detailed: bool = False
    # The plan baseline in force (the business case's planBaseline object), or None.
    plan_baseline: dict[str, Any] | None = None
    work_packages: list[WorkPackageFact] = field(default_factory=list)
    risks: list[RiskFact] = field(default_factory=list)
    changes: list[ChangeFact] = field(default_factory=list)

    @property
    def approval_status(self) -> str:
        return self.project.approval_status


# --- the figures, from the rows -------------------------------------------------------------


def _latest(days: Iterable[dt.date | None]) -> dt.date | None:
    return max((d for d in days if d is not None), default=None)


def _sum(amounts: Iterable[Decimal | None]) -> Decimal:
    return sum((a for a in amounts if a is not None), ZERO)


def package_slips(
    packages: Sequence[WorkPackageFact], plan: Mapping[str, Any] | None
) -> list[PackageSlip]:
    """Each package's slip against its own baseline end, as its register row, the timeline and
    the export show it (`registers.derive.package_schedule`), for the packages that have one."""
    slips = []
    for wp in packages:
        schedule = package_schedule(wp, plan)
        end = measured_end(wp)
        if schedule.variance_days is None or end is None:
            continue
        source = (
            "actual" if wp.actual_end_date else "forecast" if wp.forecast_end_date else "planned"
        )
        slips.append(
            PackageSlip(
                wp.id, wp.name, schedule.variance_days, end, source, schedule.end, schedule.basis
            )
        )
    return slips


def package_figures(
    packages: Sequence[WorkPackageFact], plan: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The work packages' counts, sums, ends and slips."""
    slips = package_slips(packages, plan)
    late = sorted((s for s in slips if s.days > 0), key=lambda s: (-s.days, s.name))
    return {
        "packages": len(packages),
        "complete": sum(1 for wp in packages if wp.status == "Complete"),
        "blocked": sum(1 for wp in packages if wp.status == "Blocked"),
        "unplanned": sum(
            1
            for wp in packages
            if wp.planned_start_date is None or wp.planned_end_date is None or wp.budget is None
        ),
        "with_budget_figures": sum(
            1
            for wp in packages
            if wp.budget is not None
            or wp.budget_baseline is not None
            or wp.budget_forecast is not None
        ),
        "budget_sum": _sum(wp.budget for wp in packages),
        "baseline_sum": _sum(wp.budget_baseline for wp in packages),
        "baselined_packages": sum(1 for wp in packages if wp.budget_baseline is not None),
        "forecast_sum": _sum(
            wp.budget_forecast if wp.budget_forecast is not None else wp.budget for wp in packages
        ),
        "latest_end": _latest(measured_end(wp) for wp in packages),
        "latest_planned_end": _latest(wp.planned_end_date for wp in packages),
        "latest_locked_end": _latest(
            wp.planned_end_date for wp in packages if wp.planned_dates_baseline_locked_at
        ),
        "worst_package_slip": max((s.days for s in slips), default=None),
        "late_packages": tuple(late),
    }


def is_open_risk(risk: RiskFact) -> bool:
    """A Risk item (not an opportunity) that is not Closed: what the risk figures, the risk
    dimension and a project's top risks count."""
    return risk.direction == "Risk" and risk.status != "Closed"


def risk_figures(risks: Sequence[RiskFact], thresholds: Mapping[str, Any]) -> dict[str, Any]:
    """Over the Risk items: how many, how many open, the top score of the open ones, and how
    many of those fall in each zone of the one score-to-colour rule (`governance.rag.risk_zone`)."""
    open_risks = [r for r in risks if is_open_risk(r)]
    zones = [risk_zone(r.score, thresholds) for r in open_risks]
    return {
        "risks": sum(1 for r in risks if r.direction == "Risk"),
        "open_risks": len(open_risks),
        "top_score": max((r.score for r in open_risks if r.score is not None), default=None),
        "red_risks": zones.count("Red"),
        "amber_risks": zones.count("Amber"),
        "unscored_risks": zones.count("None"),
    }


def untreated_risks(
    risks: Sequence[RiskFact], decisions: Sequence[DecisionFact]
) -> list[tuple[Any, str]]:
    """The open materialised risks no decision treats (id, title), by title."""
    treated = {d.treated_risk_id for d in decisions if d.treated_risk_id}
    return sorted(
        (
            (r.id, r.title)
            for r in risks
            if r.direction == "Risk"
            and r.materialised
            and r.status != "Closed"
            and str(r.id) not in treated
        ),
        key=lambda pair: pair[1],
    )


def change_figures(changes: Sequence[ChangeFact], now: dt.datetime) -> dict[str, Any]:
    """Over the Proposed and Approved changes: how many are open, the approved variations on
    top of the baseline in force (`registers.derive.variations`), how many await application
    (`application_state`) and the Scope changes waiting (`is_pending_scope`)."""
    counted = variations(changes)
    pending = [c.created_at for c in changes if is_pending_scope(c, now)]
    later = [
        c.created_at for c in changes if c.created_at > now and is_pending_scope(c, c.created_at)
    ]
    return {
        "open_changes": sum(1 for c in changes if c.status in ("Proposed", "Approved")),
        "variation_budget": counted.budget,
        "variation_days": counted.days,
        "budget_variations": counted.budget_changes,
        "awaiting_application": sum(
            1
            for c in changes
            if application_state(c.status, c.dimensions or [], c.application_record)
            == "AwaitingApplication"
        ),
        "pending_scope": len(pending),
        "oldest_pending_scope_at": min(pending, default=None),
        "next_pending_scope_at": min(later, default=None),
    }


def figures_of(
    *,
    packages: Sequence[WorkPackageFact],
    risks: Sequence[RiskFact],
    decisions: Sequence[DecisionFact],
    changes: Sequence[ChangeFact],
    plan: Mapping[str, Any] | None,
    thresholds: Mapping[str, Any],
    now: dt.datetime,
) -> Figures:
    """A project's `Figures` from its rows."""
    return Figures(
        **package_figures(packages, plan),
        **risk_figures(risks, thresholds),
        pending_decisions=sum(1 for d in decisions if d.made_on is None),
        **change_figures(changes, now),
    )


def plan_end(plan: Mapping[str, Any] | None) -> dt.date | None:
    """The latest plannedEndDate of the plan baseline's packages."""
    entries = baseline_entries(plan).values()
    ends = (iso_day(e.get("plannedEndDate")) for e in entries if isinstance(e, Mapping))
    return max((end for end in ends if end is not None), default=None)


def plan_benefit(plan: Mapping[str, Any] | None) -> tuple[bool, Decimal | None]:
    """The plan baseline's totalBenefit: whether the key was recorded, and the amount (None for
    null or anything that is not a finite number)."""
    if not plan or "totalBenefit" not in plan:
        return False, None
    value = plan["totalBenefit"]
    if not isinstance(value, int | float | Decimal | str):
        return True, None
    return True, finite_decimal(value.strip() if isinstance(value, str) else value)


def plan_version(plan: Mapping[str, Any] | None) -> Any:
    value = plan.get("version") if plan else None
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return value


# --- outputs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Driver:
    """One row behind a derived value: text, and the record it points at."""

    text: str
    type: str = ""
    id: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "type": self.type or None, "id": self.id or None}


@dataclass(frozen=True)
class Dimension:
    key: str
    rag: str
    summary: str
    drivers: tuple[Driver, ...] = ()
    figures: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self, *, rows: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {
            "rag": self.rag,
            "summary": self.summary,
            "figures": dict(self.figures),
        }
        if rows:
            body["drivers"] = [d.as_dict() for d in self.drivers]
        return body


@dataclass(frozen=True)
class StatusView:
    """The status of one project with everything derived from it."""

    facts: ProjectFacts
    dimensions: Mapping[str, Dimension]
    effective: Mapping[str, str]
    stale: bool
    next_update_due_at: dt.datetime | None
    realisation_review: dict[str, Any]
    figures: Mapping[str, Any]
    thresholds: Mapping[str, Any]
    now: dt.datetime
    # The approved and forecast benefit and the shortfall (`derive_benefit`).
    benefit: Mapping[str, Any] = field(default_factory=dict)
    # The project's earned value (`status.earned_value.ProjectEarnedValue`), attached by the
    # selectors (it reads the work packages' phasing, which the aggregate query does not).
    earned_value: Any = None

    @property
    def status(self) -> ProjectStatus:
        return self.facts.status

    @property
    def derived(self) -> dict[str, str]:
        return {f"{key}Rag": dim.rag for key, dim in self.dimensions.items()}

    @property
    def checklist(self) -> list[dict[str, Any]]:
        """The initiation checklist (of a project's own status, loaded with its details)."""
        return initiation_checklist(self.facts)

    @property
    def drivers(self) -> dict[str, dict[str, Any]]:
        """Per dimension ("costRag"...): its RAG, summary, drivers and figures."""
        return {f"{key}Rag": self.dimensions[key].as_dict() for key in DIMENSIONS}

    @property
    def earned_value_body(self) -> dict[str, Any] | None:
        """The earned value as answered: its figures, what is missing, a reading in words of
        each figure, and each work package's figures."""
        if self.earned_value is None:
            return None
        body: dict[str, Any] = self.earned_value.as_dict(packages=True)
        body["readings"] = readings(body)
        body["estimatesCompared"] = self.estimates_compared
        return body

    @property
    def estimates_compared(self) -> str | None:
        """The estimate at completion (the cost forecast, `figures["eac"]`) against earned
        value's cost-performance estimate (BAC / CPI), in words (`estimates_compared`)."""
        if self.earned_value is None:
            return None
        cost = self.dimensions["cost"].figures
        return estimates_compared(
            self.figures.get("eac"),
            cost.get("eacSource", ""),
            self.earned_value.total.figures.get("costPerformanceEstimate"),
        )


# --- formatting for drivers ---------------------------------------------------------------


def money(value: Decimal | int | None) -> str:
    """An amount in a sentence: `formatting.money`, "—" for none."""
    return formatting.money(value, empty="—")


def number(value: Any) -> str:
    """A threshold as people write it: 15, not 15.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _days(count: int) -> str:
    return plural(abs(count), "day")


def _ago(days: int) -> str:
    """How long ago, in words: "today", "yesterday", "12 days ago"."""
    if days <= 0:
        return "today"
    return "yesterday" if days == 1 else f"{days} days ago"


def _score_verb(count: int) -> str:
    return "scores" if count == 1 else "score"


def day(value: dt.date | None) -> str:
    return formatting.day(value)


def _limit(drivers: list[Driver], noun: str) -> tuple[Driver, ...]:
    if len(drivers) <= MAX_DRIVER_ROWS:
        return tuple(drivers)
    extra = len(drivers) - MAX_DRIVER_ROWS
    return (*drivers[:MAX_DRIVER_ROWS], Driver(f"and {plural(extra, noun)} more"))


def _threshold(thresholds: Mapping[str, Any], key: str) -> Decimal:
    return Decimal(str(thresholds[key]))


# --- cost ---------------------------------------------------------------------------------


def baselined(facts: ProjectFacts) -> bool:
    """Whether an approval froze the budgets: a plan baseline on the case, or (legacy) a frozen
    budgetBaseline on a work package."""
    return facts.has_plan_baseline or facts.figures.baselined_packages > 0


@dataclass(frozen=True)
class Overrun:
    """A cost overrun judged against the thresholds: its colour, the percentage as shown
    (rounded to the fewest places, at least one, at which it compares with every line as the
    exact value does), the exact sign, and the words naming the line that decides the colour
    (empty when under budget and Green)."""

    rag: str
    shown: Decimal
    sign: int
    line: str


def _compare(a: Decimal, b: Decimal) -> int:
    return (a > b) - (a < b)


def judge_overrun(eac: Decimal, approved: Decimal, thresholds: Mapping[str, Any]) -> Overrun:
    """The one judgement of cost: overrun % = (EAC - approved) / approved x 100, compared with
    the lines exactly (as (EAC - approved) x 100 against line x approved, no rounding), Green up
    to and on costGreenMaxPct, Amber up to and on costAmberMaxPct, else Red. The figure and the
    sentence print it with enough places that they never contradict the colour: 1,050.01
    against 1,000 is "5.001% over, above the Green line at 5%", Amber. The lines are named by
    the colour they bound, so that no page reads them as the business case's cost tolerance
    (`status.exceptions`: "the cost tolerance of 5%")."""
    green = _threshold(thresholds, "costGreenMaxPct")
    amber = _threshold(thresholds, "costAmberMaxPct")
    delta = (Decimal(eac) - Decimal(approved)) * 100
    approved = Decimal(approved)

    def against(line: Decimal) -> int:
        return _compare(delta, line * approved)

    to_green, to_amber = against(green), against(amber)
    rag = "Green" if to_green <= 0 else "Amber" if to_amber <= 0 else "Red"
    shown = _fewest_places(delta / approved, [(green, to_green), (amber, to_amber)])
    sign = _compare(delta, Decimal(0))

    def on(name: str, line: Decimal, side: int) -> str:
        # Named by the colour it bounds: a RAG line, never to be read as a tolerance.
        where = {-1: "within", 0: "exactly on", 1: "above"}[side]
        return f"{where} the {name} line at {formatting.percent_figure(line)}%"

    if rag == "Green":
        line = on("Green", green, to_green) if sign >= 0 or to_green == 0 else ""
    elif rag == "Amber":
        line = on("Green", green, 1) + (f", {on('Amber', amber, 0)}" if to_amber == 0 else "")
    else:
        line = on("Amber", amber, 1)
    return Overrun(rag, shown, sign, line)


def derive_cost(facts: ProjectFacts, thresholds: Mapping[str, Any]) -> Dimension:
    """EAC = revisedForecast if set, else the sum of budgetForecast (falling back to budget).
    Approved budget = sum of budgetBaseline (falling back to budget before approval) plus the
    approved budget variations. Overrun <= green max % is Green, <= amber max % Amber, else Red.
    """
    f = facts.figures
    revised = facts.status.revised_forecast
    is_baselined = baselined(facts)
    base = f.baseline_sum if is_baselined else f.budget_sum
    approved = base + f.variation_budget
    eac = revised if revised is not None else f.forecast_sum
    has_figures = revised is not None or f.with_budget_figures > 0
    figures: dict[str, Any] = {
        "eac": eac if has_figures else None,
        "eacSource": "revisedForecast" if revised is not None else "workPackages",
        "approvedBudget": approved if has_figures else None,
        "baselineBudget": base if has_figures else None,
        "baselined": is_baselined,
        "approvedVariations": f.variation_budget,
        "overrunPct": None,
    }
    if not has_figures:
        return Dimension("cost", "None", "No budget figures yet: nothing to judge.", (), figures)
    if approved <= 0:
        return Dimension(
            "cost",
            "None",
            f"No approved budget to judge against (forecast {money(eac)}).",
            (),
            figures,
        )
    judged = judge_overrun(eac, approved, thresholds)
    rag, overrun = judged.rag, judged.shown
    figures["overrunPct"] = overrun
    what = "The revised forecast (EAC)" if revised is not None else "The forecast (EAC)"
    budget = "approved budget" if is_baselined else "budget (not yet approved)"
    if f.variation_budget:
        more = "plus" if f.variation_budget > 0 else "less"
        budget_text = (
            f"the {budget} of {money(approved)} ({money(base)} {more} "
            f"{money(abs(f.variation_budget))} of approved changes)"
        )
    else:
        budget_text = f"the {budget} of {money(approved)}"
    shown = formatting.percent_figure(abs(overrun))
    if judged.sign > 0:
        summary = f"{what} {money(eac)} is {shown}% over {budget_text}"
    elif judged.sign < 0:
        summary = f"{what} {money(eac)} is {shown}% under {budget_text}"
    else:
        summary = f"{what} {money(eac)} matches {budget_text}"
    summary += f", {judged.line}." if judged.line else "."
    drivers: list[Driver] = []
    if revised is not None:
        drivers.append(
            Driver(
                f"The project manager's revised forecast {money(revised)} replaces the work "
                f"packages' forecast {money(f.forecast_sum)}."
            )
        )
    over = []
    for wp in facts.work_packages if facts.detailed else ():
        wp_base = wp.budget_baseline if is_baselined else wp.budget
        wp_forecast = wp.budget_forecast if wp.budget_forecast is not None else wp.budget
        if wp_forecast is None:
            continue
        delta = wp_forecast - (wp_base or 0)
        if delta > 0:
            label = "baseline" if is_baselined else "budget"
            text = (
                f"{wp.name} is forecast at {money(wp_forecast)}, {money(delta)} over its "
                f"{label} of {money(wp_base or 0)}."
            )
            over.append((delta, Driver(text, "workPackage", str(wp.id))))
    over.sort(key=lambda pair: (-pair[0], pair[1].text))
    drivers.extend(_limit([d for _, d in over], "work package"))
    if f.budget_variations and facts.detailed:
        verb = "add" if f.variation_budget >= 0 else "take"
        verb = verb + "s" if f.budget_variations == 1 else verb
        drivers.append(
            Driver(
                f"{plural(f.budget_variations, 'approved change')} {verb} "
                f"{money(abs(f.variation_budget))} {'to' if f.variation_budget >= 0 else 'off'} "
                "the budget."
            )
        )
    return Dimension("cost", rag, summary, tuple(drivers), figures)


# --- benefit --------------------------------------------------------------------------------


def _fewest_places(value: Decimal, lines: list[tuple[Decimal, int]]) -> Decimal:
    """`value` rounded half up to the fewest places, at least one, at which it compares with
    every line as the exact figure does (each line with its exact side: -1, 0, 1)."""
    shown = value
    for places in range(1, 16):
        shown = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        if all(_compare(shown, line) == side for line, side in lines):
            break
    return shown


def derive_benefit(facts: ProjectFacts) -> dict[str, Any]:
    """The benefit forecast against the approved benefit: approvedBenefit is the total benefit
    the plan baseline froze at approval, forecastBenefit the total benefit the financial case
    states now (`charter.finance.total_benefit`, the one reader of both), and
    benefitShortfallPct = (approved - forecast) / approved x 100: positive under the approved,
    zero or negative at or above it; None when either figure is missing or the approved is 0
    (`summary` says why). The percentage is printed with the fewest places, at least one, at
    which it compares with the benefit tolerance as the exact value does (the exception's
    comparison, `status.exceptions`, is exact)."""
    forecast = total_benefit(getattr(facts.case, "financial_case", None))
    recorded = facts.has_plan_baseline and facts.plan_baseline_benefit_recorded
    approved = facts.plan_baseline_benefit if recorded else None
    body: dict[str, Any] = {
        "approvedBenefit": approved,
        "forecastBenefit": forecast,
        "benefitShortfallPct": None,
        "approvedRecorded": recorded,
        "summary": "",
    }
    shown_forecast = f"Forecast benefit {money(forecast)}" if forecast is not None else ""
    if not facts.has_plan_baseline:
        if forecast is not None:
            body["summary"] = (
                f"{shown_forecast}: no approved plan baseline records an approved benefit to "
                "compare it with."
            )
        return body
    if not recorded:
        body["summary"] = (
            f"{shown_forecast or 'The forecast benefit'} is not compared: the approved benefit "
            "was not recorded at approval."
        )
        return body
    if approved is None:
        body["summary"] = (
            f"{shown_forecast or 'The forecast benefit'} is not compared: the financial case "
            "stated no total benefit at approval."
        )
        return body
    if forecast is None:
        body["summary"] = (
            f"The financial case states no total benefit now: nothing to compare with the "
            f"approved {money(approved)}."
        )
        return body
    if approved <= 0:
        body["summary"] = (
            f"{shown_forecast} is not compared: the approved benefit is {money(approved)}."
        )
        return body
    under = (approved - forecast) * 100
    tolerance = getattr(facts.case, "tolerance_benefit_percent", None)
    lines = [(Decimal(0), _compare(under, Decimal(0)))]
    if tolerance is not None:
        lines.append((Decimal(tolerance), _compare(under, Decimal(tolerance) * approved)))
    shortfall = _fewest_places(under / approved, lines)
    body["benefitShortfallPct"] = shortfall
    if under > 0:
        body["summary"] = (
            f"{shown_forecast} is {formatting.percent_figure(shortfall)}% under the approved "
            f"{money(approved)}."
        )
    elif under < 0:
        body["summary"] = (
            f"{shown_forecast} is {formatting.percent_figure(-shortfall)}% over the approved "
            f"{money(approved)}."
        )
    else:
        body["summary"] = f"{shown_forecast} matches the approved {money(approved)}."
    return body


# --- schedule -------------------------------------------------------------------------------


def baseline_end(facts: ProjectFacts) -> tuple[dt.date | None, str]:
    """The latest baselined plannedEndDate and where it comes from: the approved planBaseline;
    for a legacy-approved project, the packages whose planned dates were locked; before any
    approval, the latest plannedEndDate of the current plan."""
    if facts.has_plan_baseline:
        version = facts.plan_baseline_version
        label = f"approved plan (version {version})" if version else "approved plan"
        return facts.plan_baseline_end, label
    f = facts.figures
    if f.latest_locked_end:
        return f.latest_locked_end, "locked legacy baseline"
    return f.latest_planned_end, "current plan (no approved baseline yet)"


def _late_clause(late: Sequence[PackageSlip], variation_days: int) -> str:
    """The late packages named, the worst first, up to three, each by its slip against its own
    baseline (as its register row shows it), and the worst against the approved changes'
    days: "2 work packages are late (Build by 28 days, Migration by 7 days), the worst 18 days
    beyond the 10 days of approved changes"."""
    worst = late[0]
    if len(late) == 1:
        text = f"{worst.name} is {_days(worst.days)} late"
    else:
        named = [f"{s.name} by {_days(s.days)}" for s in late[:3]]
        if len(late) > 3:
            named.append(f"{len(late) - 3} more")
        text = f"{plural(len(late), 'work package')} are late ({', '.join(named)})"
    if variation_days:
        which = "" if len(late) == 1 else "the worst "
        beyond = worst.days - variation_days
        allowance = f"the {_days(variation_days)} of approved changes"
        if variation_days < 0:
            allowance = f"the approved changes taking {_days(variation_days)} off"
        if beyond > 0:
            text += f", {which}{_days(beyond)} beyond {allowance}"
        else:
            text += f", {which}within {allowance}"
    return text


def _package_driver(s: PackageSlip) -> Driver:
    verb = "ended" if s.source == "actual" else f"{s.source} to end"
    against = "baseline" if s.basis == BASIS_BASELINE else "planned"
    text = f"{s.name} is {_days(s.days)} late: {verb} on {day(s.end)}"
    text += f", against its {against} end {day(s.baseline_end)}." if s.baseline_end else "."
    return Driver(text, "workPackage", str(s.id))


def derive_schedule(facts: ProjectFacts, thresholds: Mapping[str, Any]) -> Dimension:
    """Two slips, in days, positive late. Each package's: its forecast (or actual) end against
    its own baseline end (`registers.derive.package_schedule`, as its register row shows it).
    The project's end: the latest package end against the end of the baseline plus the
    approved schedule variations. slipDays = the worse of the project's end slip and the worst
    package slip beyond the approved variations' days (they are the project's allowance, so a
    package late by no more than they add is within it), and never below 0 while a package is
    late: <= green max Green, <= amber max Amber, else Red; any Blocked package makes it at
    least Amber. The summary names the late packages in the same sentence as the project's
    end, which it then calls "within" its target, never "earlier": a project is never called
    early while a package is late."""
    f = facts.figures
    base_end, base_source = baseline_end(facts)
    blocked = sorted(
        (wp for wp in facts.work_packages if wp.status == "Blocked"), key=lambda wp: wp.name
    )
    blocked_drivers = [
        Driver(f"{wp.name} is blocked.", "workPackage", str(wp.id)) for wp in blocked
    ]
    late = f.late_packages
    figures: dict[str, Any] = {
        "slipDays": None,
        "endSlipDays": None,
        "worstPackageSlipDays": f.worst_package_slip,
        "latePackages": len(late),
        "latestEndDate": f.latest_end,
        "baselineEndDate": base_end,
        "baselineSource": base_source,
        "approvedVariationDays": f.variation_days,
        "blocked": f.blocked,
    }
    blocked_text = (
        f"{plural(f.blocked, 'work package')} {'is' if f.blocked == 1 else 'are'} blocked"
    )
    end_slip, target = None, None
    if f.latest_end is not None and base_end is not None:
        target = add_days(base_end, f.variation_days)
        end_slip = (f.latest_end - target).days
    package_slip = (
        f.worst_package_slip - f.variation_days if f.worst_package_slip is not None else None
    )
    slips = [s for s in (end_slip, package_slip) if s is not None]
    if late:
        slips.append(0)  # never early while a package is late
    if not slips:
        if f.blocked:
            return Dimension(
                "schedule",
                "Amber",
                f"No dated plan to measure slip against, and {blocked_text}.",
                _limit(blocked_drivers, "blocked work package"),
                figures,
            )
        return Dimension(
            "schedule",
            "None",
            "No planned or forecast end dates yet: nothing to judge.",
            (),
            figures,
        )
    slip = max(slips)
    figures["slipDays"] = slip
    figures["endSlipDays"] = end_slip
    if slip <= thresholds["scheduleGreenMaxDays"]:
        rag = "Green"
    elif slip <= thresholds["scheduleAmberMaxDays"]:
        rag = "Amber"
    else:
        rag = "Red"
    if f.blocked and rag == "Green":
        rag = "Amber"
    end_text = ""
    if end_slip is not None and target is not None and base_end is not None:
        target_text = f"the end of the {base_source}, {day(target)}"
        if f.variation_days:
            more = "plus" if f.variation_days > 0 else "less"
            target_text += (
                f" ({day(base_end)} {more} {_days(f.variation_days)} of approved changes)"
            )
        if end_slip > 0:
            how = f"{_days(end_slip)} later than"
        elif end_slip < 0:
            # With a package late the project is not early: its end is within the target.
            how = "within" if late else f"{_days(end_slip)} earlier than"
        else:
            how = "on"
        end_text = f"forecast end {day(f.latest_end)} is {how} {target_text}"
    if late:
        packages_text = _late_clause(late, f.variation_days)
        if not end_text:
            summary = f"{packages_text}."
        elif end_slip is not None and end_slip > 0:
            summary = f"The {end_text}, and {packages_text}."
        elif end_slip == 0:
            summary = f"The {end_text}, but {packages_text}."
        else:
            summary = f"{packages_text}; the {end_text}."
    elif end_text:
        summary = f"{end_text[:1].upper()}{end_text[1:]}."
    else:
        summary = "No work package is late against its plan; no project end to measure."
    if f.blocked:
        summary += f" {blocked_text[:1].upper()}{blocked_text[1:]}."
    drivers: list[Driver] = []
    if facts.detailed:
        drivers.extend(_limit([_package_driver(s) for s in late], "late work package"))
        latest = [wp for wp in facts.work_packages if measured_end(wp) == f.latest_end]
        for wp in sorted(latest, key=lambda wp: wp.name)[:1]:
            if any(s.id == wp.id for s in late):
                continue
            if wp.actual_end_date:
                verb = "ended"
            else:
                verb = "is forecast to end" if wp.forecast_end_date else "is planned to end"
            drivers.append(
                Driver(
                    f"{wp.name} {verb} on {day(f.latest_end)}, the latest of the plan.",
                    "workPackage",
                    str(wp.id),
                )
            )
        drivers.extend(_limit(blocked_drivers, "blocked work package"))
    return Dimension("schedule", rag, summary, tuple(drivers), figures)


# --- scope ----------------------------------------------------------------------------------


def is_pending_scope(change: ChangeFact, now: dt.datetime) -> bool:
    """A change with the Scope dimension that is Proposed or AwaitingApplication (raised by
    `now`)."""
    return (
        "Scope" in (change.dimensions or [])
        and change.created_at <= now
        and application_state(change.status, change.dimensions or [], change.application_record)
        in PENDING_SCOPE_STATES
    )


def derive_scope(facts: ProjectFacts, thresholds: Mapping[str, Any], now: dt.datetime) -> Dimension:
    """Green when no Scope change is Proposed or AwaitingApplication; Amber otherwise; Red when
    such a change has waited more than the threshold: measured from the moment it was raised,
    so "more than 30 days" turns Red the moment 30 days have passed; whole days are shown."""
    f = facts.figures
    red_after = thresholds["scopeRedAfterDays"]
    if not f.pending_scope:
        figures = {"pending": 0, "oldestWaitDays": None}
        if not f.packages and not f.open_changes:
            return Dimension(
                "scope",
                "None",
                "No work packages and no change requests yet: nothing to judge.",
                (),
                figures,
            )
        return Dimension(
            "scope", "Green", "No scope change is awaiting a decision or application.", (), figures
        )
    assert f.oldest_pending_scope_at is not None  # a pending scope change has its age
    waited_for = now - f.oldest_pending_scope_at
    oldest = waited_for.days
    rag = "Red" if waited_for > dt.timedelta(days=red_after) else "Amber"
    waited_text = (
        f"more than {_days(oldest)}" if rag == "Red" and oldest <= red_after else _days(oldest)
    )
    waiting = f"has waited {waited_text}" if oldest > 0 else "was raised today"
    are = "is" if f.pending_scope == 1 else "are"
    summary = (
        f"{plural(f.pending_scope, 'scope change')} {are} waiting for a decision or to be "
        f"applied; the oldest {waiting}. Scope turns Red after {number(red_after)} days."
    )
    waits = []
    for change in facts.changes if facts.detailed else ():
        if not is_pending_scope(change, now):
            continue
        waited = (now - change.created_at).days
        state = application_state(change.status, change.dimensions or [], change.application_record)
        label = "awaits a decision" if state == "Proposed" else "is approved and awaits application"
        text = f"{change.summary} {label}; raised {_ago(waited)}."
        waits.append((waited, Driver(text, "change", str(change.id))))
    waits.sort(key=lambda pair: (-pair[0], pair[1].text))
    figures = {"pending": f.pending_scope, "oldestWaitDays": oldest}
    return Dimension("scope", rag, summary, _limit([d for _, d in waits], "scope change"), figures)


# --- risk -----------------------------------------------------------------------------------


def score(risk: RiskFact) -> int | None:
    """The judged (residual) score: residual impact x likelihood when both are assessed, else
    the inherent impact x likelihood (registers.models.RISK_SCORE)."""
    return risk.score


def actual_cost_recorded(facts: ProjectFacts) -> Decimal | None:
    """The actual cost the work packages record, summed (None when none records one): the
    figure the overview and the steering pack both show as "actual"."""
    actuals = [wp.budget_actual for wp in facts.work_packages if wp.budget_actual is not None]
    return sum(actuals, Decimal(0)) if actuals else None


def inherent_score(risk: RiskFact) -> int | None:
    """Impact x likelihood before treatment, else None."""
    return risk.impact * risk.likelihood if risk.impact and risk.likelihood else None


def scores_in_words(risk: RiskFact) -> str:
    """A risk's scores, each by its name: "residual score 6 (inherent 16)", or "inherent score
    12 (no residual assessed)" where the judged score falls back to the inherent one."""
    inherent = inherent_score(risk)
    judged = residual_score(risk)
    if judged is not None:
        return f"residual score {judged}" + (f" (inherent {inherent})" if inherent else "")
    return f"inherent score {inherent} (no residual assessed)"


def derive_risk(facts: ProjectFacts, thresholds: Mapping[str, Any]) -> Dimension:
    """Over open Risk items, the residual score = residual impact x likelihood when both are
    set, else the inherent impact x likelihood. Red when the highest residual score is in the
    Red zone (`risk_zone`: from the red min) or a materialised risk has no treating decision;
    Amber when it is in the Amber zone; else Green."""
    f = facts.figures
    red_min, amber_min = thresholds["riskRedMinScore"], thresholds["riskAmberMinScore"]
    figures = {"topScore": f.top_score, "untreatedMaterialised": len(facts.untreated)}
    if not f.open_risks:
        return Dimension("risk", "None", "No open risks recorded: nothing to judge.", (), figures)
    top = f.top_score
    zone = risk_zone(top, thresholds)
    if facts.untreated or zone == "Red":
        rag = "Red"
    elif zone == "Amber":
        rag = "Amber"
    else:
        rag = "Green"
    if top is not None:
        parts = [
            f"{plural(f.open_risks, 'open risk')}; the highest residual score is {top} "
            "(residual where assessed, else inherent)."
        ]
    else:
        parts = [f"{plural(f.open_risks, 'open risk')}, none scored yet."]
    if f.red_risks:
        parts.append(f"{f.red_risks} {_score_verb(f.red_risks)} {number(red_min)} or more.")
    if f.amber_risks:
        parts.append(
            f"{f.amber_risks} {_score_verb(f.amber_risks)} from {number(amber_min)} "
            f"to below {number(red_min)}."
        )
    if facts.untreated:
        parts.append(
            f"{plural(len(facts.untreated), 'materialised risk')} "
            f"{'has' if len(facts.untreated) == 1 else 'have'} no treating decision."
        )
    if f.unscored_risks and top is not None:
        parts.append(f"{f.unscored_risks} {'is' if f.unscored_risks == 1 else 'are'} not scored.")
    drivers = [
        Driver(f"{title} has happened and has no treating decision.", "risk", str(risk_id))
        for risk_id, title in sorted(facts.untreated, key=lambda pair: pair[1])
    ]
    high: list[tuple[int, RiskFact]] = []
    held: list[tuple[int, RiskFact]] = []
    for r in facts.risks if facts.detailed else ():
        judged = score(r)
        if not is_open_risk(r) or judged is None:
            continue
        inherent = inherent_score(r)
        if risk_zone(judged, thresholds) in ("Red", "Amber"):
            high.append((judged, r))
        elif inherent is not None and risk_zone(inherent, thresholds) in ("Red", "Amber"):
            held.append((inherent, r))  # treated down out of the Amber and Red zones
    high.sort(key=lambda pair: (-pair[0], pair[1].title))
    held.sort(key=lambda pair: (-pair[0], pair[1].title))
    drivers.extend(Driver(f"{r.title}: {scores_in_words(r)}.", "risk", str(r.id)) for _, r in high)
    drivers.extend(
        Driver(
            f"{r.title}: {scores_in_words(r)}; its treatment holds it below {number(amber_min)}.",
            "risk",
            str(r.id),
        )
        for _, r in held
    )
    return Dimension("risk", rag, " ".join(parts), _limit(drivers, "risk"), figures)


# --- Blue, overrides, confidence, staleness -------------------------------------------------


def finished(facts: ProjectFacts) -> str | None:
    """Why the derived RAG is Blue (delivery is over), or None."""
    if facts.approval_status in CLOSED_OR_LATER:
        return f"The business case is {labels.label(facts.approval_status).lower()}"
    f = facts.figures
    if f.packages and f.complete == f.packages:
        return f"All {plural(f.packages, 'work package')} are Complete"
    return None


def _blue(dimension: Dimension, reason: str) -> Dimension:
    return Dimension(
        dimension.key,
        "Blue",
        f"{reason}: delivery is over. {dimension.summary}",
        dimension.drivers,
        dimension.figures,
    )


def derive_dimensions(
    facts: ProjectFacts, thresholds: Mapping[str, Any], now: dt.datetime
) -> dict[str, Dimension]:
    dimensions = {
        "cost": derive_cost(facts, thresholds),
        "schedule": derive_schedule(facts, thresholds),
        "scope": derive_scope(facts, thresholds, now),
        "risk": derive_risk(facts, thresholds),
    }
    reason = finished(facts)
    if reason:
        dimensions = {key: _blue(dim, reason) for key, dim in dimensions.items()}
    return dimensions


def override(status: ProjectStatus, key: str) -> str | None:
    """A stored override outside the enum reads as null (use the derived value)."""
    value = getattr(status, f"{key}_rag_override")
    return coerce_enum(value if isinstance(value, str) else None, RAG_CHOICES, fallback=None)


def effective(status: ProjectStatus, dimensions: Mapping[str, Dimension]) -> dict[str, str]:
    """The override when set, else the derived value."""
    return {f"{key}Rag": override(status, key) or dimensions[key].rag for key in DIMENSIONS}


def confidence(value: str | None) -> str:
    """outcomeConfidence and adoptionConfidence read as Unknown when missing."""
    read = coerce_enum(value if isinstance(value, str) else None, CONFIDENCES, fallback="Unknown")
    return read or "Unknown"


def next_update_due(status: ProjectStatus) -> dt.datetime | None:
    if status.last_updated_at is None:
        return None
    days = CADENCE_DAYS.get(status.reporting_cadence, CADENCE_DAYS["Monthly"])
    return status.last_updated_at + dt.timedelta(days=days)


def is_stale(status: ProjectStatus, now: dt.datetime) -> bool:
    """Stale when lastUpdatedAt is older than the reporting cadence (Daily 1 day, Weekly 7,
    Monthly 31), and when the status was never updated at all."""
    due = next_update_due(status)
    return due is None or now > due


# --- realisation review ---------------------------------------------------------------------


def add_months(day: dt.date, months: int) -> dt.date:
    month_index = day.month - 1 + months
    year, month = day.year + month_index // 12, month_index % 12 + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def realisation_review(
    facts: ProjectFacts, br_cadence_default: str, today: dt.date
) -> dict[str, Any]:
    return review_due(facts.status, facts.case, facts.approval_status, br_cadence_default, today)


def review_due(
    status: ProjectStatus,
    case: BusinessCase | None,
    approval_status: str,
    br_cadence_default: str,
    today: dt.date,
) -> dict[str, Any]:
    """While the case is InRealisation: lastRealisationReviewAt (or realisationStartedAt) plus
    brCadence (the project's override, else the site default). The one computation of the
    next benefit review: the status page, the portfolio and the realisation page show it."""
    cadence = status.br_cadence
    source = "project"
    if cadence not in BR_CADENCE_MONTHS:
        cadence, source = br_cadence_default, "site"
    last = case.last_realisation_review_at if case is not None else None
    started = case.realisation_started_at if case is not None else None
    base = last or started
    due = None
    if approval_status == "InRealisation" and base is not None:
        due = add_months(timezone.localdate(base), BR_CADENCE_MONTHS.get(cadence, 3))
    return {
        "cadence": cadence,
        "cadenceSource": source,
        "lastReviewAt": last,
        "startedAt": started,
        "dueOn": due,
        "overdue": bool(due and due < today),
    }


# --- initiation checklist -------------------------------------------------------------------

CHECKLIST = [
    ("sponsorNamed", "Sponsor named (decision authority)"),
    ("projectManagerNamed", "Project manager named"),
    ("steeringCommitteeFormed", "Steering committee formed"),
    ("firstSteercoScheduled", "First steering committee scheduled"),
    ("firstSteercoHeld", "First steering committee held"),
    ("risksIdentified", "Risks identified"),
    ("workPackagesPlanned", "Work packages planned with dates and budgets"),
    ("businessCaseApproved", "Business case approved"),
]
CHECKLIST_IDS = [item_id for item_id, _ in CHECKLIST]


def _checks(facts: ProjectFacts) -> dict[str, tuple[bool, str]]:
    case, f = facts.case, facts.figures
    sponsor = bool(case is not None and case.decision_authority)
    manager = bool(case is not None and case.project_manager)
    members = len(case.steering_committee or []) if case is not None else 0
    scheduled = case.first_steerco_scheduled_for if case is not None else None
    held = case.first_steerco_held_at if case is not None else None
    if not f.packages:
        planned = (False, "No work packages yet.")
    elif f.unplanned:
        names = sorted(
            wp.name
            for wp in facts.work_packages
            if not (wp.planned_start_date and wp.planned_end_date and wp.budget is not None)
        )
        listed = f": {', '.join(names[:3])}{'…' if len(names) > 3 else ''}" if names else ""
        planned = (
            False,
            f"{plural(f.unplanned, 'work package')} without planned dates or a budget{listed}",
        )
    else:
        planned = (True, f"{plural(f.packages, 'work package')} planned.")
    return {
        "sponsorNamed": (sponsor, "Named in the business case." if sponsor else "Not named."),
        "projectManagerNamed": (
            manager,
            "Named in the business case." if manager else "Not named.",
        ),
        "steeringCommitteeFormed": (
            members > 0,
            f"{plural(members, 'member')}." if members else "No members yet.",
        ),
        "firstSteercoScheduled": (
            bool(scheduled or held),
            f"Scheduled for {day(scheduled)}."
            if scheduled
            else f"Held {day(timezone.localdate(held))}."
            if held
            else "Not scheduled.",
        ),
        "firstSteercoHeld": (
            bool(held),
            f"Held {day(timezone.localdate(held))}." if held else "Not held yet.",
        ),
        "risksIdentified": (
            f.risks > 0,
            f"{plural(f.risks, 'risk')} recorded." if f.risks else "No risks yet.",
        ),
        "workPackagesPlanned": planned,
        "businessCaseApproved": (
            facts.approval_status in APPROVED_OR_LATER,
            f"The business case is {labels.label(facts.approval_status).lower()}.",
        ),
    }


def initiation_checklist(facts: ProjectFacts) -> list[dict[str, Any]]:
    """The items computed from the data, each with its dismissal timestamp when dismissed."""
    checks = _checks(facts)
    dismissals = facts.status.initiation_dismissals or {}
    return [
        {
            "id": item_id,
            "label": label,
            "done": checks[item_id][0],
            "detail": checks[item_id][1],
            "dismissedAt": dismissals.get(item_id),
        }
        for item_id, label in CHECKLIST
    ]


# --- everything for one project -------------------------------------------------------------


def derive(
    facts: ProjectFacts,
    *,
    thresholds: Mapping[str, Any],
    br_cadence_default: str,
    now: dt.datetime | None = None,
) -> StatusView:
    now = now or timezone.now()
    dimensions = derive_dimensions(facts, thresholds, now)
    f = facts.figures
    case = facts.case if facts.case is not None else BusinessCase(project=facts.project)
    cost = dimensions["cost"].figures
    figures = {
        "approvedBudget": cost["approvedBudget"],
        "eac": cost["eac"],
        "costOverrunPct": cost["overrunPct"],
        "scheduleSlipDays": dimensions["schedule"].figures["slipDays"],
        "topRiskScore": f.top_score,
        "pendingDecisions": f.pending_decisions,
        "changesAwaitingApplication": f.awaiting_application,
        "adoptionGap": adoption_gap(case),
        "theme": case.theme or "",
        "version": case.version,
    }
    return StatusView(
        facts=facts,
        dimensions=dimensions,
        effective=effective(facts.status, dimensions),
        stale=is_stale(facts.status, now),
        next_update_due_at=next_update_due(facts.status),
        realisation_review=realisation_review(facts, br_cadence_default, timezone.localdate(now)),
        figures=figures,
        thresholds=dict(thresholds),
        now=now,
        benefit=derive_benefit(facts),
    )


def valid_until(view: StatusView) -> dt.datetime:
    """The first moment at which the time-dependent rules may answer differently from `view`
    for the same facts: the end of the local day of `view.now` (dates: the realisation review
    falls overdue, and nothing derived is kept into another day), the next update falling due
    (staleness), and for the scope wait: its next whole day, the Red threshold and a Scope
    change raised later than `now` starting to wait. Until then `derive` returns the same
    values for any moment; each bound errs early, never late."""
    now = view.now
    tomorrow = timezone.localdate(now) + dt.timedelta(days=1)
    moments = [timezone.make_aware(dt.datetime.combine(tomorrow, dt.time.min))]
    due = view.next_update_due_at
    if due is not None and not view.stale:
        moments.append(due)
    f = view.facts.figures
    if f.pending_scope and f.oldest_pending_scope_at is not None:
        oldest = f.oldest_pending_scope_at
        waited = now - oldest
        moments.append(oldest + dt.timedelta(days=waited.days + 1))
        red_at = oldest + dt.timedelta(days=view.thresholds["scopeRedAfterDays"])
        if red_at >= now:
            moments.append(red_at)
    if f.next_pending_scope_at is not None and f.next_pending_scope_at > now:
        moments.append(f.next_pending_scope_at)
    return min(moments)


def rag_severity(value: str | None) -> int:
    return RAG_SEVERITY.get(value or "None", RAG_SEVERITY["None"])
