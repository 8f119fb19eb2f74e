"""The register pages' tables: filters, text search, sortable columns, and the per-row
display values, computed once in Python (derived values come from registers.derive) so the
templates only print. One pass over the rows, no query per row."""

import datetime as dt
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from typing import Any

from django.core.signals import setting_changed
from django.http import QueryDict
from django.utils import translation
from django.utils.safestring import mark_safe

from governance import formatting, labels, textsearch
from governance.models import RAG_CHOICES
from governance.people import Person
from registers import pictures
from registers.derive import (
    change_application_state,
    change_awaits_baseline,
    change_is_open,
    decision_can_be_recorded,
    decision_is_editable,
    decision_state,
    package_schedule,
    residual_score,
    risk_heat,
)
from registers.models import (
    APPLICATION_STATES,
    CHANGE_DIMENSIONS,
    CHANGE_STATUSES,
    DECISION_STATES,
    RISK_DIRECTIONS,
    RISK_STATUSES,
    WP_STATUSES,
)
from registers.services.changes import adjudication_rights

APPLICATION_LABELS = {"AwaitingApplication": "Awaiting application", "Applied": "Applied"}


@dataclass
class Filter:
    name: str
    label: str
    options: list[tuple[str, str]]
    value: str = ""


@dataclass
class Table:
    rows: list
    filters: list[Filter]
    query: str
    sort: str
    direction: str
    total: int
    columns: dict[str, dict] = field(default_factory=dict)
    # A risk-matrix cell (`inherent-4-3`) the rows are narrowed to, and its words.
    cell: str = ""
    cell_label: str = ""

    @property
    def filtered(self) -> bool:
        return bool(self.query or self.cell or any(f.value for f in self.filters))

    @property
    def default_order(self) -> bool:
        return not self.sort and not self.filtered


def money(value: Decimal | None) -> str:
    """An amount with the site's currency (read once per page, then from the cache)."""
    return formatting.money(value)


def signed(value: int | Decimal | None, unit: str = "") -> str:
    """A signed delta with its sign; nothing for none. A Decimal is an amount (with the
    currency), an integer a count of `unit`."""
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return formatting.money(value, signed=True)
    text = f"{value:,}"
    return f"+{text}{unit}" if value > 0 else f"{text}{unit}"


def slug(value: str) -> str:
    return value.lower().replace(" ", "-")


def _date(value: dt.date | None) -> str:
    return formatting.day(value) if value else ""


def _name(people: Mapping[str, Person], account_id: str | None) -> str:
    if not account_id:
        return ""
    person = people.get(account_id)
    return person.display_name if person else account_id


# --- per-register definitions ------------------------------------------------------------------


def decorate_work_package(wp, people, caller, extra) -> None:
    schedule = package_schedule(wp, extra.get("plan"))
    wp.schedule = schedule
    wp.variance = schedule.variance_days
    wp.variance_text = signed(wp.variance, "\u00a0d") if wp.variance else ""
    wp.variance_note = schedule.note
    wp.baseline_dates_text = (
        _span(schedule.start, schedule.end) if schedule.basis == "baseline" else ""
    )
    wp.variance_class = "late" if (wp.variance or 0) > 0 else "early" if wp.variance else ""
    wp.planned_text = _span(wp.planned_start_date, wp.planned_end_date)
    wp.forecast_text = _span(wp.forecast_start_date, wp.forecast_end_date)
    wp.forecast_end_text = _date(wp.forecast_end_date)
    wp.actual_text = _span(wp.actual_start_date, wp.actual_end_date)
    wp.baseline_text = money(wp.budget_baseline)
    wp.budget_text = money(wp.budget)
    wp.forecast_budget_text = money(wp.budget_forecast)
    wp.actual_budget_text = money(wp.budget_actual)
    wp.status_class = slug(wp.status)
    wp.search_text = textsearch.haystack(
        wp.name, wp.type, wp.commentary, *(wp.linked_issue_keys or [])
    )


_span = formatting.date_span


