"""The status page (HTML + HTMX): current status with derived RAG and drivers, the edit form,
the initiation checklist, and status reports (draft, publish, history, trend, past reports)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from django.http import HttpResponse

if TYPE_CHECKING:
    from governance.models import Project
    from governance.permissions import Caller


from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as format_date
from django.utils.dateparse import parse_datetime

from governance import charts, pdf, permissions, specs
from governance.cleaning import decimal_to_json
from governance.errors import Conflict, NotFound, Stale, ValidationFailed
from governance.http import HtmxHttpRequest, announce_revision, form_revision, page, render_htmx
from governance.people import resolve
from governance.services import rag_thresholds
from governance.views import project_context
from registers import pictures as register_pictures
from status import (
    derive,
    earned_value,
    earned_value_chart,
    exceptions,
    forms,
    pack,
    selectors,
    services,
)
from status.models import (
    CONFIDENCES,
    STATUS_REASON_MAX,
    ProjectStatus,
    StatusReport,
)
from status.serializers import dimension_cards, report_summary, status_to_dict
from status.specs import FORM_FIELDS, CommentarySpec, ExceptionReportSpec, StatusSpec

TEMPLATE = "status/status.html"
TREND_LENGTH = 12
# The confidences the form asks, each a select of the same choices: the status's fields
# declared with them (status.specs).
CONFIDENCE_FIELDS = [
    name for name in FORM_FIELDS if specs.choices(StatusSpec, name) == tuple(CONFIDENCES)
]
FORM_LABELS = {
    **{name: label for name, label in specs.labels(StatusSpec).items() if name in FORM_FIELDS},
    **specs.labels(CommentarySpec),
}


def _initial(status: ProjectStatus) -> dict[str, Any]:
    """The edit form's values from the stored status."""
    commentary = status.structured_commentary or {}
    return {
        "overallRag": status.overall_rag,
        "overallReason": status.overall_reason,
        "phase": status.phase,
        "reportingCadence": status.reporting_cadence,
        "outcomeConfidence": status.outcome_confidence or "",
        "adoptionConfidence": status.adoption_confidence or "",
        "confidenceReason": status.confidence_reason,
        "costRagOverride": derive.override(status, "cost") or "",
        "costRagOverrideReason": status.cost_rag_override_reason,
        "scheduleRagOverride": derive.override(status, "schedule") or "",
        "scheduleRagOverrideReason": status.schedule_rag_override_reason,
        "scopeRagOverride": derive.override(status, "scope") or "",
        "scopeRagOverrideReason": status.scope_rag_override_reason,
        "riskRagOverride": derive.override(status, "risk") or "",
        "revisedForecast": ""
        if status.revised_forecast is None
        else str(decimal_to_json(status.revised_forecast)),
        "pmKeyMessage": status.pm_key_message,
        "keyMessages": commentary.get("keyMessages", ""),
        "keyRisks": commentary.get("keyRisks", ""),
        "decisionsRequired": commentary.get("decisionsRequired", ""),
        "brCadence": status.br_cadence or "",
    }


def _trend(published: list[StatusReport]) -> list[dict[str, Any]]:
    """The RAG trend over published reports: one row per RAG, one column per report (oldest
    first, the last TREND_LENGTH)."""
    columns = [report_summary(r) for r in reversed(published[:TREND_LENGTH])]
    rows = [{"label": "Overall", "cells": [c.get("overallRag") or "None" for c in columns]}]
    for key in ("cost", "schedule", "scope", "risk"):
        rows.append(
            {
                "label": derive.DIMENSION_LABELS[key],
                "cells": [(c.get("effective") or {}).get(f"{key}Rag") or "None" for c in columns],
            }
        )
    return [{"columns": columns, "rows": rows}] if columns else []


