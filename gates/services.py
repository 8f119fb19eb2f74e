"""Every write of the stage plan and its gates, one function per rule (docs/product.md,
"Stage gates"): atomic, audited, permission-checked through the `Caller`, raising domain
errors. The API, the pages and the assistant call these.

- `stage_plan_create(caller)`: the plan from the site's default stages, with the site's
  default criteria; the lead and the editors; while the plan is editable (`plan_frozen`).
- `stage_plan_update(caller, data)`: the whole plan in order (rename, dates, packages, stage
  tolerances within the business case's, stages added or removed); the same rule.
- `stage_plan_start(project, at)`: approval starts the first stage (the receiver of
  `charter_approved`); the status' phase follows.
- `criterion_add` / `criterion_dismiss`: the lead names another criterion of the catalogue
  on a stage, or dismisses one with a reason (who and when recorded).
- `gate_review_request(caller, data)`: the lead asks for the gate review of the current
  stage; the end-stage report is generated from the model and stored as generated; the
  sponsor is notified.
- `gate_review_decide(caller, data)`: the sponsor's Go, Hold, Recycle or Stop, written as a
  made decision of the decision log (immutable by its own rule); Stop takes the business
  case's Kill act. Going through with unmet criteria names each with a reason.
Gates never approve a business case: they live inside its lifecycle.
"""

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from charter.derive import ever_approved
from charter.services.lifecycle import charter_kill
from gates import criteria, selectors
from gates.models import (
    NAME_MAX,
    TEXT_MAX,
    DefaultStage,
    GateReview,
    Stage,
    StageCriterion,
    StagePackage,
    StagePlan,
)
from gates.specs import (
    CriterionSpec,
    DismissalSpec,
    GateDecisionSpec,
    GateReviewRequestSpec,
    StagePlanSpec,
    StageSpec,
)
from governance import audit, formatting, notifications, specs
from governance.cleaning import FieldErrors, decimal_to_json, only
from governance.concurrency import check_version
from governance.errors import (
    Conflict,
    DomainError,
    Forbidden,
    Frozen,
    NotFound,
    ValidationFailed,
)
from governance.models import Project
from governance.permissions import Caller, require
from registers.models import WorkPackage
from registers.services.common import as_uuid, lock_project
from registers.services.decisions import build_decision, write_decision
from status import derive, exceptions
from status import selectors as status_selectors
from status.services import status_phase_follow

EDIT_MESSAGE = "Only the Project Lead and the editors they nominate may change the stage plan."
DECIDE_MESSAGE = "Only the sponsor decides a gate review, and not one they requested."
FINISHED = selectors.FINISHED


def _object(data: Any) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ValidationFailed({"": ["Send a JSON object."]})
    return data


def _precheck_plan(caller: Caller) -> None:
    """The refusals before the body's (403, then 409), read without a lock; `_editable`
    asks them again under it."""
    require(caller.can_edit, EDIT_MESSAGE)
    caller.project.assert_registers_unfrozen()
    frozen = selectors.plan_frozen(caller.project)
    if frozen:
        raise Conflict(frozen)


def _editable(caller: Caller) -> Project:
    """Editor check, the project locked, and the plan editable now (409 with the reason)."""
    require(caller.can_edit, EDIT_MESSAGE)
    project = lock_project(caller.project)
    project.assert_registers_unfrozen()
    frozen = selectors.plan_frozen(project)
    if frozen:
        raise Conflict(frozen)
    return project


def plan_snapshot(project: Project) -> list[dict[str, Any]]:
    """The plan as the audit log records it: each stage's stored fields and packages."""
    held: dict[Any, list[str]] = {}
    for stage_id, wp_id in StagePackage.objects.filter(stage__project_id=project.pk).values_list(
        "stage_id", "work_package_id"
    ):
        held.setdefault(stage_id, []).append(str(wp_id))
    return [
        {**selectors.stage_fields(s), "workPackageIds": sorted(held.get(s.pk, []))}
        for s in selectors.stages(project)
    ]


def _default_criteria(stage: Stage, at: dt.datetime) -> None:
    StageCriterion.objects.bulk_create(
        StageCriterion(
            stage=stage, key=c.key, kind=kind, parameter=c.default_parameter, added_at=at
        )
        for kind in ("entry", "exit")
        for c in criteria.defaults(kind)
    )


# --- the plan ---------------------------------------------------------------------------------


