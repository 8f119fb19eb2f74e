"""The business-case page: its sections (thesis, adoption with the live checklist, people and
seats, financial case, supporting documents), the people and wiki pickers, and the return
notes' 'addressed' toggle."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.http import HttpResponse, QueryDict

if TYPE_CHECKING:
    from charter.models import BusinessCase


from django.contrib import messages
from django.shortcuts import redirect
from django.template.loader import render_to_string

from charter import finance, forms, services
from charter.services.common import current_case
from charter.services.thesis import EXTERNAL_SEATS
from charter.specs import SEATS, CharterSpec
from charter.views.context import (
    build_context,
    page_url,
    render_page,
    render_section,
    revised,
    stored_adoption,
    stored_thesis,
)
from governance import pdf, permissions, roster, specs
from governance.conflicts import conflict_rows
from governance.errors import Conflict, Stale, ValidationFailed
from governance.http import HtmxHttpRequest, form_revision, page, render_htmx
from governance.people import PEOPLE_SEARCH_DOWN, search_browsers
from governance.tracker import TrackerError
from governance.wiki import WikiError, get_wiki

THESIS_LABELS = {field: specs.labels(CharterSpec)[field] for field in forms.THESIS_FIELDS}
ADOPTION_LABELS = {field: specs.labels(CharterSpec)[field] for field in forms.ADOPTION_FIELDS}
SEAT_FIELDS = set(SEATS)


def _base_url(request: HtmxHttpRequest) -> str:
    return request.build_absolute_uri("/")


@pdf.bearer
@page("GET")
def index(request: HtmxHttpRequest, key: str) -> HttpResponse:
    project, caller = permissions.project_for(request, key)
    response = render_page(request, project, caller, "case")
    if pdf.wants_pdf(request):
        return pdf.pdf_response(response, f"{project.key} business case")
    return response


# --- section saves ---------------------------------------------------------------------------


FINANCIAL_LABELS = {
    "mode": "Mode",
    "currency": "Currency",
    "discountRatePct": "Discount rate (%)",
    "horizonYears": "Horizon (years)",
    "lines": "Cash flows",
}


def _financial_text(financial_case: dict[str, Any]) -> dict[str, Any]:
    """The financial case's fields the conflict panel compares, as text."""
    builtin = financial_case["builtin"]
    return {
        "mode": str(financial_case["mode"]),
        "currency": str(builtin["currency"]),
        "discountRatePct": str(builtin["discountRatePct"]),
        "horizonYears": str(builtin["horizonYears"]),
        "lines": "; ".join(
            f"year {x['year']}: {x['cost']} / {x['benefit']}" for x in builtin["lines"]
        ),
    }


def _conflict_rows(
    section: str, submitted: dict[str, Any], case: BusinessCase
) -> list[dict[str, Any]]:
    """Yours and the stored value of each field that differs, for the conflict panel."""
    if section == "financial":
        return conflict_rows(
            FINANCIAL_LABELS,
            _financial_text(submitted["financialCase"]),
            _financial_text(finance.storable(case.financial_case)),
        )
    if section == "thesis":
        return conflict_rows(THESIS_LABELS, _form_values(section, submitted), stored_thesis(case))
    return conflict_rows(ADOPTION_LABELS, submitted, stored_adoption(case))


def _form_values(section: str, data: dict[str, Any]) -> dict[str, Any]:
    if section == "thesis":
        return {**data, "designPrinciples": "\n".join(data["designPrinciples"])}
    if section == "financial":
        return {"financial_input": data["financialCase"]}
    return data


def _edit(
    request: HtmxHttpRequest, key: str, section: str, parse: Callable[[QueryDict], dict[str, Any]]
) -> HttpResponse:
    project, caller = permissions.editable_project_for(request, key)
    data = parse(request.POST)
    extra: dict[str, Any] = {}
    status = 200
    try:
        case = services.charter_update(
            caller=caller,
            data=data,
            expected_revision=form_revision(request.POST),
            base_url=_base_url(request),
        )
    except ValidationFailed as exc:
        errors, words = (
            forms.financial_errors(exc.fields, data) if section == "financial" else (exc.fields, {})
        )
        status = 422
        extra = {"errors": errors, "error_words": words, "error_section": section}
    except Stale:
        case = current_case(project)
        status = 412
        extra = {
            "case": case,
            "conflict": _conflict_rows(section, data, case),
            "error_section": section,
        }
    except Conflict as exc:
        status, extra = 409, {"section_error": exc.message, "error_section": section}
    if status != 200:
        if section == "financial":
            extra.update(_form_values(section, data))
        else:
            extra[f"{section}_form"] = _form_values(section, data)
        return render_section(request, project, caller, "case", section, status=status, **extra)
    if not request.htmx:
        messages.success(request, "Saved.")
        return redirect(f"{page_url(project, 'case')}#section-{section}")
    response = render_section(request, project, caller, "case", section, notice="Saved.", case=case)
    return revised(response, case)


