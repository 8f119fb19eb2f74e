"""Reads for status pages, reports, the API and the portfolio. `load_facts` fetches what the
derivations need for any number of projects in a constant number of queries (one per table,
never one per project); the single-project status page uses the same path with one project."""

import uuid
from collections.abc import Iterable, Sequence

from django.db.models import Q

from charter.models import BusinessCase
from governance.models import Project, SiteSettings
from governance.services import rag_thresholds
from governance.status import derive
from governance.status.models import ProjectStatus, StatusReport
from registers.models import ChangeRequest, Decision, Risk, WorkPackage

WP_FIELDS = [
    "id",
    "name",
    "status",
    "budget",
    "budget_baseline",
    "budget_forecast",
    "planned_start_date",
    "planned_end_date",
    "forecast_end_date",
    "planned_dates_baseline_locked_at",
]
RISK_FIELDS = [
    "id",
    "title",
    "status",
    "direction",
    "materialised",
    "impact",
    "likelihood",
    "residual_impact",
    "residual_likelihood",
]
CHANGE_FIELDS = [
    "id",
    "summary",
    "status",
    "dimensions",
    "application_record",
    "created_at",
    "impact_budget",
    "impact_schedule_days",
]
# The business-case fields the derivations read (the big prose fields stay in the database).
CASE_FIELDS = [
    "project",
    "version",
    "theme",
    "plan_baseline",
    "decision_authority",
    "project_manager",
    "steering_committee",
    "first_steerco_scheduled_for",
    "first_steerco_held_at",
    "adoption_affected",
    "adoption_kpi",
    "adoption_owner",
    "change_saturation",
    "realisation_started_at",
    "last_realisation_review_at",
]


def default_status(project: Project) -> ProjectStatus:
    """The spec's defaults for a project whose status was never saved (not written)."""
    return ProjectStatus(project=project)


def load_facts(projects: Sequence[Project]) -> dict[int, derive.ProjectFacts]:
    """ProjectFacts per project id: seven queries whatever the number of projects."""
    by_id = {p.pk: p for p in projects}
    ids = list(by_id)
    if not ids:
        return {}
    statuses = {s.project_id: s for s in ProjectStatus.objects.filter(project_id__in=ids)}
    cases = {
        c.project_id: c for c in BusinessCase.objects.filter(project_id__in=ids).only(*CASE_FIELDS)
    }
    facts = {}
    for pk, project in by_id.items():
        status = statuses.get(pk) or default_status(project)
        status.project = project
        case = cases.get(pk)
        if case is not None:
            case.project = project
        facts[pk] = derive.ProjectFacts(project=project, status=status, case=case)
    for row in WorkPackage.objects.filter(project_id__in=ids).values_list("project_id", *WP_FIELDS):
        facts[row[0]].work_packages.append(derive.WorkPackageFact(*row[1:]))
    for row in Risk.objects.filter(project_id__in=ids).values_list("project_id", *RISK_FIELDS):
        facts[row[0]].risks.append(derive.RiskFact(*row[1:]))
    for row in ChangeRequest.objects.filter(
        project_id__in=ids, status__in=["Proposed", "Approved"]
    ).values_list("project_id", *CHANGE_FIELDS):
        facts[row[0]].changes.append(derive.ChangeFact(*row[1:]))
    # Only pending decisions and those treating a risk matter to the derivations.
    for project_id, made_on, treated in Decision.objects.filter(
        Q(made_on__isnull=True) | Q(treated_risk_id__isnull=False),
        project_id__in=ids,
    ).values_list("project_id", "made_on", "treated_risk_id"):
        facts[project_id].decisions.append(derive.DecisionFact(made_on, treated))
    return facts


def views_for(
    projects: Sequence[Project], *, site: SiteSettings | None = None, now=None
) -> dict[int, derive.StatusView]:
    """The derived status of each project, by project id."""
    site = site or SiteSettings.load()
    thresholds = rag_thresholds(site)
    return {
        pk: derive.derive(
            facts, thresholds=thresholds, br_cadence_default=site.br_cadence_default, now=now
        )
        for pk, facts in load_facts(projects).items()
    }


def view_for(project: Project, *, now=None) -> derive.StatusView:
    return views_for([project], now=now)[project.pk]


def published_reports(project: Project) -> list[StatusReport]:
    """Published reports, newest first."""
    return list(
        StatusReport.objects.filter(project=project, state="Published").order_by(
            "-published_at", "-created_at"
        )
    )


def draft_report(project: Project) -> StatusReport | None:
    return StatusReport.objects.filter(project=project, state="Draft").first()


def reports(project: Project, *, states: Iterable[str] | None = None) -> list[StatusReport]:
    queryset = StatusReport.objects.filter(project=project)
    if states:
        queryset = queryset.filter(state__in=list(states))
    return list(queryset.order_by("state", "-published_at", "-created_at"))


def report_in(project: Project, report_id) -> StatusReport | None:
    """The project's report with this id, or None (also for a malformed id)."""
    try:
        pk = uuid.UUID(str(report_id))
    except ValueError:
        return None
    report = StatusReport.objects.filter(project=project, pk=pk).first()
    if report is not None:
        report.project = project
    return report