def stage_plan_create(*, caller: Caller, data: Any = None) -> list[Stage]:
    """Make the project's stage plan from the site's default stages (DefaultStage, in order),
    each with the site's default criteria. 409 when the project has a plan already. The act
    takes no body: any member sent is refused (422), after the caller's refusals."""
    _precheck_plan(caller)
    only(_object(data if data is not None else {}))
    with transaction.atomic():
        project = _editable(caller)
        if Stage.objects.filter(project_id=project.pk).exists():
            raise Conflict("This project has a stage plan already: edit it.")
        _plan_saved(project, None)
        now = timezone.now()
        made = []
        for position, default in enumerate(DefaultStage.objects.order_by("position"), start=1):
            stage = Stage.objects.create(project=project, position=position, name=default.name)
            _default_criteria(stage, now)
            made.append(stage)
        if not made:
            raise Conflict("The site has no default stages: add them in the administration.")
        audit.record_in(
            project,
            caller.account_id,
            "stage_plan.created",
            "stagePlan",
            project.key,
            {"stages": {"before": None, "after": plan_snapshot(project)}},
        )
        case = selectors.case_of(project)
        if case is not None and ever_approved(case):
            # Made in an approved amendment: the project runs, so its first stage does.
            _start_first(project, now, caller.account_id)
    return made


def _tolerance_errors(index: int, stage: Stage, case: Any, errors: FieldErrors) -> None:
    """A stage tolerance may not exceed the project's (the business case's) tolerance."""
    where = f"stages[{index}]"
    days = getattr(case, "tolerance_days", None)
    if days is not None and stage.tolerance_days is not None and stage.tolerance_days > days:
        errors.add(
            f"{where}.toleranceDays",
            f"May not exceed the project's time tolerance of {days} days.",
        )
    percent = getattr(case, "tolerance_cost_percent", None)
    mine = stage.tolerance_cost_percent
    if percent is not None and mine is not None and Decimal(mine) > Decimal(percent):
        errors.add(
            f"{where}.toleranceCostPercent",
            f"May not exceed the project's cost tolerance of "
            f"{formatting.percent_figure(percent)}%.",
        )


ORDER = {"Done": 0, "Stopped": 0, "Current": 1, "Planned": 2}
# The stages' positions are moved out of the way while the plan is renumbered (unique).
POSITION_OFFSET = 1000


def _plan_saved(project: Project, expected_revision: int | None) -> None:
    """Count a save of the plan, refusing one based on an older plan (412): the stages another
    person added or changed since are never removed or overwritten unseen."""
    plan, _ = StagePlan.objects.select_for_update().get_or_create(project_id=project.pk)
    check_version(plan.revision, expected_revision, current_repr=plan)
    plan.revision += 1
    plan.save(update_fields=["revision"])


