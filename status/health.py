"""The stored health of each project (`ProjectHealth`): what `status.derive` makes of it, in the
shape the portfolio, its API and its exports show, one row per project.

- `refresh` derives and writes the rows of some projects. The receivers call it inside the
  transaction of every change of the facts a row reads (registers, business case, status,
  approval state, site thresholds), so a committed change never leaves a row behind.
- `rows_for` reads the rows of many projects in one query. A row that is missing, expired
  (`valid_until`: the first moment a time-dependent rule may answer differently, never later
  than the end of the day it was derived on) or derived under other thresholds or rules
  (`basis`) is derived again, for all such projects at once, and stored.
- `refresh_changed`, the periodic job, derives again only the rows whose inputs changed since
  they were stored (`inputs`: a fingerprint of the project's facts, read in one aggregate query
  per table, so a change that reached the tables without the write's own refresh is caught),
  that the clock overtook (`valid_until`: staleness, a date passing, the day changing) or that
  were derived under other thresholds or rules.

The rules stay in `status.derive`; this module only keeps their results.
"""

import contextlib
import datetime as dt
import gc
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max, Model, QuerySet
from django.utils import timezone

from charter.models import BusinessCase
from governance.cleaning import decimal_to_json
from governance.models import Project, SiteSettings, summaries_changed
from governance.rag import risk_zone
from governance.services import rag_thresholds
from governance.sql import AnyOf
from registers import pictures as registers_pictures
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from status import derive, exceptions, selectors
from status.models import DIMENSIONS, ProjectHealth, ProjectStatus


def plain(value: Any) -> Any:
    """A figure as JSON: money as a number, dates and timestamps as ISO text."""
    if value is None or type(value) in (int, float, str, bool):
        return value
    if isinstance(value, Decimal):
        return decimal_to_json(value)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


def portfolio_values(view: derive.StatusView) -> dict[str, Any]:
    """A project's derived status as the portfolio shows it (everything of its row but the
    project's own key, name, lead and approval status), JSON-ready. Each dimension carries its
    RAG, the summary of its drivers and their figures; the rows behind them are on the
    project's own status."""
    status = view.status
    figures = view.figures
    review = view.realisation_review
    drivers = {}
    for key in DIMENSIONS:
        dimension = view.dimensions[key]
        drivers[f"{key}Rag"] = {
            "rag": dimension.rag,
            "summary": dimension.summary,
            "figures": {name: plain(value) for name, value in dimension.figures.items()},
        }
    return {
        "theme": figures["theme"],
        "version": figures["version"],
        "phase": status.phase,
        "overallRag": status.overall_rag,
        "overallReason": status.overall_reason,
        "derived": view.derived,
        "effective": dict(view.effective),
        "overrides": {f"{key}Rag": derive.override(status, key) for key in DIMENSIONS},
        "drivers": drivers,
        "approvedBudget": plain(figures["approvedBudget"]),
        "eac": plain(figures["eac"]),
        "costOverrunPct": plain(figures["costOverrunPct"]),
        "scheduleSlipDays": figures["scheduleSlipDays"],
        "topRiskScore": figures["topRiskScore"],
        # Its colour, by the one colouring of a score (the register's and the matrices').
        "topRiskZone": risk_zone(figures["topRiskScore"], view.thresholds),
        "pendingDecisions": figures["pendingDecisions"],
        "changesAwaitingApplication": figures["changesAwaitingApplication"],
        "adoptionGap": figures["adoptionGap"],
        "stale": view.stale,
        "lastUpdatedAt": plain(status.last_updated_at),
        "nextUpdateDueAt": plain(view.next_update_due_at),
        "realisationReviewDueOn": plain(review["dueOn"]),
        "realisationReviewOverdue": review["overdue"],
        "earnedValue": (
            {
                **view.earned_value.total.as_dict(),
                "estimatesCompared": view.estimates_compared,
            }
            if view.earned_value
            else None
        ),
    }


ROW_KEYS = [
    "theme",
    "version",
    "phase",
    "overallRag",
    "overallReason",
    "derived",
    "effective",
    "overrides",
    "drivers",
    "approvedBudget",
    "eac",
    "costOverrunPct",
    "scheduleSlipDays",
    "topRiskScore",
    "topRiskZone",
    "pendingDecisions",
    "changesAwaitingApplication",
    "adoptionGap",
    "stale",
    "lastUpdatedAt",
    "nextUpdateDueAt",
    "realisationReviewDueOn",
    "realisationReviewOverdue",
    "earnedValue",
]