def _pictures(project: Project, view: derive.StatusView) -> list[Any]:
    """The status page's pictures: the risk matrices from the rows behind the risk drivers;
    the work-package timeline against the approved plan and the budget curve from the packages
    the status model loaded (the page reads the work-package table once)."""
    risks_url = reverse("registers:risks", args=[project.key])
    packages = view.facts.work_packages
    plan = view.facts.plan_baseline
    return [
        *register_pictures.risk_matrices(
            register_pictures.risk_cells(view.facts.risks),
            view.thresholds,
            risks_url,
            prefix="status-risk",
        ),
        register_pictures.work_package_timeline(
            packages,
            reverse("registers:work-packages", args=[project.key]),
            timezone.localdate(),
            plan=plan,
            chart_id="status-timeline",
        ),
        register_pictures.budget_curve(packages, timezone.localdate(), chart_id="status-budget"),
    ]


def _published_on(published_at: str | None) -> str:
    stamp = parse_datetime(published_at) if published_at else None
    return format_date(stamp, "j M y") if stamp else "—"


def _trend_chart(trend: list[dict[str, Any]]) -> charts.Chart | None:
    """The RAG trend as a small picture; its table is the trend table beside it."""
    if not trend:
        return None
    labels = [_published_on(c.get("publishedAt")) for c in trend[0]["columns"]]
    chart = charts.rag_trend(
        labels,
        [(row["label"], row["cells"]) for row in trend[0]["rows"]],
        chart_id="rag-trend",
        title="RAG over the published reports",
    )
    chart.table_href = "#trend-table"
    return chart


def _earned(
    view: derive.StatusView, s: dict[str, Any], published: list[StatusReport]
) -> dict[str, Any] | None:
    """The page's earned value: the figures with their formulas and readings, each work
    package's figures, and the picture over time (`status.earned_value`)."""
    values = s.get("earnedValue")
    if not values or view.earned_value is None:
        return None
    return {
        "values": values,
        "approved": view.facts.has_plan_baseline,  # why a package may lack its baseline budget
        "figures": earned_value.described(values),
        "packages": values.get("workPackages") or [],
        "chart": earned_value_chart.history_chart(
            view.earned_value, published, timezone.localdate(view.now)
        ),
    }


def _context(
    request: HtmxHttpRequest, project: Project, caller: Caller, **extra: Any
) -> dict[str, Any]:
    view = selectors.view_for(project)
    s = status_to_dict(view)
    reports = selectors.reports(project)
    draft = next((r for r in reports if r.state == "Draft"), None)
    published = [r for r in reports if r.state == "Published"]
    trend = _trend(published)
    people = resolve(
        [
            s["lastUpdatedByAccountId"],
            caller.account_id,
            *(r.published_by_account_id for r in published),
            *(r.created_by_account_id for r in reports),
        ]
    )
    context = project_context(
        project,
        caller,
        tab="status",
        s=s,
        status=view.status,
        cards=dimension_cards(s),
        checklist=s["initiationChecklist"],
        may_acknowledge=caller.can_edit
        and services.initiation_acknowledge_refusal(view.status) is None,
        draft=draft,
        published=published,
        trend=trend,
        trend_chart=_trend_chart(trend),
        status_pictures=_pictures(project, view),
        earned=_earned(view, s, published),
        people=people,
        form=_initial(view.status),
        errors={},
        conflict=None,
        report_errors={},
        labels={**specs.labels(StatusSpec), **specs.labels(CommentarySpec)},
        rag_choices=specs.choices(StatusSpec, "overallRag"),
        cadences=specs.choices(StatusSpec, "reportingCadence"),
        confidence_fields=CONFIDENCE_FIELDS,
        confidences=specs.choices(StatusSpec, "outcomeConfidence"),
        br_cadences=specs.choices(StatusSpec, "brCadence"),
        reason_max=STATUS_REASON_MAX,
    )
    context.update(extra)
    return context


@page("GET")
def status_index(request: HtmxHttpRequest, key: str) -> HttpResponse:
    project, caller = permissions.project_for(request, key)
    return render_htmx(request, TEMPLATE, _context(request, project, caller))


