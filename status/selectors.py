"""Reads for status pages, reports, the API and the portfolio. `load_facts` fetches what the
derivations need for any number of projects in a constant number of queries: the register
figures are aggregated per project in the database, never row by row in Python, except the
approved variations, which `registers.derive.variations` counts over the Approved changes
(read in one query) so that the rule is written once; the
single-project status uses the same path with one project and adds the rows behind its
drivers."""

import dataclasses
import datetime as dt
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

from django.db import connection
from django.db.models import DateField, DateTimeField, DecimalField, JSONField
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from charter.models import BusinessCase
from governance.models import Project, SiteSettings
from governance.services import rag_thresholds
from registers.derive import approved_change_facts, baseline_approved_at, variations
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from status import derive, earned_value
from status.models import ProjectStatus, StatusReport

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
    "score",
]
CHANGE_FIELDS = ["id", "summary", "status", "dimensions", "application_record", "created_at"]

# The risk score: the risk's generated column (registers.models.RISK_SCORE).
SCORE_SQL = "score"
# registers.derive.application_state in SQL, over Proposed and Approved changes whose
# dimensions are read as JSON text (tests prove it equal to the Python rule for every input).
UNAPPLIED_SQL = "(application_record IS NULL OR CAST(application_record AS TEXT) = '{}')"
AWAITING_SQL = (
    f"(status = 'Approved' AND {UNAPPLIED_SQL} AND (dims IS NULL OR dims = '[]' "
    "OR dims LIKE %s OR dims LIKE %s OR dims LIKE %s))"
)
PENDING_SCOPE_SQL = (
    f"(dims LIKE %s AND created_at <= %s AND (status = 'Proposed' "
    f"OR (status = 'Approved' AND {UNAPPLIED_SQL})))"
)
# The same changes raised after `now` (their wait starts later).
LATER_SCOPE_SQL = (
    f"(dims LIKE %s AND created_at > %s AND (status = 'Proposed' "
    f"OR (status = 'Approved' AND {UNAPPLIED_SQL})))"
)

FIGURES_SQL = """
SELECT p.id,
  w.packages, w.complete, w.blocked, w.unplanned, w.with_figures, w.budget_sum, w.baseline_sum,
  w.baselined, w.forecast_sum, w.latest_end, w.latest_planned, w.latest_locked,
  r.risks, r.open_risks, r.top_score, r.red_risks, r.amber_risks, r.unscored,
  d.pending,
  c.open_changes, c.awaiting, c.pending_scope, c.oldest_scope, c.later_scope,
  {plan_present}, {plan_version}, {plan_end}, {plan_approved_at}, {plan_benefit},
  {status_columns},
  {case_columns}
FROM governance_project p
LEFT JOIN status_projectstatus s ON s.project_id = p.id
LEFT JOIN charter_businesscase b ON b.project_id = p.id
LEFT JOIN (
  SELECT project_id, COUNT(*) AS packages,
    SUM(CASE WHEN status = 'Complete' THEN 1 ELSE 0 END) AS complete,
    SUM(CASE WHEN status = 'Blocked' THEN 1 ELSE 0 END) AS blocked,
    SUM(CASE WHEN planned_start_date IS NULL OR planned_end_date IS NULL OR budget IS NULL
        THEN 1 ELSE 0 END) AS unplanned,
    SUM(CASE WHEN budget IS NOT NULL OR budget_baseline IS NOT NULL
        OR budget_forecast IS NOT NULL THEN 1 ELSE 0 END) AS with_figures,
    SUM(COALESCE(budget, 0)) AS budget_sum,
    SUM(COALESCE(budget_baseline, 0)) AS baseline_sum,
    COUNT(budget_baseline) AS baselined,
    SUM(COALESCE(budget_forecast, budget, 0)) AS forecast_sum,
    MAX(COALESCE(forecast_end_date, planned_end_date)) AS latest_end,
    MAX(planned_end_date) AS latest_planned,
    MAX(CASE WHEN planned_dates_baseline_locked_at IS NOT NULL THEN planned_end_date END)
        AS latest_locked
  FROM registers_workpackage WHERE project_id {in_ids} GROUP BY project_id
) w ON w.project_id = p.id
LEFT JOIN (
  SELECT project_id, COUNT(*) AS risks,
    SUM(CASE WHEN status <> 'Closed' THEN 1 ELSE 0 END) AS open_risks,
    MAX(CASE WHEN status <> 'Closed' THEN {score} END) AS top_score,
    SUM(CASE WHEN status <> 'Closed' AND {score} >= %s THEN 1 ELSE 0 END) AS red_risks,
    SUM(CASE WHEN status <> 'Closed' AND {score} >= %s AND {score} < %s THEN 1 ELSE 0 END)
        AS amber_risks,
    SUM(CASE WHEN status <> 'Closed' AND {score} IS NULL THEN 1 ELSE 0 END) AS unscored
  FROM registers_risk WHERE direction = 'Risk' AND project_id {in_ids} GROUP BY project_id
) r ON r.project_id = p.id
LEFT JOIN (
  SELECT project_id, COUNT(*) AS pending FROM registers_decision
  WHERE made_on IS NULL AND project_id {in_ids} GROUP BY project_id
) d ON d.project_id = p.id
LEFT JOIN (
  SELECT project_id, COUNT(*) AS open_changes,
    SUM(CASE WHEN {awaiting} THEN 1 ELSE 0 END) AS awaiting,
    SUM(CASE WHEN {pending_scope} THEN 1 ELSE 0 END) AS pending_scope,
    MIN(CASE WHEN {pending_scope} THEN created_at END) AS oldest_scope,
    MIN(CASE WHEN {later_scope} THEN created_at END) AS later_scope
  FROM (
    SELECT project_id, status, application_record, created_at,
           CAST(dimensions AS TEXT) AS dims
    FROM registers_changerequest
    WHERE status IN ('Proposed', 'Approved') AND project_id {in_ids}
  ) ch GROUP BY project_id
) c ON c.project_id = p.id
WHERE p.id {in_ids}
"""


