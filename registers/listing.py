"""Each register's order as SQL keys, the last one unique (the id): what the API's cursor
pages and the streamed exports read in, and the register pages' order when no column is
sorted (`registers.paging.order_keys`), with the id to decide between rows alike in every
other key."""

import itertools
from collections.abc import Iterator
from typing import Any

from django.db.models import Case, IntegerField, Manager, QuerySet, When
from django.db.models.functions import Lower

from governance import paging
from governance.models import Project
from registers.derive import plan_baseline_of
from registers.models import REGISTER_MODELS, Decision
from registers.serializers import (
    change_to_dict,
    decision_to_dict,
    risk_to_dict,
    work_package_to_dict,
)

NEWEST_FIRST = (
    paging.Key("created_at", descending=True),
    paging.Key("id", descending=True),
)
ORDERS: dict[str, tuple[paging.Key, ...]] = {
    # selectors.ordered: sortOrder, then plannedStartDate (nulls last), then the name.
    "work-packages": (
        paging.Key("sort_order", nullable=True),
        paging.Key("planned_start_date", nullable=True),
        paging.Key(Lower("name")),
        paging.Key("created_at"),
        paging.Key("id"),
    ),
    # selectors.risks: Open before Closed, then the newest first.
    "risks": (
        paging.Key(Case(When(status="Closed", then=1), default=0, output_field=IntegerField())),
        *NEWEST_FIRST,
    ),
    "decisions": NEWEST_FIRST,
    "changes": NEWEST_FIRST,
}


def records(project: Project, register: str) -> QuerySet[Any]:
    """The project's rows of the register, through its related manager (each row's
    `project` is the given instance: no query per row), unordered."""
    relation = REGISTER_MODELS[register].project.field.remote_field
    manager: Manager[Any] = getattr(project, relation.get_accessor_name())
    return manager.all()


def in_order(project: Project, register: str) -> QuerySet[Any]:
    """The project's rows of the register in the register's order."""
    return paging.ordered(records(project, register), ORDERS[register])


def dicts(project: Project, register: str, rows: list[Any]) -> list[dict[str, Any]]:
    """Rows of the register as the API represents them, with what they derive from read once
    for all of them (the plan baseline; the decisions treating the risks)."""
    if register == "work-packages":
        plan = plan_baseline_of(project)
        return [work_package_to_dict(wp, plan) for wp in rows]
    if register == "risks":
        treating: dict[str, list[str]] = {}
        decisions = (
            Decision.objects.filter(project=project, treated_risk_id__in=[str(r.pk) for r in rows])
            .order_by("created_at")
            .values_list("treated_risk_id", "id")
        )
        for risk_id, decision_id in decisions:
            assert risk_id is not None  # the filter keeps treating decisions only
            treating.setdefault(risk_id, []).append(str(decision_id))
        return [risk_to_dict(r, treating.get(str(r.pk), [])) for r in rows]
    if register == "decisions":
        return [decision_to_dict(d) for d in rows]
    return [change_to_dict(c) for c in rows]


def each_dict(project: Project, register: str, chunk_size: int) -> Iterator[dict[str, Any]]:
    """Every row of the register as the API represents it, in the register's order, read
    `chunk_size` rows at a time (never the whole register in memory)."""
    rows = in_order(project, register).iterator(chunk_size=chunk_size)
    while chunk := list(itertools.islice(rows, chunk_size)):
        yield from dicts(project, register, chunk)
