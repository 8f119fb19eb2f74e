"""The register tables' read rows as HTML, built in Python, one function per register: a
hundred rows through the template engine (sixty lookups and a tick's include a row) were
most of what the page after a change cost. Every answer that shows a read row draws it here:
the page and its table (the `register_rows` tag of `registers/_table.html`), the bulk edit's
answers, the inline edit's, the cancel's, the delete refused, the work package's link picker
and the register's own acts (registers.views.base `row_html`).

The markup is the templates' row partials' as they were, byte for byte
(`tests/registers/test_rows.py` renders those partials, kept under
`tests/registers/row_oracle/`, beside these functions for varied rows and compares the two);
every value is escaped here (`_e`: Django's `conditional_escape`, as the template's
autoescape), and goes through the same functions the template's filters and tags called
(dates, labels, people, RAG badges, `truncatechars`)."""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from html import escape
from typing import Any

from django.template.defaultfilters import truncatechars
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from governance import formatting, labels
from governance.people import Person
from governance.templatetags.gov import person, person_chip, rag_badge
from registers.derive import BASIS_NO_BASELINE

DASH = "—"
TIMES = "\u00d7"  # the multiplication sign of "impact 3 x likelihood 4"
MUTED_DASH = '<span class="muted">—</span>'
SAVED_NOTE = ' <span class="saved-note" role="status">Saved</span>'
SAVED_ROW = ' class="saved" tabindex="-1" data-focus'
IMPORTED = ' <span class="badge subtle">imported</span>'


def _e(value: Any) -> str:
    """A value as the template printed it: escaped, unless it is safe HTML already (a date
    span's markup), as `conditional_escape`; None prints as "None", as there."""
    if hasattr(value, "__html__"):
        return str(value.__html__())
    return escape(str(value), quote=True)


def _short(value: Any) -> str:
    """`value|truncatechars:120`, escaped."""
    return _e(truncatechars(value, 120))


def _item(mapping: Any, key: str) -> Any:
    """`mapping.key` in a template, for the JSON objects a row shows (a missing key prints
    nothing)."""
    return mapping.get(key, "") if isinstance(mapping, Mapping) else ""


def _notice(notice: str) -> str:
    return f'<p class="row-notice" role="alert">{_e(notice)}</p>' if notice else ""


@dataclass
class RowContext:
    """What a read row shows beside its record: the people it names, the reader's rights and
    the answer's own words (saved, a notice, the moved row, the link picker)."""

    project_key: str
    anchor: str
    people: Mapping[str, Person] = field(default_factory=dict)
    can_edit: bool = False  # the caller may edit the registers
    caller_can_edit: bool = False  # the caller may edit the project (a decision's notes)
    bulk_on: bool = False  # each row has its tick for the bulk bar
    bulk_selected: Iterable[str] | None = None
    csrf_input: str = ""
    saved: bool = False
    notice: str = ""
    moved_id: Any = None
    moved_direction: str = ""
    picking: bool = False  # a work package's link picker is open in its row
    linked: str = ""
    link_errors: Mapping[str, list[str]] = field(default_factory=dict)
    # The answer's person chips and RAG badges, each drawn once for the rows that repeat it
    # (a page's hundred rows name a handful of people); kept for this answer only.
    drawn: dict[tuple[str, Any], str] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, context: Any) -> "RowContext":
        """From a page's or a row answer's template context (a dict or a Context)."""
        get = context.get
        caller = get("caller")
        return cls(
            project_key=get("project").key,
            anchor=get("reg").anchor,
            people=get("people") or {},
            can_edit=bool(get("can_edit")),
            caller_can_edit=bool(getattr(caller, "can_edit", False)),
            bulk_on=bool(get("bulk_on")),
            bulk_selected=get("bulk_selected") or None,
            csrf_input=get("csrf_input") or "",
            saved=bool(get("saved")),
            notice=get("notice") or "",
            moved_id=get("moved_id"),
            moved_direction=get("moved_direction") or "",
            picking=bool(get("picking")),
            linked=get("linked") or "",
            link_errors=get("link_errors") or {},
        )

    def chip(self, account_id: Any) -> str:
        """`person_chip(people, account_id)`, drawn once an answer."""
        key = ("chip", account_id)
        if key not in self.drawn:
            self.drawn[key] = person_chip(self.people, account_id)
        return self.drawn[key]

    def badge(self, rag: Any) -> str:
        """`rag_badge(rag)`, drawn once an answer."""
        key = ("rag", rag)
        if key not in self.drawn:
            self.drawn[key] = rag_badge(rag)
        return self.drawn[key]

    def tick(self, r: Any, name: Any) -> str:
        """The row's tick for the bulk bar: it belongs to the bar's form and sends the row's
        id and the revision the page shows."""
        checked = " checked" if self.bulk_selected and str(r.pk) in self.bulk_selected else ""
        return (
            f'<td class="pick" data-label="Select"><label class="pick"><input type="checkbox" '
            f'name="row" value="{_e(r.pk)}:{_e(r.revision)}" form="{_e(self.anchor)}-bulk-form"'
            f'{checked}><span class="visually-hidden">Select {_e(name)}</span></label></td>\n'
        )


