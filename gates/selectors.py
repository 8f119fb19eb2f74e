"""Reading the stage plan (docs/product.md, "Stage gates"): every page, the API, the
assistant, the exports and the portfolio read these.

- `stage_plan(project)`: the ordered stages, each with its packages and its entry and exit
  criteria evaluated live (`gates.criteria`), and whether the plan may be edited now.
- `current_stage(project)`, `open_review(project)`, `days_at_gate(project)`: the stage under
  way, its undecided gate review, and how long it has waited for the sponsor.
- `plan_frozen(project)`: why the plan may not be edited now (None when it may).
- `gate_facts(project_ids)`: each project's current stage and days at the gate, for lists of
  projects (the portfolio, exports), in two queries.
- `awaiting(rows)`: the gate reviews that ask something of the person ("Waiting for me").
"""

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from charter.derive import enabling_change, ever_approved
from charter.models import BusinessCase
from gates import criteria
from gates.models import GateReview, Stage, StageCriterion, StagePlan
from governance import labels
from governance.cleaning import decimal_to_json
from governance.models import Project
from governance.permissions import Caller
from status import derive
from status import selectors as status_selectors

FINISHED = frozenset({"Done", "Stopped"})


def page_url(project: Project) -> str:
    """The stage plan's page, once the site has one (else the project's status page)."""
    for name in ("gates:plan", "status:detail"):
        try:
            return reverse(name, args=[project.key])
        except NoReverseMatch:
            continue
    return ""


def case_of(project: Project) -> BusinessCase | None:
    return BusinessCase.objects.filter(project_id=project.pk).first()


def plan_frozen(project: Project, case: BusinessCase | None = None) -> str | None:
    """Why the stage plan may not be edited now, or None. Like the tolerances and the plan
    baseline: editable while the business case is (Exploring, or a first Draft); after
    approval only in an amendment whose enabling change request is Approved."""
    case = case if case is not None else case_of(project)
    status = case.approval_status if case is not None else "Exploring"
    if status == "Exploring" or (
        case is not None and status == "Draft" and not ever_approved(case)
    ):
        return None
    if case is not None and status == "Draft":
        change = enabling_change(case)
        if change is not None and change.status == "Approved":
            return None
        return (
            "The stage plan of an approved project changes only through an approved change "
            "request: the amendment's enabling change is not approved yet."
        )
    return (
        f"The business case is {labels.label(status).lower()}: the stage plan changes only "
        "through an approved change request (re-open the business case for amendment citing it)."
    )


def stages(project: Project) -> list[Stage]:
    return list(Stage.objects.filter(project_id=project.pk).order_by("position"))


def current_stage(project: Project) -> Stage | None:
    """The stage under way (state Current), or None (no plan, not approved yet, or ended)."""
    return Stage.objects.filter(project_id=project.pk, state="Current").first()


def open_review(project: Project, *, lock: bool = False) -> GateReview | None:
    """The undecided gate review of the project's current stage, or None (`lock`: locked for
    the decision)."""
    reviews = GateReview.objects.select_for_update() if lock else GateReview.objects.all()
    return (
        reviews.filter(stage__project_id=project.pk, state="Requested")
        .select_related("stage")
        .first()
    )


def last_review(stage: Stage) -> GateReview | None:
    return GateReview.objects.filter(stage=stage).order_by("-requested_at").first()


def reviews(project: Project) -> list[GateReview]:
    """Every gate review of the project, newest first."""
    return list(
        GateReview.objects.filter(stage__project_id=project.pk)
        .select_related("stage", "decision")
        .order_by("-requested_at")
    )


def days_at_gate(project: Project, now: dt.datetime | None = None) -> int | None:
    """Whole days (site time) the undecided gate review has waited for the sponsor's
    decision, or None when no review is waiting."""
    review = open_review(project)
    if review is None:
        return None
    now = now or timezone.now()
    return (timezone.localdate(now) - timezone.localdate(review.requested_at)).days


@dataclass(frozen=True)
class GateFacts:
    """A project's place in its stage plan, for lists of projects (the portfolio, exports):
    the current stage (None when none runs), its position of how many, and the days its
    undecided review has waited for the sponsor (None when none waits)."""

    stage: str | None
    position: int | None
    stages: int
    days_at_gate: int | None
    outcome: str | None  # the last decided review's outcome of the current stage


