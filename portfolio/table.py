"""The portfolio table's rows as HTML, built in Python: a thousand rows of twenty-two cells
through the template engine cost several times what reading them does. The page template keeps
the table around them (caption, sortable headers, grouping) and prints each row. Every value is
escaped here; the markup is the one the template had."""

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from html import escape
from typing import Any
from urllib.parse import quote

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from governance.people import Person
from governance.templatetags.gov import person_chip, rag_badge
from status.derive import money
from status.models import DIMENSIONS

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DASH = "—"
MUTED_DASH = '<span class="muted">—</span>'
KEY_MARK = "PORTFOLIOKEY"


def amount(value: Any) -> str:
    """Money as the drivers print it (the `amount` filter)."""
    if value is None or value == "":
        return DASH
    return money(Decimal(str(value)))


def one_decimal(value: float | int) -> str:
    """A number as the `floatformat:"-1"` filter prints it: whole numbers without decimals,
    others rounded half up to one."""
    number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    if number == number.to_integral_value():
        return str(int(number))
    return f"{number.quantize(Decimal('0.1'), rounding=ROUND_HALF_UP):f}"


def day(iso: str) -> str:
    """An ISO date as `j M Y` (5 Jan 2027)."""
    year, month, day_of_month = iso[:10].split("-")
    return f"{int(day_of_month)} {MONTHS[int(month) - 1]} {year}"


def _text(value: Any) -> str:
    return escape(str(value)) if value not in (None, "") else DASH


def _number(value: Any) -> str:
    if value is None:
        return DASH
    return str(value) if type(value) is int else escape(str(value))


class RowRenderer:
    """Renders rows for one page: the status link, the badges and the people's chips are made
    once and reused."""

    def __init__(self, people: Mapping[str, Person]):
        self.people = people
        self.status_url = reverse("status:index", args=[KEY_MARK])
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
        key = escape(row["projectKey"])
        url = self.status_url.replace(KEY_MARK, escape(quote(row["projectKey"], safe="")))
        effective, overrides, derived = row["effective"], row["overrides"], row["derived"]
        cells = [
            f'<tr>\n<th scope="row"><a href="{url}">{key}</a> '
            f'<span class="muted">{escape(row["name"])}</span></th>',
            f"<td>{self.chip(row['leadAccountId'])}</td>",
            f"<td>{_text(row['theme'])}</td>",
            f'<td><span class="badge state">{escape(row["approvalStatus"])}</span></td>',
            f'<td class="num">{_number(row["version"])}</td>',
            f"<td>{_text(row['phase'])}</td>",
            f'<td class="rag">{self.badge(row["overallRag"])}</td>',
        ]
        for dimension in DIMENSIONS:
            rag_key = f"{dimension}Rag"
            mark = ""
            if overrides.get(rag_key):
                mark = (
                    '<span class="override-mark" aria-hidden="true">*</span>'
                    '<span class="visually-hidden"> (override; derived '
                    f"{escape(str(derived.get(rag_key)))})</span>"
                )
            cells.append(f'<td class="rag">{self.badge(effective.get(rag_key))}{mark}</td>')
        overrun = row["costOverrunPct"]
        review = row["realisationReviewDueOn"]
        if review:
            overdue = (
                ' <span class="badge rag-red">Overdue</span>'
                if row["realisationReviewOverdue"]
                else ""
            )
            review_cell = f"{day(review)}{overdue}"
        else:
            review_cell = MUTED_DASH
        drivers = row["drivers"]
        reason = row["overallReason"]
        cells += [
            f'<td class="num">{amount(row["approvedBudget"])}</td>',
            f'<td class="num">{amount(row["eac"])}</td>',
            f'<td class="num">{DASH if overrun is None else one_decimal(overrun) + " %"}</td>',
            f'<td class="num">{_number(row["scheduleSlipDays"])}</td>',
            f'<td class="num">{_number(row["topRiskScore"])}</td>',
            f'<td class="num">{_number(row["pendingDecisions"])}</td>',
            f'<td class="num">{_number(row["changesAwaitingApplication"])}</td>',
            "<td>"
            + (
                '<span class="badge rag-amber">Gap</span>'
                if row["adoptionGap"]
                else '<span class="muted">No</span>'
            )
            + "</td>",
            "<td>"
            + (
                '<span class="badge rag-amber">Stale</span>'
                if row["stale"]
                else '<span class="muted">Current</span>'
            )
            + "</td>",
            f"<td>{review_cell}</td>",
            '<td>\n<details class="why">\n'
            f'<summary>Why<span class="visually-hidden"> {key}</span></summary>\n'
            '<dl class="why-list">\n'
            + (f"<dt>Overall</dt><dd>{escape(reason)}</dd>\n" if reason else "")
            + "".join(
                f"<dt>{label}</dt><dd>{escape(str(drivers[f'{d}Rag']['summary']))}</dd>\n"
                for d, label in WHY
            )
            + "</dl>\n</details>\n</td>\n</tr>",
        ]
        return mark_safe("\n".join(cells))  # every value above is escaped


WHY = [("cost", "Cost"), ("schedule", "Schedule"), ("scope", "Scope"), ("risk", "Risk")]


def render_rows(rows: list[dict], people: Mapping[str, Person]) -> None:
    """Give each row its HTML (`row["html"]`)."""
    renderer = RowRenderer(people)
    for row in rows:
        row["html"] = renderer.row(row)