# --- the work package register ------------------------------------------------------------


def work_package_row(r: Any, c: RowContext) -> SafeString:
    pk, url, name = _e(r.pk), _e(r.url), _e(r.name)
    out = [f'\n<tr id="wp-{pk}" data-href="{url}" data-id="{pk}"']
    out.append(SAVED_ROW if c.saved else "")
    out.append(">\n  ")
    if c.can_edit:
        moved = c.moved_id and c.moved_id == r.pk
        up = " data-focus" if moved and c.moved_direction == "up" else ""
        down = " data-focus" if moved and c.moved_direction == "down" else ""
        out.append(
            '<td class="order" data-label="Move"><span class="drag-handle" aria-hidden="true" '
            'title="Drag to reorder"></span><span class="move"><button type="submit" '
            f'form="wp-move-form" formaction="{url}move/" name="direction" value="up" '
            f'class="icon"{up}><span aria-hidden="true">↑</span><span class="visually-hidden">'
            f"Move {name} up</span></button><button "
            f'type="submit" form="wp-move-form" formaction="{url}move/" name="direction" '
            f'value="down" class="icon"{down}><span aria-hidden="true">↓</span><span '
            f'class="visually-hidden">Move {name} down</span></button></span></td>'
        )
    out.append("\n  ")
    if c.bulk_on:
        out.append(c.tick(r, r.name))
    out.append(f'\n  <th scope="row"><a href="{url}">{name}</a>')
    if r.type:
        out.append(f'<span class="sub">{_e(r.type)}</span>')
    out.append(SAVED_NOTE if c.saved else "")
    out.append(
        f'</th>\n  <td data-label="Owner">{c.chip(r.owner_account_id)}</td>\n  '
        f'<td data-label="Status"><span class="badge wp-{_e(r.status_class)}">{_e(r.status)}'
        "</span>"
    )
    if r.progress is not None:
        out.append(f' <span class="progress-text">{_e(r.progress)}%</span>')
    out.append(
        f'</td>\n  <td data-label="RAG">{c.badge(r.rag)}</td>\n  '
        f'<td class="dates" data-label="Planned">{_e(r.planned_text)}</td>\n  '
        f'<td class="dates" data-label="Forecast end"><span class="date">'
        f"{_e(r.forecast_end_text)}</span>"
    )
    if r.variance_text:
        out.append(
            f' <span class="variance {_e(r.variance_class)}" title="{_e(r.variance_note)}">'
            f"{_e(r.variance_text)}</span>"
        )
    if r.schedule.replanned:
        out.append(' <span class="sub">re-planned</span>')
    elif r.schedule.basis == BASIS_NO_BASELINE:
        out.append(' <span class="sub">no baseline</span>')
    out.append(
        f'</td>\n  <td class="num" data-label="Budget">{_e(r.budget_text)}</td>\n  '
        f'<td class="num" data-label="Forecast">{_e(r.forecast_budget_text)}</td>\n  '
        f'<td class="num" data-label="Actual">{_e(r.actual_budget_text)}</td>\n  '
        '<td class="links" data-label="Issues">'
    )
    keys = r.linked_issue_keys or ()
    if c.picking:
        out.append(link_picker(r, c))
    else:
        out.extend(f'<span class="issue-key">{_e(k)}</span> ' for k in keys)
        if c.can_edit:
            out.append(
                f'<button type="button" class="small secondary" hx-get="{url}links/">Link'
                f'<span class="visually-hidden"> issues to {name}</span></button>'
            )
    out.append("</td>\n  ")
    if c.can_edit:
        out.append(
            '<td class="actions">\n    '
            f'<a class="button small" href="{url}edit/" hx-get="{url}edit/">Edit<span '
            f'class="visually-hidden"> {name}</span></a>\n    '
            f'<button type="submit" form="wp-row-post" formaction="{url}delete/" '
            f'name="revision" value="{_e(r.revision)}" class="small danger" '
            f'data-confirm="Delete the work package “{name}”? Its linked issues lose their '
            f'Work Package reference.">Delete<span class="visually-hidden"> {name}</span>'
            f"</button>\n    {_notice(c.notice)}\n  </td>"
        )
    out.append("\n</tr>\n")
    return mark_safe("".join(out))  # every value escaped above