# The small typed columns of a stored row (`ProjectHealth`) the portfolio's aggregate SQL
# reads, each with the member of `row` it copies (a path) and its kind.
SUMMARY_COLUMNS: dict[str, tuple[tuple[str, ...], str]] = {
    "theme": (("theme",), "text"),
    "overall_rag": (("overallRag",), "rag"),
    "approved_budget": (("approvedBudget",), "money"),
    "estimate_at_completion": (("eac",), "money"),
    "cost_overrun_pct": (("costOverrunPct",), "float"),
    "schedule_slip_days": (("scheduleSlipDays",), "int"),
    "top_risk_score": (("topRiskScore",), "int"),
    "pending_decisions": (("pendingDecisions",), "int"),
    "changes_awaiting_application": (("changesAwaitingApplication",), "int"),
    "adoption_gap": (("adoptionGap",), "bool"),
    "realisation_review_due_on": (("realisationReviewDueOn",), "date"),
    "realisation_review_overdue": (("realisationReviewOverdue",), "bool"),
    **{f"ev_{key}": (("earnedValue", key), "money") for key in ("bac", "pv", "ev", "ac")},
}
# The columns' money: numeric(30, 6), as the portfolio's sums always read it.
SUMMARY_MONEY_PLACES = Decimal("0.000001")


def _member(row: Mapping[str, Any], path: Sequence[str]) -> Any:
    value: Any = row
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _column_value(value: Any, kind: str) -> Any:
    """A member of `row` as its column holds it: the value the JSON column holds (a float as
    JSON writes it, `float.__repr__`: a `Money`'s nearest float too), or None where the member
    is missing, JSON null or of another type."""
    if kind == "text":
        return value if isinstance(value, str) else ""
    if kind == "rag":
        return value if isinstance(value, str) else "None"
    if value is None:
        return None
    if kind == "bool":
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    if kind == "money":
        if isinstance(value, float):
            value = float.__repr__(value)
        return Decimal(str(value)).quantize(SUMMARY_MONEY_PLACES)
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    return dt.date.fromisoformat(value) if isinstance(value, str) and value else None


def summary_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """The summary columns of a stored row (`SUMMARY_COLUMNS`), copied from its `row`: the
    one place they are made, from the very values written to `row` (never encoded again in
    SQL), so the columns and the row's members always agree."""
    return {
        column: _column_value(_member(row, path), kind)
        for column, (path, kind) in SUMMARY_COLUMNS.items()
    }


