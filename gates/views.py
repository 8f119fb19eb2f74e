"""The stage plan's page (HTML): the ordered stages with their dates, packages and stage
tolerances (an edit form for the lead and the editors while the plan is editable, the reason
shown otherwise), each stage's criteria met or not with the figure and the rows behind them,
the gate review (the lead requests it, the end-stage report, the sponsor's decision form) and
the decisions made at the gates. Every act goes through `gates.services`; a refusal shows on
the page in words, keeping what was typed."""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import NoReverseMatch, reverse

from gates import criteria, selectors, services
from gates.models import OUTCOMES
from governance import permissions
from governance.errors import Conflict, Frozen, NotFound, Stale, ValidationFailed
from governance.http import HtmxHttpRequest, form_revision, page, render_htmx
from governance.people import resolve
from governance.views import project_context
from registers import selectors as register_selectors
from registers.models import WorkPackage

if TYPE_CHECKING:
    from governance.models import Project
    from governance.permissions import Caller

TEMPLATE = "gates/plan.html"
ROW = re.compile(r"s\d+-")
NEW_STAGE_ROWS = 1
# Where a criterion's rows lead: the register row (by its id), the exception, the case.
ROW_LINKS = {
    "highRisksTreated": "registers:risk-detail",
    "noStalePendingDecision": "registers:decision-detail",
    "withinStageTolerance": "registers:wp-detail",
    "packagesComplete": "registers:wp-detail",
}
PAGE_LINKS = {"noOpenException": "status:exception", "businessCaseApproved": "charter:index"}


def row_link(project: Project, key: str, row: dict[str, Any]) -> str:
    """The page showing a criterion's row: the register row, the exception page, the case,
    or the linked document's own address."""
    try:
        if key in ROW_LINKS and row.get("id"):
            return reverse(ROW_LINKS[key], args=[project.key, row["id"]])
        if key in PAGE_LINKS:
            return reverse(PAGE_LINKS[key], args=[project.key])
    except NoReverseMatch:
        return ""
    url = row.get("url")
    return url if isinstance(url, str) and url.startswith(("https://", "http://")) else ""


def row_text(row: dict[str, Any]) -> str:
    """A criterion's row in words: its name and what about it."""
    name = row.get("title") or row.get("name") or row.get("decision") or row.get("label")
    if name is None and "version" in row:
        name = f"Business case version {row['version']}: {row.get('approvalStatus') or '—'}"
    if name is None and "state" in row:
        name = f"Exception {str(row['state']).lower()}"
    details = [
        str(v)
        for v in (
            row.get("why"),
            f"score {row['score']}" if row.get("score") is not None else None,
            row.get("status") if row.get("name") else None,
            f"{row['slipDays']} days late" if row.get("slipDays") else None,
            f"logged {row['loggedOn']}" if row.get("loggedOn") else None,
            f"{row['ageDays']} days old" if row.get("ageDays") is not None else None,
        )
        if v
    ]
    text = str(name or "—")
    return f"{text} ({', '.join(details)})" if details else text


def _criterion_view(project: Project, c: dict[str, Any]) -> dict[str, Any]:
    return {
        **c,
        "lines": [{"text": row_text(r), "url": row_link(project, c["key"], r)} for r in c["rows"]],
    }


def _stage_form(stage: dict[str, Any]) -> dict[str, Any]:
    """The edit form's values from a stage as the plan answers it."""
    return {
        "id": stage["id"],
        "name": stage["name"],
        "state": stage["state"],
        "plannedStart": stage["plannedStart"] or "",
        "plannedEnd": stage["plannedEnd"] or "",
        "toleranceDays": "" if stage["toleranceDays"] is None else str(stage["toleranceDays"]),
        "toleranceCostPercent": ""
        if stage["toleranceCostPercent"] is None
        else str(stage["toleranceCostPercent"]),
        "remove": False,
    }


