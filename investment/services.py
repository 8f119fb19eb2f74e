"""The writes of investment decisions, one service per rule, each atomic and audited
(governance.audit); the notifications of a choice go through governance.notifications (told
once, e-mailed from the outbox after the commit), as status/exceptions.py does.

- `model_version_create`: site admins and the governance group; a new version with its whole
  list of criteria and why; the scores under older versions stay as they were.
- `score_set`: the governance group or a site admin (the PMO), or the project's sponsor; a
  person-scored criterion of the model in force, with a reason; a rescore is a new row that
  supersedes the old one (never rewritten).
- `scenario_create`, `scenario_update`, `scenario_copy`, `scenario_delete`: the governance
  group and site admins; every change audited with what changed; a chosen scenario is kept.
- `scenario_choose`: records the made decision in the portfolio decision log (immutable, with
  minutes), marks the proposals above the line "prioritised in scenario X" and tells their
  leads and sponsors. It never submits nor approves a business case.
- `portfolio_decision_update` / `portfolio_decision_delete`: refused, always (made)."""

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.db.models import Model, QuerySet
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from charter.derive import as_uuid
from governance import audit, notifications, permissions, specs
from governance.cleaning import FieldErrors
from governance.concurrency import check_version
from governance.errors import Conflict, Forbidden, NotFound, ValidationFailed
from governance.models import Project, User
from governance.permissions import Caller
from investment import selectors
from investment.models import (
    NAME_MAX,
    PERSON,
    Criterion,
    ModelVersion,
    PortfolioDecision,
    Prioritised,
    Scenario,
    Score,
    made_message,
)
from investment.specs import ChoiceSpec, ModelVersionSpec, ScenarioSpec, ScoreSpec

M = TypeVar("M", bound=Model)

GOVERNORS_ONLY = (
    "Scoring models and scenarios are for the governance group and site administrators."
)


def require_governor(user: User, request: Any = None) -> None:
    if not permissions.may_govern_investment(user, request):
        raise Forbidden(GOVERNORS_ONLY)


def _record(
    actor: User, kind: str, target_type: str, target_id: Any, changes: Any, key: str = ""
) -> None:
    audit.record(
        actor_account_id=actor.account_id,
        kind=kind,
        target_type=target_type,
        target_id=target_id,
        project_key=key,
        changes=changes,
    )


# --- the scoring model -----------------------------------------------------------------------


def criterion_to_dict(criterion: Criterion) -> dict[str, Any]:
    return {
        "key": criterion.key,
        "name": criterion.name,
        "measures": criterion.measures,
        "points": list(criterion.points),
        "weight": criterion.weight,
        "source": criterion.source,
        "thresholds": criterion.thresholds,
    }


def version_to_dict(version: ModelVersion, criteria: Sequence[Criterion]) -> dict[str, Any]:
    return {
        "number": version.number,
        "why": version.why,
        "createdAt": version.created_at.isoformat(),
        "createdByAccountId": version.created_by_account_id,
        "criteria": [criterion_to_dict(c) for c in criteria],
    }


def model_version_create(*, user: User, data: dict[str, Any], request: Any = None) -> ModelVersion:
    """A new version of the scoring model: its criteria as sent (copy the current ones and
    change what changes), and why. Audited with the criteria before and after."""
    require_governor(user, request)
    partial, errors = specs.validate(ModelVersionSpec, data, creating=True)
    errors.raise_if_any()
    with transaction.atomic():
        previous = ModelVersion.objects.select_for_update().order_by("-number").first()
        before = (
            [criterion_to_dict(c) for c in previous.criteria.order_by("position", "pk")]
            if previous
            else None
        )
        try:
            with transaction.atomic():
                version = ModelVersion.objects.create(
                    number=(previous.number + 1) if previous else 1,
                    why=partial.why or "",
                    created_by_account_id=user.account_id,
                )
        except IntegrityError:
            raise Conflict(
                "Another version of the model was made at the same moment: read it and try again."
            ) from None
        criteria = [
            Criterion(
                version=version,
                position=index,
                key=item["key"],
                name=item["name"],
                measures=item["measures"],
                points=item["points"],
                weight=item["weight"],
                source=item["source"],
                thresholds=item["thresholds"],
            )
            for index, item in enumerate(partial.criteria or [])
        ]
        Criterion.objects.bulk_create(criteria)
        _record(
            user,
            "investment.model_version_created",
            "scoringModelVersion",
            version.number,
            {
                "why": {"before": None, "after": version.why},
                "criteria": {"before": before, "after": [criterion_to_dict(c) for c in criteria]},
            },
        )
    return version