def stage_plan_update(
    *, caller: Caller, data: Any, expected_revision: int | None = None
) -> list[Stage]:
    """The whole plan in its new order: the stages kept (by id) with their name, planned
    dates, stage tolerances (within the business case's) and work packages (each in one stage
    at most); new stages (no id) added; a Planned stage not listed removed. A finished stage
    (Done, Stopped) no longer changes; the stages stay in the order they run (finished, then
    the current one, then those planned)."""
    _precheck_plan(caller)
    body = _object(data)
    partial, errors = specs.validate(StagePlanSpec, body, creating=True)
    errors.raise_if_any()
    with transaction.atomic():
        project = _editable(caller)
        _plan_saved(project, expected_revision)
        before = plan_snapshot(project)
        existing = {str(s.pk): s for s in selectors.stages(project)}
        case = selectors.case_of(project)
        packages = {
            str(pk): pk
            for pk in WorkPackage.objects.filter(project=project).values_list("pk", flat=True)
        }
        errors = FieldErrors()
        planned: list[tuple[Stage, list[str] | None]] = []
        seen_packages: dict[str, int] = {}
        kept: set[str] = set()
        by_snapshot = {s["id"]: s for s in before}
        for index, raw in enumerate(partial.stages or []):
            where = f"stages[{index}]"
            stage_id = raw.get("id") if isinstance(raw, dict) else None
            stage = existing.get(str(stage_id)) if stage_id else None
            if stage_id and stage is None:
                errors.add(f"{where}.id", "No such stage in this project's plan.")
                continue
            if stage is not None and str(stage.pk) in kept:
                errors.add(f"{where}.id", "This stage is listed twice.")
                continue
            sent, stage_errors = specs.validate(StageSpec, raw, creating=stage is None)
            for field, messages in stage_errors.items():
                for message in messages:
                    errors.add(f"{where}.{field}", message)
            record = stage if stage is not None else Stage(project=project, state="Planned")
            if stage is not None:
                kept.add(str(stage.pk))
            values = specs.sent(sent)
            ids = values.pop("work_package_ids", None)
            values.pop("id", None)
            if record.state in FINISHED:
                snap = by_snapshot[str(record.pk)]
                changed = [k for k, v in values.items() if getattr(record, k) != v] + (
                    ["workPackageIds"]
                    if ids is not None and sorted(ids) != snap["workPackageIds"]
                    else []
                )
                if changed:
                    errors.add(where, f"The {record.name} stage is finished: it no longer changes.")
                for wp in snap["workPackageIds"]:
                    seen_packages[wp] = index  # its packages stay where they were delivered
                planned.append((record, None))
                continue
            for name, value in values.items():
                setattr(record, name, value)
            if (
                record.planned_start
                and record.planned_end
                and record.planned_end < record.planned_start
            ):
                errors.add(f"{where}.plannedEnd", "The planned end is before the planned start.")
            _tolerance_errors(index, record, case, errors)
            for j, wp in enumerate(ids or []):
                if wp not in packages:
                    errors.add(
                        f"{where}.workPackageIds[{j}]", "No such work package in this project."
                    )
                elif wp in seen_packages:
                    errors.add(
                        f"{where}.workPackageIds[{j}]",
                        f"Already in stage {seen_packages[wp] + 1}: a work package sits in "
                        "one stage.",
                    )
                else:
                    seen_packages[wp] = index
            planned.append((record, ids))
        for stage_id, stage in existing.items():
            if stage_id not in kept and stage.state != "Planned":
                errors.add("stages", f"The {stage.name} stage has started: it cannot be removed.")
        ranks = [ORDER[s.state] for s, _ in planned]
        if ranks != sorted(ranks):
            errors.add(
                "stages", "Keep the stages in the order they run: finished, current, planned."
            )
        errors.raise_if_any()
        Stage.objects.filter(project_id=project.pk).exclude(
            pk__in=[s.pk for s, _ in planned if s.pk and str(s.pk) in kept]
        ).delete()
        Stage.objects.filter(project_id=project.pk).update(position=F("position") + POSITION_OFFSET)
        result = []
        for position, (stage, ids) in enumerate(planned, start=1):
            new = str(stage.pk) not in kept
            stage.position = position
            if not new:
                stage.revision += 1
            stage.save()
            if new:
                _default_criteria(stage, timezone.now())
            if ids is not None:
                StagePackage.objects.filter(stage=stage).delete()
                StagePackage.objects.filter(work_package_id__in=[packages[i] for i in ids]).delete()
                StagePackage.objects.bulk_create(
                    StagePackage(stage=stage, work_package_id=packages[i]) for i in ids
                )
            result.append(stage)
        after = plan_snapshot(project)
        changes = audit.diff({"stages": before}, {"stages": after})
        if changes:
            audit.record_in(
                project, caller.account_id, "stage_plan.updated", "stagePlan", project.key, changes
            )
        current = next((s for s in result if s.state == "Current"), None)
        if current is not None:
            status_phase_follow(
                project=project, phase=current.name, actor_account_id=caller.account_id
            )
    return result


def _start_first(project: Project, at: dt.datetime, actor: str) -> Stage | None:
    """Start the first stage when none has started: state Current, the status' phase follows."""
    found = selectors.stages(project)
    if not found or any(s.state != "Planned" for s in found):
        return None
    first = found[0]
    first.state = "Current"
    first.started_at = at
    first.revision += 1
    first.save(update_fields=["state", "started_at", "revision"])
    audit.record_in(
        project,
        actor,
        "stage.started",
        "stage",
        first.pk,
        {"state": {"before": "Planned", "after": "Current"}},
    )
    status_phase_follow(project=project, phase=first.name, actor_account_id=actor)
    return first


def stage_plan_start(*, project: Project, at: dt.datetime) -> Stage | None:
    """Approving the business case starts the plan's first stage (none started yet), in the
    approval's transaction. None when there is no plan or it has started already."""
    return _start_first(project, at, "")