def next_review(project: Project, case: BusinessCase | None) -> dict:
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


def _int(value) -> int:
    return int(value or 0)


def _money(value) -> Decimal:
    if value is None:
        return Decimal("0")
    if not isinstance(value, Decimal):
        value = Decimal(str(value))
    return value.quantize(Decimal("0.01"))


def _date(value) -> dt.date | None:
    if value is None or isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value)[:10])


def _datetime(value) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, dt.datetime):
        value = parse_datetime(str(value))
    if timezone.is_naive(value):
        value = timezone.make_aware(value, dt.UTC)
    return value


def _json(value):
    if isinstance(value, str):
        return json.loads(value)
    return value


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
STATUS_FIELDS = [f for f in ProjectStatus._meta.concrete_fields if f.name in STATUS_FIELD_NAMES]
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
}
# In the model's field order, as Model.from_db expects.
CASE_FIELDS = [f for f in BusinessCase._meta.concrete_fields if f.name in CASE_FIELD_NAMES]


def _column(alias: str, field) -> str:
    column = f"{alias}.{connection.ops.quote_name(field.column)}"
    if isinstance(field, JSONField):
        return f"CAST({column} AS TEXT)"
    return column


def _converter(field):
    """How a raw column value becomes what the model field holds, on SQLite and PostgreSQL
    alike (None: as it comes)."""
    if isinstance(field, JSONField):
        return _json
    if isinstance(field, DateTimeField):
        return _datetime
    if isinstance(field, DateField):
        return _date
    if isinstance(field, DecimalField):
        return _money
    return None


def _loader(fields):
    """Reads raw columns into a plain record with the model's attribute names (the bulk path
    reads a thousand of them; a model instance per row would cost more than the query)."""
    names = [f.attname for f in fields]
    converters = [_converter(f) for f in fields]

    def load(values):
        return SimpleNamespace(
            **{
                name: value if value is None or convert is None else convert(value)
                for name, convert, value in zip(names, converters, values, strict=True)
            }
        )

    return load