def _context(request: HtmxHttpRequest, project: Project, caller: Caller, **extra: Any) -> Any:
    answer = selectors.plan_answer(project, caller)
    stages = answer["stages"]
    for stage in stages:
        stage["criteria"] = [_criterion_view(project, c) for c in stage["criteria"]]
        stage["entry"] = [c for c in stage["criteria"] if c["kind"] == "entry"]
        stage["exit"] = [c for c in stage["criteria"] if c["kind"] == "exit"]
        named = {(c["key"], c["kind"]) for c in stage["criteria"] if not c["dismissed"]}
        stage["addable"] = [
            (c.key, c.label, kind)
            for kind in ("exit", "entry")
            for c in criteria.CATALOGUE.values()
            if (c.key, kind) not in named
        ]
    review = answer["openReview"]
    current = next((s for s in stages if s["state"] == "Current"), None)
    following = None
    if current is not None:
        index = stages.index(current)
        following = stages[index + 1] if index + 1 < len(stages) else None
    unmet = []
    if current is not None:
        unmet += [c for c in current["exit"] if c["met"] is False and not c["dismissed"]]
    if following is not None:
        unmet += [c for c in following["entry"] if c["met"] is False and not c["dismissed"]]
    history = [selectors.review_to_dict(r) for r in selectors.reviews(project)]
    decided = [r for r in history if r["state"] == "Decided"]
    for r in decided:
        r["unmetCriteria"] = [
            {**n, "label": getattr(criteria.CATALOGUE.get(n.get("key", "")), "label", n.get("key"))}
            for n in r["unmetCriteria"] or []
        ]
    people = resolve(
        [
            project.lead_account_id,
            project.sponsor_account_id,
            *(r["requestedByAccountId"] for r in history),
            *(r["decidedByAccountId"] or "" for r in history),
        ]
    )
    packages = list(
        WorkPackage.objects.filter(project=project).order_by("name").values_list("pk", "name")
    )
    held = {wp["id"]: i for i, s in enumerate(stages) for wp in s["workPackages"]}
    blank = {"id": "", "name": "", "state": "Planned", "remove": False}
    plan_form = extra.pop("plan_form", None) or {
        "stages": [_stage_form(s) for s in stages] + [dict(blank) for _ in range(NEW_STAGE_ROWS)],
        "packages": {str(pk): str(held.get(str(pk), "")) for pk, _ in packages},
    }
    plan_errors = extra.get("plan_errors") or {}
    for i, row in enumerate(plan_form["stages"]):
        row["index"] = i
        row["errors"] = {
            name.split("-", 1)[1]: words
            for name, words in plan_errors.items()
            if name.startswith(f"s{i}-")
        }
    typed = extra.get("decision_typed") or {}
    for c in unmet:
        c["field"] = f"unmet-{c['kind']}-{c['key']}"
        c["typed"] = typed.get(c["field"], "")
    refusal = services.gate_review_refusal(caller)
    return project_context(
        project,
        caller,
        tab="stages",
        plan=answer,
        stages=stages,
        current=current,
        following=following,
        review=review,
        unmet=unmet,
        decided=decided,
        people=people,
        outcomes=OUTCOMES,
        work_packages=[(str(pk), name) for pk, name in packages],
        plan_form=plan_form,
        plan_general=[w for n, ws in plan_errors.items() if not ROW.match(n) for w in ws],
        may_request=refusal is None,
        # Why an editor may not request the review now, in the service's words.
        request_refused=refusal.message if refusal is not None and caller.can_edit else "",
        minutes=[
            (str(m.pk), f"{m.held_on.isoformat()}: {m.title}")
            for m in register_selectors.steering_minutes(project)
        ]
        if answer["canDecide"]
        else [],
        **extra,
    )


def _render(
    request: HtmxHttpRequest, project: Project, caller: Caller, status: int = 200, **extra: Any
) -> HttpResponse:
    context = _context(request, project, caller, **extra)
    return render_htmx(request, TEMPLATE, context, status=status)


