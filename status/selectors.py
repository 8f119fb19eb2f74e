"""Reads for status pages, reports, the API and the portfolio. `load_facts` loads what the
status model reads for any number of projects in a fixed number of ORM queries, each row by
field name: the status, the business case (with its plan baseline), the work packages, the
Risk items, the decisions that are pending or treat a risk, and the Proposed and Approved
changes; one query per table whatever the number of projects. Every figure is then derived in
Python, once, by `status.derive` (`derive.figures_of`) with the registers' own rules
(`application_state`, `is_pending_scope`, `as_plan_baseline`, `package_schedule`), and the
earned value (`status.earned_value`) from the same work-package rows. A project's own status
takes the same path with one project, and its rows become the listed drivers."""

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from django.db.models import F, Model, Q, QuerySet
from django.utils import timezone

from charter.models import BusinessCase
from governance.models import Project, SiteSettings
from governance.services import rag_thresholds
from governance.sql import AnyOf
from registers import selectors as register_selectors
from registers.derive import as_plan_baseline, baseline_approved_at
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from status import derive, earned_value
from status.models import ProjectStatus, StatusReport

# The columns each table is read with, by name; those only a project's own page shows (its
# timeline and risk matrices) are left out of the portfolio's read of a thousand projects.
WP_FIELDS = [f.name for f in dataclasses.fields(derive.WorkPackageFact)]
RISK_FIELDS = [f.name for f in dataclasses.fields(derive.RiskFact)]
PAGE_ONLY_FIELDS = {
    "type",
    "forecast_start_date",
    "actual_start_date",
    "impact",
    "likelihood",
    "residual_impact",
    "residual_likelihood",
}
DECISION_FIELDS = [f.name for f in dataclasses.fields(derive.DecisionFact)]
CHANGE_FIELDS = [f.name for f in dataclasses.fields(derive.ChangeFact)]


def _read_fields(fields: list[str], detail: bool) -> list[str]:
    """The columns a record (`fields`: its fields in order) is read with: all of them on a
    project's own status, else all but the page-only ones, which come last in the record, so
    that a row read as a tuple fills the record's leading fields by position."""
    if detail:
        return fields
    kept = [f for f in fields if f not in PAGE_ONLY_FIELDS]
    if kept != fields[: len(kept)]:
        raise ValueError(f"the page-only fields of {fields} are not its last")
    return kept


PORTFOLIO_WP_FIELDS = _read_fields(WP_FIELDS, False)
PORTFOLIO_RISK_FIELDS = _read_fields(RISK_FIELDS, False)
OPEN_CHANGE_STATES = ("Proposed", "Approved")


def next_review(project: Project, case: BusinessCase | None) -> dict[str, Any]:
    """When the next benefit review is due (the realisation page asks, through
    `charter.reviews`): the project's cadence or the site's, the same computation the status
    page and the portfolio show."""
    status = ProjectStatus.objects.filter(project=project).first() or ProjectStatus(project=project)
    return derive.review_due(
        status,
        case,
        case.approval_status if case is not None else "",
        SiteSettings.load().br_cadence_default,
        timezone.localdate(),
    )


def default_status(project: Project) -> ProjectStatus:
    """The spec's defaults for a project whose status was never saved (not written)."""
    return ProjectStatus(project=project)


# The status and business-case columns the bulk path reads (the prose and the nested objects
# of the business case stay in the database; a project's own status loads them in full).
STATUS_FIELD_NAMES = {
    "project",
    "overall_rag",
    "overall_reason",
    "phase",
    "reporting_cadence",
    "cost_rag_override",
    "schedule_rag_override",
    "scope_rag_override",
    "risk_rag_override",
    "revised_forecast",
    "last_updated_at",
    "br_cadence",
    "revision",
}
CASE_FIELD_NAMES = {
    "project",
    "theme",
    "version",
    "adoption_affected",
    "adoption_kpi",
    "adoption_owner",
    "change_saturation",
    "realisation_started_at",
    "last_realisation_review_at",
    "tolerance_days",
    "tolerance_cost_percent",
    "tolerance_cost_amount",
    "tolerance_benefit_percent",
    "financial_case",
    "plan_baseline",
}


def _attnames(model: type[Model], names: set[str]) -> list[str]:
    return [f.attname for f in model._meta.concrete_fields if f.name in names]


STATUS_COLUMNS = _attnames(ProjectStatus, STATUS_FIELD_NAMES)
CASE_COLUMNS = _attnames(BusinessCase, CASE_FIELD_NAMES)


def _of(ids: list[int]) -> AnyOf:
    """The rows of these projects: on PostgreSQL one array parameter however many (the
    driver scans a statement of a thousand placeholders out of its text on every run)."""
    return AnyOf(F("project_id"), ids)


def _statuses(ids: list[int], detail: bool) -> dict[int, Any]:
    """Each project's stored status: the model in full on a project's own status, else a
    plain record of the columns the derivations read."""
    rows = ProjectStatus.objects.filter(_of(ids))
    if detail:
        return {status.project_id: status for status in rows}
    return {row["project_id"]: SimpleNamespace(**row) for row in rows.values(*STATUS_COLUMNS)}


def _cases(ids: list[int], detail: bool) -> dict[int, Any]:
    rows = BusinessCase.objects.filter(_of(ids))
    if detail:
        return {case.project_id: case for case in rows}
    return {row["project_id"]: SimpleNamespace(**row) for row in rows.values(*CASE_COLUMNS)}


