"""Management by exception (docs/product.md section 3, "Tolerances and exceptions").

- `exception_state(view)`: the one comparison of the status page's derived figures (the
  schedule slip (the status page's slipDays: the worse of the end slip and the worst package
  slip beyond the approved days), the cost forecast against the approved
  budget, the benefit forecast against the approved benefit) with the tolerances the sponsor
  set on the business case. The banner, the portfolio, the API and the agent all read it.
- `track(views)`: called where the stored health is rewritten (every change of the facts,
  `status.health.refresh`) and by the daily periodic check (days late grow with time): opens
  the project's exception once (audited, the lead and the sponsor notified once through the
  outbox), records going back within tolerance and out again. It never closes an exception.
- `exception_report` (the Project Lead) and `exception_decide` (the sponsor): the report's
  exception plan becomes a change request routed to the sponsor; accepting the plan approves
  it (the existing change path: its budget and days are approved variations), killing the
  project takes the business case's Kill act.
- `exception_settle`: an act of the business case that ends delivery (Kill, Archive or Close,
  taken on the business case itself) settles the undecided exception, naming the act
  (`governance.signals.charter_ended`, received in status.receivers): its plan's Proposed
  change is withdrawn saying why, the project leaves every exception queue and flag, and the
  unread notifications of it are marked read.
A project without tolerances behaves as before: nothing is compared, nothing is opened.
"""

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.urls import reverse
from django.utils import timezone

from charter.derive import CLOSED_OR_LATER
from charter.services.lifecycle import charter_kill
from governance import audit, cleaning, formatting, notifications, specs
from governance.cleaning import decimal_to_json
from governance.concurrency import check_version
from governance.errors import Conflict, Forbidden, NotFound, ValidationFailed
from governance.models import Notification, Project
from governance.permissions import Caller
from registers.models import ChangeRequest
from registers.services import change_adjudicate, change_create, change_for_update, change_withdraw
from registers.services.changes import DecidedElsewhere
from status import derive, selectors
from status.models import TEXT_MAX, UNDECIDED_STATES, ProjectException
from status.specs import ExceptionDecisionSpec, ExceptionReportSpec

# The business case's states in which delivery runs against the approved plan (an amendment in
# progress included): only then is a forecast compared with the tolerances.
RUNNING_STATES = frozenset({"Approved", "Draft", "Submitted", "ClosingSubmitted"})
UNDECIDED = tuple(UNDECIDED_STATES)
TOLERANCE_ATTRS = (
    "tolerance_days",
    "tolerance_cost_percent",
    "tolerance_cost_amount",
    "tolerance_benefit_percent",
)


@dataclass(frozen=True)
class Crossing:
    """One tolerance crossed: which, the figure and the limit, in words."""

    tolerance: str  # one of status.specs.CROSSING_TOLERANCES
    figure: Any
    limit: Any
    summary: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "tolerance": self.tolerance,
            "figure": _plain(self.figure),
            "limit": _plain(self.limit),
            "summary": self.summary,
        }


@dataclass(frozen=True)
class ExceptionState:
    """The tolerances in force and which of them the current figures cross."""

    tolerances: dict[str, Any] = field(default_factory=dict)
    crossed: tuple[Crossing, ...] = ()

    @property
    def has_tolerances(self) -> bool:
        return any(v is not None for v in self.tolerances.values())

    @property
    def beyond(self) -> bool:
        return bool(self.crossed)

    def as_dict(self) -> dict[str, Any]:
        return {
            "tolerances": {k: _plain(v) for k, v in self.tolerances.items()},
            "beyondTolerance": self.beyond,
            "crossed": [c.as_dict() for c in self.crossed],
        }


def _plain(value: Any) -> Any:
    return decimal_to_json(value) if isinstance(value, Decimal) else value


def tolerances(case: Any) -> dict[str, Any]:
    """The business case's tolerances by API name (None when unset or no case)."""
    return {
        "toleranceDays": getattr(case, "tolerance_days", None),
        "toleranceCostPercent": getattr(case, "tolerance_cost_percent", None),
        "toleranceCostAmount": getattr(case, "tolerance_cost_amount", None),
        "toleranceBenefitPercent": getattr(case, "tolerance_benefit_percent", None),
    }


