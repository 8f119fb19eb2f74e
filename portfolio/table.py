"""The portfolio table's rows as HTML, built in Python: a thousand rows through the template
engine cost several times what reading them does. The markup is the template's own
(`portfolio/portfolio.html#row`, which still renders a row for a test that compares the two
cell by cell for every column choice); every value is escaped here, and the values go through
the same filters the template used (labels, amounts with the currency, dates)."""

from collections.abc import Iterable, Mapping
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from html import escape
from typing import Any

from django.template.defaultfilters import floatformat, truncatechars
from django.utils.safestring import SafeString, mark_safe

from governance import formatting
from governance.people import Person
from governance.templatetags.gov import day, label_filter, person_chip, rag_badge
from governance.templatetags.gov import money as amount
from portfolio.extensions import Column
from portfolio.pictures import project_urls
from status import earned_value

DASH = "—"
WHY = [("cost", "Cost"), ("schedule", "Schedule"), ("scope", "Scope"), ("risk", "Risk")]


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def one_decimal(value: Any) -> str:
    """The template filter `floatformat:"-1"` (one decimal, none for a whole number), without
    its localisation machinery: a thousand rows call it (a test compares the two)."""
    try:
        exact = Decimal(str(value))
    except InvalidOperation:
        return floatformat(value, "-1")
    if not exact.is_finite():
        return floatformat(value, "-1")
    if exact == exact.to_integral_value():
        return str(int(exact))
    rounded = exact.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)
    return f"{abs(rounded) if rounded == 0 else rounded:.1f}"


def _or_dash(value: Any) -> str:
    return DASH if value is None else _e(value)