def gate_facts(project_ids: Iterable[Any], now: dt.datetime | None = None) -> dict[Any, GateFacts]:
    """`GateFacts` of each project that has a stage plan, by project id: two queries whatever
    their number."""
    ids = list(project_ids)
    today = timezone.localdate(now or timezone.now())
    counts: dict[Any, int] = {}
    current: dict[Any, tuple[str, int]] = {}
    for project_id, name, position, state in Stage.objects.filter(project_id__in=ids).values_list(
        "project_id", "name", "position", "state"
    ):
        counts[project_id] = counts.get(project_id, 0) + 1
        if state == "Current":
            current[project_id] = (name, position)
    waiting: dict[Any, int] = {}
    outcomes: dict[Any, str] = {}
    for project_id, state, requested_at, outcome in (
        GateReview.objects.filter(stage__project_id__in=ids, stage__state="Current")
        .order_by("requested_at")
        .values_list("stage__project_id", "state", "requested_at", "outcome")
    ):
        if state == "Requested":
            waiting[project_id] = (today - timezone.localdate(requested_at)).days
        else:
            outcomes[project_id] = outcome
    return {
        pk: GateFacts(
            stage=current[pk][0] if pk in current else None,
            position=current[pk][1] if pk in current else None,
            stages=count,
            days_at_gate=waiting.get(pk),
            outcome=outcomes.get(pk),
        )
        for pk, count in counts.items()
    }


def package_ids(stage: Stage) -> frozenset[Any]:
    return frozenset(stage.holdings.values_list("work_package_id", flat=True))


def context(
    stage: Stage, view: derive.StatusView, now: dt.datetime | None = None
) -> criteria.GateContext:
    return criteria.GateContext(
        view=view, stage=stage, package_ids=package_ids(stage), now=now or view.now
    )


@dataclass
class EvaluatedCriterion:
    """A criterion of a stage with its live answer (None when dismissed: shown, not judged)."""

    record: StageCriterion
    criterion: criteria.Criterion | None
    result: criteria.Result | None

    @property
    def dismissed(self) -> bool:
        return self.record.dismissed_at is not None

    @property
    def unmet(self) -> bool:
        return not self.dismissed and (self.result is None or not self.result.met)

    def as_dict(self) -> dict[str, Any]:
        r, c = self.record, self.criterion
        parameter = (
            r.parameter if r.parameter is not None else getattr(c, "default_parameter", None)
        )
        return {
            "id": str(r.pk),
            "key": r.key,
            "kind": r.kind,
            "label": c.label if c else r.key,
            "checks": c.describe(parameter) if c else "",
            "parameter": parameter,
            "addedByAccountId": r.added_by_account_id or None,
            "dismissed": self.dismissed,
            "dismissedAt": r.dismissed_at.isoformat() if r.dismissed_at else None,
            "dismissedByAccountId": r.dismissed_by_account_id or None,
            "dismissalReason": r.dismissal_reason or None,
            **(
                self.result.as_dict()
                if self.result
                else {"met": None, "figure": None, "summary": "Dismissed.", "rows": []}
            ),
        }


@dataclass
class EvaluatedStage:
    """A stage with its packages and its criteria evaluated now."""

    stage: Stage
    packages: list[dict[str, Any]]
    criteria: list[EvaluatedCriterion] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    def unmet(self, kind: str | None = None) -> list[EvaluatedCriterion]:
        return [c for c in self.criteria if c.unmet and (kind is None or c.record.kind == kind)]

    def as_dict(self) -> dict[str, Any]:
        s = self.stage
        return {
            **stage_fields(s),
            "position": s.position,
            "startedAt": s.started_at.isoformat() if s.started_at else None,
            "endedAt": s.ended_at.isoformat() if s.ended_at else None,
            "workPackages": self.packages,
            "figures": self.figures,
            "criteria": [c.as_dict() for c in self.criteria],
            "revision": s.revision,
        }


def stage_fields(s: Stage) -> dict[str, Any]:
    """A stage's planned fields as the API answers them and the audit log records them."""
    return {
        "id": str(s.pk),
        "name": s.name,
        "state": s.state,
        "plannedStart": s.planned_start.isoformat() if s.planned_start else None,
        "plannedEnd": s.planned_end.isoformat() if s.planned_end else None,
        "toleranceDays": s.tolerance_days,
        "toleranceCostPercent": decimal_to_json(s.tolerance_cost_percent),
    }


def evaluate_criteria(
    records: Iterable[StageCriterion], ctx: criteria.GateContext
) -> list[EvaluatedCriterion]:
    found = []
    for record in records:
        criterion = criteria.CATALOGUE.get(record.key)
        result = (
            None if record.dismissed_at else criteria.evaluate(ctx, record.key, record.parameter)
        )
        found.append(EvaluatedCriterion(record, criterion, result))
    return found


def evaluate_stage(stage: Stage, view: derive.StatusView) -> EvaluatedStage:
    """One stage, its packages (from the status model's rows) and its criteria, now."""
    ctx = context(stage, view)
    packages = [{"id": str(wp.id), "name": wp.name, "status": wp.status} for wp in ctx.packages]
    records = sorted(stage.criteria.all(), key=lambda r: (r.kind != "entry", r.pk))
    return EvaluatedStage(
        stage=stage,
        packages=packages,
        criteria=evaluate_criteria(records, ctx),
        figures=criteria.stage_figures(ctx),
    )


