"""What the business-case pages render: one context builder per page, shared by the GET
views, the section saves (HTMX partials) and the acts (which re-render the page they were
taken from when refused). Every flag a template reads is computed here from the lifecycle
table and the caller; templates derive no rule."""

from typing import Any, NamedTuple, Protocol

from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse

from charter import acts, derive, finance
from charter.forms import NOTE_ROWS
from charter.models import (
    APPROVAL_STATUSES,
    CLOSEOUT_RETURN_NOTE_SECTIONS,
    RETURN_NOTE_SECTIONS,
    SEVERITIES,
    BusinessCase,
)
from charter.pictures import benefits_chart
from charter.reviews import next_review
from charter.selectors import approval_preview
from charter.services import current_case, submission_missing
from charter.services.closeout import missing_dispositions, pending_register_rows
from charter.services.minutes import minutes_list
from charter.services.thesis import EXTERNAL_SEATS
from charter.specs import SEATS as DECLARED_SEATS
from charter.specs import (
    CharterSpec,
    CloseoutSpec,
    MinutesSpec,
    RealisationSpec,
    ReviewSpec,
    TolerancesSpec,
)
from governance import cleaning, labels, permissions, specs, submissions
from governance.errors import DomainError
from governance.http import HtmxHttpRequest, announce_revision, render_htmx
from governance.models import Project, SiteSettings
from governance.people import resolve
from governance.permissions import Caller
from governance.services import disabled_themes, enabled_themes
from registers.services import changes_awaiting_application

# The lifecycle strip: the states in order, without the ends off the main path.
LIFECYCLE = [s for s in APPROVAL_STATUSES if s not in ("Archived", "NotRealised")]
STATE_LABELS = labels.STATES
# The sections a return note names: fields, or parts of the case, by their labels.
SECTION_LABELS = {
    section: labels.field_label(section)
    for section in [*RETURN_NOTE_SECTIONS, *CLOSEOUT_RETURN_NOTE_SECTIONS]
}
# The people section's seats (the adoption owner is picked in the adoption section).
SEATS = [
    (field, specs.labels(CharterSpec)[field], field in EXTERNAL_SEATS)
    for field in DECLARED_SEATS
    if field != "adoptionOwner"
]
DONE = {
    "draft": "Drafting started.",
    "submit": "Submitted for approval. The sponsor has been told.",
    "return": "Returned to the project with your notes.",
    "approve": "Approved. The plan baseline is frozen.",
    "reopen": "Re-opened for amendment.",
    "archive": "Archived.",
    "kill": "Killed: the business case is archived.",
    "closeout-start": "Close-out started.",
    "closeout-submit": "Close-out submitted to the sponsor.",
    "closeout-return": "Close-out returned with your notes.",
    "close": "Closed.",
    "handover-acknowledge": "Handover acknowledged.",
    "handover-escalate": "Handover escalated.",
    "realisation-start": "Benefits realisation started.",
    "realisation-review": "Review recorded.",
    "kpi-resolve": "KPI resolved.",
    "verdict": "Verdict recorded.",
    "maintenance-start": "Maintenance started.",
    "maintenance-retire": "Retired.",
    "steerco-schedule": "First steering committee scheduled.",
    "steerco-confirm": "First steering committee confirmed as held: initiation is complete.",
}


def stored_thesis(case: BusinessCase) -> dict[str, Any]:
    return {
        "businessProblem": case.business_problem,
        "outcome": derive.outcome(case),
        "returnExpected": case.return_expected,
        "scopeInBounds": case.scope_in_bounds,
        "scopeBoundaries": case.scope_boundaries,
        "theme": case.theme,
        "designPrinciples": "\n".join(case.design_principles or []),
    }


def stored_adoption(case: BusinessCase) -> dict[str, Any]:
    return {
        "adoptionAffected": case.adoption_affected,
        "adoptionKpi": case.adoption_kpi,
        "changeSaturation": case.change_saturation,
    }


# Acts whose form asks for something (the others are a single button).
FORM_ACTS = frozenset(
    {
        "return",
        "closeout-return",
        "approve",
        "reopen",
        "archive",
        "kill",
        "handover-escalate",
        "realisation-review",
        "kpi-resolve",
        "verdict",
        "steerco-schedule",
        "steerco-confirm",
    }
)
ALL_ACT_LABELS = {name: act.label for name, act in acts.ACTS.items()}


