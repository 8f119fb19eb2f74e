"""Every derived value of project status, computed here once and shown the same on the status
page, in published reports, on the portfolio and in the API (PRODUCT.md section 3):

- the derived cost, schedule, scope and risk RAG, each with its drivers (the rows and figures
  that made it what it is) and the effective value (the override when set, else derived);
- staleness against the reporting cadence;
- the initiation checklist;
- the realisation review due date from brCadence (else the site default);
- the portfolio figures (approved budget, EAC, slip, top risk score, pending decisions,
  changes awaiting application, adoption gap).

The functions are pure: they read `ProjectFacts` (loaded in bulk by `selectors.load_facts`)
and the thresholds, and take `now` so that tests and reports can pin the clock.
"""

import calendar
import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.utils import timezone

from charter.derive import CLOSED_OR_LATER, adoption_gap
from charter.models import BusinessCase
from governance.cleaning import coerce_enum
from governance.models import RAG_CHOICES, Project
from governance.status.models import CONFIDENCES, DIMENSIONS, ProjectStatus
from registers.derive import application_state, decision_state, risk_score

DIMENSION_LABELS = {"cost": "Cost", "schedule": "Schedule", "scope": "Scope", "risk": "Risk"}
# How long a status stays current (PRODUCT.md section 3).
CADENCE_DAYS = {"Daily": 1, "Weekly": 7, "Monthly": 31}
BR_CADENCE_MONTHS = {"Monthly": 1, "Quarterly": 3, "Annual": 12}
APPROVED_OR_LATER = frozenset({"Approved", "ClosingSubmitted"}) | CLOSED_OR_LATER
# Severity order for sorting and trends: the worst first.
RAG_SEVERITY = {"Red": 0, "Amber": 1, "Green": 2, "Blue": 3, "None": 4}
MAX_DRIVER_ROWS = 5
PENDING_SCOPE_STATES = ("Proposed", "AwaitingApplication")


# --- inputs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkPackageFact:
    id: Any
    name: str
    status: str
    budget: Decimal | None
    budget_baseline: Decimal | None
    budget_forecast: Decimal | None
    planned_start_date: dt.date | None
    planned_end_date: dt.date | None
    forecast_end_date: dt.date | None
    planned_dates_baseline_locked_at: dt.datetime | None


@dataclass(frozen=True)
class RiskFact:
    id: Any
    title: str
    status: str
    direction: str
    materialised: bool
    impact: int | None
    likelihood: int | None
    residual_impact: int | None
    residual_likelihood: int | None


@dataclass(frozen=True)
class ChangeFact:
    id: Any
    summary: str
    status: str
    dimensions: list
    application_record: dict | None
    created_at: dt.datetime
    impact_budget: Decimal | None
    impact_schedule_days: int | None


@dataclass(frozen=True)
class DecisionFact:
    made_on: dt.date | None
    treated_risk_id: str | None


@dataclass
class ProjectFacts:
    """Everything the derivations of one project read. `status` is an unsaved default when the
    project has none yet; `case` is None for a never-saved business case. `changes` holds the
    Proposed and Approved change requests (the others never count)."""

    project: Project
    status: ProjectStatus
    case: BusinessCase | None
    work_packages: list[WorkPackageFact] = field(default_factory=list)
    risks: list[RiskFact] = field(default_factory=list)
    changes: list[ChangeFact] = field(default_factory=list)
    decisions: list[DecisionFact] = field(default_factory=list)

    @property
    def approval_status(self) -> str:
        return self.project.approval_status


# --- outputs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Driver:
    """One row or figure behind a derived value: text, and the record it points at."""

    text: str
    type: str = ""
    id: str = ""

    def as_dict(self) -> dict:
        return {"text": self.text, "type": self.type or None, "id": self.id or None}


@dataclass(frozen=True)
class Dimension:
    key: str
    rag: str
    summary: str
    drivers: tuple[Driver, ...] = ()
    figures: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "rag": self.rag,
            "summary": self.summary,
            "drivers": [d.as_dict() for d in self.drivers],
            "figures": dict(self.figures),
        }