# --- criteria -----------------------------------------------------------------------------------


def _stage_in(project: Project, stage_id: Any) -> Stage:
    pk = as_uuid(stage_id)
    stage = (
        Stage.objects.select_for_update().filter(project_id=project.pk, pk=pk).first()
        if pk
        else None
    )
    if stage is None:
        raise NotFound("No such stage in this project's plan.")
    return stage


def _open_stage(project: Project, stage_id: Any) -> Stage:
    """The refusals before the body's: no such stage (404), a finished one (409)."""
    pk = as_uuid(stage_id)
    stage = Stage.objects.filter(project_id=project.pk, pk=pk).first() if pk else None
    if stage is None:
        raise NotFound("No such stage in this project's plan.")
    if stage.state in FINISHED:
        raise Conflict(f"The {stage.name} stage is finished: its criteria no longer change.")
    return stage


def criterion_add(*, caller: Caller, stage_id: Any, data: Any) -> StageCriterion:
    """The lead (or an editor) names a criterion of the catalogue on a stage's entry or exit,
    with its parameter (the criterion's default when not sent). A criterion dismissed before
    is named again. 409 on a finished stage or one named already."""
    require(caller.can_edit, EDIT_MESSAGE)
    _open_stage(caller.project, stage_id)
    body = _object(data)
    partial, errors = specs.validate(CriterionSpec, body, creating=True)
    criterion = criteria.CATALOGUE.get(partial.key or "")
    parameter = None
    if criterion is not None and "parameter" not in errors:
        parameter, error = criteria.clean_parameter(criterion, partial.parameter)
        if error:
            errors.add("parameter", error)
    errors.raise_if_any()
    assert criterion is not None
    kind = partial.kind or "exit"
    with transaction.atomic():
        project = lock_project(caller.project)
        project.assert_registers_unfrozen()
        stage = _stage_in(project, stage_id)
        if stage.state in FINISHED:
            raise Conflict(f"The {stage.name} stage is finished: its criteria no longer change.")
        now = timezone.now()
        record = StageCriterion.objects.filter(stage=stage, key=criterion.key, kind=kind).first()
        if record is not None and record.dismissed_at is None:
            raise Conflict(f"The {stage.name} stage names “{criterion.label}” already.")
        before = None
        if record is None:
            record = StageCriterion(stage=stage, key=criterion.key, kind=kind)
        else:
            before = {"dismissalReason": record.dismissal_reason}
        record.parameter = parameter
        record.added_by_account_id = caller.account_id
        record.added_at = now
        record.dismissed_at = None
        record.dismissed_by_account_id = ""
        record.dismissal_reason = ""
        record.save()
        audit.record_in(
            project,
            caller.account_id,
            "gate_criterion.added",
            "stage",
            stage.pk,
            {
                "criterion": {
                    "before": before,
                    "after": {"key": record.key, "kind": kind, "parameter": parameter},
                }
            },
        )
    return record


def criterion_dismiss(
    *, caller: Caller, stage_id: Any, criterion_id: Any, data: Any
) -> StageCriterion:
    """The lead (or an editor) dismisses a criterion of a stage, saying why: it is shown with
    the reason, who and when, and no longer judged. 409 on a finished stage."""
    require(caller.can_edit, EDIT_MESSAGE)
    _open_stage(caller.project, stage_id)
    body = _object(data)
    partial, errors = specs.validate(DismissalSpec, body, creating=True)
    errors.raise_if_any()
    with transaction.atomic():
        project = lock_project(caller.project)
        project.assert_registers_unfrozen()
        stage = _stage_in(project, stage_id)
        try:
            pk = int(str(criterion_id))
        except ValueError:
            pk = 0
        record = StageCriterion.objects.filter(stage=stage, pk=pk).first()
        if record is None:
            raise NotFound("No such criterion on this stage.")
        if stage.state in FINISHED:
            raise Conflict(f"The {stage.name} stage is finished: its criteria no longer change.")
        if record.dismissed_at is not None:
            raise Conflict("This criterion is dismissed already.")
        record.dismissed_at = timezone.now()
        record.dismissed_by_account_id = caller.account_id
        record.dismissal_reason = partial.reason or ""
        record.save()
        audit.record_in(
            project,
            caller.account_id,
            "gate_criterion.dismissed",
            "stage",
            stage.pk,
            {
                "dismissed": {
                    "before": None,
                    "after": {
                        "key": record.key,
                        "kind": record.kind,
                        "reason": record.dismissal_reason,
                    },
                }
            },
        )
    return record