@page("GET", "POST")
def status_edit(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """GET: the edit form (an HTMX swap of the status panel, or a page of its own).
    POST: save; the panel again, or the form with errors (422) or a conflict (409)."""
    project, caller = permissions.editable_project_for(request, key)
    if request.method == "GET":
        return render_htmx(
            request,
            TEMPLATE,
            _context(request, project, caller, editing=True),
            partial="status-form",
        )
    data, parse_errors = forms.status_data(request.POST)
    submitted = {name: request.POST.get(name, "") for name in FORM_LABELS}
    try:
        if parse_errors:
            raise ValidationFailed(parse_errors)
        services.status_update(
            caller=caller, data=data, expected_revision=form_revision(request.POST)
        )
    except ValidationFailed as exc:
        context = _context(request, project, caller, editing=True, form=submitted)
        context["errors"] = exc.fields
        return render_htmx(request, TEMPLATE, context, partial="status-form", status=422)
    except Stale:
        context = _context(request, project, caller, editing=True)
        stored = context["form"]
        context["conflict"] = [
            {"label": label, "yours": submitted[name], "stored": stored.get(name, "")}
            for name, label in FORM_LABELS.items()
            if name in request.POST and str(submitted[name]) != str(stored.get(name, ""))
        ]
        context["form"] = submitted
        return render_htmx(request, TEMPLATE, context, partial="status-form", status=409)
    if request.htmx:
        context = _context(request, project, caller, notice="Status saved.")
        return render_htmx(request, TEMPLATE, context, partial="status-panel")
    messages.success(request, "Status saved.")
    return redirect(reverse("status:index", args=[project.key]))


@page("POST")
def initiation(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """Dismiss or restore a checklist item, or acknowledge initiation as complete."""
    project, caller = permissions.editable_project_for(request, key)
    action = request.POST.get("action", "")
    item_id = request.POST.get("item", "")
    expected = form_revision(request.POST)
    before = (
        ProjectStatus.objects.filter(project=project).values_list("revision", flat=True).first()
    )
    if action == "dismiss":
        status = services.status_checklist_dismiss(
            caller=caller, item_id=item_id, expected_revision=expected
        )
    elif action == "restore":
        status = services.status_checklist_restore(
            caller=caller, item_id=item_id, expected_revision=expected
        )
    elif action == "acknowledge":
        status = services.status_initiation_acknowledge(caller=caller, expected_revision=expected)
    else:
        raise ValidationFailed({"action": ["Choose dismiss, restore or acknowledge."]})
    if request.htmx:
        response = render_htmx(
            request, TEMPLATE, _context(request, project, caller), partial="initiation"
        )
        # The status edit form open on the same page carries the revision this act moved on.
        return announce_revision(response, resource="status", before=before, after=status.revision)
    return redirect(reverse("status:index", args=[project.key]) + "#initiation")


def _reports_response(
    request: HtmxHttpRequest, project: Project, caller: Caller, *, status: int = 200, **extra: Any
) -> HttpResponse:
    if request.htmx:
        return render_htmx(
            request,
            TEMPLATE,
            _context(request, project, caller, **extra),
            partial="reports",
            status=status,
        )
    if status >= 400:
        return render_htmx(
            request, TEMPLATE, _context(request, project, caller, **extra), status=status
        )
    return redirect(reverse("status:index", args=[project.key]) + "#reports")


@page("POST")
def report_create(request: HtmxHttpRequest, key: str) -> HttpResponse:
    project, caller = permissions.editable_project_for(request, key)
    try:
        services.status_report_create(
            caller=caller, data=forms.report_data(request.POST, creating=True)
        )
    except ValidationFailed as exc:
        return _reports_response(request, project, caller, status=422, report_errors=exc.fields)
    return _reports_response(request, project, caller, report_notice="Draft started.")


@pdf.bearer
@page("GET", "POST")
def report_detail(request: HtmxHttpRequest, key: str, report_id: uuid.UUID) -> HttpResponse:
    """GET: a report's steering pack (`status.pack`): as it was published, or a draft's read
    live; `?format=pdf` is the same page printed. POST: edit a draft's title and key
    messages."""
    if request.method == "GET":
        project, caller = permissions.project_for(request, key)
        report = selectors.report_in(project, report_id)
        if report is None:
            raise NotFound()
        response = render_htmx(
            request, "status/report.html", _pack_context(project, caller, report)
        )
        if pdf.wants_pdf(request):
            return pdf.pdf_response(
                response,
                f"{project.key} status report {report.title}",
                stylesheet=pack.STYLESHEET,
            )
        return response
    project, caller = permissions.editable_project_for(request, key)
    try:
        services.status_report_update(
            caller=caller,
            report_id=report_id,
            data=forms.report_data(request.POST),
            expected_revision=form_revision(request.POST),
        )
    except ValidationFailed as exc:
        return _reports_response(request, project, caller, status=422, report_errors=exc.fields)
    except Stale:
        return _stale_draft(
            request, project, caller, "Nothing was saved; the draft below is the stored one."
        )
    return _reports_response(request, project, caller, report_notice="Draft saved.")


def _pack_context(project: Project, caller: Caller, report: StatusReport) -> dict[str, Any]:
    """The pack page's context: a published report's frozen status and pack, or a draft's
    read now (against the last published report)."""
    snapshot = report.snapshot or {}
    if report.state == "Published":
        s = snapshot.get("status") or {}
        steering = snapshot.get("pack")
        key_messages = snapshot.get("keyMessages", report.key_messages)
    else:
        view = selectors.view_for(project)
        s = status_to_dict(view)
        steering = pack.pack_of(view, s, previous=pack.previous_report(project))
        key_messages = report.key_messages
    people = resolve(
        [
            report.published_by_account_id,
            report.created_by_account_id,
            s.get("lastUpdatedByAccountId"),
            *(d.get("ownerAccountId") for d in (steering or {}).get("openDecisions") or []),
        ]
    )
    values = s.get("earnedValue") or None
    return project_context(
        project,
        caller,
        tab="status",
        report=report,
        snapshot=snapshot,
        s=s,
        pack=steering,
        pack_messages=pack.key_messages(key_messages, s),
        cards=dimension_cards(s) if s else [],
        earned=[f for f in earned_value.described(values) if f["key"] in pack.EARNED_FIGURES]
        if values
        else None,
        people=people,
    )


def _stale_draft(
    request: HtmxHttpRequest, project: Project, caller: Caller, outcome: str
) -> HttpResponse:
    message = f"Someone else changed this draft since you opened it. {outcome}"
    return _reports_response(
        request, project, caller, status=409, report_errors={"revision": [message]}
    )


@page("POST")
def report_publish(request: HtmxHttpRequest, key: str, report_id: uuid.UUID) -> HttpResponse:
    project, caller = permissions.editable_project_for(request, key)
    try:
        report = services.status_report_publish(
            caller=caller,
            report_id=report_id,
            expected_revision=form_revision(request.POST),
        )
    except Stale:
        return _stale_draft(
            request, project, caller, "It was not published; review it and publish again."
        )
    return _reports_response(request, project, caller, report_notice=f"“{report.title}” published.")


@page("POST")
def report_delete(request: HtmxHttpRequest, key: str, report_id: uuid.UUID) -> HttpResponse:
    project, caller = permissions.editable_project_for(request, key)
    try:
        services.status_report_delete(
            caller=caller,
            report_id=report_id,
            expected_revision=form_revision(request.POST),
        )
    except Stale:
        return _stale_draft(request, project, caller, "It was not discarded; review it first.")
    return _reports_response(request, project, caller, report_notice="Draft discarded.")


# --- tolerances and exceptions (status.exceptions) ------------------------------------------

EXCEPTION_TEMPLATE = "status/exception.html"


def _exception_context(
    request: HtmxHttpRequest, project: Project, caller: Caller, **extra: Any
) -> dict[str, Any]:
    answer = exceptions.project_exception(project)
    record = answer["exception"]
    history = exceptions.history(project)
    people = resolve(
        [
            project.lead_account_id,
            project.sponsor_account_id,
            *(h.reported_by_account_id for h in history),
            *(h.decided_by_account_id or h.settled_by_account_id for h in history),
        ]
    )
    form = forms.exception_report_form((record or {}).get("report") or {})
    return project_context(
        project,
        caller,
        tab="status",
        x=answer,
        rag_lines=rag_thresholds(),
        record=record,
        form=extra.pop("form", form),
        people=people,
        labels=specs.labels(ExceptionReportSpec),
        may_report=bool(record) and caller.may_report_exception,
        may_decide=bool(record)
        and record["state"] == "Reported"
        and caller.may_decide_exception(
            reported_by_account_id=(record.get("report") or {}).get("reportedByAccountId")
        ),
        past=[exceptions.to_dict(h) for h in history if h.state in ("Decided", "Settled")],
        asked=exceptions.information_asked(history[0]) if record and history else None,
        **extra,
    )


@page("GET")
def exception_page(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The project's tolerances and exception: what is crossed, the lead's report (a form for
    the lead), the sponsor's decision (buttons for the sponsor), the record's events."""
    project, caller = permissions.project_for(request, key)
    return render_htmx(request, EXCEPTION_TEMPLATE, _exception_context(request, project, caller))


@page("POST")
def exception_report(request: HtmxHttpRequest, key: str) -> HttpResponse:
    project, caller = permissions.project_for(request, key)
    try:
        exceptions.exception_report(caller=caller, data=forms.exception_report_data(request.POST))
    except ValidationFailed as exc:
        submitted = {name: request.POST.get(name, "") for name in specs.labels(ExceptionReportSpec)}
        context = _exception_context(request, project, caller, form=submitted, errors=exc.fields)
        return render_htmx(request, EXCEPTION_TEMPLATE, context, status=422)
    messages.success(request, "Exception report saved; the sponsor decides.")
    return redirect("status:exception", project.key)


@page("POST")
def exception_decision(request: HtmxHttpRequest, key: str) -> HttpResponse:
    project, caller = permissions.project_for(request, key)
    data = {"decision": request.POST.get("decision", ""), "comment": request.POST.get("comment")}
    try:
        exceptions.exception_decide(caller=caller, data=data)
    except ValidationFailed as exc:
        context = _exception_context(request, project, caller, decision_errors=exc.fields)
        return render_htmx(request, EXCEPTION_TEMPLATE, context, status=422)
    messages.success(request, "Decision recorded; the exception is closed.")
    return redirect("status:exception", project.key)


@page("POST")
def exception_ask(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The sponsor asks the Project Lead for more information on the exception report
    (`exceptions.exception_ask`), from the exception page or from "Waiting for me"
    (`back=queue`: back to the queue). A refused question shows on the exception page,
    keeping what was typed."""
    project, caller = permissions.project_for(request, key)
    question = request.POST.get("question", "")
    try:
        exceptions.exception_ask(caller=caller, question=question)
    except (ValidationFailed, Conflict) as exc:
        errors = exc.fields or {"question": [exc.message]}
        context = _exception_context(
            request, project, caller, ask_errors=errors, ask_question=question
        )
        return render_htmx(request, EXCEPTION_TEMPLATE, context, status=exc.status)
    messages.success(
        request, f"{project.key}: your question was sent to the Project Lead; the exception waits."
    )
    if request.POST.get("back") == "queue":
        return redirect("waiting-for-me")
    return redirect("status:exception", project.key)