def _grouped(
    rows: QuerySet[Any], fields: Sequence[str], make: Callable[..., Any]
) -> dict[Any, list[Any]]:
    """The rows as records (`make`) by project id, each read as a tuple of `fields` (the
    record's leading fields, in its order) and passed by position: no dictionary a row."""
    at = list(fields).index("project_id")
    found: dict[Any, list[Any]] = {}
    for row in rows.values_list(*fields):
        found.setdefault(row[at], []).append(make(*row))
    return found


def load_facts(
    projects: Sequence[Project],
    *,
    thresholds: Mapping[str, Any],
    now: dt.datetime,
    detail: bool = False,
) -> dict[int, derive.ProjectFacts]:
    """ProjectFacts per project id, for any number of projects in six queries, one per table
    (status, business case, work packages, risks, decisions, changes), every row read by field
    name, every figure derived in Python (`derive.figures_of`). With `detail` (a project's own
    status) the status and the business case are the full models and the rows become the
    listed drivers."""
    by_id = {p.pk: p for p in projects}
    ids = list(by_id)
    if not ids:
        return {}
    statuses = _statuses(ids, detail)
    cases = _cases(ids, detail)
    packages = _grouped(
        register_selectors.ordered(WorkPackage.objects.filter(_of(ids))),
        WP_FIELDS if detail else PORTFOLIO_WP_FIELDS,
        derive.WorkPackageFact,
    )
    risks = _grouped(
        Risk.objects.filter(_of(ids), direction="Risk").order_by("title", "id"),
        RISK_FIELDS if detail else PORTFOLIO_RISK_FIELDS,
        derive.RiskFact,
    )
    decisions = _grouped(
        Decision.objects.filter(_of(ids)).filter(
            Q(made_on__isnull=True) | Q(treated_risk_id__isnull=False)
        ),
        DECISION_FIELDS,
        derive.DecisionFact,
    )
    changes = _grouped(
        ChangeRequest.objects.filter(_of(ids), status__in=OPEN_CHANGE_STATES).order_by(
            "created_at", "id"
        ),
        CHANGE_FIELDS,
        derive.ChangeFact,
    )
    facts: dict[int, derive.ProjectFacts] = {}
    for pk, project in by_id.items():
        status = statuses.get(pk) or default_status(project)
        case = cases.get(pk)
        if detail:
            status.project = project
            if case is not None:
                case.project = project
        plan = as_plan_baseline(case.plan_baseline if case is not None else None)
        project_risks = risks.get(pk, [])
        project_decisions = decisions.get(pk, [])
        recorded, benefit = derive.plan_benefit(plan)
        facts[pk] = derive.ProjectFacts(
            project=project,
            status=status,
            case=case,
            figures=derive.figures_of(
                packages=packages.get(pk, []),
                risks=project_risks,
                decisions=project_decisions,
                changes=changes.get(pk, []),
                plan=plan,
                thresholds=thresholds,
                now=now,
            ),
            untreated=derive.untreated_risks(project_risks, project_decisions),
            has_plan_baseline=plan is not None,
            plan_baseline_version=derive.plan_version(plan),
            plan_baseline_end=derive.plan_end(plan),
            plan_baseline_approved_at=baseline_approved_at(plan),
            plan_baseline_benefit_recorded=recorded,
            plan_baseline_benefit=benefit,
            detailed=detail,
            plan_baseline=plan,
            work_packages=packages.get(pk, []),
            risks=project_risks,
            changes=changes.get(pk, []),
        )
    return facts


def _earned(facts: derive.ProjectFacts, today: dt.date) -> earned_value.ProjectEarnedValue:
    """The project's earned value from the packages the model loaded."""
    plan = facts.plan_baseline
    return earned_value.project_values(
        [earned_value.inputs_of(wp, plan) for wp in facts.work_packages], today
    )


def views_for(
    projects: Sequence[Project],
    *,
    site: SiteSettings | None = None,
    now: dt.datetime | None = None,
    detail: bool = False,
) -> dict[int, derive.StatusView]:
    """The derived status of each project, by project id."""
    site = site or SiteSettings.load()
    thresholds = rag_thresholds(site)
    now = now or timezone.now()
    facts = load_facts(projects, thresholds=thresholds, now=now, detail=detail)
    today = timezone.localdate(now)
    return {
        pk: dataclasses.replace(
            derive.derive(
                project_facts,
                thresholds=thresholds,
                br_cadence_default=site.br_cadence_default,
                now=now,
            ),
            earned_value=_earned(project_facts, today),
        )
        for pk, project_facts in facts.items()
    }


def view_for(project: Project, *, now: dt.datetime | None = None) -> derive.StatusView:
    """One project's status with the register rows behind its drivers (its own pages, API and
    reports): the same aggregation as the portfolio, for one project."""
    return views_for([project], now=now, detail=True)[project.pk]


def published_reports(project: Project) -> list[StatusReport]:
    """Published reports, newest first."""
    return reports(project, states=["Published"])


def reports(project: Project, *, states: Iterable[str] | None = None) -> list[StatusReport]:
    queryset = StatusReport.objects.filter(project=project)
    if states:
        queryset = queryset.filter(state__in=list(states))
    found = list(queryset.order_by("state", "-published_at", "-created_at"))
    for report in found:
        report.project = project
    return found


def report_in(project: Project, report_id: object) -> StatusReport | None:
    """The project's report with this id, or None (also for a malformed id)."""
    try:
        pk = uuid.UUID(str(report_id))
    except ValueError:
        return None
    report = StatusReport.objects.filter(project=project, pk=pk).first()
    if report is not None:
        report.project = project
    return report