def basis(site: SiteSettings) -> str:
    """The fingerprint of what, besides a project's own facts, its row was derived under: the
    RAG thresholds, the site's default benefit-review cadence, the time zone and the rules (the
    deploy's version: a row derived by other code is derived again)."""
    inputs = json.dumps(
        [
            rag_thresholds(site),
            site.br_cadence_default,
            settings.TIME_ZONE,
            settings.DEPLOY_VERSION,
        ],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(inputs.encode()).hexdigest()[:32]


def risk_cells(project_ids: Sequence[int]) -> dict[int, dict[str, list[int]]]:
    """Per project, its open risks per cell of the inherent and the residual risk matrix
    (placed by `registers.pictures`), flat: `[impact, likelihood, count, ...]`. What the
    portfolio's matrices add up, stored beside the row (its own column: the API's rows and
    their reads do not carry it). One query."""
    groups: dict[int, list[tuple[Any, ...]]] = {pk: [] for pk in project_ids}
    for pk, *scores in (
        Risk.objects.filter(
            AnyOf(F("project_id"), list(project_ids)), **registers_pictures.ON_MATRIX
        )
        .values_list("project_id", "impact", "likelihood", "residual_impact", "residual_likelihood")
        .annotate(n=Count("id"))
        .order_by()
    ):
        groups[pk].append(tuple(scores))
    return {
        pk: {
            view: [v for (i, lk), n in sorted(cells.items()) for v in (i, lk, n)]
            for view, cells in registers_pictures.place_groups(found).items()
        }
        for pk, found in groups.items()
    }


def derive_values(
    projects: Sequence[Project],
    *,
    site: SiteSettings | None = None,
    now: dt.datetime | None = None,
) -> dict[int, tuple[derive.StatusView, dict[str, Any], dict[str, list[int]]]]:
    """Each project's status view, and the row and risk cells stored for it, derived now from
    the facts, nothing stored read or written."""
    views = selectors.views_for(projects, site=site, now=now)
    cells = risk_cells(list(views))
    return {pk: (view, portfolio_values(view), cells[pk]) for pk, view in views.items()}


# The tables a row is derived from, each with the column a change of one of its rows moves
# (`auto_now` timestamps, or a revision every write raises). With each table's row count per
# project (a deletion moves it) and the project's approval state, they make `inputs`. A bulk
# `update()` that stamps neither is not seen here (nor by the write's own refresh): such code
# refreshes the projects it touched itself.
INPUT_TABLES: list[tuple[type[Model], str]] = [
    (WorkPackage, "updated_at"),
    (Risk, "updated_at"),
    (Decision, "updated_at"),
    (ChangeRequest, "updated_at"),
    (BusinessCase, "revision"),
    (ProjectStatus, "revision"),
]


def inputs_of(project_ids: Sequence[int] | None = None) -> dict[int, str]:
    """Each project's inputs fingerprint (all projects when `project_ids` is None): per input
    table, how many rows it has and the latest of its change column, and the project's
    approval state. One aggregate query per table; a project is always present."""
    projects = Project.objects.all()
    if project_ids is not None:
        projects = projects.filter(AnyOf(F("pk"), list(project_ids)))
    marks: dict[int, list[Any]] = {
        pk: [state] for pk, state in projects.values_list("pk", "approval_status")
    }
    for model, column in INPUT_TABLES:
        rows = model._default_manager.all()
        if project_ids is not None:
            rows = rows.filter(AnyOf(F("project_id"), list(project_ids)))
        found = (
            rows.values("project_id")
            .annotate(n=Count("pk"), latest=Max(column))
            .values_list("project_id", "n", "latest")
            .order_by()
        )
        for pk, n, latest in found:
            if pk in marks:
                marks[pk].append([model._meta.label, n, plain(latest)])
    return {
        pk: hashlib.sha256(json.dumps(mark, default=str).encode()).hexdigest()[:32]
        for pk, mark in marks.items()
    }


def _record(
    pk: int,
    view: derive.StatusView,
    row: dict[str, Any],
    cells: dict[str, list[int]],
    fingerprint: str,
    inputs: str,
) -> ProjectHealth:
    effective, derived = view.effective, view.derived
    return ProjectHealth(
        project_id=pk,
        as_of=timezone.localdate(view.now),
        computed_at=view.now,
        valid_until=derive.valid_until(view),
        basis=fingerprint,
        inputs=inputs,
        **{f"{key}_rag": effective[f"{key}Rag"] for key in DIMENSIONS},
        **{f"derived_{key}_rag": derived[f"{key}Rag"] for key in DIMENSIONS},
        stale=view.stale,
        row=row,
        risk_cells=cells,
        **summary_columns(row),
    )


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for the block (and resumed after it, when it
    ran before). Loading and deriving a chunk of projects makes a few hundred thousand
    objects, none of them garbage in a cycle until the chunk is done: each generation's
    collection on the way scanned all of them again (half of a refresh's time, measured at
    1,000 projects). Reference counting frees everything as usual meanwhile. Only the jobs
    use it (`refresh_changed`, `refresh_all`): the collector is the process's, and a page's
    request (a settings save's `refresh_outdated` included) never pauses it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _derive(
    projects: Sequence[Project], site: SiteSettings, now: dt.datetime
) -> tuple[list[ProjectHealth], list[derive.StatusView]]:
    """The rows of these projects derived now (and their views), nothing written."""
    fingerprint = basis(site)
    derived = derive_values(projects, site=site, now=now)
    inputs = inputs_of(list(derived))
    records = [
        _record(pk, view, row, cells, fingerprint, inputs.get(pk, ""))
        for pk, (view, row, cells) in derived.items()
    ]
    return records, [view for view, _, _ in derived.values()]


def _upsert(records: Sequence[ProjectHealth], *, replace: bool = True) -> None:
    """Insert these rows, replacing a stored row of the same project (`replace`) or keeping
    it: one single-row statement run for every row (`executemany`: the driver converts the
    statement once and, on PostgreSQL, sends the rows in one pipeline; a statement of five
    hundred rows it parsed again on every run, measured). Each value goes as its field
    prepares it for the database (the JSON columns through the driver's own JSON adaptation:
    psycopg's Jsonb on PostgreSQL), one parameter per value: not the array parameters Django's
    bulk insert sends on PostgreSQL, whose JSON elements the driver escapes text by text."""
    if not records:
        return
    meta = ProjectHealth._meta
    fields = list(meta.concrete_fields)
    quote = connection.ops.quote_name
    key = quote(meta.pk.column)
    columns = ", ".join(quote(field.column) for field in fields)
    changes = ", ".join(
        f"{quote(field.column)} = EXCLUDED.{quote(field.column)}"
        for field in fields
        if not field.primary_key
    )
    conflict = f"DO UPDATE SET {changes}" if replace else "DO NOTHING"
    placeholders = ", ".join(["%s"] * len(fields))
    # The rows and the raise of the summaries' revision in the caller's transaction.
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({placeholders}) "
            f"ON CONFLICT ({key}) {conflict}",
            [
                [
                    field.get_db_prep_save(getattr(record, field.attname), connection)
                    for field in fields
                ]
                for record in records
            ],
        )
        # The summaries stored per reader read these rows (`governance.summaries`).
        summaries_changed()


