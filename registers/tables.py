"""The register pages' tables: the filters and sortable columns around a page of rows
(`registers.paging` reads them in SQL), and the per-row display values, computed once in
Python (derived values come from registers.derive) so the templates only print. One pass
over the page's rows, no query per row."""

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.http import QueryDict
from django.utils.safestring import mark_safe

from governance import formatting, labels
from governance.people import Person
from governance.permissions import Caller
from registers import paging, pictures
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
    rows: list[Any]
    filters: list[Filter]
    query: str
    sort: str
    direction: str
    total: int
    # The rows the filters keep, of every page; and this page's place among them.
    matching: int = 0
    page: paging.Page = field(default_factory=lambda: paging.Page(rows=[]))
    columns: dict[str, dict[str, Any]] = field(default_factory=dict)
    # A risk-matrix cell (`inherent-4-3`) the rows are narrowed to, and its words.
    cell: str = ""
    cell_label: str = ""

    @property
    def filtered(self) -> bool:
        return bool(self.query or self.cell or any(f.value for f in self.filters))

    page_size: int = paging.PAGE_SIZE

    @property
    def paged(self) -> bool:
        return self.page.has_previous or self.page.has_next

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


def decorate_work_package(
    wp: Any, people: Mapping[str, Person], caller: Caller, extra: Mapping[str, Any]
) -> None:
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


_span = formatting.date_span


def decorate_risk(
    risk: Any, people: Mapping[str, Person], caller: Caller, extra: Mapping[str, Any]
) -> None:
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


def decorate_decision(
    decision: Any, people: Mapping[str, Person], caller: Caller, extra: Mapping[str, Any]
) -> None:
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


def decorate_change(
    change: Any, people: Mapping[str, Person], caller: Caller, extra: Mapping[str, Any]
) -> None:
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
    change.decided_elsewhere = extra.get("elsewhere", {}).get(change.pk)
    change.may_adjudicate = open_register and may_decide and change.decided_elsewhere is None
    change.may_withdraw = open_register and may_withdraw
    change.may_decide = change.may_adjudicate or change.may_withdraw
    change.may_apply_to_baseline = (
        caller.may_apply_change_to_baseline
        and not caller.registers_frozen
        and change_awaits_baseline(change)
    )
    change.approver_id = change.approver_account_id or (change.approver_seat or {}).get("accountId")


DECORATE: dict[str, Callable[..., None]] = {
    "work-packages": decorate_work_package,
    "risks": decorate_risk,
    "decisions": decorate_decision,
    "changes": decorate_change,
}


def person_ids(register: str, records: list[Any]) -> set[str]:
    """Every accountId the register's rows show, to resolve in one call."""
    ids: set[str | None] = set()
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
    return {account_id for account_id in ids if account_id}


def decorate(
    register: str,
    records: list[Any],
    people: Mapping[str, Person],
    caller: Caller,
    extra: Mapping[str, Any],
    base: str,
) -> None:
    """Precompute each row's display values; `url` is the row's own URL under `base`."""
    decorate_row = DECORATE[register]
    for record in records:
        record.url = mark_safe(f"{base}{record.pk}/")  # our own path and a UUID
        decorate_row(record, people, caller, extra)


def build(
    register: str,
    page: paging.Page,
    params: QueryDict,
    people: Mapping[str, Person],
    owners: list[str],
    *,
    total: int,
    matching: int,
) -> Table:
    """The table of a page of decorated rows (`registers.paging`): the filters with their
    options and choices, the words searched, the sort and the page's links."""
    spec = paging.SPECS[register]
    owners = sorted(owners, key=lambda a: (_name(people, a).casefold(), a))
    filters = [
        Filter(
            name, label, [(v, labels.label(v)) for v in values], paging.choice(params, name, values)
        )
        for name, label, values, _ in spec.filters
    ]
    filters.append(
        Filter(
            "owner",
            spec.owner_label,
            [(a, _name(people, a)) for a in owners],
            paging.choice(params, "owner", owners),
        )
    )
    cell = pictures.parse_cell(params.get("cell", "")) if register == "risks" else None
    sort = params.get("sort", "")
    sort = sort if sort in spec.sorts else ""
    direction = "desc" if params.get("dir") == "desc" else "asc"
    columns = {
        name: {
            "active": name == sort,
            "direction": direction if name == sort else "",
            "next": "desc" if name == sort and direction == "asc" else "asc",
        }
        for name in spec.sorts
    }
    return Table(
        rows=page.rows,
        filters=filters,
        query=params.get("q", "").strip(),
        sort=sort,
        direction=direction,
        total=total,
        matching=matching,
        page=page,
        columns=columns,
        cell=pictures.cell_param(*cell) if cell else "",
        cell_label=pictures.cell_words(cell) if cell else "",
    )