# --- scores ----------------------------------------------------------------------------------


def may_score(caller: Caller, request: Any = None) -> bool:
    """The PMO (the governance group, site admins) or the project's sponsor."""
    return caller.is_sponsor or permissions.may_govern_investment(caller.user, request)


def score_set(*, caller: Caller, data: dict[str, Any], request: Any = None) -> Score:
    """Score the proposal against one criterion a person scores in the model in force, with
    the reason. A rescore supersedes the current score; no score is ever rewritten."""
    if not may_score(caller, request):
        raise Forbidden("Only the PMO (the governance group) and the sponsor score a proposal.")
    partial, errors = specs.validate(ScoreSpec, data, creating=True)
    project = caller.project
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()
        if not selectors.proposal_projects([project]):
            raise Conflict(
                f"{project.key} is not a proposal: only a business case that is Exploring or "
                "Draft is scored."
            )
        version = selectors.current_version()
        if version is None:
            raise Conflict("There is no scoring model yet: an administrator defines one first.")
        errors.raise_if_any()  # the body's refusals, once the state's (409) are answered
        criterion = Criterion.objects.filter(version=version, key=partial.criterion).first()
        if criterion is None:
            raise ValidationFailed(
                {
                    "criterion": [
                        f"Must be a criterion of the model in force (version {version.number})."
                    ]
                }
            )
        if criterion.source != PERSON:
            raise ValidationFailed(
                {"criterion": [f"{criterion.name} is read from data: nobody scores it by hand."]}
            )
        previous = (
            Score.objects.select_for_update()
            .filter(project=project, criterion=criterion, superseded_by__isnull=True)
            .first()
        )
        score = Score.objects.create(
            project=project,
            version=version,
            criterion=criterion,
            value=partial.value or 0,
            reason=partial.reason or "",
            created_by_account_id=caller.account_id,
        )
        if previous is not None:
            Score.objects.filter(pk=previous.pk).update(superseded_by=score)
        _record(
            caller.user,
            "investment.scored",
            "investmentScore",
            score.pk,
            {
                "criterion": {"before": None, "after": criterion.key},
                "modelVersion": {"before": None, "after": version.number},
                "value": {"before": previous.value if previous else None, "after": score.value},
                "reason": {"before": previous.reason if previous else None, "after": score.reason},
            },
            key=project.key,
        )
    return score


# --- scenarios -------------------------------------------------------------------------------


def scenario_snapshot(scenario: Scenario) -> dict[str, Any]:
    return {
        "name": scenario.name,
        "notes": scenario.notes,
        "budgetByYear": scenario.budget_by_year,
        "budgetTotal": audit.jsonable(scenario.budget_total),
        "selection": scenario.selection,
        "mustHaves": scenario.must_haves,
    }


def _check_keys(scenario: Scenario, errors: FieldErrors) -> None:
    """The keys name projects; must-haves are in the selection (when one is given)."""
    named = {*scenario.selection, *scenario.must_haves}
    known = set(Project.objects.filter(key__in=list(named)).values_list("key", flat=True))
    for field, keys in (("selection", scenario.selection), ("mustHaves", scenario.must_haves)):
        unknown = [k for k in keys if k not in known]
        if unknown:
            errors.add(field, f"No project with the key {', '.join(unknown)}.")
    if scenario.selection:
        outside = [k for k in scenario.must_haves if k not in scenario.selection]
        if outside:
            errors.add("mustHaves", f"Not in the selection: {', '.join(outside)}.")
    if not scenario.budget_by_year and scenario.budget_total is None:
        errors.add("budgetByYear", "Give a budget per year or one total.")
    if scenario.budget_total is not None and scenario.budget_total < 0:
        errors.add("budgetTotal", "Must be 0 or more.")


def _apply(scenario: Scenario, data: dict[str, Any], *, creating: bool) -> None:
    partial, errors = specs.validate(ScenarioSpec, data, creating=creating)
    for name, value in specs.sent(partial).items():
        setattr(scenario, name, value if value is not None or name == "budget_total" else "")
    scenario.notes = scenario.notes or ""
    scenario.budget_by_year = scenario.budget_by_year or {}
    scenario.selection = list(scenario.selection or [])
    scenario.must_haves = list(scenario.must_haves or [])
    if not errors:
        _check_keys(scenario, errors)
    errors.raise_if_any()