# --- the gate review ----------------------------------------------------------------------------


def end_stage_report(
    stage: Stage, view: derive.StatusView, *, lessons: str = "", now: dt.datetime | None = None
) -> dict[str, Any]:
    """The end-stage report, generated from the model: what the stage delivered against its
    plan, its schedule and cost against the stage tolerances, the risks and issues carried,
    the lessons, the next stage's plan, and the criteria as they stand."""
    now = now or timezone.now()
    evaluated = selectors.evaluate_stage(stage, view)
    ctx = selectors.context(stage, view, now)
    plan = view.facts.plan_baseline
    slips = {s.id: s for s in derive.package_slips(ctx.packages, plan)}
    delivered = [
        {
            "id": str(wp.id),
            "name": wp.name,
            "status": wp.status,
            "plannedEnd": wp.planned_end_date.isoformat() if wp.planned_end_date else None,
            "slipDays": slips[wp.id].days if wp.id in slips else None,
        }
        for wp in ctx.packages
    ]
    open_risks = [r for r in view.facts.risks if derive.is_open_risk(r)]
    carried = [
        {"id": str(r.id), "title": r.title, "score": r.score}
        for r in sorted(open_risks, key=lambda r: -(r.score or 0))
        if not r.materialised
    ]
    issues = [
        {"id": str(r.id), "title": r.title, "score": r.score} for r in open_risks if r.materialised
    ]
    following = (
        Stage.objects.filter(project_id=stage.project_id, position__gt=stage.position)
        .order_by("position")
        .first()
    )
    record = exceptions.current(view.facts.project)
    return {
        "generatedAt": now.isoformat(),
        "stage": {
            "id": str(stage.pk),
            "name": stage.name,
            "plannedStart": stage.planned_start.isoformat() if stage.planned_start else None,
            "plannedEnd": stage.planned_end.isoformat() if stage.planned_end else None,
            "startedAt": stage.started_at.isoformat() if stage.started_at else None,
        },
        "delivered": {
            "workPackages": delivered,
            "complete": sum(1 for d in delivered if d["status"] == "Complete"),
            "total": len(delivered),
        },
        "tolerance": {
            **evaluated.figures,
            "toleranceDays": stage.tolerance_days,
            "toleranceCostPercent": decimal_to_json(stage.tolerance_cost_percent),
        },
        "risksCarried": carried,
        "issuesCarried": issues,
        "exception": {"id": str(record.pk), "state": record.state} if record else None,
        "lessons": lessons,
        "nextStage": {
            "id": str(following.pk),
            "name": following.name,
            "plannedStart": following.planned_start.isoformat()
            if following.planned_start
            else None,
            "plannedEnd": following.planned_end.isoformat() if following.planned_end else None,
            "workPackages": [
                {"id": str(h.work_package_id), "name": h.work_package.name}
                for h in following.holdings.select_related("work_package")
            ],
        }
        if following
        else None,
        "criteria": [c.as_dict() for c in evaluated.criteria],
    }


def _running_case(project: Project) -> None:
    case = selectors.case_of(project)
    if case is None or case.approval_status not in exceptions.RUNNING_STATES:
        raise Conflict("Gate reviews are held while the approved project runs.")


def _review_may_start(project: Project, *, lock: bool = False) -> Stage:
    """The current stage, whose review may be requested now (409 with the reason else): the
    project runs with its registers open (not in close-out: a review there could not be
    decided), and a Hold's date to come back has come."""
    _running_case(project)
    project.assert_registers_unfrozen()
    stages = Stage.objects.select_for_update() if lock else Stage.objects.all()
    stage = stages.filter(project_id=project.pk, state="Current").first()
    if stage is None:
        raise Conflict(
            "No stage is under way: the first starts when the business case is approved."
        )
    held = selectors.last_review(stage)
    if (
        held is not None
        and held.outcome == "Hold"
        and held.hold_until is not None
        and held.hold_until > timezone.localdate()
    ):
        raise Conflict(
            f"The {stage.name} gate is on hold until {held.hold_until.isoformat()}: request "
            "the review again from that date."
        )
    if GateReview.objects.filter(stage=stage, state="Requested").exists():
        raise Conflict(
            f"The gate review of the {stage.name} stage awaits the sponsor's decision already."
        )
    return stage