def decorate_risk(risk, people, caller, extra) -> None:
    # Both scores, each coloured by the one `risk_zone`: the residual (judged) score falls
    # back to the inherent one where no residual is assessed.
    risk.heat = risk_heat(risk.score, extra["thresholds"])
    risk.inherent = risk.inherent_score
    risk.inherent_heat = risk_heat(risk.inherent_score, extra["thresholds"])
    risk.residual_assessed = residual_score(risk) is not None
    risk.treating = extra["treating"].get(str(risk.pk), [])
    risk.decision_recordable = decision_can_be_recorded(risk)
    risk.awaits_treating_decision = risk.decision_recordable and not risk.treating
    risk.can_record_decision = caller.can_edit_registers and risk.decision_recordable
    risk.search_text = textsearch.haystack(
        risk.title, risk.description, risk.mitigation, risk.treatment
    )


def decorate_decision(decision, people, caller, extra) -> None:
    decision.state = decision_state(decision.made_on)
    decision.can_update = caller.can_edit_registers and decision_is_editable(decision)
    decision.can_note = caller.can_edit
    decision.note_count = len(decision.notes or [])
    decision.made_on_text = _date(decision.made_on)
    minutes_url = (decision.minutes_ref or {}).get("url") or ""
    decision.minutes_url = minutes_url if minutes_url.startswith(("https://", "http://")) else ""
    decision.created_text = _date(decision.created_at.date()) if decision.created_at else ""
    decision.note_items = [
        {
            "text": note.get("text", ""),
            "author": note.get("authorAccountId"),
            "at": note.get("at", ""),
            "at_text": formatting.moment(note.get("at") or ""),
        }
        for note in decision.notes or []
    ]
    decision.search_text = textsearch.haystack(
        decision.decision, decision.decision_notes, decision.rationale
    )


def decorate_change(change, people, caller, extra) -> None:
    change.application_state = change_application_state(change)
    change.application_label = APPLICATION_LABELS.get(change.application_state, "")
    change.dimension_list = list(change.dimensions or [])
    change.budget_text = signed(change.impact_budget)
    change.days_text = signed(change.impact_schedule_days, "\u00a0d")
    change.target_name = extra["packages"].get(change.target_work_package_id, "")
    change.created_text = _date(change.created_at.date()) if change.created_at else ""
    is_open = change_is_open(change)
    open_register = is_open and not caller.registers_frozen
    may_decide, may_withdraw = adjudication_rights(caller, change)
    change.can_update = caller.can_edit_registers and is_open
    change.may_adjudicate = open_register and may_decide
    change.may_withdraw = open_register and may_withdraw
    change.may_decide = change.may_adjudicate or change.may_withdraw
    change.may_apply_to_baseline = (
        caller.may_apply_change_to_baseline
        and not caller.registers_frozen
        and change_awaits_baseline(change)
    )
    change.approver_id = change.approver_account_id or (change.approver_seat or {}).get("accountId")
    change.search_text = textsearch.haystack(
        change.summary, change.reason, change.impact_scope, change.impact_quality_other
    )


@dataclass
class Spec:
    """How one register's table filters, searches and sorts."""

    decorate: Callable
    owner_field: str
    owner_label: str
    filters: list[tuple[str, str, list[str], Callable[[Any], Any]]]
    sorts: dict[str, Callable[[Any, Mapping[str, Person]], Any]]
    # The display values follow from the record's stored values and `extra` alone (with the
    # currency and the language): neither the people, the caller nor the day. Such rows'
    # values are kept per process (`decorate`).
    from_stored: bool = False