def _grouped(
    notes: list[dict[str, Any]], sections: list[str]
) -> list[tuple[str, str, list[dict[str, Any]]]]:
    groups = []
    for section in sections:
        in_section = [n for n in notes if n.get("section") == section]
        if in_section:
            groups.append((section, SECTION_LABELS.get(section, section), in_section))
    return groups


def _stepper(case: BusinessCase) -> list[dict[str, Any]]:
    status = case.approval_status
    shown = list(LIFECYCLE)
    if status == "NotRealised":
        shown[shown.index("Realised")] = "NotRealised"
    if status == "Archived":
        origin = case.archived_from_status or "Exploring"
        cut = shown.index(origin) + 1 if origin in shown else 1
        shown = [*shown[:cut], "Archived"]
    position = shown.index(status) if status in shown else -1
    return [
        {
            "state": state,
            "label": STATE_LABELS.get(state, state),
            "done": index < position,
            "current": index == position,
        }
        for index, state in enumerate(shown)
    ]


def tolerance_proposal(case: BusinessCase) -> dict[str, Any]:
    """What the approval form pre-fills: the tolerances in force (an amendment), else the
    site's defaults; {api name: {label, value}}."""
    declared = specs.fields(TolerancesSpec)
    in_force = {api: getattr(case, field.name) for api, field in declared.items()}
    if all(value is None for value in in_force.values()):
        site = SiteSettings.load()
        in_force = {
            api: getattr(site, f"{field.name}_default", None) for api, field in declared.items()
        }
    return {
        api: {"label": field.label, "value": "" if in_force[api] is None else in_force[api]}
        for api, field in declared.items()
    }


def page_context(
    request: HtmxHttpRequest, project: Project, caller: Caller, case: BusinessCase, page: str
) -> dict[str, Any]:
    """What every business-case page's context starts with: the project, the caller, the
    charter tab with `page` as its subpage, and the lifecycle bar."""
    return {
        "project": project,
        "caller": caller,
        "tab": "charter",
        "subpage": page,
        **lifecycle_context(request, project, caller, case, page),
    }


def lifecycle_context(
    request: HtmxHttpRequest, project: Project, caller: Caller, case: BusinessCase, page: str
) -> dict[str, Any]:
    """The lifecycle bar every business-case page shows: state, version, the acts this
    person may take now (and only those), with what their forms need."""
    available = acts.available_acts(case, caller)
    context = {
        "case": case,
        "page": page,
        "available_acts": available,
        "act_labels": {name: acts.ACTS[name].label for name in available},
        "all_act_labels": ALL_ACT_LABELS,
        "form_acts": FORM_ACTS,
        "open_blockers": [
            {
                **note,
                "sectionLabel": SECTION_LABELS.get(str(note.get("section")), note.get("section")),
            }
            for note in derive.open_blockers(case)
        ]
        if "submit" in available
        else [],
        "tolerances": tolerance_proposal(case) if "approve" in available else {},
        "danger_acts": {name for name in available if acts.ACTS[name].danger},
        "stepper": _stepper(case),
        "state_label": STATE_LABELS.get(case.approval_status, case.approval_status),
        "terminal_disposition": derive.terminal_disposition(case),
        "enabling_change": derive.enabling_change(case),
        "note_rows": range(NOTE_ROWS),
        "return_sections": [(s, SECTION_LABELS[s]) for s in RETURN_NOTE_SECTIONS],
        "closeout_sections": [(s, SECTION_LABELS[s]) for s in CLOSEOUT_RETURN_NOTE_SECTIONS],
        "severities": SEVERITIES,
        "confidences": specs.choices(ReviewSpec, "confidence"),
    }
    if "approve" in available:
        context["approval"] = approval_preview(project, case)
    if "reopen" in available:
        context["awaiting_changes"] = changes_awaiting_application(
            project, excluding=case.amendment_enabled_by_change_id
        )
    if acts.may(caller, acts.SPONSOR) and case.approval_status in acts.ACTS["approve"].from_states:
        # Submitted, yet not approvable (an amendment whose change is undecided): say why.
        context["approve_refusal"] = acts.ACTS["approve"].state_refusal(case)
    if "kill" in available or "archive" in available:
        context["withdrawn_on_stop"] = derive.change_withdrawn_on_stop(case)
    if "steerco-confirm" in available:
        context["steering_members"] = [
            m for m in case.steering_committee or [] if m.get("accountId")
        ]
    return context