def _running(facts: derive.ProjectFacts) -> bool:
    return (
        derive.baselined(facts)
        and facts.approval_status in RUNNING_STATES
        and facts.approval_status not in CLOSED_OR_LATER
    )


def exception_state(view: derive.StatusView) -> ExceptionState:
    """Compare the status page's figures (the same `derive` dimensions: slipDays of the
    schedule, eac and approvedBudget of the cost; the benefit forecast of `derive_benefit`)
    with the tolerances. Beyond a tolerance is strictly more than it: 10 days late against a
    10-day tolerance is within, and so is a benefit exactly 10 % under on a 10 % tolerance."""
    facts = view.facts
    found = tolerances(facts.case)
    state = ExceptionState(tolerances=found)
    if not state.has_tolerances or not _running(facts):
        return state
    crossed: list[Crossing] = []
    days = found["toleranceDays"]
    slip = view.dimensions["schedule"].figures.get("slipDays")
    if days is not None and slip is not None and slip > days:
        crossed.append(
            Crossing(
                "time", slip, days, f"{slip} days late, beyond the time tolerance of {days} days."
            )
        )
    cost = view.dimensions["cost"].figures
    eac, approved = cost.get("eac"), cost.get("approvedBudget")
    if eac is not None and approved is not None and approved > 0:
        over = Decimal(eac) - Decimal(approved)
        percent = found["toleranceCostPercent"]
        if percent is not None and over * 100 > Decimal(percent) * Decimal(approved):
            shown = cost.get("overrunPct")
            crossed.append(
                Crossing(
                    "costPercent",
                    shown,
                    percent,
                    f"Forecast {derive.money(eac)} is {formatting.percent_figure(shown)}% over "
                    f"the approved budget {derive.money(approved)}, beyond the cost tolerance "
                    f"of {formatting.percent_figure(percent)}%.",
                )
            )
        amount = found["toleranceCostAmount"]
        if amount is not None and over > Decimal(amount):
            crossed.append(
                Crossing(
                    "costAmount",
                    over,
                    amount,
                    f"Forecast {derive.money(eac)} is {derive.money(over)} over the approved "
                    f"budget {derive.money(approved)}, beyond the cost tolerance of "
                    f"{derive.money(amount)}.",
                )
            )
    benefit = _benefit_crossing(view.benefit, found["toleranceBenefitPercent"])
    if benefit is not None:
        crossed.append(benefit)
    return ExceptionState(tolerances=found, crossed=tuple(crossed))


def _benefit_crossing(benefit: Mapping[str, Any], percent: Any) -> Crossing | None:
    """The benefit forecast (`derive.derive_benefit`) against the benefit tolerance: beyond
    when the shortfall under the approved benefit is strictly more than the tolerance,
    compared exactly ((approved - forecast) x 100 against tolerance x approved)."""
    approved, forecast = benefit.get("approvedBenefit"), benefit.get("forecastBenefit")
    if percent is None or approved is None or forecast is None or approved <= 0:
        return None
    under = Decimal(approved) - Decimal(forecast)
    if not under * 100 > Decimal(percent) * Decimal(approved):
        return None
    shown = benefit.get("benefitShortfallPct")
    return Crossing(
        "benefitPercent",
        shown,
        percent,
        f"Forecast benefit {derive.money(forecast)} is {formatting.percent_figure(shown)}% "
        f"under the approved benefit {derive.money(approved)}, beyond the benefit tolerance "
        f"of {formatting.percent_figure(percent)}%.",
    )


# --- opening, going back within, out again ----------------------------------------------------


def _event(record: ProjectException, at: dt.datetime, kind: str, text: str) -> None:
    record.events = [*(record.events or []), {"at": at.isoformat(), "kind": kind, "text": text}]


def _notify_opened(project: Project, record: ProjectException) -> None:
    what = " ".join(c["summary"] for c in record.crossed)
    notifications.notify_lead_and_sponsor(
        project,
        kind="project_exception",
        dedupe_key=f"project_exception:{record.pk}",
        subject=f"{project.key}: beyond tolerance, in exception",
        body=(
            f"{project.name} ({project.key}) is forecast beyond its tolerances: {what} "
            "The Project Lead answers with an exception report; the sponsor decides."
        ),
        url=reverse("status:exception", args=[project.key]),
    )