@page("GET")
def plan_page(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The stage plan and its gates."""
    project, caller = permissions.project_for(request, key)
    return _render(request, project, caller)


@page("POST")
def plan_create(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """Make the plan from the site's default stages (`services.stage_plan_create`)."""
    project, caller = permissions.editable_project_for(request, key)
    try:
        services.stage_plan_create(caller=caller)
    except (Conflict, Frozen) as exc:
        return _render(request, project, caller, exc.status, create_errors=exc.by_field())
    messages.success(request, "Stage plan made from the site's default stages.")
    return redirect("gates:plan", project.key)


def plan_data(post: Any, count: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The plan edit form read back: the body for `stage_plan_update` (the stages in the
    order given, the removed ones left out, a blank new row ignored) and the typed values."""
    rows = []
    for i in range(count):
        row = {
            name: post.get(f"s{i}-{name}", "")
            for name in (
                "id",
                "name",
                "state",
                "order",
                "plannedStart",
                "plannedEnd",
                "toleranceDays",
                "toleranceCostPercent",
            )
        }
        row["remove"] = post.get(f"s{i}-remove") == "on"
        row["index"] = i
        rows.append(row)
    packages = {
        name[3:]: value for name, value in post.items() if name.startswith("wp-") and len(name) > 3
    }

    def order(row: dict[str, Any]) -> tuple[int, int]:
        try:
            return (int(row["order"]), row["index"])
        except ValueError:
            return (10_000, row["index"])

    kept = [r for r in rows if not r["remove"] and (r["id"] or r["name"].strip())]
    kept.sort(key=order)
    stages = []
    for r in kept:
        stage: dict[str, Any] = {
            "name": r["name"],
            "plannedStart": r["plannedStart"] or None,
            "plannedEnd": r["plannedEnd"] or None,
            "toleranceDays": r["toleranceDays"] or None,
            "toleranceCostPercent": r["toleranceCostPercent"] or None,
            "workPackageIds": [
                wp for wp, where in packages.items() if where == str(r["index"]) and where
            ],
        }
        if r["id"]:
            stage["id"] = r["id"]
        stages.append(stage)
    return {"stages": stages}, {"stages": rows, "packages": packages, "order": kept}


@page("POST")
def plan_edit(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """Save the whole plan (`services.stage_plan_update`); refusals named on their rows."""
    project, caller = permissions.editable_project_for(request, key)
    try:
        count = min(int(request.POST.get("count", "0")), 40)
    except ValueError:
        count = 0
    body, typed = plan_data(request.POST, count)
    try:
        services.stage_plan_update(
            caller=caller, data=body, expected_revision=form_revision(request.POST)
        )
    except Stale:
        # Saved by someone else since the form was opened: the plan as it is now, to edit again
        # (applying the typed rows would remove or overwrite what they saved unseen).
        return _render(
            request,
            project,
            caller,
            412,
            plan_errors={
                "": [
                    "The stage plan was changed since this form was opened (by someone else or "
                    "in another tab). It is shown below as it is now: make your changes again "
                    "and save."
                ]
            },
        )
    except (ValidationFailed, Conflict, Frozen) as exc:
        # The service names stages by their place in the body: map back to the form's rows.
        errors: dict[str, list[str]] = {}
        for name, words in exc.by_field().items():
            target = name
            if name.startswith("stages["):
                place, _, rest = name[len("stages[") :].partition("]")
                if place.isascii() and place.isdigit() and int(place) < len(typed["order"]):
                    row = typed["order"][int(place)]["index"]
                    field = rest.lstrip(".").split("[")[0] or "name"
                    target = f"s{row}-{field}"
            errors.setdefault(target, []).extend(words)
        return _render(
            request,
            project,
            caller,
            exc.status,
            plan_form={"stages": typed["stages"], "packages": typed["packages"]},
            plan_errors=errors,
        )
    messages.success(request, "Stage plan saved.")
    return redirect("gates:plan", project.key)


@page("POST")
def criterion_add(request: HtmxHttpRequest, key: str, stage_id: uuid.UUID) -> HttpResponse:
    """Name another criterion of the catalogue on a stage (`services.criterion_add`)."""
    project, caller = permissions.editable_project_for(request, key)
    choice = request.POST.get("criterion", "")
    criterion, _, kind = choice.partition(":")
    parameter: Any = request.POST.get("parameter", "").strip() or None
    found = criteria.CATALOGUE.get(criterion)
    # Whole days as a number; anything else goes to the service as typed, refused in words.
    days = found is not None and found.parameter == "days"
    if days and parameter is not None and parameter.isascii() and parameter.isdigit():
        parameter = int(parameter) if len(parameter) <= 9 else parameter
    data = {"key": criterion or None, "kind": kind or None, "parameter": parameter}
    try:
        services.criterion_add(caller=caller, stage_id=stage_id, data=data)
    except (ValidationFailed, Conflict, Frozen, NotFound) as exc:
        return _render(
            request,
            project,
            caller,
            exc.status,
            add_stage=str(stage_id),
            add_errors=exc.by_field(),
            add_typed={"criterion": choice, "parameter": request.POST.get("parameter", "")},
        )
    messages.success(request, "Criterion added: it is judged from the project's data.")
    return redirect("gates:plan", project.key)


@page("POST")
def criterion_dismiss(
    request: HtmxHttpRequest, key: str, stage_id: uuid.UUID, criterion_id: int
) -> HttpResponse:
    """Dismiss a criterion of a stage with a reason (`services.criterion_dismiss`)."""
    project, caller = permissions.editable_project_for(request, key)
    reason = request.POST.get("reason", "")
    try:
        services.criterion_dismiss(
            caller=caller, stage_id=stage_id, criterion_id=criterion_id, data={"reason": reason}
        )
    except (ValidationFailed, Conflict, Frozen, NotFound) as exc:
        return _render(
            request,
            project,
            caller,
            exc.status,
            dismiss_id=str(criterion_id),
            dismiss_stage=str(stage_id),
            dismiss_errors=exc.by_field(),
            dismiss_reason=reason,
        )
    messages.success(request, "Criterion dismissed; the reason is recorded.")
    return redirect("gates:plan", project.key)


@page("POST")
def review_request(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """Request the gate review of the current stage (`services.gate_review_request`)."""
    project, caller = permissions.editable_project_for(request, key)
    lessons = request.POST.get("lessons", "")
    try:
        services.gate_review_request(caller=caller, data={"lessons": lessons or None})
    except (ValidationFailed, Conflict, Frozen) as exc:
        return _render(
            request, project, caller, exc.status, request_errors=exc.by_field(), lessons=lessons
        )
    messages.success(request, "Gate review requested; the sponsor is notified and decides.")
    return redirect("gates:plan", project.key)


def decision_data(post: Any, unmet: list[dict[str, Any]]) -> dict[str, Any]:
    """The decision form read back: the unmet criteria named are those given a reason."""
    named = []
    for c in unmet:
        reason = post.get(f"unmet-{c['kind']}-{c['key']}", "")
        if reason.strip():
            named.append({"key": c["key"], "kind": c["kind"], "reason": reason})
    minutes = post.get("minutesRef", "")
    return {
        "outcome": post.get("outcome") or None,
        "holdUntil": post.get("holdUntil") or None,
        "comment": post.get("comment") or None,
        "unmetCriteria": named,
        **({"minutesRef": {"id": minutes}} if minutes else {}),
    }


@page("POST")
def review_decide(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The sponsor's decision at the gate (`services.gate_review_decide`)."""
    project, caller = permissions.project_for(request, key)
    context = _context(request, project, caller)
    data = decision_data(request.POST, context["unmet"])
    typed = {name: request.POST.get(name, "") for name in request.POST}
    try:
        review = services.gate_review_decide(
            caller=caller, data=data, expected_revision=form_revision(request.POST)
        )
    except (ValidationFailed, Conflict, Frozen, Stale) as exc:
        words = (
            {"": ["Someone changed this gate review since you opened it; check it and decide."]}
            if isinstance(exc, Stale)
            else exc.by_field()
        )
        return _render(
            request, project, caller, exc.status, decision_errors=words, decision_typed=typed
        )
    except NotFound:
        # Decided meanwhile (another tab, the assistant, a second press): the page as it is now.
        messages.error(
            request,
            "No gate review awaits a decision now: it was decided already. The decision is "
            "listed under the decisions at the gates.",
        )
        return _render(request, project, caller, 409)
    messages.success(
        request,
        f"Decision recorded at the {review.stage.name} gate: {review.outcome}. "
        "It is in the decision log.",
    )
    return redirect("gates:plan", project.key)