SPECS = {
    "work-packages": Spec(
        decorate=decorate_work_package,
        from_stored=True,
        owner_field="owner_account_id",
        owner_label="Owner",
        filters=[
            ("status", "Status", WP_STATUSES, lambda r: r.status),
            ("rag", "RAG", RAG_CHOICES, lambda r: r.rag),
        ],
        sorts={
            "name": lambda r, p: r.name.casefold(),
            "owner": lambda r, p: _name(p, r.owner_account_id).casefold() or None,
            "status": lambda r, p: WP_STATUSES.index(r.status),
            "rag": lambda r, p: RAG_CHOICES.index(r.rag) if r.rag != "None" else None,
            "progress": lambda r, p: r.progress,
            "planned": lambda r, p: r.planned_start_date,
            "plannedEnd": lambda r, p: r.planned_end_date,
            "forecastEnd": lambda r, p: r.forecast_end_date,
            "variance": lambda r, p: r.variance,
            "budget": lambda r, p: r.budget,
            "budgetForecast": lambda r, p: r.budget_forecast,
            "budgetActual": lambda r, p: r.budget_actual,
        },
    ),
    "risks": Spec(
        decorate=decorate_risk,
        owner_field="owner_account_id",
        owner_label="Owner",
        filters=[
            ("status", "Status", RISK_STATUSES, lambda r: r.status),
            ("direction", "Direction", RISK_DIRECTIONS, lambda r: r.direction),
        ],
        sorts={
            "title": lambda r, p: r.title.casefold(),
            "owner": lambda r, p: _name(p, r.owner_account_id).casefold() or None,
            "status": lambda r, p: r.status,
            "direction": lambda r, p: r.direction,
            "inherent": lambda r, p: r.inherent_score,
            "score": lambda r, p: r.score,
            "treatment": lambda r, p: r.treatment,
        },
    ),
    "decisions": Spec(
        decorate=decorate_decision,
        owner_field="made_by_account_id",
        owner_label="Made by",
        filters=[("state", "State", DECISION_STATES, lambda r: r.state)],
        sorts={
            "decision": lambda r, p: r.decision.casefold(),
            "madeOn": lambda r, p: r.made_on,
            "madeBy": lambda r, p: _name(p, r.made_by_account_id).casefold() or None,
            "state": lambda r, p: r.state,
            "created": lambda r, p: r.created_at,
        },
    ),
    "changes": Spec(
        decorate=decorate_change,
        owner_field="proposer_account_id",
        owner_label="Proposer",
        filters=[
            ("status", "Status", CHANGE_STATUSES, lambda r: r.status),
            ("state", "Application state", APPLICATION_STATES, lambda r: r.application_state),
            ("dimension", "Dimension", CHANGE_DIMENSIONS, lambda r: r.dimension_list),
        ],
        sorts={
            "summary": lambda r, p: r.summary.casefold(),
            "status": lambda r, p: CHANGE_STATUSES.index(r.status),
            "budget": lambda r, p: r.impact_budget,
            "days": lambda r, p: r.impact_schedule_days,
            "proposer": lambda r, p: _name(p, r.proposer_account_id).casefold() or None,
            "created": lambda r, p: r.created_at,
        },
    ),
}


def person_ids(register: str, records: list) -> set[str]:
    """Every accountId the register's rows show, to resolve in one call."""
    ids: set[str] = set()
    for record in records:
        if register == "work-packages":
            ids.update((record.owner_account_id, record.updated_by_account_id))
        elif register == "risks":
            ids.update((record.owner_account_id, record.accepted_by_account_id))
        elif register == "decisions":
            ids.update(
                (
                    record.made_by_account_id,
                    record.recorded_by,
                    record.created_by_account_id,
                    record.owner_account_id,
                    record.approver_account_id,
                    record.decided_by_account_id,
                )
            )
            ids.update(n.get("authorAccountId") for n in record.notes or [])
        else:
            ids.update(
                (
                    record.proposer_account_id,
                    record.approver_account_id,
                    record.decided_by_account_id,
                    record.created_by_account_id,
                    (record.approver_seat or {}).get("accountId"),
                )
            )
    ids.discard(None)
    ids.discard("")
    return ids


@cache
def _stored_names(model: type) -> frozenset[str]:
    return frozenset(f.attname for f in model._meta.concrete_fields)


@cache
def _stored_values(model: type) -> Callable[[Any], tuple]:
    """The record's stored values in field order, read in one call."""
    getter = operator.attrgetter(*(f.attname for f in model._meta.concrete_fields))
    return getter if len(model._meta.concrete_fields) > 1 else lambda record: (getter(record),)


def stored_text(record: Any) -> str:
    """Every stored value of a record, as text for a key. Written once per request (a
    register page's keys all read it): kept on the record, which a request loads afresh."""
    text = record.__dict__.get("_stored_key_text")
    if text is None:
        text = repr(list(_stored_values(type(record))(record)))
        record._stored_key_text = text
    return text


# The display values of the rows of a `from_stored` register, by the record's stored text and
# what else they are made from (`extra`, the currency, the language): a record shown again
# unchanged is not derived again. Per process, bounded: emptied when full, and when a setting
# the date format follows changes. Each entry keeps the values and their text (`derived_text`,
# read by the table's cache key).
_DISPLAY: dict[tuple, tuple[dict, str]] = {}
_DISPLAY_MAX = 20000


def _forget_display(*, setting, **kwargs) -> None:
    if setting in ("DATE_FORMAT", "LANGUAGE_CODE", "USE_I18N", "FORMAT_MODULE_PATH"):
        _DISPLAY.clear()