# The approved planBaseline ({"version", "approvedAt", "workPackages": {id: {...,
# "plannedEndDate"}}, "totalBenefit", ...}): whether there is one, its version, its latest
# plannedEndDate, when it was approved and its totalBenefit as JSON text (SQL NULL when the
# key is absent, 'null' when it holds none), read in the database with
# each engine's JSON functions (a plan is a few kilobytes; the portfolio reads a thousand).
PLAN_SQL = {
    "postgresql": (
        "jsonb_typeof(b.plan_baseline) = 'object'",
        "b.plan_baseline ->> 'version'",
        "(SELECT MAX(e.value ->> 'plannedEndDate') FROM jsonb_each(CASE WHEN "
        "jsonb_typeof(b.plan_baseline -> 'workPackages') = 'object' THEN "
        "b.plan_baseline -> 'workPackages' ELSE '{}'::jsonb END) e)",
        "b.plan_baseline ->> 'approvedAt'",
        "CASE WHEN jsonb_typeof(b.plan_baseline) = 'object' "
        "THEN (b.plan_baseline -> 'totalBenefit')::text END",
    ),
    "sqlite": (
        "json_type(b.plan_baseline) = 'object'",
        "json_extract(b.plan_baseline, '$.version')",
        "(SELECT MAX(CASE WHEN e.type = 'object' THEN json_extract(e.value, '$.plannedEndDate') "
        "END) FROM json_each(b.plan_baseline, '$.workPackages') e)",
        "json_extract(b.plan_baseline, '$.approvedAt')",
        "CASE WHEN json_type(b.plan_baseline) = 'object' "
        "AND json_type(b.plan_baseline, '$.totalBenefit') IS NOT NULL "
        "THEN COALESCE(CAST(json_extract(b.plan_baseline, '$.totalBenefit') AS TEXT), 'null') "
        "END",
    ),
}


def _plan_version(value):
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return value


def _plan_benefit(value) -> tuple[bool, Decimal | None]:
    """The plan baseline's totalBenefit as read by PLAN_SQL: whether the key was recorded, and
    the amount (None for null or anything that is not a number)."""
    if value is None:
        return False, None
    text = str(value).strip()
    if text == "null":
        return True, None
    try:
        amount = Decimal(text)
    except ArithmeticError:
        return True, None
    return True, amount if amount.is_finite() else None