def link_picker(r: Any, c: RowContext) -> str:
    """A work package's link picker, open in its row's Issues cell."""
    pk, url = _e(r.pk), _e(r.url)
    keys = r.linked_issue_keys or ()
    out = ['\n<div class="picker" data-escape-cancel>\n  ']
    if keys:
        out.append('<ul class="plain linked">')
        for k in keys:
            key = _e(k)
            out.append(
                f'<li><span class="issue-key">{key}</span><form method="post" '
                f'action="{url}links/{key}/delete/" hx-post="{url}links/{key}/delete/" '
                f'hx-target="closest tr" hx-swap="outerHTML" class="inline">{c.csrf_input}'
                f'<button type="submit" class="small danger">Unlink<span '
                f'class="visually-hidden"> {key}</span></button></form></li>'
            )
        out.append("</ul>")
    else:
        out.append('<p class="muted">No linked issues.</p>')
    out.append("\n  ")
    if c.linked:
        out.append(
            f'<p class="notice notice-success" role="status">{_e(c.linked)} linked; its Work '
            "Package field is being updated in the tracker.</p>"
        )
    out.append("\n  ")
    for messages in c.link_errors.values():
        out.extend(
            f'<p class="field-error" role="alert">{_e(labels.in_message(m))}</p>' for m in messages
        )
    out.append(
        f'\n  <label for="wp-q-{pk}">Find an issue of {_e(c.project_key)}</label>\n  '
        f'<input type="search" id="wp-q-{pk}" name="q" autocomplete="off" '
        f'placeholder="Key or summary" data-focus hx-get="{url}links/" '
        f'hx-trigger="input changed delay:300ms, search" hx-target="#wp-results-{pk}" '
        f'hx-swap="innerHTML">\n  <div id="wp-results-{pk}" class="results" '
        f'aria-live="polite"></div>\n  <button type="button" class="small secondary" '
        f'hx-get="{url}" hx-target="closest tr" hx-swap="outerHTML" data-cancel>Done</button>\n'
        "</div>\n"
    )
    return "".join(out)


# --- the risk register ----------------------------------------------------------------------