def scenario_create(*, user: User, data: dict[str, Any], request: Any = None) -> Scenario:
    require_governor(user, request)
    scenario = Scenario(
        created_by_account_id=user.account_id, updated_by_account_id=user.account_id
    )
    _apply(scenario, data, creating=True)
    with transaction.atomic():
        scenario.save()
        _record(
            user,
            "investment.scenario_created",
            "scenario",
            scenario.pk,
            audit.diff({}, scenario_snapshot(scenario)),
        )
    return scenario


def _by_id(records: QuerySet[M], record_id: Any, missing: str) -> M:
    """The record among `records` with that id (a UUID, or its text); NotFound(`missing`)
    else."""
    pk = as_uuid(record_id) if isinstance(record_id, str) else record_id
    found = records.filter(pk=pk).first() if pk else None
    if found is None:
        raise NotFound(missing)
    return found


def scenario_get(scenario_id: Any) -> Scenario:
    return _by_id(Scenario.objects.all(), scenario_id, "No scenario with that id.")


def scenario_update(
    *,
    user: User,
    scenario_id: Any,
    data: dict[str, Any],
    expected_revision: int | None = None,
    request: Any = None,
) -> Scenario:
    require_governor(user, request)
    with transaction.atomic():
        scenario = scenario_get(scenario_id)
        scenario = Scenario.objects.select_for_update().get(pk=scenario.pk)
        check_version(scenario.revision, expected_revision, current_repr=scenario)
        refuse_chosen(scenario)
        before = scenario_snapshot(scenario)
        _apply(scenario, data, creating=False)
        changes = audit.diff(before, scenario_snapshot(scenario))
        if changes:
            scenario.revision += 1
            scenario.updated_by_account_id = user.account_id
            scenario.save()
            _record(user, "investment.scenario_updated", "scenario", scenario.pk, changes)
    return scenario


def refuse_chosen(scenario: Scenario) -> None:
    """A scenario the board chose is kept as it was chosen: neither changed nor chosen again
    (read under the scenario's lock, so two saves or two choices cannot both pass)."""
    if PortfolioDecision.objects.filter(scenario=scenario).exists():
        raise Conflict(
            f"The board chose {scenario.name}: it is kept as it was chosen and can no longer "
            "be changed or chosen again. Copy it to weigh a variant."
        )


def scenario_copy(
    *, user: User, scenario_id: Any, data: dict[str, Any] | None = None, request: Any = None
) -> Scenario:
    """A copy of the scenario (its budget, selection and must-haves), named as sent or
    "Copy of X"; it remembers what it copies."""
    require_governor(user, request)
    source = scenario_get(scenario_id)
    copy = Scenario(
        name=f"Copy of {source.name}"[:NAME_MAX],
        notes=source.notes,
        budget_by_year=dict(source.budget_by_year or {}),
        budget_total=source.budget_total,
        selection=list(source.selection or []),
        must_haves=list(source.must_haves or []),
        copy_of=source,
        created_by_account_id=user.account_id,
        updated_by_account_id=user.account_id,
    )
    _apply(copy, data or {}, creating=False)
    with transaction.atomic():
        copy.save()
        _record(
            user,
            "investment.scenario_copied",
            "scenario",
            copy.pk,
            {
                "copyOf": {"before": None, "after": str(source.pk)},
                **audit.diff({}, scenario_snapshot(copy)),
            },
        )
    return copy


def scenario_delete(
    *, user: User, scenario_id: Any, expected_revision: int | None = None, request: Any = None
) -> None:
    """A scenario the board chose stays: the portfolio decision log names it."""
    require_governor(user, request)
    with transaction.atomic():
        scenario = Scenario.objects.select_for_update().get(pk=scenario_get(scenario_id).pk)
        check_version(scenario.revision, expected_revision, current_repr=scenario)
        if PortfolioDecision.objects.filter(scenario=scenario).exists():
            raise Conflict(f"The board chose {scenario.name}: the portfolio decision log keeps it.")
        _record(
            user,
            "investment.scenario_deleted",
            "scenario",
            scenario.pk,
            audit.diff(scenario_snapshot(scenario), {}),
        )
        scenario.delete()


# --- the board's choice ----------------------------------------------------------------------


def _url(name: str, *args: Any) -> str:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return ""