def _audit(
    record: ProjectException,
    project: Project,
    kind: str,
    actor: str,
    changes: Mapping[str, Any] | None,
) -> None:
    audit.record_in(project, actor, kind, "projectException", record.pk, changes)


def track(views: Iterable[derive.StatusView], *, now: dt.datetime | None = None) -> None:
    """Open, or note the movement of, the exception of each project whose view is given. No
    query at all when none of them has tolerances; else one read of their undecided
    exceptions, and writes only where something changed."""
    watched = {
        view.facts.project.pk: view
        for view in views
        if any(v is not None for v in tolerances(view.facts.case).values())
    }
    if not watched:
        return
    now = now or timezone.now()
    open_ = {
        record.project_id: record
        for record in ProjectException.objects.filter(
            project_id__in=list(watched), state__in=UNDECIDED
        )
    }
    for pk, view in watched.items():
        if not _running(view.facts):
            continue  # delivery is over or stopped: nothing moves against the plan
        state = exception_state(view)
        record = open_.get(pk)
        project = view.facts.project
        if record is None:
            if state.beyond:
                _open(project, state, now)
            continue
        if state.beyond != record.within:
            continue  # nothing moved
        _moved(record.pk, project, beyond=state.beyond, now=now)


def _moved(pk: Any, project: Project, *, beyond: bool, now: dt.datetime) -> None:
    """Note that the undecided exception `pk` went beyond tolerance again, or back within:
    on the row read again under its lock, so a report or decision saved since `track` read it
    keeps its events and fields (and a decided exception is left as it is)."""
    with transaction.atomic():
        record = (
            ProjectException.objects.select_for_update().filter(pk=pk, state__in=UNDECIDED).first()
        )
        if record is None or record.within != beyond:
            return
        record.within = not beyond
        if beyond:
            _event(record, now, "beyond", "Went beyond tolerance again.")
        else:
            _event(
                record,
                now,
                "within",
                "Went back within tolerance; the exception stays open until the sponsor decides.",
            )
        record.save(update_fields=["within", "events"])
        _audit(
            record,
            project,
            "exception.within" if record.within else "exception.beyond",
            "",
            {"within": {"before": not record.within, "after": record.within}},
        )


def _open(project: Project, state: ExceptionState, now: dt.datetime) -> ProjectException:
    """Open the project's exception, or, when another writer opened it meanwhile (two saves
    in parallel both read none), keep theirs: the unique constraint on the undecided
    exception refuses the second insert, whose savepoint is rolled back (no second
    notification, no second audit row, and the register save that started it goes on)."""
    crossed = [c.as_dict() for c in state.crossed]
    try:
        return _insert(project, crossed, now)
    except IntegrityError:
        return ProjectException.objects.get(project=project, state__in=UNDECIDED)


def _insert(project: Project, crossed: list[Any], now: dt.datetime) -> ProjectException:
    with transaction.atomic():
        record = ProjectException(project=project, opened_at=now, crossed=crossed)
        _event(record, now, "opened", " ".join(c["summary"] for c in crossed))
        record.save()
        project.exception_opened_at = now
        project.save(update_fields=["exception_opened_at"])
        _audit(
            record, project, "exception.opened", "", {"crossed": {"before": None, "after": crossed}}
        )
        _notify_opened(project, record)
    return record


def check_all(now: dt.datetime) -> int:
    """The periodic check (days late grow with time, with no write to announce it): every
    project with tolerances set is derived now and tracked. Idempotent. Returns how many."""
    projects = list(
        Project.objects.filter(business_case__approval_status__in=RUNNING_STATES).exclude(
            business_case__tolerance_days=None,
            business_case__tolerance_cost_percent=None,
            business_case__tolerance_cost_amount=None,
            business_case__tolerance_benefit_percent=None,
        )
    )
    for start in range(0, len(projects), 200):
        batch = projects[start : start + 200]
        track(selectors.views_for(batch, now=now).values(), now=now)
    return len(projects)