# The business case's parts edited on its page, each by its form's parser.
EDITED_PARTS: dict[str, Callable[[QueryDict], dict[str, Any]]] = {
    "thesis": forms.thesis,
    "adoption": forms.adoption,
    "financial": forms.financial,
}


@page("POST")
def edit(request: HtmxHttpRequest, key: str, part: str) -> HttpResponse:
    """Save one part of the business case (`EDITED_PARTS`) from its form."""
    return _edit(request, key, part, EDITED_PARTS[part])


@page("GET")
def checklist(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The adoption checklist for the values being typed (nothing is saved): the same
    function the submission gate uses."""
    project, caller = permissions.project_for(request, key)
    case = current_case(project)
    case.adoption_affected = request.GET.get("adoptionAffected", case.adoption_affected)
    case.adoption_kpi = request.GET.get("adoptionKpi", case.adoption_kpi)
    case.change_saturation = request.GET.get("changeSaturation", case.change_saturation)
    return render_section(
        request,
        project,
        caller,
        "case",
        "checklist",
        case=case,
        missing=services.submission_missing(case),
    )


# --- seats and the people picker -------------------------------------------------------------


def _seat_section(field: str) -> tuple[str, str]:
    if field == "adoptionOwner":
        return "case", "adoption"
    if field == "bauOwner":
        return "closeout", "handover"
    return "case", "people"


@page("GET")
def people_search(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """Search tracker people for a seat (editors). HTMX gets the results list; without
    JavaScript the same list comes as a page."""
    project, caller = permissions.editable_project_for(request, key)
    field = request.GET.get("field", "")
    query = request.GET.get("q", "").strip()
    search_error = ""
    try:
        # Only people who can browse the project are offered.
        found = search_browsers(project.key, query, limit=25) if query else []
    except TrackerError:
        found, search_error = [], PEOPLE_SEARCH_DOWN
    results = found[:10]
    page_name, _ = _seat_section(field)
    context = {
        "project": project,
        "caller": caller,
        "tab": "charter",
        "field": field,
        "query": query,
        "results": results,
        "words": roster.words_of(results),
        "search_error": search_error,
        "back": page_url(project, page_name),
        "external_allowed": field in EXTERNAL_SEATS,
    }
    return render_htmx(request, "charter/people_search.html", context, partial="people-results")


@page("POST")
def seat(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """Set or clear one seat (tracker person or external person), add or remove a steering
    committee member, or name the BAU owner of the close-out."""
    project, caller = permissions.editable_project_for(request, key)
    field = request.POST.get("field", "")
    page_name, partial = _seat_section(field)
    try:
        if field in SEAT_FIELDS:
            case = services.charter_update(caller=caller, data={field: forms.seat(request.POST)})
        elif field == "steeringCommittee" and request.POST.get("action") == "remove":
            case = services.steering_member_remove(
                caller=caller, member_id=request.POST.get("member_id")
            )
        elif field == "steeringCommittee":
            case = services.steering_member_add(
                caller=caller, member=forms.steering_member(request.POST)
            )
        elif field == "bauOwner":
            owner = request.POST.get("account_id") or None
            case = services.closeout_update(
                caller=caller, data={"bauHandover": {"ownerAccountId": owner}}
            )
        else:
            raise ValidationFailed({"field": ["Unknown seat."]})
    except ValidationFailed as exc:
        return render_section(
            request,
            project,
            caller,
            page_name,
            partial,
            status=422,
            errors={field: [m for msgs in exc.fields.values() for m in msgs]},
        )
    except Conflict as exc:
        return render_section(
            request, project, caller, page_name, partial, status=409, section_error=exc.message
        )
    if not request.htmx:
        messages.success(request, "Saved.")
        return redirect(page_url(project, page_name))
    response = render_section(request, project, caller, page_name, partial, notice="Saved.")
    return revised(response, case)


# --- supporting documents --------------------------------------------------------------------


@page("GET")
def wiki_search(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The supporting-documents picker: wiki pages matching the query (editors)."""
    project, caller = permissions.editable_project_for(request, key)
    query = request.GET.get("q", "").strip()
    error = None
    results = []
    if query:
        try:
            results = get_wiki().search_pages(query, limit=10, project_key=project.key)
        except WikiError as exc:
            error = f"The wiki could not be searched ({exc}). Try again later, or add a link."
    context = {
        "project": project,
        "caller": caller,
        "tab": "charter",
        "query": query,
        "results": results,
        "error": error,
        "back": page_url(project, "case"),
    }
    return render_htmx(request, "charter/wiki_search.html", context, partial="wiki-results")


@page("POST")
def links(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """Add a plain link, add a wiki page picked in the picker, or remove a link."""
    project, caller = permissions.editable_project_for(request, key)
    action = request.POST.get("action")
    try:
        if action == "remove":
            case = services.link_remove(caller=caller, link_id=request.POST.get("link_id", ""))
        elif action == "pick":
            case = services.link_add(
                caller=caller,
                link={"type": "confluence", "pageId": request.POST.get("page_id", "")},
                base_url=_base_url(request),
            )
        else:
            case = services.link_add(
                caller=caller,
                link={
                    "type": "link",
                    "label": request.POST.get("label", ""),
                    "url": request.POST.get("url", ""),
                },
                base_url=_base_url(request),
            )
    except ValidationFailed as exc:
        return render_section(
            request,
            project,
            caller,
            "case",
            "documents",
            status=422,
            errors=exc.fields,
            link_form=request.POST,
        )
    except Conflict as exc:
        return render_section(
            request, project, caller, "case", "documents", status=409, section_error=exc.message
        )
    if not request.htmx:
        messages.success(request, "Supporting documents saved.")
        return redirect(f"{page_url(project, 'case')}#section-documents")
    response = render_section(request, project, caller, "case", "documents", notice="Saved.")
    return revised(response, case)


@page("POST")
def link_template(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """Create a board paper (business case) or a lessons page (close-out) from its template."""
    project, caller = permissions.editable_project_for(request, key)
    kind = request.POST.get("templateKind", "")
    page_name = "closeout" if kind == "lessons" else "case"
    partial = "lessons" if kind == "lessons" else "documents"
    try:
        case, link = services.link_from_template(
            caller=caller,
            template_kind=kind,
            title=request.POST.get("title", ""),
            base_url=_base_url(request),
        )
    except ValidationFailed as exc:
        return render_section(
            request, project, caller, page_name, partial, status=422, errors=exc.fields
        )
    except Conflict as exc:
        return render_section(
            request, project, caller, page_name, partial, status=409, section_error=exc.message
        )
    notice = f"“{link['label']}” created in the wiki and added."
    if not request.htmx:
        messages.success(request, notice)
        return redirect(page_url(project, page_name))
    response = render_section(request, project, caller, page_name, partial, notice=notice)
    return revised(response, case)


# --- return notes ----------------------------------------------------------------------------


@page("POST")
def return_note(request: HtmxHttpRequest, key: str, note_id: str) -> HttpResponse:
    """Toggle a return note's 'addressed' flag (editors; business-case notes while Draft,
    close-out notes while the close-out is reworked)."""
    project, caller = permissions.editable_project_for(request, key)
    page_name = "closeout" if request.POST.get("page") == "closeout" else "case"
    try:
        case, _ = services.return_note_address(
            caller=caller,
            note_id=note_id,
            data={"addressed": request.POST.get("addressed") == "true"},
        )
    except Conflict as exc:
        return render_section(
            request,
            project,
            caller,
            page_name,
            "return-notes",
            status=409,
            section_error=exc.message,
        )
    if not request.htmx:
        return redirect(f"{page_url(project, page_name)}#return-notes")
    response = render_section(request, project, caller, page_name, "return-notes")
    # The lifecycle bar too: whether a submit must name open Blockers follows the notes.
    context = build_context(request, project, caller, page_name, oob=True)
    response.content += render_to_string("charter/_lifecycle.html", context, request).encode()
    return revised(response, case)