def scenario_choose(
    *,
    user: User,
    scenario_id: Any,
    data: dict[str, Any],
    projects: Sequence[Project],
    expected_revision: int | None = None,
    expected_keys: Sequence[str] | None = None,
    request: Any = None,
) -> PortfolioDecision:
    """The board chooses the scenario: a made decision in the portfolio decision log with the
    minutes and the proposals above its line (as evaluated now, over `projects`: those the
    chooser can see), each business case marked "prioritised in scenario X", each lead and
    sponsor told. No business case changes state: each still goes through its sponsor, the
    adoption gate and the approval. A chosen scenario is not chosen again (409).
    `expected_keys` (or the body's `expectedKeys`): the proposals the chooser confirmed; when
    given and what would be recorded now differs (rescored or changed meanwhile), refused
    (409) in words."""
    require_governor(user, request)
    partial, errors = specs.validate(ChoiceSpec, data, creating=True)
    made_on = partial.made_on or timezone.localdate()
    if partial.made_on and partial.made_on > timezone.localdate():
        errors.add("madeOn", "The date a decision was taken cannot be in the future.")
    with transaction.atomic():
        scenario = Scenario.objects.select_for_update().get(pk=scenario_get(scenario_id).pk)
        check_version(scenario.revision, expected_revision, current_repr=scenario)
        refuse_chosen(scenario)
        errors.raise_if_any()
        if expected_keys is None and "expected_keys" in specs.sent(partial):
            expected_keys = partial.expected_keys or []
        evaluation = selectors.evaluate(selectors.board_for(projects, [scenario]), scenario)
        chosen = selectors.prioritised(evaluation)
        if expected_keys is not None and sorted(set(expected_keys)) != sorted(
            r.key for r in chosen
        ):
            would = ", ".join(r.key for r in chosen) or "none"
            confirmed = ", ".join(dict.fromkeys(expected_keys)) or "none"
            raise Conflict(
                f"What this choice would prioritise changed since it was confirmed (confirmed: "
                f"{confirmed}; now: {would}): a score, a cost or the scenario changed meanwhile. "
                "Nothing was recorded: look at the scenario again and confirm anew."
            )
        decision = PortfolioDecision(
            decision=partial.decision or f"Prioritise the proposals of scenario {scenario.name}",
            rationale=partial.rationale or "",
            made_on=made_on,
            made_by_account_id=user.account_id,
            minutes_ref=partial.minutes_ref,
            scenario=scenario,
            scenario_name=scenario.name,
            scenario_revision=scenario.revision,
            proposals=[
                {
                    "projectKey": r.key,
                    "projectName": r.proposal.project.name,
                    "rank": r.proposal.rank,
                    "total": audit.jsonable(r.proposal.total),
                    "modelVersion": r.proposal.version.number if r.proposal.version else None,
                    "mustHave": r.must_have,
                }
                for r in chosen
            ],
            figures=evaluation.totals(),
            recorded_by=user.account_id,
        )
        decision.save()
        now = timezone.now()
        for row in chosen:
            Prioritised.objects.update_or_create(
                business_case_id=row.proposal.project.pk,
                defaults={"decision": decision, "scenario_name": scenario.name, "at": now},
            )
        _record(
            user,
            "investment.scenario_chosen",
            "portfolioDecision",
            decision.pk,
            {
                "scenario": {"before": None, "after": scenario.name},
                "proposals": {"before": None, "after": [r.key for r in chosen]},
                "minutesRef": {"before": None, "after": decision.minutes_ref},
            },
        )
        with notifications.batched():  # one insert and one outbox batch for them all
            for row in chosen:
                _notify_prioritised(row.proposal.project, decision)
    return decision


def _notify_prioritised(project: Project, decision: PortfolioDecision) -> None:
    notifications.notify_lead_and_sponsor(
        project,
        kind="proposal_prioritised",
        dedupe_key=f"proposal_prioritised:{decision.pk}:{project.key}",
        subject=f"{project.key}: prioritised in scenario {decision.scenario_name}",
        body=(
            f"The board chose the scenario {decision.scenario_name} on "
            f"{decision.made_on.isoformat()}: {project.name} ({project.key}) is prioritised. "
            "Its business case still goes through its sponsor, "
            "the adoption gate and the approval."
        ),
        url=_url("charter:index", project.key),
    )


def portfolio_decision_get(decision_id: Any) -> PortfolioDecision:
    return _by_id(
        PortfolioDecision.objects.all(), decision_id, "No portfolio decision with that id."
    )


def portfolio_decision_update(*, user: User, decision_id: Any, request: Any = None) -> None:
    """A made portfolio decision refuses every change (409)."""
    require_governor(user, request)
    raise Conflict(made_message(portfolio_decision_get(decision_id)))


def portfolio_decision_delete(*, user: User, decision_id: Any, request: Any = None) -> None:
    """A made portfolio decision is never deleted (409)."""
    require_governor(user, request)
    raise Conflict(made_message(portfolio_decision_get(decision_id)))
