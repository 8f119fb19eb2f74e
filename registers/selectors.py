"""Every read of the registers that a page, the API, an export or a task needs, with its
ordering and joins, in a constant number of queries whatever the number of rows."""

import uuid
from decimal import Decimal
from functools import cache

from django.db import connection
from django.db.models import F, QuerySet, Sum
from django.db.models.functions import Lower

from governance.models import Project
from registers.models import (
    REGISTER_MODELS,
    ChangeRequest,
    Decision,
    Risk,
    SteeringMinutes,
    WorkPackage,
)


def ordered(queryset: QuerySet[WorkPackage]) -> QuerySet[WorkPackage]:
    """The work-package register's order: sortOrder, then plannedStartDate, then name (nulls
    last, names case-insensitively)."""
    return queryset.order_by(
        F("sort_order").asc(nulls_last=True),
        F("planned_start_date").asc(nulls_last=True),
        Lower("name"),
        "created_at",
    )


def work_packages(project: Project) -> list[WorkPackage]:
    """sortOrder, then plannedStartDate, then name. Through the related manager, so each
    row's `project` is the given instance (no query per row)."""
    return list(ordered(project.work_packages.all()))


def risks(project: Project) -> list[Risk]:
    """Open before Closed, then the newest first."""
    return sorted(project.risks.order_by("-created_at", "-id"), key=lambda r: r.status == "Closed")


def treating_decisions(project: Project) -> dict[str, list[tuple[str, str]]]:
    """Risk id -> (id, decision) of the decisions that treat it (treatedRiskId), oldest
    first."""
    treating: dict[str, list[tuple[str, str]]] = {}
    rows = (
        Decision.objects.filter(project=project, treated_risk_id__isnull=False)
        .order_by("created_at")
        .values_list("treated_risk_id", "id", "decision")
    )
    for risk_id, decision_id, text in rows:
        assert risk_id is not None  # the filter keeps treating decisions only
        treating.setdefault(risk_id, []).append((str(decision_id), text))
    return treating


def decisions(project: Project) -> list[Decision]:
    """The log, newest entry first."""
    return list(project.decisions.order_by("-created_at", "-id"))


def changes(project: Project) -> list[ChangeRequest]:
    """Newest first."""
    return list(project.changes.order_by("-created_at", "-id"))


def steering_minutes(project: Project) -> list[SteeringMinutes]:
    return list(project.steering_minutes.all())


def work_package_names(project: Project) -> dict[uuid.UUID, str]:
    return dict(project.work_packages.values_list("id", "name"))


@cache
def _register_counts_sql() -> str:
    """One statement of four scalar counts, each answered from its project index. Written
    out rather than built with the ORM's Subquery annotations: those cost more to compile
    and to plan than the counting itself."""
    quote = connection.ops.quote_name
    counts = [
        f"(SELECT COUNT(*) FROM {quote(model._meta.db_table)} "
        f"WHERE {quote(model.project.field.column)} = %s)"
        for model in REGISTER_MODELS.values()
    ]
    return "SELECT " + ", ".join(counts)


def work_package_money(queryset: QuerySet[WorkPackage]) -> dict[str, Decimal | None]:
    """The money columns summed over the packages of `queryset` (one query): the register's
    totals under its table."""
    return queryset.order_by().aggregate(
        budget=Sum("budget"), forecast=Sum("budget_forecast"), actual=Sum("budget_actual")
    )


def register_counts(project: Project) -> dict[str, int]:
    """Rows per register, for the sub-tab bar: one query."""
    with connection.cursor() as cursor:
        cursor.execute(_register_counts_sql(), [project.pk] * len(REGISTER_MODELS))
        row = cursor.fetchone()
    return dict(zip(REGISTER_MODELS, row, strict=True))


def package_linking(project_id: int, issue_key: str) -> WorkPackage | None:
    """The work package of the project that links this issue, if any."""
    for wp in WorkPackage.objects.filter(project_id=project_id).only("name", "linked_issue_keys"):
        if issue_key in (wp.linked_issue_keys or []):
            return wp
    return None