setting_changed.connect(_forget_display, dispatch_uid="register-display-forget")


def decorate(
    register: str, records: list, people, caller, extra: Mapping[str, Any], base: str
) -> None:
    """Precompute each row's display values; `url` is the row's own URL under `base`."""
    spec = SPECS[register]
    decorate_row = spec.decorate
    if not spec.from_stored:
        for record in records:
            record.url = mark_safe(f"{base}{record.pk}/")  # our own path and a UUID
            decorate_row(record, people, caller, extra)
        return
    context = (register, repr(extra), formatting.currency(), translation.get_language())
    for record in records:
        beside = vars(record).keys() - _stored_names(type(record))
        if any(k[0] != "_" for k in beside):
            # Values beside the stored ones (decorated before, or annotated): derive as is.
            record.__dict__.pop("_derived_key_text", None)
            record.url = mark_safe(f"{base}{record.pk}/")  # our own path and a UUID
            decorate_row(record, people, caller, extra)
            continue
        key = (stored_text(record), context)
        known = _DISPLAY.get(key)
        if known is None:
            before = set(vars(record))
            decorate_row(record, people, caller, extra)
            values = {k: v for k, v in vars(record).items() if k not in before}
            known = (values, repr(values))
            if len(_DISPLAY) >= _DISPLAY_MAX:
                _DISPLAY.clear()
            _DISPLAY[key] = known
        else:
            record.__dict__.update(known[0])
        record._derived_key_text = known[1]
        record.url = mark_safe(f"{base}{record.pk}/")  # our own path and a UUID


def derived_text(record: Any) -> str | None:
    """The text of a record's display values as `decorate` kept them, if it did."""
    return record.__dict__.get("_derived_key_text")


def build(register: str, records: list, params: QueryDict, people) -> Table:
    """Filter, search and sort decorated rows by the query string: a filter per select
    (status, RAG, owner, direction, state, dimension), `q` for text, `sort` and `dir`."""
    spec = SPECS[register]
    owners = sorted(
        {getattr(r, spec.owner_field) for r in records if getattr(r, spec.owner_field)},
        key=lambda a: _name(people, a).casefold(),
    )
    filters = [
        Filter(name, label, [(v, labels.label(v)) for v in values], _choice(params, name, values))
        for name, label, values, _ in spec.filters
    ]
    filters.append(
        Filter(
            "owner",
            spec.owner_label,
            [(a, _name(people, a)) for a in owners],
            _choice(params, "owner", owners),
        )
    )
    rows = records
    for (_, _, _, read), chosen in zip(spec.filters, filters, strict=False):
        if chosen.value:
            rows = [r for r in rows if _matches(read(r), chosen.value)]
    if filters[-1].value:
        rows = [r for r in rows if getattr(r, spec.owner_field) == filters[-1].value]
    cell = pictures.parse_cell(params.get("cell", "")) if register == "risks" else None
    if cell:
        rows = [r for r in rows if pictures.in_cell(r, cell)]
    query = params.get("q", "").strip()
    words = textsearch.words(query)
    if words:
        rows = [r for r in rows if textsearch.matches(words, r.search_text)]
    sort = params.get("sort", "")
    sort = sort if sort in spec.sorts else ""
    direction = "desc" if params.get("dir") == "desc" else "asc"
    if sort:
        rows = _sorted(rows, lambda r: spec.sorts[sort](r, people), direction == "desc")
    columns = {
        name: {
            "active": name == sort,
            "direction": direction if name == sort else "",
            "next": "desc" if name == sort and direction == "asc" else "asc",
        }
        for name in spec.sorts
    }
    return Table(
        rows=rows,
        filters=filters,
        query=query,
        sort=sort,
        direction=direction,
        total=len(records),
        columns=columns,
        cell=pictures.cell_param(*cell) if cell else "",
        cell_label=pictures.cell_words(cell) if cell else "",
    )


def _choice(params: QueryDict, name: str, values: list[str]) -> str:
    value = params.get(name, "")
    return value if value in values else ""


def _matches(value: Any, wanted: str) -> bool:
    return wanted in value if isinstance(value, list) else value == wanted


def _sorted(rows: list, key: Callable, descending: bool) -> list:
    """Sorted by `key`, rows without a value last in either direction."""
    present = [r for r in rows if key(r) is not None]
    missing = [r for r in rows if key(r) is None]
    return sorted(present, key=key, reverse=descending) + missing
