"""The register summary: what the register pages show of all of a project's rows, whatever
page of them they show: each register's count (the sub-tabs), each register's owners (its
owner filter), the work packages' money sums (the totals under the table) and their
budget-curve groups (`pictures.budget_rows`). Stored per project (`RegisterSummary`) with the
registers revision it was read at, by the receiver that raises the revision, in the writer's
transaction (`registers.revision`); read by the pages only while that revision is the
project's as stored (`current`). A revision raised any other way leaves the summary behind, and an
announcement of more than `LIMIT` projects at once deletes theirs: the pages then read those
figures live, through the functions `live` reads them with (`live` reads the four registers'
owners in one statement, a page its own register's). Reading never writes it.

What it buys (bench/results/2026-11-29-the-register-summary.md, record 0302): the work-package
page after a change reads one row instead of four statements (the counts, the owners, the
sums, the budget curve's groups), 45.5-54.0 ms -> 33.4-33.7 ms at 1,000 rows on PostgreSQL
(0.51-0.55 -> 0.32-0.38 of admin's changelist); a change of a project's facts pays for them
once, in its transaction (four statements and the upsert; about a sixth of an update's time at
1,000 rows)."""

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import F

from governance.models import Project
from registers import paging, pictures, selectors
from registers.models import REGISTER_MODELS, RegisterSummary, WorkPackage

# The most projects one announcement stores summaries for (a rename of a theme announces every
# project with it): beyond it, their revisions are raised and their pages read live.
LIMIT = 50


@dataclass(frozen=True)
class Summary:
    counts: dict[str, int]
    owners: dict[str, list[str]]
    money: dict[str, Decimal | None]
    budget: list[Any]  # pictures.budget_rows's groups


def live(project_id: int) -> Summary:
    """The summary read from the registers now (four statements)."""
    scopes = {
        slug: model.objects.filter(project_id=project_id) for slug, model in REGISTER_MODELS.items()
    }
    packages = WorkPackage.objects.filter(project_id=project_id)
    return Summary(
        counts=selectors.register_counts(Project(pk=project_id)),
        owners=paging.owners_by_register(scopes),
        money=selectors.work_package_money(packages),
        budget=pictures.budget_rows(packages),
    )


def current(project: Project) -> Summary | None:
    """The stored summary of `project` when it was read at the project's registers revision
    as the database holds it now (one query, the project's row joined): the page drawn right
    after a write in the same request (a reorder, a bulk edit) answers from the summary that
    write stored, whatever revision the request's copy of the project read; None otherwise."""
    stored = RegisterSummary.objects.filter(
        project_id=project.pk, revision=F("project__registers_revision")
    ).first()
    if stored is None or not set(REGISTER_MODELS) <= set(stored.counts) & set(stored.owners):
        return None  # none, or read before a register it lacks existed
    return Summary(
        counts=stored.counts,
        owners=stored.owners,
        money={name: _decimal(value) for name, value in stored.money.items()},
        budget=[_group(values) for values in stored.budget],
    )


def store(project_ids: Iterable[Any], revision: int) -> None:
    """Read and store the summaries of these projects at `revision` (the stamp just set), in
    the caller's transaction. For more than LIMIT projects their summaries are deleted instead
    (behind their raised revisions, they would not be read again)."""
    ids = sorted({pk for pk in project_ids if pk is not None})
    if len(ids) > LIMIT:
        RegisterSummary.objects.filter(project_id__in=ids).delete()
        return
    if not ids:
        return
    rows = []
    for pk in ids:
        found = live(pk)
        rows.append(
            RegisterSummary(
                project_id=pk,
                revision=revision,
                counts=found.counts,
                owners=found.owners,
                money={name: _text(value) for name, value in found.money.items()},
                budget=[_stored_group(group) for group in found.budget],
            )
        )
    RegisterSummary.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["project"],
        update_fields=["revision", "counts", "owners", "money", "budget"],
    )


def _text(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def _decimal(value: str | None) -> Decimal | None:
    return None if value is None else Decimal(value)


def _stored_group(group: Any) -> list[Any]:
    start, end = group.planned_start_date, group.planned_end_date
    return [
        group.budget_phasing,
        None if start is None else start.isoformat(),
        None if end is None else end.isoformat(),
        *(_text(getattr(group, name)) for name in pictures.SUMMED),
    ]


def _group(values: list[Any]) -> Any:
    phasing, start, end, *sums = values
    return pictures.BudgetGroup(
        phasing,
        None if start is None else dt.date.fromisoformat(start),
        None if end is None else dt.date.fromisoformat(end),
        *(_decimal(value) for value in sums),
    )