# --- reading -------------------------------------------------------------------------------


def current(project: Project) -> ProjectException | None:
    """The project's undecided exception, or None."""
    return ProjectException.objects.filter(project=project, state__in=UNDECIDED).first()


def history(project: Project) -> list[ProjectException]:
    return list(ProjectException.objects.filter(project=project).order_by("-opened_at"))


def age_days(opened_at: dt.datetime, now: dt.datetime | None = None) -> int:
    """Whole days (calendar days, site time) since an exception opened: its age, shown on
    its page and on the portfolio while it is undecided."""
    now = now or timezone.now()
    return (timezone.localdate(now) - timezone.localdate(opened_at)).days


def to_dict(record: ProjectException, *, now: dt.datetime | None = None) -> dict[str, Any]:
    return {
        "id": str(record.pk),
        "state": record.state,
        "openedAt": record.opened_at.isoformat(),
        "ageDays": age_days(record.opened_at, now),
        "crossed": record.crossed,
        "withinTolerance": record.within,
        "events": record.events,
        "report": {
            **specs.to_dict(ExceptionReportSpec, record),
            "reportedAt": record.reported_at.isoformat() if record.reported_at else None,
            "reportedByAccountId": record.reported_by_account_id or None,
        }
        if record.reported_at
        else None,
        "decision": record.decision or None,
        "decisionComment": record.decision_comment or None,
        "decidedAt": record.decided_at.isoformat() if record.decided_at else None,
        "decidedByAccountId": record.decided_by_account_id or None,
        "settledByAct": record.settled_by_act or None,
        "settledAt": record.settled_at.isoformat() if record.settled_at else None,
        "settledByAccountId": record.settled_by_account_id or None,
        "changeRequestId": str(record.change_request_id) if record.change_request_id else None,
        "revision": record.revision,
    }


def project_exception(project: Project, view: derive.StatusView | None = None) -> dict[str, Any]:
    """What the API, the agent and the pages answer: the tolerances and the current figures'
    state, the undecided exception (or null) and whether the project is in exception."""
    view = view or selectors.view_for(project)
    record = current(project)
    return {
        "projectKey": project.key,
        **exception_state(view).as_dict(),
        "inException": record is not None,
        "exception": to_dict(record) if record else None,
    }


@dataclass(frozen=True)
class Awaiting:
    """An undecided exception that asks something of the person, for "Waiting for me":
    `act` is "decide" (the sponsor, on a report), "report" (the lead: write it, or answer
    the sponsor's question), or "wait" (the sponsor, before the report: nothing to decide
    yet); `why` says what is asked and why, `since` how long it has waited."""

    project: Project
    record: ProjectException
    act: str
    why: str
    since: dt.datetime


def with_undecided() -> Q:
    """The projects where `awaiting` may find something: an undecided exception (a
    condition over Project): their ids, one sub-select read once, not asked of every project."""
    return Q(pk__in=_undecided().values("project_id"))


def _undecided() -> QuerySet[ProjectException]:
    return ProjectException.objects.filter(state__in=UNDECIDED)


def awaiting(rows: Iterable[tuple[Project, Caller]]) -> list[Awaiting]:
    """The undecided exceptions of these projects that ask something of their caller, the
    oldest first: one query."""
    callers = {project.pk: caller for project, caller in rows}
    found: list[Awaiting] = []
    records = _undecided().filter(project__in=list(callers))
    for record in records.order_by("opened_at"):
        caller = callers[record.project_id]
        record.project = project = caller.project
        asked = information_asked(record)
        may_decide = caller.may_decide_exception(
            reported_by_account_id=record.reported_by_account_id or None
        )
        if record.state == "Reported" and may_decide and not asked:
            why = "The Project Lead reported on the exception: accept the plan or kill the project."
            found.append(
                Awaiting(project, record, "decide", why, record.reported_at or record.opened_at)
            )
        elif record.state == "Reported" and may_decide and asked:
            why = (
                "You asked the Project Lead for more information; nothing is asked of you "
                "until the report is rewritten (you may still decide on it)."
            )
            found.append(Awaiting(project, record, "wait", why, _at(asked, record)))
        elif caller.may_report_exception and asked:
            why = f"The sponsor asks: {asked.get('question', '')} Rewrite the exception report."
            found.append(Awaiting(project, record, "report", why, _at(asked, record)))
        elif caller.may_report_exception and record.state == "Open":
            why = "The project is beyond its tolerances: write the exception report."
            found.append(Awaiting(project, record, "report", why, record.opened_at))
        elif record.state == "Open" and caller.is_sponsor:
            why = (
                "Beyond tolerance; the Project Lead has not reported yet. Nothing to decide "
                "until the report comes."
            )
            found.append(Awaiting(project, record, "wait", why, record.opened_at))
    return found