def stage_plan(project: Project, *, now: dt.datetime | None = None) -> list[EvaluatedStage]:
    """The project's stages in order, each evaluated live (one status derivation for all)."""
    found = stages(project)
    if not found:
        return []
    view = status_selectors.view_for(project, now=now)
    return [evaluate_stage(stage, view) for stage in found]


def plan_revision(project: Project) -> int:
    """The stage plan's revision (1 before its first save), which a save names (If-Match, the
    form's hidden revision) to be applied."""
    found = StagePlan.objects.filter(project_id=project.pk).values_list("revision", flat=True)
    return next(iter(found), 1)


def plan_answer(
    project: Project, caller: Caller | None = None, *, now: dt.datetime | None = None
) -> dict[str, Any]:
    """What the API and the assistant answer: the plan, the current stage, the undecided
    review (and its age), and whether (and why not) the plan may be edited now."""
    evaluated = stage_plan(project, now=now)
    current = next((e.stage for e in evaluated if e.stage.state == "Current"), None)
    review = open_review(project)
    frozen = plan_frozen(project)
    return {
        "projectKey": project.key,
        "stages": [e.as_dict() for e in evaluated],
        "revision": plan_revision(project),
        "currentStageId": str(current.pk) if current else None,
        "editable": frozen is None,
        "frozenBecause": frozen,
        "openReview": review_to_dict(review) if review else None,
        "daysAtGate": days_at_gate(project, now),
        "canEdit": bool(caller and caller.can_edit),
        "canDecide": bool(
            caller
            and review
            and caller.may_decide_gate(requested_by_account_id=review.requested_by_account_id)
        ),
    }


def review_to_dict(review: GateReview) -> dict[str, Any]:
    return {
        "id": str(review.pk),
        "stageId": str(review.stage_id),
        "stageName": review.stage.name,
        "state": review.state,
        "requestedAt": review.requested_at.isoformat(),
        "requestedByAccountId": review.requested_by_account_id,
        "report": review.report,
        "outcome": review.outcome or None,
        "holdUntil": review.hold_until.isoformat() if review.hold_until else None,
        "comment": review.comment or None,
        "unmetCriteria": review.unmet_named,
        "decidedAt": review.decided_at.isoformat() if review.decided_at else None,
        "decidedByAccountId": review.decided_by_account_id or None,
        "decisionId": str(review.decision_id) if review.decision_id else None,
        "minutesRef": review.minutes_ref,
        "revision": review.revision,
    }


@dataclass(frozen=True)
class Awaiting:
    """A gate review that asks something of the person, for "Waiting for me": `act` is
    "decide" (the sponsor, on a requested review) or "request" (the lead: a Hold's date has
    come, request the review again); `why` says what, `since` how long it has waited."""

    project: Project
    review: GateReview
    act: str
    why: str
    since: dt.datetime

    @property
    def url(self) -> str:
        return page_url(self.project)


def with_gate_review() -> Q:
    """The projects where `awaiting` may find something: a current stage's gate review
    requested or held (a condition over Project)."""
    reviews = _current_reviews().filter(stage__project=OuterRef("pk"))
    return Q(Exists(reviews.filter(Q(state="Requested") | Q(outcome="Hold"))))


def _current_reviews() -> QuerySet[GateReview]:
    """The gate reviews of the stages under way, the ones `awaiting` looks at."""
    return GateReview.objects.filter(stage__state="Current")


def awaiting(
    rows: Iterable[tuple[Project, Caller]], now: dt.datetime | None = None
) -> list[Awaiting]:
    """The gate reviews of these projects that ask something of their caller, the oldest
    first: one query."""
    callers = {project.pk: caller for project, caller in rows}
    today = timezone.localdate(now or timezone.now())
    found: list[Awaiting] = []
    latest: dict[Any, GateReview] = {}
    for review in (
        _current_reviews()
        .filter(stage__project_id__in=list(callers))
        .select_related("stage")
        .order_by("requested_at")
    ):
        latest[review.stage_id] = review
    for review in latest.values():
        caller = callers[review.stage.project_id]
        project = caller.project
        if review.state == "Requested" and caller.may_decide_gate(
            requested_by_account_id=review.requested_by_account_id
        ):
            why = f"The gate review of the {review.stage.name} stage awaits your decision."
            found.append(Awaiting(project, review, "decide", why, review.requested_at))
        elif (
            review.outcome == "Hold"
            and caller.can_edit
            and review.hold_until is not None
            and review.hold_until <= today
        ):
            why = (
                f"The sponsor held the {review.stage.name} gate until "
                f"{review.hold_until.isoformat()}: request the review again."
            )
            since = review.decided_at or review.requested_at
            found.append(Awaiting(project, review, "request", why, since))
    return sorted(found, key=lambda a: a.since)