def refresh(project_ids: Iterable[int], *, now: dt.datetime | None = None) -> None:
    """Derive and write the rows of these projects (those that still exist). Call it inside
    the transaction that changed their facts."""
    ids = list(set(project_ids))
    projects = list(Project.objects.filter(AnyOf(F("pk"), ids))) if ids else []
    if not projects:
        return
    site, now = SiteSettings.load(), now or timezone.now()
    records, views = _derive(projects, site, now)
    _upsert(records)
    # The same figures, against the tolerances: a project may go into exception (or back).
    exceptions.track(views, now=now)


REFRESH_CHUNK = 500


def refresh_in_chunks(ids: Sequence[int], now: dt.datetime | None, *, job: bool = False) -> None:
    """Refresh chunk by chunk; in a job (the periodic refresh, a full refresh: never a page's
    request) with the collector paused for each chunk (`collector_paused`)."""
    for start in range(0, len(ids), REFRESH_CHUNK):
        with collector_paused() if job else contextlib.nullcontext():
            refresh(ids[start : start + REFRESH_CHUNK], now=now)


def refresh_outdated(site: SiteSettings, *, now: dt.datetime | None = None) -> None:
    """Rewrite every stored row derived under other thresholds than the site's (saving the
    site's settings without changing them rewrites nothing)."""
    ids = list(
        ProjectHealth.objects.exclude(basis=basis(site)).values_list("project_id", flat=True)
    )
    refresh_in_chunks(ids, now)


def due_for_refresh(now: dt.datetime) -> list[int]:
    """The projects whose row the periodic job derives again: missing, derived under other
    thresholds or rules (`basis`), overtaken by the clock (`valid_until`: staleness, a date
    passing, the day changing), or whose inputs changed since it was stored (`inputs`)."""
    fingerprint = basis(SiteSettings.load())
    stored = {
        pk: (row_basis, until, inputs)
        for pk, row_basis, until, inputs in ProjectHealth.objects.values_list(
            "project_id", "basis", "valid_until", "inputs"
        )
    }
    current = inputs_of()
    due = []
    for pk in sorted(current):
        row = stored.get(pk)
        if row is None or row[0] != fingerprint or row[1] <= now or row[2] != current[pk]:
            due.append(pk)
    return due


def refresh_changed(now: dt.datetime | None = None) -> int:
    """The periodic job: derive again, from the same model as every write, the rows that are
    due (`due_for_refresh`) and no other, so the portfolio's pages read stored rows instead of
    deriving a thousand projects on a reader's request. Returns how many were refreshed."""
    now = now or timezone.now()
    ids = due_for_refresh(now)
    refresh_in_chunks(ids, now, job=True)
    return len(ids)