def _at(event: Mapping[str, Any], record: ProjectException) -> dt.datetime:
    moment = dt.datetime.fromisoformat(str(event.get("at"))) if event.get("at") else None
    return moment or record.opened_at


# --- the lead's report and the sponsor's decision -------------------------------------------


def _locked_current(project: Project) -> ProjectException:
    record = (
        ProjectException.objects.select_for_update()
        .filter(project=project, state__in=UNDECIDED)
        .first()
    )
    if record is None:
        raise NotFound("This project has no open exception.")
    return record


def exception_report(
    *, caller: Caller, data: Mapping[str, Any], expected_revision: int | None = None
) -> ProjectException:
    """The Project Lead writes (or rewrites, until decided) the exception report. The plan's
    figures (budget and days added), when given, become a change request routed to the
    sponsor; a rewritten report withdraws the previous one's still-proposed change."""
    if not caller.may_report_exception:
        raise Forbidden("Only the Project Lead writes the exception report.")
    if not isinstance(data, Mapping):
        raise ValidationFailed({"": ["Send a JSON object."]})
    partial, errors = specs.validate(ExceptionReportSpec, data, creating=True)
    errors.raise_if_any()
    project = caller.project
    with transaction.atomic():
        record = _locked_current(project)
        check_version(record.revision, expected_revision, current_repr=record)
        before = specs.to_dict(ExceptionReportSpec, record)
        specs.apply(partial, record)
        now = timezone.now()
        previous = record.change_request_id
        if previous:
            change = change_for_update(project, previous, status="Proposed")
            if change is not None:
                change_withdraw(
                    caller, project, change, "Replaced by a rewritten exception report."
                )
            record.change_request = None
        if record.plan_budget is not None or record.plan_schedule_days is not None:
            record.change_request = change_create(
                caller=caller,
                data={
                    "summary": f"Exception plan for {project.key}"[:200],
                    "reason": record.recommendation,
                    "impactBudget": record.plan_budget,
                    "impactScheduleDays": record.plan_schedule_days,
                    "approverAccountId": project.sponsor_account_id or None,
                },
                approver_locked=True,
            )
        record.refresh_from_db(fields=["within", "events"])
        record.state = "Reported"
        record.reported_at = now
        record.reported_by_account_id = caller.account_id
        record.revision += 1
        _event(record, now, "reported", "The Project Lead reported on the exception.")
        record.save()
        after = specs.to_dict(ExceptionReportSpec, record)
        _audit(record, project, "exception.reported", caller.account_id, audit.diff(before, after))
        # Reported: the lead's notice of the exception and the sponsor's questions are answered.
        notifications.resolve(f"project_exception:{record.pk}:{caller.account_id}", at=now)
        notifications.resolve(f"project_exception:{record.pk}:asked:", at=now)
    return record


def information_asked(record: ProjectException) -> dict[str, Any] | None:
    """The sponsor's question the lead has not answered yet: the last "asked" event when no
    report followed it, else None."""
    for event in reversed(record.events or []):
        if event.get("kind") == "reported":
            return None
        if event.get("kind") == "asked":
            return dict(event)
    return None