def gate_review_refusal(caller: Caller) -> DomainError | None:
    """Why the caller may not request the gate review now, or None: the one predicate the
    request holds (it raises the refusal) and the pages show their button by (403 for a reader;
    409 without a running case, in close-out, without a current stage, before a Hold's date or
    with a review already waiting)."""
    if not caller.can_edit:
        return Forbidden(
            "Only the Project Lead and the editors they nominate request a gate review."
        )
    try:
        _review_may_start(caller.project)
    except (Conflict, Frozen) as refusal:
        return refusal
    return None


def gate_review_request(*, caller: Caller, data: Any = None) -> GateReview:
    """The lead (or an editor) requests the gate review of the current stage: the end-stage
    report is generated and stored as generated, the sponsor notified. Refused as
    `gate_review_refusal` says."""
    refusal = gate_review_refusal(caller)
    if refusal is not None:
        raise refusal
    body = _object(data if data is not None else {})
    partial, errors = specs.validate(GateReviewRequestSpec, body, creating=True)
    errors.raise_if_any()
    with transaction.atomic():
        project = lock_project(caller.project)
        stage = _review_may_start(project, lock=True)
        now = timezone.now()
        view = status_selectors.view_for(project, now=now)
        review = GateReview.objects.create(
            stage=stage,
            requested_at=now,
            requested_by_account_id=caller.account_id,
            report=end_stage_report(stage, view, lessons=partial.lessons or "", now=now),
        )
        audit.record_in(
            project,
            caller.account_id,
            "gate_review.requested",
            "gateReview",
            review.pk,
            {"stage": {"before": None, "after": stage.name}},
        )
        notifications.notify(
            kind="gate_review",
            recipient_account_id=project.sponsor_account_id or None,
            dedupe_key=f"gate_review:{review.pk}:requested",
            subject=f"{project.key}: the {stage.name} gate review awaits your decision",
            body=(
                f"The Project Lead of {project.name} ({project.key}) requests the gate review of "
                f"the {stage.name} stage: decide Go, Hold, Recycle or Stop."
            ),
            url=selectors.page_url(project),
            project_key=project.key,
        )
    return review


def _unmet_refusal(
    unmet: list[selectors.EvaluatedCriterion], named: list[dict[str, str]]
) -> str | None:
    """The sponsor goes through with unmet criteria only naming each with a reason: the words
    listing those not named, or None."""
    given = {(n["key"], n["kind"]) for n in named}
    missing = [c for c in unmet if (c.record.key, c.record.kind) not in given]
    if not missing:
        return None
    names = "; ".join(
        f"{c.criterion.label if c.criterion else c.record.key} ({c.record.kind})" for c in missing
    )
    return f"Going through with unmet criteria names each with a reason. Not named: {names}."


def open_for_decision(caller: Caller, *, lock: bool = False) -> GateReview:
    """The gate review waiting for `caller`'s decision (`lock`: locked for it), checked before
    the decision's body and again under the lock: none waiting is 404, a caller who is not the
    sponsor (or requested it) 403."""
    review = selectors.open_review(caller.project, lock=lock)
    if review is None:
        raise NotFound("No gate review awaits a decision on this project.")
    require(
        caller.may_decide_gate(requested_by_account_id=review.requested_by_account_id),
        DECIDE_MESSAGE,
    )
    return review