@dataclass(frozen=True)
class StatusView:
    """The status of one project with everything derived from it."""

    facts: ProjectFacts
    dimensions: Mapping[str, Dimension]
    effective: Mapping[str, str]
    stale: bool
    next_update_due_at: dt.datetime | None
    checklist: list[dict]
    realisation_review: dict
    figures: Mapping[str, Any]
    thresholds: Mapping[str, Any]
    now: dt.datetime

    @property
    def status(self) -> ProjectStatus:
        return self.facts.status

    @property
    def derived(self) -> dict[str, str]:
        return {f"{key}Rag": dim.rag for key, dim in self.dimensions.items()}


# --- number formatting for drivers ----------------------------------------------------------


def money(value: Decimal | int | None) -> str:
    if value is None:
        return "—"
    value = Decimal(value)
    if value == value.to_integral_value():
        return f"{int(value):,}"
    return f"{value:,.2f}"


def number(value: Any) -> str:
    """A threshold as people write it: 15, not 15.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def signed_percent(value: Decimal) -> str:
    rounded = value.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    text = f"{rounded:f}".rstrip("0").rstrip(".") if "." in f"{rounded:f}" else f"{rounded:f}"
    if text in ("-0", "0"):
        return "0 %"
    return f"{'+' if rounded > 0 else ''}{text} %"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _limit(drivers: list[Driver], noun: str) -> tuple[Driver, ...]:
    if len(drivers) <= MAX_DRIVER_ROWS:
        return tuple(drivers)
    extra = len(drivers) - MAX_DRIVER_ROWS
    return (*drivers[:MAX_DRIVER_ROWS], Driver(f"and {_plural(extra, noun)} more"))


def _threshold(thresholds: Mapping[str, Any], key: str) -> Decimal:
    return Decimal(str(thresholds[key]))


# --- the four dimensions --------------------------------------------------------------------


def approved_variations(changes: Iterable[ChangeFact]) -> tuple[Decimal, int]:
    """Sums of impactBudget and impactScheduleDays over Approved changes: the same sums as
    `registers.derive.approved_variations`, over rows already loaded in bulk."""
    budget, days = Decimal("0"), 0
    for change in changes:
        if change.status == "Approved":
            budget += change.impact_budget or 0
            days += change.impact_schedule_days or 0
    return budget, days


def _baselined(facts: ProjectFacts) -> bool:
    """Whether an approval froze the budgets: a plan baseline on the case, or (legacy) any
    frozen budgetBaseline on a work package."""
    if facts.case is not None and facts.case.plan_baseline:
        return True
    return any(wp.budget_baseline is not None for wp in facts.work_packages)


def derive_cost(facts: ProjectFacts, thresholds: Mapping[str, Any]) -> Dimension:
    """EAC = revisedForecast if set, else the sum of budgetForecast (falling back to budget).
    Approved budget = sum of budgetBaseline (falling back to budget before approval) plus the
    approved budget variations. Overrun <= green max % is Green, <= amber max % Amber, else Red.
    """
    wps = facts.work_packages
    variation_budget, _ = approved_variations(facts.changes)
    revised = facts.status.revised_forecast
    baselined = _baselined(facts)
    if baselined:
        base = sum((wp.budget_baseline or Decimal("0") for wp in wps), Decimal("0"))
    else:
        base = sum((wp.budget or Decimal("0") for wp in wps), Decimal("0"))
    approved = base + variation_budget
    forecast_sum = sum(
        (
            wp.budget_forecast if wp.budget_forecast is not None else (wp.budget or Decimal("0"))
            for wp in wps
        ),
        Decimal("0"),
    )
    eac = revised if revised is not None else forecast_sum
    has_figures = revised is not None or any(
        wp.budget is not None or wp.budget_forecast is not None or wp.budget_baseline is not None
        for wp in wps
    )
    figures = {
        "eac": eac if has_figures else None,
        "eacSource": "revisedForecast" if revised is not None else "workPackages",
        "approvedBudget": approved if has_figures else None,
        "baselineBudget": base if has_figures else None,
        "baselined": baselined,
        "approvedVariations": variation_budget,
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
    overrun = (eac - approved) / approved * 100
    figures["overrunPct"] = overrun.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    if overrun <= _threshold(thresholds, "costGreenMaxPct"):
        rag = "Green"
    elif overrun <= _threshold(thresholds, "costAmberMaxPct"):
        rag = "Amber"
    else:
        rag = "Red"
    sign = "+" if variation_budget >= 0 else "-"
    what = "revised forecast" if revised is not None else "forecast"
    base_label = "approved" if baselined else "budgeted (not yet approved)"
    summary = (
        f"{what} {money(eac)} vs {base_label} {money(base)} {sign} "
        f"{money(abs(variation_budget))} variations: {signed_percent(overrun)}"
    )
    drivers: list[Driver] = []
    if revised is not None:
        drivers.append(
            Driver(
                f"The project manager's revised forecast {money(revised)} replaces the work "
                f"packages' forecast {money(forecast_sum)}."
            )
        )
    over = []
    for wp in wps:
        wp_base = wp.budget_baseline if baselined else wp.budget
        wp_forecast = wp.budget_forecast if wp.budget_forecast is not None else wp.budget
        if wp_forecast is None:
            continue
        delta = wp_forecast - (wp_base or 0)
        if delta > 0:
            label = "baseline" if baselined else "budget"
            over.append(
                (
                    delta,
                    Driver(
                        f"{wp.name}: forecast {money(wp_forecast)} vs {label} "
                        f"{money(wp_base or 0)} (+{money(delta)})",
                        "workPackage",
                        str(wp.id),
                    ),
                )
            )
    over.sort(key=lambda pair: (-pair[0], pair[1].text))
    drivers.extend(_limit([d for _, d in over], "work package"))
    approved_changes = [c for c in facts.changes if c.status == "Approved" and c.impact_budget]
    if approved_changes:
        drivers.append(
            Driver(
                f"{_plural(len(approved_changes), 'approved change')} "
                f"{'varies' if len(approved_changes) == 1 else 'vary'} the budget by "
                f"{'+' if variation_budget >= 0 else '-'}{money(abs(variation_budget))}."
            )
        )
    return Dimension("cost", rag, summary, tuple(drivers), figures)


def baseline_end(facts: ProjectFacts) -> tuple[dt.date | None, str]:
    """The latest baselined plannedEndDate and where it comes from: the approved planBaseline;
    for a legacy-approved project, the packages whose planned dates were locked; before any
    approval, the latest plannedEndDate of the current plan."""
    baseline = facts.case.plan_baseline if facts.case is not None else None
    if baseline:
        ends = []
        for entry in (baseline.get("workPackages") or {}).values():
            raw = (entry or {}).get("plannedEndDate")
            if raw:
                try:
                    ends.append(dt.date.fromisoformat(str(raw)[:10]))
                except ValueError:
                    continue
        version = baseline.get("version")
        return (max(ends) if ends else None), (
            f"approved plan (version {version})" if version else "approved plan"
        )
    locked = [
        wp.planned_end_date
        for wp in facts.work_packages
        if wp.planned_dates_baseline_locked_at and wp.planned_end_date
    ]
    if locked:
        return max(locked), "locked legacy baseline"
    planned = [wp.planned_end_date for wp in facts.work_packages if wp.planned_end_date]
    return (max(planned) if planned else None), "current plan (no approved baseline yet)"


def _days(count: int) -> str:
    return _plural(abs(count), "day")


def derive_schedule(facts: ProjectFacts, thresholds: Mapping[str, Any]) -> Dimension:
    """slip = latest forecastEndDate (falling back to plannedEndDate) minus (latest baselined
    plannedEndDate + approved schedule variations), in days. <= green max Green, <= amber max
    Amber, else Red; any Blocked package makes it at least Amber."""
    _, variation_days = approved_variations(facts.changes)
    latest: tuple[dt.date, WorkPackageFact] | None = None
    for wp in facts.work_packages:
        end = wp.forecast_end_date or wp.planned_end_date
        if end and (
            latest is None or end > latest[0] or (end == latest[0] and wp.name < latest[1].name)
        ):
            latest = (end, wp)
    base_end, base_source = baseline_end(facts)
    blocked = sorted(
        (wp for wp in facts.work_packages if wp.status == "Blocked"), key=lambda wp: wp.name
    )
    blocked_drivers = [
        Driver(f"{wp.name} is Blocked.", "workPackage", str(wp.id)) for wp in blocked
    ]
    figures: dict[str, Any] = {
        "slipDays": None,
        "latestEndDate": latest[0] if latest else None,
        "baselineEndDate": base_end,
        "baselineSource": base_source,
        "approvedVariationDays": variation_days,
        "blocked": len(blocked),
    }
    if latest is None or base_end is None:
        if blocked:
            return Dimension(
                "schedule",
                "Amber",
                f"No dated plan to measure slip, and {_plural(len(blocked), 'work package')} "
                f"{'is' if len(blocked) == 1 else 'are'} Blocked.",
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
    target = base_end + dt.timedelta(days=variation_days)
    slip = (latest[0] - target).days
    figures["slipDays"] = slip
    if slip <= thresholds["scheduleGreenMaxDays"]:
        rag = "Green"
    elif slip <= thresholds["scheduleAmberMaxDays"]:
        rag = "Amber"
    else:
        rag = "Red"
    if blocked and rag == "Green":
        rag = "Amber"
    if slip > 0:
        verdict = f"{_days(slip)} late"
    elif slip < 0:
        verdict = f"{_days(slip)} early"
    else:
        verdict = "on time"
    sign = "+" if variation_days >= 0 else "-"
    summary = (
        f"latest end {latest[0].isoformat()} vs {base_source} end {base_end.isoformat()} "
        f"{sign} {_days(variation_days)} variations: {verdict}"
    )
    wp = latest[1]
    source = "forecast" if wp.forecast_end_date else "planned"
    drivers = [
        Driver(f"{wp.name}: {source} end {latest[0].isoformat()}", "workPackage", str(wp.id))
    ]
    drivers.extend(_limit(blocked_drivers, "blocked work package"))
    if blocked:
        summary += f"; {_plural(len(blocked), 'work package')} Blocked"
    return Dimension("schedule", rag, summary, tuple(drivers), figures)


def pending_scope_changes(facts: ProjectFacts, now: dt.datetime | None = None) -> list[ChangeFact]:
    """Changes with the Scope dimension that are Proposed or AwaitingApplication (and, for a
    derivation as of `now`, raised by then)."""
    return [
        c
        for c in facts.changes
        if "Scope" in (c.dimensions or [])
        and (now is None or c.created_at <= now)
        and application_state(c.status, c.dimensions or [], c.application_record)
        in PENDING_SCOPE_STATES
    ]


def derive_scope(facts: ProjectFacts, thresholds: Mapping[str, Any], now: dt.datetime) -> Dimension:
    """Green when no Scope change is Proposed or AwaitingApplication; Amber otherwise; Red when
    such a change has waited more than the threshold (whole days since it was raised)."""
    today = timezone.localdate(now)
    pending = pending_scope_changes(facts, now)
    red_after = thresholds["scopeRedAfterDays"]
    if not pending:
        if not facts.work_packages and not facts.changes:
            return Dimension(
                "scope",
                "None",
                "No work packages and no change requests yet: nothing to judge.",
                (),
                {"pending": 0, "oldestWaitDays": None},
            )
        return Dimension(
            "scope",
            "Green",
            "No scope change is awaiting a decision or application.",
            (),
            {"pending": 0, "oldestWaitDays": None},
        )
    waits = []
    for change in pending:
        waited = (today - timezone.localdate(change.created_at)).days
        state = application_state(change.status, change.dimensions or [], change.application_record)
        label = "awaiting a decision" if state == "Proposed" else "approved, awaiting application"
        waits.append(
            (
                waited,
                Driver(
                    f"{change.summary}: {label}, raised {_days(waited)} ago",
                    "change",
                    str(change.id),
                ),
            )
        )
    waits.sort(key=lambda pair: (-pair[0], pair[1].text))
    oldest = waits[0][0]
    rag = "Red" if oldest > red_after else "Amber"
    summary = (
        f"{_plural(len(pending), 'scope change')} pending; the oldest has waited {_days(oldest)}"
        f" (Red after {number(red_after)} days)"
    )
    return Dimension(
        "scope",
        rag,
        summary,
        _limit([d for _, d in waits], "scope change"),
        {"pending": len(pending), "oldestWaitDays": oldest},
    )


def open_risks(facts: ProjectFacts) -> list[RiskFact]:
    """Open items (anything not Closed) with direction Risk."""
    return [r for r in facts.risks if r.status != "Closed" and r.direction == "Risk"]


def _score(risk: RiskFact) -> int | None:
    return risk_score(risk.impact, risk.likelihood, risk.residual_impact, risk.residual_likelihood)


def treated_risk_ids(facts: ProjectFacts) -> set[str]:
    return {str(d.treated_risk_id) for d in facts.decisions if d.treated_risk_id}


def derive_risk(facts: ProjectFacts, thresholds: Mapping[str, Any]) -> Dimension:
    """Over open Risk items, score = residual impact x likelihood when both are set, else
    impact x likelihood. Red when any score >= red min or a materialised risk has no treating
    decision; Amber when any score >= amber min; else Green."""
    risks = open_risks(facts)
    red_min, amber_min = thresholds["riskRedMinScore"], thresholds["riskAmberMinScore"]
    if not risks:
        return Dimension(
            "risk", "None", "No open risks recorded: nothing to judge.", (), {"topScore": None}
        )
    scored = [(_score(r), r) for r in risks]
    top = max((s for s, _ in scored if s is not None), default=None)
    treated = treated_risk_ids(facts)
    untreated = sorted(
        (r for r in risks if r.materialised and str(r.id) not in treated), key=lambda r: r.title
    )
    high = sorted(
        ((s, r) for s, r in scored if s is not None and s >= amber_min),
        key=lambda pair: (-pair[0], pair[1].title),
    )
    drivers = [
        Driver(f"{r.title}: materialised, no treating decision", "risk", str(r.id))
        for r in untreated
    ]
    drivers.extend(Driver(f"{r.title}: score {s}", "risk", str(r.id)) for s, r in high)
    if untreated or (top is not None and top >= red_min):
        rag = "Red"
    elif top is not None and top >= amber_min:
        rag = "Amber"
    else:
        rag = "Green"
    parts = [f"{_plural(len(risks), 'open risk')}, top score {top if top is not None else '—'}"]
    reds = sum(1 for s, _ in scored if s is not None and s >= red_min)
    ambers = sum(1 for s, _ in scored if s is not None and amber_min <= s < red_min)
    if reds:
        parts.append(f"{reds} scoring {number(red_min)} or more")
    if ambers:
        parts.append(f"{ambers} scoring {number(amber_min)} to below {number(red_min)}")
    if untreated:
        parts.append(f"{_plural(len(untreated), 'materialised risk')} without a treating decision")
    unscored = sum(1 for s, _ in scored if s is None)
    if unscored:
        parts.append(f"{unscored} unscored")
    return Dimension(
        "risk",
        rag,
        "; ".join(parts),
        _limit(drivers, "risk"),
        {"topScore": top, "untreatedMaterialised": len(untreated)},
    )


def finished(facts: ProjectFacts) -> str | None:
    """Why the derived RAG is Blue (delivery is over), or None."""
    if facts.approval_status in CLOSED_OR_LATER:
        return f"The business case is {facts.approval_status}"
    wps = facts.work_packages
    if wps and all(wp.status == "Complete" for wp in wps):
        return f"All {_plural(len(wps), 'work package')} are Complete"
    return None


def _blue(dimension: Dimension, reason: str) -> Dimension:
    return Dimension(
        dimension.key,
        "Blue",
        f"{reason} ({dimension.summary})",
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


# --- overrides, confidence, staleness -------------------------------------------------------


def override(status: ProjectStatus, key: str) -> str | None:
    """A stored override outside the enum reads as null (use the derived value)."""
    return coerce_enum(getattr(status, f"{key}_rag_override"), RAG_CHOICES, fallback=None)


def effective(status: ProjectStatus, dimensions: Mapping[str, Dimension]) -> dict[str, str]:
    """The override when set, else the derived value."""
    return {f"{key}Rag": override(status, key) or dimensions[key].rag for key in DIMENSIONS}


def confidence(value: str | None) -> str:
    """outcomeConfidence and adoptionConfidence read as Unknown when missing."""
    return coerce_enum(value, CONFIDENCES, fallback="Unknown")


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
    """While the case is InRealisation: lastRealisationReviewAt (or realisationStartedAt) plus
    brCadence (the project's override, else the site default)."""
    cadence = facts.status.br_cadence
    source = "project"
    if cadence not in BR_CADENCE_MONTHS:
        cadence, source = br_cadence_default, "site"
    case = facts.case
    last = case.last_realisation_review_at if case is not None else None
    started = case.realisation_started_at if case is not None else None
    base = last or started
    due = None
    if facts.approval_status == "InRealisation" and base is not None:
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
    case = facts.case
    members = len(case.steering_committee or []) if case is not None else 0
    scheduled = case.first_steerco_scheduled_for if case is not None else None
    held = case.first_steerco_held_at if case is not None else None
    risk_items = [r for r in facts.risks if r.direction == "Risk"]
    wps = facts.work_packages
    unplanned = [
        wp
        for wp in wps
        if not (wp.planned_start_date and wp.planned_end_date and wp.budget is not None)
    ]
    if not wps:
        planned = (False, "No work packages yet.")
    elif unplanned:
        planned = (
            False,
            f"{_plural(len(unplanned), 'work package')} without planned dates or a budget: "
            + ", ".join(wp.name for wp in sorted(unplanned, key=lambda wp: wp.name)[:3])
            + ("…" if len(unplanned) > 3 else ""),
        )
    else:
        planned = (True, f"{_plural(len(wps), 'work package')} planned.")
    return {
        "sponsorNamed": (
            bool(case and case.decision_authority),
            "Named in the business case." if case and case.decision_authority else "Not named.",
        ),
        "projectManagerNamed": (
            bool(case and case.project_manager),
            "Named in the business case." if case and case.project_manager else "Not named.",
        ),
        "steeringCommitteeFormed": (
            members > 0,
            f"{_plural(members, 'member')}." if members else "No members yet.",
        ),
        "firstSteercoScheduled": (
            bool(scheduled or held),
            f"Scheduled for {scheduled.isoformat()}." if scheduled else "Not scheduled.",
        ),
        "firstSteercoHeld": (
            bool(held),
            f"Held {timezone.localdate(held).isoformat()}." if held else "Not held yet.",
        ),
        "risksIdentified": (
            bool(risk_items),
            f"{_plural(len(risk_items), 'risk')} recorded." if risk_items else "No risks yet.",
        ),
        "workPackagesPlanned": planned,
        "businessCaseApproved": (
            facts.approval_status in APPROVED_OR_LATER,
            f"The business case is {facts.approval_status}.",
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
    today = timezone.localdate(now)
    dimensions = derive_dimensions(facts, thresholds, now)
    risks = open_risks(facts)
    scores = [s for s in (_score(r) for r in risks) if s is not None]
    pending_decisions = sum(1 for d in facts.decisions if decision_state(d.made_on) == "Pending")
    awaiting = sum(
        1
        for c in facts.changes
        if application_state(c.status, c.dimensions or [], c.application_record)
        == "AwaitingApplication"
    )
    case = facts.case if facts.case is not None else BusinessCase(project=facts.project)
    cost = dimensions["cost"].figures
    figures = {
        "approvedBudget": cost["approvedBudget"],
        "eac": cost["eac"],
        "costOverrunPct": cost["overrunPct"],
        "scheduleSlipDays": dimensions["schedule"].figures["slipDays"],
        "topRiskScore": max(scores) if scores else None,
        "pendingDecisions": pending_decisions,
        "changesAwaitingApplication": awaiting,
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
        checklist=initiation_checklist(facts),
        realisation_review=realisation_review(facts, br_cadence_default, today),
        figures=figures,
        thresholds=dict(thresholds),
        now=now,
    )


def rag_severity(value: str | None) -> int:
    return RAG_SEVERITY.get(value or "None", RAG_SEVERITY["None"])