def exception_ask(*, caller: Caller, question: Any) -> ProjectException:
    """The sponsor asks the Project Lead for more information on the exception report without
    deciding: recorded on the exception (an "asked" event with the question, who and when),
    audited as exception.asked, and the lead notified. Rewriting the report answers it. Only
    who may decide the exception asks (403), only on a reported one (409); the question is
    required (422)."""
    project = caller.project
    open_for_decision(caller)
    text, error = cleaning.text(question, max_length=TEXT_MAX)
    if error or not text:
        raise ValidationFailed({"question": [error or "Say what you need to know."]})
    with transaction.atomic():
        record = _locked_current(project)
        _may_decide(caller, record)
        if record.state != "Reported":
            raise Conflict("The Project Lead has not reported on this exception yet.")
        now = timezone.now()
        _event(record, now, "asked", f"The sponsor asked for more information: {text}")
        record.events[-1].update({"question": text, "by": caller.account_id})
        record.revision += 1
        record.save(update_fields=["events", "revision"])
        asked = sum(1 for e in record.events if e.get("kind") == "asked")
        _audit(
            record,
            project,
            "exception.asked",
            caller.account_id,
            {"question": {"before": None, "after": text}},
        )
        notifications.notify(
            kind="project_exception",
            recipient_account_id=project.lead_account_id or None,
            dedupe_key=f"project_exception:{record.pk}:asked:{asked}",
            subject=f"{project.key}: the sponsor asks for more on the exception report",
            body=(
                f"The sponsor of {project.name} ({project.key}) asks for more information "
                f"before deciding on the exception: {text} Answer by rewriting the report."
            ),
            url=reverse("status:exception", args=[project.key]),
            project_key=project.key,
        )
    return record


def _may_decide(caller: Caller, record: ProjectException) -> None:
    if not caller.may_decide_exception(reported_by_account_id=record.reported_by_account_id):
        raise Forbidden("Only the sponsor decides on an exception, and not on a report they wrote.")


def open_for_decision(caller: Caller) -> ProjectException:
    """The undecided exception `caller` may decide, checked before the decision's body: none
    open is 404, a caller who is not the sponsor (or wrote the report) 403."""
    record = current(caller.project)
    if record is None:
        raise NotFound("This project has no open exception.")
    _may_decide(caller, record)
    return record


def exception_decide(
    *, caller: Caller, data: Mapping[str, Any], expected_revision: int | None = None
) -> ProjectException:
    """The sponsor decides a reported exception: AcceptPlan approves the exception plan's
    change request (the existing change path), Kill takes the business case's Kill act with
    the comment as its reason. Either closes the exception."""
    project = caller.project
    open_for_decision(caller)
    if not isinstance(data, Mapping):
        raise ValidationFailed({"": ["Send a JSON object."]})
    partial, errors = specs.validate(ExceptionDecisionSpec, data, creating=True)
    decision, comment = partial.decision, partial.comment or ""
    if decision == "Kill" and not comment and "comment" not in errors:
        errors.add("comment", "Give the reason for killing the project.")
    errors.raise_if_any()
    assert decision is not None  # ExceptionDecisionSpec requires it on create
    with transaction.atomic():
        # The project first, as the business case's acts lock it (then this exception).
        Project.objects.select_for_update().filter(pk=project.pk).first()
        record = _locked_current(project)
        _may_decide(caller, record)  # again under the lock: the report may be rewritten since
        check_version(record.revision, expected_revision, current_repr=record)
        if record.state != "Reported":
            raise Conflict("The Project Lead has not reported on this exception yet.")
        now = timezone.now()
        if decision == "AcceptPlan":
            change = (
                ChangeRequest.objects.filter(pk=record.change_request_id).first()
                if record.change_request_id
                else None
            )
            if change is None:
                raise Conflict(
                    "The exception report carries no exception plan (no budget or days "
                    "added): ask the Project Lead for one, or kill the project."
                )
            if change.status == "Proposed":
                change_adjudicate(
                    caller=caller,
                    change_id=change.pk,
                    outcome="Approved",
                    decision_comment=comment or "Exception plan accepted.",
                    as_part_of_its_decision=True,
                )
            elif change.status != "Approved":
                raise Conflict(f"The exception plan's change request is {change.status}.")
        else:
            change = (
                change_for_update(project, record.change_request_id, status="Proposed")
                if record.change_request_id
                else None
            )
            if change is not None:
                change_withdraw(caller, project, change, "The project was killed.")
        # The act moved the figures: `track` may have noted it on the record meanwhile.
        record.refresh_from_db(fields=["within", "events"])
        record.state = "Decided"
        record.decision = decision
        record.decision_comment = comment
        record.decided_at = now
        record.decided_by_account_id = caller.account_id
        record.revision += 1
        _event(record, now, "decided", f"The sponsor decided: {decision}.")
        record.save()
        Project.objects.filter(pk=project.pk).update(exception_opened_at=None)
        project.exception_opened_at = None
        notifications.resolve(f"project_exception:{record.pk}:", at=now)
        _audit(
            record,
            project,
            "exception.decided",
            caller.account_id,
            {"decision": {"before": None, "after": decision}},
        )
        if decision == "Kill":
            # Decided first: the Kill act's end (`exception_settle`) finds nothing to settle.
            charter_kill(caller=caller, data={"reason": comment})
    return record


