"""The stored health of each project (`ProjectHealth`): what `status.derive` makes of it, in the
shape the portfolio, its API and its exports show, one row per project.

- `refresh` derives and writes the rows of some projects. The receivers call it inside the
  transaction of every change of the facts a row reads (registers, business case, status,
  approval state, site thresholds), so a committed change never leaves a row behind.
- `rows_for` reads the rows of many projects in one query. A row that is missing, expired
  (`valid_until`: the first moment a time-dependent rule may answer differently, never later
  than the end of the day it was derived on) or derived under other thresholds or rules
  (`basis`) is derived again, for all such projects at once, and stored.

The rules stay in `status.derive`; this module only keeps their results.
"""

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from governance.cleaning import decimal_to_json
from governance.models import Project, SiteSettings
from governance.rag import risk_zone
from governance.services import rag_thresholds
from governance.sql import AnyOf
from registers import pictures as registers_pictures
from registers.models import Risk
from status import derive, exceptions, selectors
from status.models import DIMENSIONS, ProjectHealth


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
    groups: dict[int, list[tuple]] = {pk: [] for pk in project_ids}
    for pk, *scores in (
        Risk.objects.filter(project_id__in=list(project_ids), **registers_pictures.ON_MATRIX)
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


def _record(
    pk: int, view: derive.StatusView, row: dict[str, Any], cells: dict, fingerprint: str
) -> ProjectHealth:
    effective, derived = view.effective, view.derived
    return ProjectHealth(
        project_id=pk,
        as_of=timezone.localdate(view.now),
        computed_at=view.now,
        valid_until=derive.valid_until(view),
        basis=fingerprint,
        **{f"{key}_rag": effective[f"{key}Rag"] for key in DIMENSIONS},
        **{f"derived_{key}_rag": derived[f"{key}Rag"] for key in DIMENSIONS},
        stale=view.stale,
        row=row,
        risk_cells=cells,
    )


UPDATED_FIELDS = [
    f.name for f in ProjectHealth._meta.concrete_fields if not f.primary_key and f.name != "project"
]


def _derive(
    projects: Sequence[Project], site: SiteSettings, now: dt.datetime
) -> list[ProjectHealth]:
    fingerprint = basis(site)
    derived = derive_values(projects, site=site, now=now)
    return [
        _record(pk, view, row, cells, fingerprint) for pk, (view, row, cells) in derived.items()
    ]


def refresh(project_ids: Iterable[int], *, now: dt.datetime | None = None) -> None:
    """Derive and write the rows of these projects (those that still exist). Call it inside
    the transaction that changed their facts."""
    projects = list(Project.objects.filter(pk__in=set(project_ids)))
    if not projects:
        return
    site, now = SiteSettings.load(), now or timezone.now()
    fingerprint = basis(site)
    derived = derive_values(projects, site=site, now=now)
    records = [
        _record(pk, view, row, cells, fingerprint) for pk, (view, row, cells) in derived.items()
    ]
    ProjectHealth.objects.bulk_create(
        records, update_conflicts=True, unique_fields=["project"], update_fields=UPDATED_FIELDS
    )
    # The same figures, against the tolerances: a project may go into exception (or back).
    exceptions.track([view for view, _, _ in derived.values()], now=now)


def refresh_outdated(site: SiteSettings, *, now: dt.datetime | None = None) -> None:
    """Rewrite every stored row derived under other thresholds than the site's (saving the
    site's settings without changing them rewrites nothing)."""
    ids = list(
        ProjectHealth.objects.exclude(basis=basis(site)).values_list("project_id", flat=True)
    )
    for start in range(0, len(ids), 500):
        refresh(ids[start : start + 500], now=now)


def refresh_expired(now: dt.datetime | None = None) -> int:
    """The periodic job: derive again, from the same model, every row that is missing, has
    expired (`valid_until`) or was derived under other thresholds or rules, so the portfolio's
    pages read stored rows instead of deriving a thousand projects on a reader's request.
    Returns how many projects were refreshed."""
    now = now or timezone.now()
    fingerprint = basis(SiteSettings.load())
    current = ProjectHealth.objects.filter(basis=fingerprint, valid_until__gt=now)
    ids = list(
        Project.objects.exclude(pk__in=current.values("project_id")).values_list("pk", flat=True)
    )
    for start in range(0, len(ids), 500):
        refresh(ids[start : start + 500], now=now)
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


def _read(projects, site, now, *, with_cells: bool) -> tuple[dict, dict]:
    if not projects:
        return {}, {}
    site = site or SiteSettings.load()
    now = now or timezone.now()
    fingerprint = basis(site)
    ids = [p.pk for p in projects]
    valid = ProjectHealth.objects.filter(
        AnyOf(F("project_id"), ids), basis=fingerprint, computed_at__lte=now, valid_until__gt=now
    )
    rows, cells = {}, {}
    # The JSON as stored (text), decoded through the process's memo (`_decoded`).
    if with_cells:
        texts = valid.values_list(
            "project_id", Cast("row", TextField()), Cast("risk_cells", TextField())
        )
        for pk, row, risk_cells_ in texts:
            rows[pk], cells[pk] = _decoded(row), _decoded(risk_cells_)
    else:
        texts = valid.values_list("project_id", Cast("row", TextField()))
        rows = {pk: _decoded(row) for pk, row in texts}
    missing = [p for p in projects if p.pk not in rows]
    if missing:
        records = _derive(missing, site, now)
        _store(records, fingerprint, now)
        for record in records:
            rows[record.project_id] = record.row
            cells[record.project_id] = record.risk_cells
    return rows, cells if with_cells else {}


# Decoding the stored JSON was a third of reading a thousand projects' rows; most rows are
# read again unchanged many times between writes. Each distinct text is decoded once per
# process: the text is the key, so a rewritten row (new text) is decoded afresh and an old
# text can never answer for a new row. Bounded: emptied when full. The decoded values are
# shared between readers, which only read them (`portfolio_row` copies the top level).
_DECODED: dict[str, Any] = {}
_TEXTS: dict[int, str] = {}  # id of a value held in _DECODED -> its text
_DECODED_MAX = 4096


def _decoded(text: str | None) -> Any:
    if text is None:
        return None
    value = _DECODED.get(text)
    if value is None:
        value = json.loads(text)
        if len(_DECODED) >= _DECODED_MAX:
            _DECODED.clear()
            _TEXTS.clear()
        _DECODED[text] = value
        _TEXTS[id(value)] = text
    return value


def stored_text(value: Any) -> str | None:
    """The stored JSON text a value of `rows_for` was decoded from, while the memo holds it
    (else None): a key for what is made from the row alone (the portfolio's row HTML)."""
    text = _TEXTS.get(id(value))
    if text is not None and _DECODED.get(text) is value:
        return text
    return None


def _store(records: list[ProjectHealth], fingerprint: str, now: dt.datetime) -> None:
    """Replace the rows derived before `now` that do not hold for it. A row derived later (a
    write stored it meanwhile, from facts at least as new as these) is kept."""
    ids = [record.project_id for record in records]
    with transaction.atomic():
        ProjectHealth.objects.filter(project_id__in=ids, computed_at__lte=now).exclude(
            basis=fingerprint, valid_until__gt=now
        ).delete()
        ProjectHealth.objects.bulk_create(records, ignore_conflicts=True)