def risk_row(r: Any, c: RowContext) -> SafeString:
    pk, url, title = _e(r.pk), _e(r.url), _e(r.title)
    closed = r.status == "Closed"
    out = [f'\n<tr id="risk-{pk}" data-href="{url}"']
    if closed or c.saved:
        out.append(f' class="{"closed" if closed else ""}{" saved" if c.saved else ""}"')
    out.append(' tabindex="-1" data-focus' if c.saved else "")
    out.append(">\n  ")
    if c.bulk_on:
        out.append(c.tick(r, r.title))
    out.append(f'\n  <th scope="row"><a href="{url}">{title}</a>')
    out.append(IMPORTED if r.imported else "")
    if r.description:
        out.append(f'<span class="sub">{_short(r.description)}</span>')
    out.append(SAVED_NOTE if c.saved else "")
    direction = str(r.direction)
    out.append(
        f'</th>\n  <td data-label="Direction"><span class="badge dir-{_e(direction.lower())}">'
        f"{_e(direction)}</span>"
    )
    if r.materialised:
        out.append(' <span class="badge materialised">Materialised</span>')
    out.append(
        f'</td>\n  <td data-label="Owner">{c.chip(r.owner_account_id)}</td>\n  '
        f'<td data-label="Status">{_e(r.status)}</td>\n  '
        '<td class="num" data-label="Inherent score">'
    )
    if r.inherent is not None:
        out.append(
            f'<span class="heat heat-{_e(r.inherent_heat)}" title="Inherent: impact '
            f'{_e(r.impact)} {TIMES} likelihood {_e(r.likelihood)}, before treatment">'
            f"{_e(r.inherent)}</span>"
        )
    else:
        out.append(MUTED_DASH)
    out.append('</td>\n  <td class="num" data-label="Residual score">')
    if r.score is not None:
        said = (
            f"Residual: impact {_e(r.residual_impact)} {TIMES} likelihood "
            f"{_e(r.residual_likelihood)}, after treatment"
            if r.residual_assessed
            else "No residual assessed: the inherent score stands"
        )
        out.append(f'<span class="heat heat-{_e(r.heat)}" title="{said}">{_e(r.score)}</span>')
        if not r.residual_assessed:
            out.append('<span class="sub muted">as inherent</span>')
    else:
        out.append(MUTED_DASH)
    out.append(f'</td>\n  <td data-label="Treatment">{_e(r.treatment or DASH)}')
    if r.treatment == "Accept" and r.accepted_at:
        out.append(
            f'<span class="sub">accepted {_e(formatting.day(r.accepted_at))} by '
            f"{_e(person(c.people, r.accepted_by_account_id))}</span>"
        )
    mitigation = truncatechars(r.mitigation, 120)
    out.append(f'</td>\n  <td data-label="Mitigation">{_e(mitigation or DASH)}')
    if r.treating:
        decisions = _e(reverse("registers:decisions", args=[c.project_key]))
        treated = "; ".join(
            f'<a href="{decisions}{_e(id)}/">{_e(text)}</a>' for id, text in r.treating
        )
        out.append(f'<span class="sub">Treated by {treated}</span>')
    elif r.awaits_treating_decision:
        out.append('<span class="sub warning">Materialised, no treating decision yet</span>')
    out.append("</td>\n  ")
    if c.can_edit:
        out.append(
            '<td class="actions">\n    '
            f'<a class="button small" href="{url}edit/" hx-get="{url}edit/">Edit<span '
            f'class="visually-hidden"> {title}</span></a>\n    '
        )
        if r.can_record_decision:
            out.append(
                f'<a class="button small secondary" href="{url}record-decision/" '
                f'hx-get="{url}record-decision/" hx-target="closest tr" hx-swap="outerHTML">'
                f'Record decision<span class="visually-hidden"> on {title}</span></a>'
            )
        out.append(
            f'\n    <button type="submit" form="risk-row-post" formaction="{url}delete/" '
            f'name="revision" value="{_e(r.revision)}" class="small danger" '
            f'data-confirm="Delete “{title}”?">Delete<span class="visually-hidden"> {title}'
            f"</span></button>\n    {_notice(c.notice)}\n  </td>"
        )
    out.append("\n</tr>\n")
    return mark_safe("".join(out))  # every value escaped above