def plan_changes(changes: list[ChangeRequest]) -> dict[Any, DecidedElsewhere]:
    """Of these changes, the exception plans of an exception not yet decided: each is
    approved or rejected with the exception's decision (Accept plan or Kill), on the
    exception page, never on its own (`change_adjudicate` refuses it there)."""
    found = {}
    for change_id, key in ProjectException.objects.filter(
        change_request_id__in=[c.pk for c in changes], state__in=UNDECIDED_STATES
    ).values_list("change_request_id", "project__key"):
        found[change_id] = DecidedElsewhere(
            why=(
                f"This change is the exception plan of {key}'s exception report: it is "
                "accepted or refused with the exception's decision, not on its own."
            ),
            url=reverse("status:exception", args=[key]),
            label=f"Decide the exception of {key}",
        )
    return found


# --- an end of the business case settles the exception ---------------------------------------

ENDED_WORDS = {"kill": "killed", "archive": "archived", "close": "closed"}


def exception_settle(
    *, project: Project, act: str, label: str, caller: Caller, at: dt.datetime, reason: str = ""
) -> ProjectException | None:
    """An act of the business case that ends delivery (`act`: kill, archive or close) settles
    the project's undecided exception, in the act's transaction: state Settled naming the act
    (settledByAct, an event saying which act and why), its exception plan's Proposed change
    request withdrawn with the reason (`change_withdraw`), the project's in-exception flag
    cleared (the banner, the portfolio's flag and filter) and the unread notifications of it
    marked read. Audited as exception.settled. None when there was no undecided exception
    (the sponsor's Kill decision marks its exception Decided before it takes the act)."""
    record = (
        ProjectException.objects.select_for_update()
        .filter(project=project, state__in=UNDECIDED)
        .first()
    )
    if record is None:
        return None
    what = ENDED_WORDS.get(act, act)
    why = f" Reason given: {reason}" if reason else ""
    change = (
        change_for_update(project, record.change_request_id, status="Proposed")
        if record.change_request_id
        else None
    )
    if change is not None:
        comment = (
            f"Withdrawn because the business case was {what} (its {label} act) while this "
            "exception plan awaited the sponsor's decision: the exception is settled."
        )
        room = 2000 - len(comment)
        if why and room > 1:
            comment += why if len(why) <= room else why[: room - 1] + "…"
        change_withdraw(caller, project, change, comment)
    before = record.state
    record.state = "Settled"
    record.settled_by_act = act
    record.settled_at = at
    record.settled_by_account_id = caller.account_id
    record.revision += 1
    _event(
        record,
        at,
        "settled",
        f"Settled by the business case's {label} act: the project was {what}.{why}",
    )
    record.events[-1]["act"] = act
    record.save()
    Project.objects.filter(pk=project.pk).update(exception_opened_at=None)
    project.exception_opened_at = None
    if caller.project is not project:
        caller.project.exception_opened_at = None
    Notification.objects.filter(
        kind="project_exception",
        dedupe_key__startswith=f"project_exception:{record.pk}:",
        read_at=None,
    ).update(read_at=at)
    _audit(
        record,
        project,
        "exception.settled",
        caller.account_id,
        {
            "state": {"before": before, "after": "Settled"},
            "settledByAct": {"before": None, "after": act},
            **(
                {"withdrawnChange": {"before": None, "after": str(change.pk)}}
                if change is not None
                else {}
            ),
        },
    )
    return record