def gate_review_decide(
    *, caller: Caller, data: Any, expected_revision: int | None = None
) -> GateReview:
    """The sponsor decides the gate review of the current stage (not one they requested):
    Go starts the next stage (the status' phase follows); Hold needs the date to come back;
    Recycle keeps the stage to re-plan; Stop takes the business case's Kill act with the
    comment as its reason. Go with unmet criteria (the stage's exit, the next stage's entry)
    names each with a reason. Every decision is a made entry of the decision log (madeOn
    today, madeBy the sponsor, the minutes when given), written through the register's own
    service, and the review keeps it."""
    project = caller.project
    review = open_for_decision(caller)
    body = _object(data)
    partial, errors = specs.validate(GateDecisionSpec, body, creating=True)
    outcome = partial.outcome
    comment = partial.comment or ""
    today = timezone.localdate()
    if outcome == "Hold" and "holdUntil" not in errors:
        if partial.hold_until is None:
            errors.add("holdUntil", "Give the date to come back to the gate.")
        elif partial.hold_until <= today:
            errors.add("holdUntil", "The date to come back is after today.")
    if outcome == "Stop" and not comment and "comment" not in errors:
        errors.add("comment", "Give the reason for stopping the project.")
    errors.raise_if_any()
    assert outcome is not None
    named: list[dict[str, str]] = list(partial.unmet_criteria or [])
    with transaction.atomic():
        project = lock_project(project)
        project.assert_registers_unfrozen()
        review = open_for_decision(caller, lock=True)
        check_version(review.revision, expected_revision, current_repr=review)
        stage = review.stage
        now = timezone.now()
        view = status_selectors.view_for(project, now=now)
        following = (
            Stage.objects.select_for_update()
            .filter(project_id=project.pk, position__gt=stage.position)
            .order_by("position")
            .first()
        )
        unmet = selectors.evaluate_stage(stage, view).unmet("exit")
        if following is not None:
            unmet += selectors.evaluate_stage(following, view).unmet("entry")
        if outcome == "Go":
            refusal = _unmet_refusal(unmet, named)
            if refusal:
                raise ValidationFailed({"unmetCriteria": [refusal]})
            unmet_keys = {(c.record.key, c.record.kind) for c in unmet}
            met = [n for n in named if (n["key"], n["kind"]) not in unmet_keys]
            if met:
                raise ValidationFailed(
                    {
                        "unmetCriteria": [
                            f"Met or not named on this gate: {', '.join(n['key'] for n in met)}."
                        ]
                    }
                )
        elif named:
            raise ValidationFailed(
                {"unmetCriteria": ["Only a Go goes through with unmet criteria."]}
            )
        notes = [f"Gate review of the {stage.name} stage: {outcome}."]
        if outcome == "Hold" and partial.hold_until:
            notes.append(f"Held until {partial.hold_until.isoformat()}.")
        for n in named:
            label = criteria.CATALOGUE[n["key"]].label
            notes.append(f"Unmet, gone through: {label} ({n['kind']}): {n['reason']}")
        if comment:
            notes.append(comment)
        logged = {
            "decision": f"{stage.name} gate: {outcome}"[:NAME_MAX],
            "decisionNotes": "\n".join(notes)[:TEXT_MAX],
            "rationale": comment,
            "madeOn": today.isoformat(),
            "madeByAccountId": caller.account_id,
            **({"minutesRef": partial.minutes_ref} if partial.minutes_ref else {}),
        }
        decision = write_decision(caller, project, build_decision(caller, project, logged))
        review.state = "Decided"
        review.outcome = outcome
        review.hold_until = partial.hold_until if outcome == "Hold" else None
        review.comment = comment
        review.unmet_named = named
        review.decided_at = now
        review.decided_by_account_id = caller.account_id
        review.decision = decision
        review.minutes_ref = decision.minutes_ref
        review.revision += 1
        review.save()
        if outcome == "Go":
            stage.state, stage.ended_at = "Done", now
            stage.revision += 1
            stage.save(update_fields=["state", "ended_at", "revision"])
            if following is not None:
                following.state, following.started_at = "Current", now
                following.revision += 1
                following.save(update_fields=["state", "started_at", "revision"])
                status_phase_follow(
                    project=project, phase=following.name, actor_account_id=caller.account_id
                )
        elif outcome == "Stop":
            stage.state, stage.ended_at = "Stopped", now
            stage.revision += 1
            stage.save(update_fields=["state", "ended_at", "revision"])
        audit.record_in(
            project,
            caller.account_id,
            "gate_review.decided",
            "gateReview",
            review.pk,
            {
                "outcome": {"before": None, "after": outcome},
                "decision": {"before": None, "after": str(decision.pk)},
                **({"unmetCriteria": {"before": None, "after": named}} if named else {}),
            },
        )
        notifications.resolve(f"gate_review:{review.pk}:", at=now)
        notifications.notify(
            kind="gate_review",
            recipient_account_id=project.lead_account_id or None,
            dedupe_key=f"gate_review:{review.pk}:decided",
            subject=f"{project.key}: the sponsor decided {outcome} at the {stage.name} gate",
            body=" ".join(notes)[:TEXT_MAX],
            url=selectors.page_url(project),
            project_key=project.key,
        )
        if outcome == "Stop":
            charter_kill(caller=caller, data={"reason": comment})
    return review