def _opening(kind: str, pk: str, url: str, name: str, r: Any, c: RowContext) -> list[str]:
    """A decision's or a change's row up to its name: the row (saved or not), the row's
    header linking to the record, and the imported mark. Values already escaped."""
    return [
        f'\n<tr id="{kind}-{pk}" data-href="{url}"',
        SAVED_ROW if c.saved else "",
        f'>\n  <th scope="row"><a href="{url}">{name}</a>',
        IMPORTED if r.imported else "",
    ]


# --- the decision log -----------------------------------------------------------------------


def decision_row(r: Any, c: RowContext) -> SafeString:
    pk, url, decision = _e(r.pk), _e(r.url), _e(r.decision)
    out = _opening("decision", pk, url, decision, r, c)
    if r.treated_risk_id:
        risks = _e(reverse("registers:risks", args=[c.project_key]))
        out.append(
            f'<span class="sub">Treats <a href="{risks}{_e(r.treated_risk_id)}/">a materialised '
            "risk</a></span>"
        )
    if r.note_count:
        plural = "" if r.note_count == 1 else "s"
        out.append(f'<span class="sub">{_e(r.note_count)} note{plural}</span>')
    out.append(SAVED_NOTE if c.saved else "")
    state = str(r.state)
    rationale = truncatechars(r.rationale, 120)
    out.append(
        f'</th>\n  <td data-label="State"><span class="badge state-{_e(state.lower())}">'
        f"{_e(state)}</span></td>\n  "
        f'<td class="dates" data-label="Made on"><span class="date">'
        f"{_e(r.made_on_text or DASH)}</span></td>\n  "
        f'<td data-label="Made by">{c.chip(r.made_by_account_id)}</td>\n  '
        f'<td data-label="Rationale">{_e(rationale or DASH)}</td>\n  <td data-label="Minutes">'
    )
    if r.minutes_ref:
        minutes = _e(_item(r.minutes_ref, "title"))
        if r.minutes_url:
            out.append(f'<a href="{_e(r.minutes_url)}" rel="noopener noreferrer">{minutes}</a>')
        else:
            out.append(minutes)
    else:
        out.append(DASH)
    out.append(
        f'</td>\n  <td class="dates" data-label="Logged"><span class="date">'
        f"{_e(r.created_text)}</span></td>\n  "
    )
    if c.caller_can_edit:
        out.append('<td class="actions">\n    ')
        if r.can_update:
            out.append(
                f'<a class="button small" href="{url}edit/" hx-get="{url}edit/" '
                'hx-target="closest tr" hx-swap="outerHTML">Edit<span class="visually-hidden"> '
                f"{decision}</span></a>"
            )
        out.append(
            f'\n    <a class="button small secondary" href="{url}notes/" hx-get="{url}notes/" '
            'hx-target="closest tr" hx-swap="outerHTML">Add note<span class="visually-hidden"> '
            f"to {decision}</span></a>\n    {_notice(c.notice)}\n  </td>"
        )
    out.append("\n</tr>\n")
    return mark_safe("".join(out))  # every value escaped above


# --- the change requests --------------------------------------------------------------------