def board_paper_choices(
    chosen: str | None, wiki_links: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The board-paper select: every wiki page among the supporting documents, and the page
    the financial case names (or the form was sent with) when it is not among them (set
    through the API, or its link was removed), so saving the form keeps it unless the person
    chooses otherwise."""
    choices, seen = [], set()
    for link in wiki_links:
        if link["pageId"] not in seen:
            seen.add(link["pageId"])
            choices.append({"pageId": link["pageId"], "label": link.get("label") or link["pageId"]})
    if chosen and chosen not in seen:
        choices.insert(
            0,
            {"pageId": chosen, "label": f"Wiki page {chosen} (not among the supporting documents)"},
        )
    return [{**choice, "selected": choice["pageId"] == chosen} for choice in choices]


def case_context(
    project: Project, caller: Caller, case: BusinessCase, extra: dict[str, Any]
) -> dict[str, Any]:
    financial = finance.present(case.financial_case)
    saved = not case._state.adding
    versions = list(case.approved_versions.all()) if saved else []
    seat_values = {
        "decisionAuthority": case.decision_authority,
        "projectManager": case.project_manager,
        "customerRep": case.customer_rep,
        "supplierRep": case.supplier_rep,
        "adoptionOwner": case.adoption_owner,
    }
    ids = [
        project.lead_account_id,
        case.approved_by_account_id,
        case.updated_by_account_id,
        *(v.approved_by_account_id for v in versions),
        *((seat or {}).get("accountId") for seat in seat_values.values()),
        *(m.get("accountId") for m in case.steering_committee or []),
    ]
    fin_input = extra.pop("financial_input", None) or finance.storable(case.financial_case)
    builtin = fin_input.get("builtin") or {}
    line_by_year = {line.get("year"): line for line in builtin.get("lines") or []}
    sent_horizon = cleaning.whole_number(builtin.get("horizonYears"))
    horizon = (
        sent_horizon
        if sent_horizon is not None and 1 <= sent_horizon <= 30
        else (int(financial["builtin"]["horizonYears"]))
    )
    wiki_links = [link for link in case.supporting_links or [] if link.get("pageId")]
    return {
        "people": resolve(ids),
        "can_edit_thesis": acts.allowed(acts.EDIT_THESIS, case, caller),
        # An editor, but the state keeps the thesis read-only (say so, and why).
        "thesis_locked": acts.may(caller, acts.EDIT_THESIS.who)
        and acts.EDIT_THESIS.state_refusal(case) is not None,
        "adoption_owner_external": "adoptionOwner" in EXTERNAL_SEATS,
        "steering_external": "steeringCommittee" in EXTERNAL_SEATS,
        "can_address": acts.allowed(acts.ADDRESS_NOTE, case, caller),
        "outcome": derive.outcome(case),
        "saturation": derive.change_saturation(case.change_saturation),
        "saturations": specs.choices(CharterSpec, "changeSaturation"),
        "missing": submission_missing(case),
        "show_checklist": acts.EDIT_THESIS.state_refusal(case) is None,
        "adoption_gap": derive.adoption_gap(case),
        "themes": enabled_themes(),
        "theme_disabled": bool(case.theme)
        and case.theme.strip().casefold() in {t.casefold() for t in disabled_themes()},
        "financial": financial,
        "modes": finance.FINANCIAL_MODES,
        "fin": fin_input,
        "year_rows": [
            {"year": year, **line_by_year.get(year, {"cost": None, "benefit": None})}
            for year in range(horizon + 1)
        ],
        "headline_figures": finance.HEADLINE_FIGURES,
        "wiki_links": wiki_links,
        "board_paper_choices": board_paper_choices(fin_input.get("boardPaperPageId"), wiki_links),
        "note_groups": _grouped(case.return_notes or [], RETURN_NOTE_SECTIONS),
        "open_notes": sum(1 for n in case.return_notes or [] if not n.get("addressed")),
        "versions": versions,
        "seats": SEATS,
        "thesis_form": stored_thesis(case),
        "adoption_form": stored_adoption(case),
        "seat_values": seat_values,
    }


def closeout_context(
    project: Project, caller: Caller, case: BusinessCase, extra: dict[str, Any]
) -> dict[str, Any]:
    rows = pending_register_rows(project)
    close_out = case.close_out or {}
    handover = close_out.get("bauHandover") or {}
    ids = [
        handover.get("ownerAccountId"),
        handover.get("acknowledgedByAccountId"),
        case.closed_by_account_id,
        *(p.owner_account_id for p in rows["workPackages"]),
        *(r.owner_account_id for r in rows["risks"]),
    ]
    form = extra.pop("form", None)
    source = form or close_out
    source_pending = source.get("pendingDispositions") or {}

    def disposition_rows(
        records: list[Any], given: dict[str, Any] | None, label_attr: str
    ) -> list[dict[str, Any]]:
        given = given or {}
        result = []
        for record in records:
            entry = given.get(str(record.pk)) or {}
            result.append(
                {
                    "record": record,
                    "label": getattr(record, label_attr),
                    "id": str(record.pk),
                    "value": entry.get("disposition") or "",
                    "value_label": labels.label(entry.get("disposition") or ""),
                    "note": entry.get("note") or "",
                }
            )
        return result

    values = {
        key: source.get(key)
        for key in (
            "asBuiltOutcome",
            "asBuiltReturn",
            "asBuiltReturnValue",
            "asBuiltEndDate",
            "commentary",
        )
    }
    values["lessons"] = source.get("lessons") or {}
    return {
        "values": values,
        "scope_rows": disposition_rows(
            rows["workPackages"], source.get("scopeDispositions"), "name"
        ),
        "rio_rows": disposition_rows(rows["risks"], source.get("rioDispositions"), "title"),
        "decision_rows": disposition_rows(
            rows["decisions"], source_pending.get("decisions"), "decision"
        ),
        "change_rows": disposition_rows(rows["changes"], source_pending.get("changes"), "summary"),
        "people": resolve(ids),
        "close_out": close_out,
        "handover": handover,
        "rows": rows,
        "missing": missing_dispositions(close_out, rows) if close_out else [],
        "can_edit_closeout": acts.allowed(acts.EDIT_CLOSEOUT, case, caller),
        "closeout_start_state_ok": acts.ACTS["closeout-start"].state_refusal(case) is None,
        "can_address": acts.allowed(acts.ADDRESS_CLOSEOUT_NOTE, case, caller),
        "can_lessons_template": acts.allowed(acts.TEMPLATE_LESSONS, case, caller),
        "note_groups": _grouped(case.closeout_return_notes or [], CLOSEOUT_RETURN_NOTE_SECTIONS),
        "scope_choices": specs.choices(CloseoutSpec, "scopeDispositions"),
        "rio_choices": specs.choices(CloseoutSpec, "rioDispositions"),
        "pending_choices": specs.choices(CloseoutSpec, "pendingDispositions"),
        "lessons_links": [
            link for link in case.supporting_links or [] if link.get("templateKind") == "lessons"
        ],
    }


def realisation_context(
    project: Project, caller: Caller, case: BusinessCase, extra: dict[str, Any]
) -> dict[str, Any]:
    reviews = list(reversed(case.realisation_reviews or []))
    kpi = case.kpi_resolution or {}
    ids = [
        case.realisation_decided_by_account_id,
        kpi.get("resolvedBy"),
        *(r.get("byAccountId") for r in reviews),
    ]
    return {
        "people": resolve(ids),
        "reviews": reviews,
        "kpi": kpi,
        "confidence": derive.confidence(case.realisation_confidence),
        "benefits_chart": benefits_chart(case),
        "review": next_review(project, case),
        "can_edit_realisation": acts.allowed(acts.EDIT_REALISATION, case, caller),
        "realisation_start_state_ok": acts.ACTS["realisation-start"].state_refusal(case) is None,
        "labels": specs.labels(RealisationSpec),
    }


def minutes_context(
    project: Project, caller: Caller, case: BusinessCase, extra: dict[str, Any]
) -> dict[str, Any]:
    minutes = minutes_list(project)
    ids = [
        *(a for m in minutes for a in m.attendees or []),
        *(m.get("accountId") for m in case.steering_committee or []),
        *(case.first_steerco_attendees or []),
        project.lead_account_id,
    ]
    candidates = []
    for account_id in [
        *(m.get("accountId") for m in case.steering_committee or []),
        project.lead_account_id,
    ]:
        if account_id and account_id not in candidates:
            candidates.append(account_id)
    return {
        "people": resolve(ids),
        "minutes": minutes,
        "attendee_choices": candidates,
        "labels": specs.labels(MinutesSpec),
        "form": {},
        # The record form's one-time token (governance.submissions): sent twice, it records once.
        "form_token": submissions.new_token(),
    }


class ContextBuilder(Protocol):
    """What one page adds to `page_context` for `case`; it takes out of `extra` what it reads
    itself (what is left stands over the context)."""

    def __call__(
        self, project: Project, caller: Caller, case: BusinessCase, extra: dict[str, Any]
    ) -> dict[str, Any]: ...


class Page(NamedTuple):
    """A business-case page: its template, its context builder and its URL's name."""

    template: str
    builder: ContextBuilder
    url_name: str


# Each page is read by name (`page.template`), never unpacked: mypy 1.20 crashes
# (AssertionError in check_multi_assignment_from_tuple) unpacking into `_` a dict.get whose
# value is a tuple holding a callable with an untyped parameter.
PAGES: dict[str, Page] = {
    "case": Page("charter/business_case.html", case_context, "charter:index"),
    "closeout": Page("charter/closeout.html", closeout_context, "charter:closeout"),
    "realisation": Page("charter/realisation.html", realisation_context, "charter:realisation"),
    "minutes": Page("charter/minutes.html", minutes_context, "charter:minutes"),
}


def page_url(project: Project, page: str) -> str:
    return reverse(PAGES.get(page, PAGES["case"]).url_name, args=[project.key])


def build_context(
    request: HtmxHttpRequest, project: Project, caller: Caller, page: str, **extra: Any
) -> dict[str, Any]:
    """A business-case page's context: `page_context`, what the page's builder adds, no
    errors, then `extra` over it (`case`: the case to show, else the current one)."""
    case = extra.pop("case", None) or current_case(project)
    own = PAGES[page].builder(project, caller, case, extra)
    return {**page_context(request, project, caller, case, page), **own, "errors": {}, **extra}


def render_page(
    request: HtmxHttpRequest,
    project: Project,
    caller: Caller,
    page: str,
    *,
    status: int = 200,
    **extra: Any,
) -> HttpResponse:
    """A whole business-case page (also after a refused act, with `act_error`)."""
    page = page if page in PAGES else "case"
    context = build_context(request, project, caller, page, **extra)
    return render(request, PAGES[page].template, context, status=status)


def render_section(
    request: HtmxHttpRequest,
    project: Project,
    caller: Caller,
    page: str,
    partial: str,
    *,
    status: int = 200,
    **extra: Any,
) -> HttpResponse:
    """A section of a page: its partial for HTMX, else the whole page."""
    context = build_context(request, project, caller, page, **extra)
    return render_htmx(request, PAGES[page].template, context, partial=partial, status=status)


def revised(response: HttpResponse, case: BusinessCase) -> HttpResponse:
    """Announce the business case's new revision to the page (governance.http)."""
    return announce_revision(
        response, resource="charter", before=case.revision - 1, after=case.revision
    )


def render_refused(
    request: HtmxHttpRequest,
    project: Project,
    caller: Caller,
    page: str,
    refused: DomainError,
    **extra: Any,
) -> HttpResponse:
    """A business-case page again after a refused write: the refusal's status, its field
    errors and its message."""
    return render_page(
        request,
        project,
        caller,
        page,
        status=refused.status,
        errors=refused.fields,
        record_error=refused.message,
        **extra,
    )


def show_page(request: HtmxHttpRequest, key: str, page: str) -> HttpResponse:
    """A business-case page as anyone who may see the project reads it."""
    project, caller = permissions.project_for(request, key)
    return render_page(request, project, caller, page)