class RowRenderer:
    """Renders the rows of one page: badges, chips and the status link are made once."""

    def __init__(
        self,
        people: Mapping[str, Person],
        shown: Iterable[str],
        rag_dims: Iterable[str],
        extra: Iterable[Column] = (),
    ) -> None:
        self.people = people
        self.shown = set(shown)
        self.rag_dims = list(rag_dims)
        self.extra = [c for c in extra if c.key in self.shown]
        self.status_url = project_urls("status:index")
        self.badges: dict[Any, str] = {}
        self.chips: dict[Any, str] = {}

    def badge(self, value: Any) -> str:
        if value not in self.badges:
            self.badges[value] = str(rag_badge(value))
        return self.badges[value]

    def chip(self, account_id: Any) -> str:
        if account_id not in self.chips:
            self.chips[account_id] = str(person_chip(self.people, account_id))
        return self.chips[account_id]

    def row(self, row: Mapping[str, Any]) -> SafeString:
        shown = self.shown
        key = _e(row["projectKey"])
        url = _e(self.status_url(row["projectKey"]))
        cells = [
            f'<tr><th scope="row" class="col-project"><a href="{url}">{key}</a> '
            f'<span class="muted">{_e(row["name"])}</span></th>'
        ]
        if "lead" in shown:
            cells.append(f'<td data-label="Lead">{self.chip(row["leadAccountId"])}</td>')
        if "theme" in shown:
            cells.append(f'<td data-label="Theme">{_e(row["theme"] or DASH)}</td>')
        if "approval" in shown:
            state = _e(label_filter(row["approvalStatus"]))
            cells.append(f'<td data-label="Approval"><span class="badge state">{state}</span></td>')
        if "version" in shown:
            cells.append(f'<td class="num" data-label="Version">{_e(row["version"])}</td>')
        if "phase" in shown:
            phase = row["phase"] or ""
            title = f' title="{_e(phase)}"' if len(phase) > 40 else ""
            cells.append(
                f'<td class="wrap" data-label="Phase"{title}>'
                f"{_e(truncatechars(phase or DASH, 40))}</td>"
            )
        if "stage" in shown:
            stage = _e(row["currentStage"] or DASH)
            cells.append(f'<td class="wrap" data-label="Stage">{stage}</td>')
        if "gate" in shown:
            days = row["daysAtGate"]
            cells.append(
                '<td class="num" data-label="At gate"><span class="muted">—</span></td>'
                if days is None
                else f'<td class="num" data-label="At gate">{_e(days)}</td>'
            )
        if "overall" in shown:
            cells.append(
                f'<td class="rag" data-label="Overall">{self.badge(row["overallRag"])}</td>'
            )
        effective, overrides, derived = row["effective"], row["overrides"], row["derived"]
        for dimension in self.rag_dims:
            if dimension not in shown:
                continue
            rag_key = f"{dimension}Rag"
            mark = ""
            if (overrides or {}).get(rag_key):
                mark = (
                    '<span class="override-mark" aria-hidden="true">*</span>'
                    '<span class="visually-hidden"> (override; derived '
                    f"{_e((derived or {}).get(rag_key))})</span>"
                )
            cells.append(
                f'<td class="rag" data-label="{dimension.capitalize()}">'
                f"{self.badge((effective or {}).get(rag_key))}{mark}</td>"
            )
        if "budget" in shown:
            budget = row["approvedBudget"]
            note = ""
            figures = ((row["drivers"] or {}).get("costRag") or {}).get("figures") or {}
            if budget is not None and not figures.get("baselined"):
                note = '<span class="sub muted">not yet approved</span>'
            cells.append(
                f'<td class="num" data-label="Approved budget">{_e(amount(budget))}{note}</td>'
            )
        if "eac" in shown:
            compared = (row.get("earnedValue") or {}).get("estimatesCompared")
            title = f' title="{_e(compared)}"' if compared else ""
            cells.append(
                f'<td class="num" data-label="Forecast (EAC)"{title}>{_e(amount(row["eac"]))}</td>'
            )
        if "overrun" in shown:
            overrun = row["costOverrunPct"]
            text = DASH if overrun is None else f"{formatting.percent_figure(overrun)} %"
            cells.append(f'<td class="num" data-label="Overrun">{_e(text)}</td>')
        if "slip" in shown:
            slip = _or_dash(row["scheduleSlipDays"])
            cells.append(f'<td class="num" data-label="Slip (days)">{slip}</td>')
        if "topRisk" in shown:
            top, zone = row["topRiskScore"], row.get("topRiskZone") or "None"
            if top is None:
                cells.append(f'<td class="num" data-label="Top risk">{_or_dash(top)}</td>')
            else:
                cells.append(
                    f'<td class="num" data-label="Top risk"><span class="heat '
                    f'heat-{_e(zone.lower())}" title="The highest residual score">'
                    f"{_e(top)}</span></td>"
                )
        if "decisions" in shown:
            pending = _e(row["pendingDecisions"])
            cells.append(f'<td class="num" data-label="Pending decisions">{pending}</td>')
        if "awaiting" in shown:
            awaiting = _e(row["changesAwaitingApplication"])
            cells.append(f'<td class="num" data-label="Awaiting application">{awaiting}</td>')
        if "adoption" in shown:
            gap = row["adoptionGap"]
            badge = '<span class="badge rag-amber">Gap</span>'
            no = '<span class="muted">No</span>'
            cells.append(f'<td data-label="Adoption">{badge if gap else no}</td>')
        if "stale" in shown:
            badge = '<span class="badge rag-amber">Stale</span>'
            current = '<span class="muted">Current</span>'
            cells.append(f'<td data-label="Status">{badge if row["stale"] else current}</td>')
        if "reviewDue" in shown:
            review = row["realisationReviewDueOn"]
            if review:
                overdue = row["realisationReviewOverdue"]
                flag = ' <span class="badge rag-red">Overdue</span>' if overdue else ""
                cells.append(f'<td data-label="Review due">{_e(day(review))}{flag}</td>')
            else:
                cells.append('<td data-label="Review due"><span class="muted">—</span></td>')
        if "exception" in shown:
            age = row["exceptionAgeDays"]
            if age is None:
                cells.append('<td data-label="Exception"><span class="muted">No</span></td>')
            else:
                days = "1 day" if age == 1 else f"{age} days"
                cells.append(
                    f'<td data-label="Exception"><span class="badge rag-red">In exception</span> '
                    f"{days}</td>"
                )
        for index in ("cpi", "spi"):
            if index in shown:
                values = row.get("earnedValue") or {}
                value = values.get(index)
                text = DASH if value is None else f"{Decimal(str(value)):.2f}"
                title = _e(earned_value.reading(index, values))
                cells.append(
                    f'<td class="num" title="{title}" data-label="{index.upper()}">{_e(text)}</td>'
                )
        for column in self.extra:
            cells.append(extra_cell(column, row.get(column.key)))
        if "why" in shown:
            reason = row["overallReason"]
            drivers = row["drivers"] or {}
            items = f"<dt>Overall</dt><dd>{_e(reason)}</dd>" if reason else ""
            items += "".join(
                f"<dt>{label}</dt><dd>{_e((drivers.get(f'{d}Rag') or {}).get('summary'))}</dd>"
                for d, label in WHY
            )
            compared = (row.get("earnedValue") or {}).get("estimatesCompared")
            if compared:
                items += f"<dt>Estimates</dt><dd>{_e(compared)}</dd>"
            cells.append(
                '<td class="why"><details class="why"><summary>Why<span class="visually-hidden"> '
                f'{key}</span></summary><dl class="why-list">{items}</dl></details></td>'
            )
        cells.append("</tr>")
        return mark_safe("".join(cells))  # every value above is escaped


def extra_cell(column: Column, value: Any) -> str:
    """A cell of a column an app above adds (`portfolio.extensions`): its value as text, a
    dash where it has none (a project it does not concern)."""
    num = ' class="num"' if column.num else ""
    if value is None:
        text = '<span class="muted">—</span>'
    elif column.places is not None and isinstance(value, int | float | Decimal):
        text = _e(f"{Decimal(str(value)):.{column.places}f}")
    else:
        text = _e(value)
    return f'<td{num} data-label="{_e(column.label)}">{text}</td>'


def render_rows(
    rows: list[dict[str, Any]],
    people: Mapping[str, Person],
    shown: Iterable[str],
    rag_dims: Iterable[str],
    extra: Iterable[Column] = (),
) -> None:
    """Give each row its HTML (`row["html"]`): a page's hundred rows, built afresh."""
    renderer = RowRenderer(people, shown, rag_dims, extra)
    for row in rows:
        row["html"] = renderer.row(row)