def change_row(r: Any, c: RowContext) -> SafeString:
    pk, url, summary = _e(r.pk), _e(r.url), _e(r.summary)
    out = _opening("change", pk, url, summary, r, c)
    if r.target_name:
        out.append(f'<span class="sub">Work package: {_e(r.target_name)}</span>')
    if r.reason:
        out.append(f'<span class="sub">{_short(r.reason)}</span>')
    out.append(SAVED_NOTE if c.saved else "")
    out.append('</th>\n  <td data-label="Dimensions">')
    if r.dimension_list:
        out.extend(f'<span class="badge dim">{_e(d)}</span> ' for d in r.dimension_list)
        if not r.dimensions_chosen:
            out.append('<span class="sub">inferred from the impacts</span>')
    else:
        out.append(MUTED_DASH)
    status = str(r.status)
    out.append(
        f'</td>\n  <td class="num" data-label="Budget impact">{_e(r.budget_text or DASH)}</td>'
        f'\n  <td class="num" data-label="Schedule impact">{_e(r.days_text or DASH)}</td>\n  '
        f'<td data-label="Status"><span class="badge change-{_e(status.lower())}">'
        f"{_e(labels.label(r.status))}</span>"
    )
    if r.application_label:
        out.append(
            f'<span class="sub application application-{_e(str(r.application_state).lower())}">'
            f"{_e(r.application_label)}</span>"
        )
    if r.decided_at:
        out.append(
            f'<span class="sub">{_e(formatting.day(r.decided_at))} by '
            f"{_e(person(c.people, r.decided_by_account_id))}</span>"
        )
    out.append(
        f'</td>\n  <td data-label="Proposer">{c.chip(r.proposer_account_id)}</td>'
        '\n  <td data-label="Decides">'
    )
    if r.approver_id:
        out.append(c.chip(r.approver_id))
    elif r.approver_seat:
        out.append(
            f'{_e(_item(r.approver_seat, "displayName"))} <span class="muted">(external)</span>'
        )
    else:
        out.append('<span class="muted">Sponsor</span>')
    out.append(
        f'</td>\n  <td class="dates" data-label="Raised"><span class="date">'
        f'{_e(r.created_text)}</span></td>\n  <td class="actions">\n    '
    )
    revision = f'<input type="hidden" name="revision" value="{_e(r.revision)}">'
    if r.may_adjudicate:
        out.append(
            f'<a class="button small" href="{url}adjudicate/" hx-get="{url}adjudicate/" '
            'hx-target="closest tr" hx-swap="outerHTML">Decide<span class="visually-hidden"> '
            f"{summary}</span></a>\n    "
        )
    elif r.may_withdraw:
        out.append(
            f'<form method="post" action="{url}adjudicate/" hx-post="{url}adjudicate/" '
            f'hx-target="closest tr" hx-swap="outerHTML" class="inline">{c.csrf_input}'
            f'{revision}<button type="submit" name="outcome" value="Withdrawn" '
            f'class="small secondary" data-confirm="Withdraw “{summary}”? It cannot be decided '
            f'afterwards.">Withdraw<span class="visually-hidden"> {summary}</span></button>'
            "</form>"
        )
    out.append("\n    ")
    if r.may_apply_to_baseline:
        apply = _e(reverse("charter:change-apply-to-baseline", args=[c.project_key, r.pk]))
        target = _e(r.target_name or "its work package")
        out.append(
            f'<form method="post" action="{apply}" hx-post="{apply}" hx-target="closest tr" '
            f'hx-swap="outerHTML" class="inline">{c.csrf_input}{revision}<button type="submit" '
            f'class="small" data-confirm="Apply “{summary}” to the baseline of {target}? Its '
            "baselined end date and budget move by the change's impacts.\">Apply to baseline"
            f'<span class="visually-hidden"> {summary}</span></button></form>'
        )
    out.append("\n    ")
    if r.can_update:
        out.append(
            f'<a class="button small secondary" href="{url}edit/" hx-get="{url}edit/">Edit'
            f'<span class="visually-hidden"> {summary}</span></a>\n    <button type="submit" '
            f'form="change-row-post" formaction="{url}delete/" name="revision" '
            f'value="{_e(r.revision)}" class="small danger" data-confirm="Delete the change '
            f'request “{summary}”?">Delete<span class="visually-hidden"> {summary}</span>'
            "</button>"
        )
    out.append(f"\n    {_notice(c.notice)}\n  </td>\n</tr>\n")
    return mark_safe("".join(out))  # every value escaped above


# The row of each register, by its slug.
ROWS: dict[str, Callable[[Any, RowContext], SafeString]] = {
    "work-packages": work_package_row,
    "risks": risk_row,
    "decisions": decision_row,
    "changes": change_row,
}


def rows_html(slug: str, records: Iterable[Any], c: RowContext) -> SafeString:
    """The register's read rows, one after the other."""
    draw = ROWS[slug]
    return mark_safe("".join([draw(r, c) for r in records]))  # each row escaped its values
