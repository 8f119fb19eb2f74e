"""The catalogue of stage-gate criteria, declared once (docs/product.md, "Stage gates").

Each entry: its key, label, what it checks, its parameter (days, or a template kind) and
default, whether the site names it by default on a stage's entry or exit, and an evaluator.
An evaluator reads the one project model through the functions that already compute each
figure (`status.derive`, `status.exceptions`, `status.earned_value`, `registers.derive`) and
returns a `Result`: met or not, the figure, a sentence, and the rows behind it. Nothing is
ticked by hand; a criterion is evaluated whenever it is read.
"""

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from governance import formatting
from governance.cleaning import decimal_to_json
from governance.formatting import plural
from governance.wiki import TEMPLATE_KINDS
from registers.derive import decision_state
from registers.models import ChangeRequest, Decision, Risk
from status import derive, earned_value, exceptions

if TYPE_CHECKING:
    from gates.models import Stage

# The risk score from which a risk must be treated and recently reviewed (the 15).
HIGH_RISK_SCORE = 15


@dataclass(frozen=True)
class Result:
    """One criterion's answer: `met`, the `figure` it turned on, a `summary` in words and
    the `rows` behind it (each a small dict naming the register row)."""

    met: bool
    figure: Any
    summary: str
    rows: tuple[dict[str, Any], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        figure = decimal_to_json(self.figure) if isinstance(self.figure, Decimal) else self.figure
        return {"met": self.met, "figure": figure, "summary": self.summary, "rows": list(self.rows)}


@dataclass
class GateContext:
    """What the evaluators read: the project's derived status (`status.selectors.view_for`,
    with its register rows and earned value), the stage and the packages it holds, and now."""

    view: derive.StatusView
    stage: "Stage"
    package_ids: frozenset[Any]
    now: dt.datetime
    memo: dict[str, Any] = field(default_factory=dict)

    @property
    def project(self) -> Any:
        return self.view.facts.project

    @property
    def case(self) -> Any:
        return self.view.facts.case

    @property
    def packages(self) -> list[derive.WorkPackageFact]:
        return [wp for wp in self.view.facts.work_packages if wp.id in self.package_ids]


Evaluator = Callable[[GateContext, Any], Result]


@dataclass(frozen=True)
class Criterion:
    """One entry of the catalogue. `parameter` names what the parameter is ("days",
    "templateKind" or None), `default_parameter` its site default; `defaults` the kinds
    (entry, exit) the site names it on by default."""

    key: str
    label: str
    checks: str
    evaluate: Evaluator
    parameter: str | None = None
    default_parameter: Any = None
    defaults: tuple[str, ...] = ("exit",)

    def describe(self, parameter: Any) -> str:
        """What it checks, with the parameter in force."""
        return self.checks.format(n=parameter)


# --- the evaluators ---------------------------------------------------------------------------


def business_case_approved(ctx: GateContext, _: Any) -> Result:
    """The business case is approved at its current version: Approved or later, not an
    amendment in progress (a re-opened case is Draft or Submitted at the next version)."""
    case = ctx.case
    status = ctx.view.facts.approval_status
    version = getattr(case, "version", None)
    met = case is not None and status in derive.APPROVED_OR_LATER
    row = {"version": version, "approvalStatus": status}
    if met:
        return Result(True, version, f"Version {version} is approved.", (row,))
    return Result(
        False, version, f"The business case is {status or 'not started'}, not approved.", (row,)
    )


def no_open_exception(ctx: GateContext, _: Any) -> Result:
    """The project has no undecided exception (`status.exceptions.current`)."""
    record = exceptions.current(ctx.project)
    if record is None:
        return Result(True, 0, "No open exception.")
    row = {
        "id": str(record.pk),
        "state": record.state,
        "openedAt": record.opened_at.isoformat(),
        "ageDays": exceptions.age_days(record.opened_at, ctx.now),
    }
    return Result(False, 1, f"An exception is {record.state.lower()} and undecided.", (row,))


def high_risks_treated(ctx: GateContext, days: Any) -> Result:
    """Every open risk scoring HIGH_RISK_SCORE or more has a treatment and was reviewed (its
    row last updated) within `days` days."""
    limit = int(days)
    since = ctx.now - dt.timedelta(days=limit)
    risks = Risk.objects.filter(
        project_id=ctx.project.pk, direction="Risk", score__gte=HIGH_RISK_SCORE
    ).exclude(status="Closed")
    failing = []
    count = 0
    for risk in risks.order_by("-score", "title"):
        count += 1
        untreated = not risk.treatment
        stale = risk.updated_at < since
        if untreated or stale:
            failing.append(
                {
                    "id": str(risk.pk),
                    "title": risk.title,
                    "score": risk.score,
                    "treatment": risk.treatment or None,
                    "reviewedOn": timezone.localdate(risk.updated_at).isoformat(),
                    "why": "no treatment" if untreated else f"not reviewed in {limit} days",
                }
            )
    if not failing:
        said = f"All {plural(count, 'risk')} scoring {HIGH_RISK_SCORE}+" if count else "No risk"
        return Result(True, 0, f"{said} treated and reviewed within {limit} days.")
    return Result(
        False,
        len(failing),
        f"{plural(len(failing), 'risk')} scoring {HIGH_RISK_SCORE}+ without a treatment or "
        f"a review within {limit} days.",
        tuple(failing),
    )


def stage_figures(ctx: GateContext) -> dict[str, Any]:
    """The stage's schedule and cost against its tolerances: the worst slip of its packages
    (`derive.package_figures`, each against its own baseline), and its cost overrun in percent,
    from earned value's cost-performance estimate (BAC / CPI) where the stage's packages give
    one (`earned_value.rollup`), else their forecast against their baseline budget."""
    if "stage" in ctx.memo:
        found: dict[str, Any] = ctx.memo["stage"]
        return found
    packages = ctx.packages
    figures = derive.package_figures(packages, ctx.view.facts.plan_baseline)
    late = [
        {"id": str(s.id), "name": s.name, "slipDays": s.days, "end": s.end.isoformat()}
        for s in figures["late_packages"]
    ]
    basis, over = "forecast", None
    ev = ctx.view.earned_value
    rolled = (
        earned_value.rollup([p for p in ev.packages if p.id in ctx.package_ids])
        if ev is not None
        else None
    )
    bac = rolled.figures.get("bac") if rolled else None
    estimate = rolled.figures.get("costPerformanceEstimate") if rolled else None
    if bac and estimate is not None:
        basis, over = "earnedValue", (Decimal(estimate) - bac) * 100 / bac
    else:
        baseline = figures["baseline_sum"] or figures["budget_sum"]
        if baseline:
            over = (figures["forecast_sum"] - baseline) * 100 / baseline
    found = {
        "slipDays": figures["worst_package_slip"],
        "latePackages": late,
        # Shown to a tenth (plain JSON: the report stores it); compared exactly (`over`).
        "costOverPercent": decimal_to_json(over.quantize(Decimal("0.1")))
        if over is not None
        else None,
        "costBasis": basis,
    }
    ctx.memo["stage"] = found
    ctx.memo["stageOver"] = over
    return found


def within_stage_tolerance(ctx: GateContext, _: Any) -> Result:
    """Schedule and cost of the stage's packages within the stage tolerances (days late,
    cost percent over). A tolerance not set is not compared."""
    stage = ctx.stage
    found = stage_figures(ctx)
    slip, over = found["slipDays"], ctx.memo["stageOver"]
    beyond = []
    if stage.tolerance_days is not None and slip is not None and slip > stage.tolerance_days:
        beyond.append(f"{slip} days late against {stage.tolerance_days}")
    percent = stage.tolerance_cost_percent
    if percent is not None and over is not None and over > percent:
        beyond.append(
            f"cost {formatting.percent_figure(over)}% over against "
            f"{formatting.percent_figure(percent)}%"
        )
    rows = tuple(found["latePackages"])
    figure = {"slipDays": slip, "costOverPercent": found["costOverPercent"]}
    if stage.tolerance_days is None and percent is None:
        return Result(True, figure, "The stage sets no tolerances.", rows)
    if beyond:
        return Result(False, figure, f"Beyond stage tolerance: {'; '.join(beyond)}.", rows)
    return Result(True, figure, "Schedule and cost within stage tolerance.", rows)


def no_stale_pending_decision(ctx: GateContext, days: Any) -> Result:
    """No decision of the log is pending (no madeOn) for more than `days` days."""
    limit = int(days)
    since = ctx.now - dt.timedelta(days=limit)
    stale = [
        {
            "id": str(d.pk),
            "decision": d.decision,
            "state": decision_state(d.made_on),
            "loggedOn": timezone.localdate(d.created_at).isoformat(),
        }
        for d in Decision.objects.filter(
            project_id=ctx.project.pk, made_on=None, created_at__lt=since
        ).order_by("created_at")
    ]
    if not stale:
        return Result(True, 0, f"No decision pending for more than {limit} days.")
    return Result(
        False,
        len(stale),
        f"{plural(len(stale), 'decision')} pending for more than {limit} days.",
        tuple(stale),
    )


def packages_complete(ctx: GateContext, _: Any) -> Result:
    """Every package the stage holds is Complete, or re-planned: named by an Approved change
    request (its target work package)."""
    packages = ctx.packages
    replanned = {
        str(pk)
        for pk in ChangeRequest.objects.filter(
            project_id=ctx.project.pk,
            status="Approved",
            target_work_package_id__in=[wp.id for wp in packages],
        ).values_list("target_work_package_id", flat=True)
    }
    open_ = [
        {"id": str(wp.id), "name": wp.name, "status": wp.status}
        for wp in packages
        if wp.status != "Complete" and str(wp.id) not in replanned
    ]
    if not packages:
        return Result(True, 0, "The stage holds no work package.")
    if open_:
        return Result(
            False,
            len(open_),
            f"{plural(len(open_), 'work package')} neither complete nor re-planned.",
            tuple(open_),
        )
    return Result(True, 0, f"All {plural(len(packages), 'work package')} complete or re-planned.")


def first_steerco_held(ctx: GateContext, _: Any) -> Result:
    """The first steering committee was held (the business case's firstSteercoHeldAt)."""
    held = getattr(ctx.case, "first_steerco_held_at", None)
    if held is None:
        return Result(False, None, "The first steering committee has not been held.")
    day = timezone.localdate(held).isoformat()
    return Result(True, day, f"Held {derive.day(timezone.localdate(held))}.")


def documents_linked(ctx: GateContext, kind: Any) -> Result:
    """The business case links a supporting document of the template kind `kind`."""
    links = [
        link
        for link in (getattr(ctx.case, "supporting_links", None) or [])
        if isinstance(link, Mapping) and link.get("templateKind") == kind
    ]
    label = TEMPLATE_KINDS.get(str(kind), (str(kind), ""))[0]
    rows = tuple({"label": x.get("label"), "url": x.get("url")} for x in links)
    if links:
        return Result(True, len(links), f"{plural(len(links), label.lower())} linked.", rows)
    return Result(False, 0, f"No {label.lower()} linked to the business case.")


# --- the catalogue --------------------------------------------------------------------------

CATALOGUE: dict[str, Criterion] = {
    c.key: c
    for c in (
        Criterion(
            "businessCaseApproved",
            "Business case approved",
            "The business case is approved at its current version.",
            business_case_approved,
            defaults=("entry",),
        ),
        Criterion(
            "noOpenException",
            "No open exception",
            "The project has no undecided exception.",
            no_open_exception,
        ),
        Criterion(
            "highRisksTreated",
            "High risks treated and reviewed",
            f"Every open risk scoring {HIGH_RISK_SCORE} or more has a treatment and was "
            "reviewed within {n} days.",
            high_risks_treated,
            parameter="days",
            default_parameter=30,
        ),
        Criterion(
            "withinStageTolerance",
            "Within stage tolerance",
            "The stage's schedule and cost are within its stage tolerances (earned value "
            "where it exists).",
            within_stage_tolerance,
        ),
        Criterion(
            "noStalePendingDecision",
            "No stale pending decision",
            "No decision has been pending for more than {n} days.",
            no_stale_pending_decision,
            parameter="days",
            default_parameter=30,
        ),
        Criterion(
            "packagesComplete",
            "Stage packages complete",
            "Every work package of the stage is complete or re-planned.",
            packages_complete,
        ),
        Criterion(
            "firstSteercoHeld",
            "First steering committee held",
            "The first steering committee has been held.",
            first_steerco_held,
        ),
        Criterion(
            "documentsLinked",
            "Supporting document linked",
            "A supporting document of the kind {n} is linked to the business case.",
            documents_linked,
            parameter="templateKind",
            default_parameter="lessons",
            defaults=(),
        ),
    )
}
PARAMETER_DAYS_MAX = 3650


def clean_parameter(criterion: Criterion, value: Any) -> tuple[Any, str | None]:
    """The parameter of `criterion` as sent: None takes the default; days are a whole number
    from 1 to PARAMETER_DAYS_MAX; a template kind one of the wiki's."""
    if criterion.parameter is None:
        return (None, None) if value is None else (None, "This criterion takes no parameter.")
    if value is None:
        return criterion.default_parameter, None
    if criterion.parameter == "days":
        if isinstance(value, bool) or not isinstance(value, int):
            return None, "Must be a whole number of days."
        if not 1 <= value <= PARAMETER_DAYS_MAX:
            return None, f"Must be from 1 to {PARAMETER_DAYS_MAX} days."
        return value, None
    if not isinstance(value, str) or value not in TEMPLATE_KINDS:
        return None, f"Must be one of: {', '.join(TEMPLATE_KINDS)}."
    return value, None


def evaluate(ctx: GateContext, key: str, parameter: Any) -> Result:
    """One criterion of the catalogue on `ctx` (an unknown key is never met)."""
    criterion = CATALOGUE.get(key)
    if criterion is None:
        return Result(False, None, "No such criterion in the catalogue.")
    value = parameter if parameter is not None else criterion.default_parameter
    return criterion.evaluate(ctx, value)


def defaults(kind: str) -> Sequence[Criterion]:
    """The criteria the site names by default on a stage's `kind` (entry or exit)."""
    return [c for c in CATALOGUE.values() if kind in c.defaults]