def refresh_all(now: dt.datetime | None = None) -> int:
    """Derive and write every project's row (a full refresh). Returns how many."""
    ids = list(Project.objects.order_by("pk").values_list("pk", flat=True))
    refresh_in_chunks(ids, now, job=True)
    return len(ids)


def rows_for(
    projects: Sequence[Project],
    *,
    site: SiteSettings | None = None,
    now: dt.datetime | None = None,
) -> dict[int, dict[str, Any]]:
    """Each project's portfolio values (see `portfolio_values`), by project id: the stored
    row when it holds for `now`, else derived again and stored, in a constant number of
    queries whatever the number of projects."""
    return _read(projects, site, now, with_cells=False)[0]


def rows_and_cells_for(
    projects: Sequence[Project],
    *,
    site: SiteSettings | None = None,
    now: dt.datetime | None = None,
) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, list[int]]]]:
    """`rows_for`, and each project's stored risk cells (see `risk_cells`), by project id."""
    return _read(projects, site, now, with_cells=True)


def columns_for(
    projects: Sequence[Project],
    columns: Sequence[str],
    *,
    site: SiteSettings | None = None,
    now: dt.datetime | None = None,
) -> dict[int, dict[str, Any]]:
    """Of each project's row (`rows_for`: the stored row when it holds for `now`, else
    derived again and stored), the summary columns named (`SUMMARY_COLUMNS`), by project id:
    the same values as the row's members, read without decoding the JSON row (a reader
    that needs one figure of five hundred projects decoded five hundred rows)."""
    unknown = [name for name in columns if name not in SUMMARY_COLUMNS]
    if unknown:
        raise ValueError(f"not a summary column: {', '.join(unknown)}")
    if not projects:
        return {}
    site = site or SiteSettings.load()
    now = now or timezone.now()
    fingerprint = basis(site)
    valid = _valid([p.pk for p in projects], fingerprint, now)
    found = {
        pk: dict(zip(columns, values, strict=True))
        for pk, *values in valid.values_list("project_id", *columns)
    }
    missing = [p for p in projects if p.pk not in found]
    if missing:
        records, _ = _derive(missing, site, now)
        _store(records, fingerprint, now)
        for record in records:
            found[record.project_id] = {name: getattr(record, name) for name in columns}
    return found


def _valid(ids: list[int], fingerprint: str, now: dt.datetime) -> QuerySet[ProjectHealth]:
    """The stored rows of these projects that hold for `now` under `fingerprint`."""
    return ProjectHealth.objects.filter(
        AnyOf(F("project_id"), ids), basis=fingerprint, computed_at__lte=now, valid_until__gt=now
    )


def _read(
    projects: Sequence[Project],
    site: SiteSettings | None,
    now: dt.datetime | None,
    *,
    with_cells: bool,
) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, list[int]]]]:
    if not projects:
        return {}, {}
    site = site or SiteSettings.load()
    now = now or timezone.now()
    fingerprint = basis(site)
    valid = _valid([p.pk for p in projects], fingerprint, now)
    rows: dict[int, dict[str, Any]] = {}
    cells: dict[int, dict[str, list[int]]] = {}
    if with_cells:
        for pk, row, risk_cells_ in valid.values_list("project_id", "row", "risk_cells"):
            rows[pk], cells[pk] = row, risk_cells_
    else:
        rows = dict(valid.values_list("project_id", "row"))
    missing = [p for p in projects if p.pk not in rows]
    if missing:
        records, _ = _derive(missing, site, now)
        _store(records, fingerprint, now)
        for record in records:
            rows[record.project_id] = record.row
            cells[record.project_id] = record.risk_cells
    return rows, cells if with_cells else {}


def _store(records: list[ProjectHealth], fingerprint: str, now: dt.datetime) -> None:
    """Replace the rows derived before `now` that do not hold for it. A row derived later (a
    write stored it meanwhile, from facts at least as new as these) is kept."""
    ids = [record.project_id for record in records]
    with transaction.atomic():
        ProjectHealth.objects.filter(project_id__in=ids, computed_at__lte=now).exclude(
            basis=fingerprint, valid_until__gt=now
        ).delete()
        _upsert(records, replace=False)