def _figures_rows(ids: list[int], thresholds: Mapping[str, Any], now: dt.datetime):
    if connection.vendor == "postgresql":
        # One array parameter instead of a thousand: PostgreSQL plans it much faster.
        in_ids, id_params = "= ANY(%s)", [list(ids)]
    else:
        in_ids, id_params = f"IN ({', '.join(['%s'] * len(ids))})", list(ids)
    plan_present, plan_version, plan_end, plan_approved_at, plan_benefit = PLAN_SQL[
        connection.vendor
    ]
    sql = FIGURES_SQL.format(
        in_ids=in_ids,
        plan_present=plan_present,
        plan_version=plan_version,
        plan_end=plan_end,
        plan_approved_at=plan_approved_at,
        plan_benefit=plan_benefit,
        score=SCORE_SQL,
        awaiting=AWAITING_SQL,
        pending_scope=PENDING_SCOPE_SQL,
        later_scope=LATER_SCOPE_SQL,
        status_columns=", ".join(_column("s", f) for f in STATUS_FIELDS),
        case_columns=", ".join(_column("b", f) for f in CASE_FIELDS),
    )
    at = connection.ops.adapt_datetimefield_value(now)
    amendment = ['%"Scope"%', '%"Quality"%', '%"Other"%']
    scope = ['%"Scope"%', at]
    red, amber = thresholds["riskRedMinScore"], thresholds["riskAmberMinScore"]
    params = [
        *id_params,
        red,
        amber,
        red,
        *id_params,
        *id_params,
        *amendment,
        *scope,
        *scope,
        *scope,
        *id_params,
        *id_params,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def load_facts(
    projects: Sequence[Project],
    *,
    thresholds: Mapping[str, Any],
    now: dt.datetime,
    detail: bool = False,
) -> dict[int, derive.ProjectFacts]:
    """ProjectFacts per project id, for any number of projects in three queries: one that
    aggregates the registers, the status and the business case per project in the database,
    and two small ones for materialised risks and the decisions that treat them. With `detail`
    (a project's own status) it also loads the full status, the business case and the
    register rows that become the listed drivers."""
    by_id = {p.pk: p for p in projects}
    ids = list(by_id)
    if not ids:
        return {}
    facts: dict[int, derive.ProjectFacts] = {}
    status_end = 30 + len(STATUS_FIELDS)
    load_status = _loader(STATUS_FIELDS)
    load_case = _loader(CASE_FIELDS)
    rows = _figures_rows(ids, thresholds, now)
    approved_changes = approved_change_facts(ids)
    for row in rows:
        (pk, *w) = row[:13]
        r, d, c = row[13:19], row[19], row[20:25]
        plan, s, b = row[25:30], row[30:status_end], row[status_end:]
        project = by_id[pk]
        plan_approved_at = baseline_approved_at({"approvedAt": plan[3]}) if plan[0] else None
        counted = variations(approved_changes.get(pk, []))
        figures = derive.Figures(
            packages=_int(w[0]),
            complete=_int(w[1]),
            blocked=_int(w[2]),
            unplanned=_int(w[3]),
            with_budget_figures=_int(w[4]),
            budget_sum=_money(w[5]),
            baseline_sum=_money(w[6]),
            baselined_packages=_int(w[7]),
            forecast_sum=_money(w[8]),
            latest_end=_date(w[9]),
            latest_planned_end=_date(w[10]),
            latest_locked_end=_date(w[11]),
            risks=_int(r[0]),
            open_risks=_int(r[1]),
            top_score=int(r[2]) if r[2] is not None else None,
            red_risks=_int(r[3]),
            amber_risks=_int(r[4]),
            unscored_risks=_int(r[5]),
            pending_decisions=_int(d),
            open_changes=_int(c[0]),
            variation_budget=_money(counted.budget),
            variation_days=counted.days,
            budget_variations=counted.budget_changes,
            awaiting_application=_int(c[1]),
            pending_scope=_int(c[2]),
            oldest_pending_scope_at=_datetime(c[3]),
            next_pending_scope_at=_datetime(c[4]),
        )
        status = default_status(project) if s[0] is None else load_status(s)
        case = None
        if b[0] is not None:
            case = load_case(b)
        benefit_recorded, approved_benefit = _plan_benefit(plan[4]) if plan[0] else (False, None)
        try:
            plan_end = _date(plan[2])
        except ValueError:
            plan_end = None
        facts[pk] = derive.ProjectFacts(
            project=project,
            status=status,
            case=case,
            figures=figures,
            has_plan_baseline=bool(plan[0]),
            plan_baseline_version=_plan_version(plan[1]),
            plan_baseline_end=plan_end,
            plan_baseline_approved_at=plan_approved_at,
            plan_baseline_benefit_recorded=benefit_recorded,
            plan_baseline_benefit=approved_benefit,
        )
    treated = set(
        Decision.objects.filter(project_id__in=ids, treated_risk_id__isnull=False).values_list(
            "project_id", "treated_risk_id"
        )
    )
    for project_id, risk_id, title in (
        Risk.objects.filter(project_id__in=ids, direction="Risk", materialised=True)
        .exclude(status="Closed")
        .order_by("title")
        .values_list("project_id", "id", "title")
    ):
        if (project_id, str(risk_id)) not in treated:
            facts[project_id].untreated.append((risk_id, title))
    if detail:
        for project_facts in facts.values():
            _add_detail(project_facts)
    return facts


def _add_detail(facts: derive.ProjectFacts) -> None:
    """The full status and business case, and the register rows behind the drivers."""
    project = facts.project
    status = ProjectStatus.objects.filter(project=project).first()
    if status is not None:
        status.project = project
        facts.status = status
    case = BusinessCase.objects.filter(project=project).first()
    if case is not None:
        case.project = project
        facts.case = case
    facts.work_packages = [
        derive.WorkPackageFact(*row)
        for row in WorkPackage.objects.filter(project=project).values_list(*WP_FIELDS)
    ]
    facts.risks = [
        derive.RiskFact(*row)
        for row in Risk.objects.filter(project=project).values_list(*RISK_FIELDS)
    ]
    facts.changes = [
        derive.ChangeFact(*row)
        for row in ChangeRequest.objects.filter(
            project=project, status__in=["Proposed", "Approved"]
        ).values_list(*CHANGE_FIELDS)
    ]
    facts.detailed = True


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
    earned = earned_value.for_projects(list(facts), timezone.localdate(now))
    return {
        pk: dataclasses.replace(
            derive.derive(
                project_facts,
                thresholds=thresholds,
                br_cadence_default=site.br_cadence_default,
                now=now,
            ),
            earned_value=earned[pk],
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
