"""The actions of the catalogue. Each reads through the selectors or writes through the
services of the apps below, as the caller; none re-implements a rule. Results are compact
(ids, keys, names, figures and a link to the page) and lists take `limit` and `cursor`.

The assistant never approves, returns, kills, archives, publishes or nominates: those acts
stay with people in the pages, so no action here calls them, with one exception: the
sponsor's decision on a reported exception (accept its plan, or kill the project) is an
action, marked as not undoable so a client asks its person before calling it."""

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from agent.catalogue import READ, WRITE, Context, action, cursor_start, page, project
from charter import selectors as charter_selectors
from charter import services as charter_services
from charter.serializers import charter_to_dict
from charter.services import current_case
from charter.services.baseline import LEAD_ONLY
from gates import selectors as gate_selectors
from gates import services as gate_services
from gates.specs import GateDecisionSpec, GateReviewRequestSpec
from governance import cleaning, permissions, specs, textsearch
from governance.audit import entry_to_dict
from governance.cleaning import required_text_schema
from governance.concurrency import check_version
from governance.errors import ValidationFailed
from governance.models import AuditEntry, Project
from portfolio import selectors as portfolio_selectors
from registers import mspdi, uploads
from registers import services as register_services
from registers.derive import (
    change_application_state,
    decision_state,
    package_schedule,
    plan_baseline_of,
    plan_baselines_of,
)
from registers.models import (
    APPLICATION_STATES,
    NAME_MAX,
    RISK_DIRECTIONS,
    TEXT_MAX,
    ChangeRequest,
    Decision,
    Risk,
    WorkPackage,
)
from registers.selectors import register_counts
from registers.services.common import EDIT_MESSAGE, get_in_project
from registers.specs import ChangeSpec, DecisionSpec, RiskSpec, WorkPackageSpec
from status import derive, exceptions
from status import selectors as status_selectors
from status import services as status_services
from status.health import plain
from status.models import DIMENSIONS, StatusReport
from status.serializers import earned_value_body, report_summary
from status.services import EDIT_MESSAGE as STATUS_EDIT_MESSAGE
from status.specs import (
    COMMENTARY_KEYS,
    CommentarySpec,
    ExceptionDecisionSpec,
    ExceptionReportSpec,
    StatusReportSpec,
    StatusSpec,
)

# --- schema pieces ----------------------------------------------------------------------------

PROJECT_KEY = {"type": "string", "minLength": 1, "description": "The project key, e.g. APOLLO."}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 100, "description": "At most this many."}
CURSOR = {
    "type": "string",
    "pattern": "^[0-9]*$",
    "description": "nextCursor of the previous answer, for more.",
}
PAGING = {"limit": LIMIT, "cursor": CURSOR}
TEXT = {"type": "string", "maxLength": 2000}
NAME = {"type": "string", "maxLength": 200}
# Refused blank when given (the services' required text).
REQUIRED_NAME = required_text_schema(NAME_MAX)
ID = {"type": "string", "description": "The id from a list answer."}
REVISION = {
    "type": "integer",
    "description": "The revision you read; the write is refused (stale) if it moved since.",
}
RAGS = ["Red", "Amber", "Green", "Blue", "None"]
REGISTERS = ["work-packages", "risks", "decisions", "changes"]
OVERRIDE = {"type": ["string", "null"], "enum": [*RAGS, None]}
REASON = {"type": "string", "maxLength": 120}
STATUS_REASONS = [f"{d}RagOverrideReason" for d in ("cost", "schedule", "scope")]


def _on_project(**extra: Any) -> dict[str, Any]:
    """The schema of an action on one project: projectKey (required), then `extra`."""
    return {"properties": {"projectKey": PROJECT_KEY, **extra}, "required": ["projectKey"]}


def _creating(
    spec: type[specs.Spec], names: Iterable[str] | None = None, **extra: Any
) -> dict[str, Any]:
    """The schema of a write that creates from `spec`: projectKey, `extra`, the fields."""
    return specs.tool_schema(
        spec,
        names,
        extra={"projectKey": PROJECT_KEY, **extra},
        required=["projectKey"],
        creating=True,
    )


def _updating(spec: type[specs.Spec], names: Iterable[str], id_arg: str) -> dict[str, Any]:
    """The schema of a write on one row named by `id_arg`, with the revision read."""
    return specs.tool_schema(
        spec,
        names,
        extra={"projectKey": PROJECT_KEY, id_arg: ID, "expectedRevision": REVISION},
        required=["projectKey", id_arg],
    )


def _url(name: str, *args: Any) -> str:
    return reverse(name, args=[str(a) for a in args])


def _project_link(ctx: Context, key: str) -> str:
    return ctx.link(_url("project-overview", key))


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.date | dt.datetime) else value


# --- reads ------------------------------------------------------------------------------------


def _drivers(row: dict[str, Any], *, only_bad: bool = True) -> list[dict[str, Any]]:
    found = []
    for key in DIMENSIONS:
        driver = row["drivers"][f"{key}Rag"]
        rag = row["effective"][f"{key}Rag"]
        if only_bad and rag not in ("Red", "Amber"):
            continue
        item = {"dimension": key, "rag": rag, "summary": driver["summary"]}
        override = row["overrides"].get(f"{key}Rag")
        if override:
            item["override"] = override
        found.append(item)
    return found


def _project_row(ctx: Context, row: dict[str, Any]) -> dict[str, Any]:
    return {
        "projectKey": row["projectKey"],
        "name": row["name"],
        "overallRag": row["overallRag"],
        "effective": row["effective"],
        "approvalStatus": row["approvalStatus"],
        "phase": row["phase"] or None,
        "theme": row["theme"] or None,
        "stale": row["stale"],
        "approvedBudget": row["approvedBudget"],
        "eac": row["eac"],
        "costOverrunPct": row["costOverrunPct"],
        "scheduleSlipDays": row["scheduleSlipDays"],
        "topRiskScore": row["topRiskScore"],
        "pendingDecisions": row["pendingDecisions"],
        "changesAwaitingApplication": row["changesAwaitingApplication"],
        "link": _project_link(ctx, row["projectKey"]),
    }


def _summary_project(ctx: Context, row: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """A project as the portfolio summary names it: its key and name, `fields`, the drivers
    of its red and amber dimensions and a link to it."""
    return {
        "projectKey": row["projectKey"],
        "name": row["name"],
        **fields,
        "drivers": _drivers(row),
        "link": _project_link(ctx, row["projectKey"]),
    }


@action(
    "find_projects",
    title="Find projects",
    kind=READ,
    description=(
        "List the projects you can see, with overall and per-dimension RAG, approval status "
        "and key figures. Filters as on the portfolio: text in key or name, theme, "
        "approvalStatus, rag (with dimension overall/cost/schedule/scope/risk), lead "
        "accountId, stale; sort by a portfolio column (prefix - to reverse)."
    ),
    schema={
        "properties": {
            "q": {"type": "string", "description": "Words in the project key or name."},
            "theme": {"type": "string"},
            "approvalStatus": {"type": "string"},
            "rag": {"enum": RAGS},
            "dimension": {"enum": ["overall", *DIMENSIONS]},
            "lead": {"type": "string", "description": "The lead's accountId."},
            "stale": {"type": "boolean"},
            "sort": {"type": "string"},
            **PAGING,
        }
    },
)
def find_projects(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    query = {
        "theme": args.get("theme"),
        "approvalStatus": args.get("approvalStatus"),
        "rag": args.get("rag"),
        "dimension": args.get("dimension"),
        "lead": args.get("lead"),
        "stale": "1" if args.get("stale") else "",
        "sort": args.get("sort"),
    }
    rows = portfolio_selectors.portfolio(
        ctx.request, query, strict=True, paged=False, with_summary=False, columns=()
    ).rows
    words = textsearch.words(args.get("q"))
    if words:
        rows = [r for r in rows if _matches(words, r["projectKey"], r["name"])]
    return page([_project_row(ctx, r) for r in rows], args)


def _went_red_since(projects: list[Any], since: dt.date) -> dict[int, str | None]:
    """Per project, the overall RAG of its last published report before `since` (None when
    it had none): the baseline for 'went red since'."""
    before: dict[int, str | None] = {}
    reports = StatusReport.objects.filter(
        project__in=projects, state="Published", published_at__date__lt=since
    ).order_by("project_id", "-published_at")
    for report in reports.only("project_id", "snapshot", "published_at"):
        if report.project_id not in before:
            before[report.project_id] = ((report.snapshot or {}).get("status") or {}).get(
                "overallRag"
            )
    return before


@action(
    "portfolio_summary",
    title="Portfolio summary",
    kind=READ,
    description=(
        "Counts of the projects you can see by overall RAG, and the red and amber projects "
        "with the drivers behind each bad dimension. With `since` (a date), also the projects "
        "that are red now but were not in their last report published before that date."
    ),
    schema={"properties": {"since": {"type": "string", "format": "date"}, **PAGING}},
)
def portfolio_summary(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    result = portfolio_selectors.portfolio(ctx.request, {}, strict=True, paged=False, columns=())
    rows = result.rows
    troubled = [
        _summary_project(
            ctx, r, {"overallRag": r["overallRag"], "overallReason": r["overallReason"] or None}
        )
        for r in sorted(rows, key=lambda r: (r["overallRag"] != "Red", r["projectKey"]))
        if r["overallRag"] in ("Red", "Amber")
    ]
    body: dict[str, Any] = {"counts": result.summary, "redAndAmber": page(troubled, args)}
    since = args.get("since")
    if since:
        try:
            day = dt.date.fromisoformat(since)
        except ValueError:
            raise ValidationFailed({"since": ["Use a date: YYYY-MM-DD."]}) from None
        projects = [p for p, _ in permissions.viewable_projects(ctx.request)]
        baseline = _went_red_since(projects, day)
        by_key = {p.key: p.pk for p in projects}
        body["wentRedSince"] = [
            _summary_project(ctx, r, {"was": baseline.get(by_key[r["projectKey"]])})
            for r in rows
            if r["overallRag"] == "Red" and baseline.get(by_key[r["projectKey"]]) != "Red"
        ]
    return body


@action(
    "project_overview",
    title="Project overview",
    kind=READ,
    description=(
        "One project: name, lead, what you may do on it, business case state, whether the "
        "registers are frozen, rows per register and the overall and dimension RAGs."
    ),
    schema=_on_project(),
)
def project_overview(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, caller = project(ctx, args["projectKey"])
    view = status_selectors.view_for(found)
    return {
        "projectKey": found.key,
        "name": found.name,
        "leadAccountId": found.lead_account_id or None,
        "sponsorAccountId": found.sponsor_account_id or None,
        "you": caller.as_api(),
        "approvalStatus": found.approval_status,
        "registersFrozen": found.registers_frozen,
        "registers": register_counts(found),
        "overallRag": view.status.overall_rag,
        "effective": dict(view.effective),
        "stale": view.stale,
        "link": _project_link(ctx, found.key),
    }


def _register_scope(ctx: Context, args: dict[str, Any]) -> list[Any]:
    if args.get("projectKey"):
        found, _ = project(ctx, args["projectKey"])
        return [found]
    return [p for p, _ in permissions.viewable_projects(ctx.request)]


def _words(args: dict[str, Any]) -> list[str]:
    return textsearch.words(args.get("q"))


def _matches(words: list[str], *texts: str | None) -> bool:
    return textsearch.matches(words, textsearch.haystack(*texts))


def _row_item(
    ctx: Context,
    row: WorkPackage | Risk | Decision | ChangeRequest,
    page: str,
    fields: dict[str, Any],
) -> dict[str, Any]:
    """A register row as the actions answer it: its id and project, `fields`, its revision
    and a link to its `page`."""
    key = row.project.key
    return {
        "id": str(row.pk),
        "projectKey": key,
        **fields,
        "revision": row.revision,
        "link": ctx.link(_url(page, key, row.pk)),
    }


def _wp_item(ctx: Context, wp: WorkPackage, plan: Any = None) -> dict[str, Any]:
    """`plan`: the project's plan baseline in force (registers.derive.plan_baseline_of)."""
    schedule = package_schedule(wp, plan)
    return _row_item(
        ctx,
        wp,
        "registers:wp-detail",
        {
            "name": wp.name,
            "status": wp.status,
            "rag": wp.rag,
            "progress": wp.progress,
            "plannedEndDate": _iso(wp.planned_end_date),
            "forecastEndDate": _iso(wp.forecast_end_date),
            "scheduleVarianceDays": schedule.variance_days,
            "scheduleVarianceBasis": schedule.basis,
            "scheduleVarianceNote": schedule.note,
        },
    )


def _risk_item(ctx: Context, risk: Risk) -> dict[str, Any]:
    return _row_item(
        ctx,
        risk,
        "registers:risk-detail",
        {
            "title": risk.title,
            "description": risk.description[:300],
            "direction": risk.direction,
            "status": risk.status,
            "likelihood": risk.likelihood,
            "impact": risk.impact,
            "residualLikelihood": risk.residual_likelihood,
            "residualImpact": risk.residual_impact,
            # Both scores by name: `score` is the residual one the risk RAG judges (the inherent
            # one where no residual is assessed).
            "inherentScore": risk.inherent_score,
            "score": risk.score,
            "ownerAccountId": risk.owner_account_id,
        },
    )


def _decision_item(ctx: Context, decision: Decision, now: dt.datetime) -> dict[str, Any]:
    state = decision_state(decision.made_on)
    return _row_item(
        ctx,
        decision,
        "registers:decision-detail",
        {
            "decision": decision.decision,
            "state": state,
            "madeOn": _iso(decision.made_on),
            "pendingDays": (now - decision.created_at).days if state == "Pending" else None,
            "notes": len(decision.notes or []),
        },
    )


def _change_item(ctx: Context, change: ChangeRequest) -> dict[str, Any]:
    return _row_item(
        ctx,
        change,
        "registers:change-detail",
        {
            "summary": change.summary,
            "status": change.status,
            "applicationState": change_application_state(change),
            "dimensions": list(change.dimensions or []),
            "dimensionsChosen": change.dimensions_chosen,
            "impactScheduleDays": change.impact_schedule_days,
            "impactBudget": cleaning.decimal_to_json(change.impact_budget),
        },
    )


@action(
    "list_register",
    title="List a register",
    kind=READ,
    description=(
        "Rows of one register (work-packages, risks, decisions, changes) of one project, or "
        "across every project you can see when projectKey is omitted. Filters: q (words), "
        "status; risks: minScore (on `score`, the residual score the risk RAG judges: "
        "residual impact x likelihood where assessed, else the inherent; each risk also "
        "carries its `inherentScore`), direction; decisions: state (Pending/Made), "
        "pendingForDaysAtLeast; changes: applicationState (e.g. AwaitingApplication)."
    ),
    schema={
        "properties": {
            "register": {"enum": REGISTERS},
            "projectKey": PROJECT_KEY,
            "q": {"type": "string"},
            "status": {"type": "string"},
            "minScore": {"type": "integer", "minimum": 1, "maximum": 25},
            "direction": {"enum": RISK_DIRECTIONS},
            "state": {"enum": ["Pending", "Made"]},
            "pendingForDaysAtLeast": {"type": "integer", "minimum": 0},
            "applicationState": {"enum": APPLICATION_STATES},
            **PAGING,
        },
        "required": ["register"],
    },
)
def list_register(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    projects = _register_scope(ctx, args)
    register = args["register"]
    words = _words(args)
    status = args.get("status")
    now = timezone.now()
    items: list[dict[str, Any]] = []
    if register == "work-packages":
        packages = WorkPackage.objects.filter(project__in=projects).select_related("project")
        plans = plan_baselines_of(p.pk for p in projects)
        for wp in packages.order_by("project__key", "sort_order", "name"):
            if (not status or wp.status == status) and _matches(words, wp.name, wp.commentary):
                items.append(_wp_item(ctx, wp, plans.get(wp.project_id)))
    elif register == "risks":
        risks = Risk.objects.filter(project__in=projects).select_related("project")
        for risk in risks.order_by("project__key", "-created_at"):
            item = _risk_item(ctx, risk)
            if status and risk.status != status:
                continue
            if args.get("direction") and risk.direction != args["direction"]:
                continue
            if args.get("minScore") and (item["score"] or 0) < args["minScore"]:
                continue
            if _matches(words, risk.title, risk.description, risk.mitigation):
                items.append(item)
        if args.get("minScore"):
            items.sort(key=lambda i: -(i["score"] or 0))
    elif register == "decisions":
        decisions = Decision.objects.filter(project__in=projects).select_related("project")
        for decision in decisions.order_by("project__key", "-created_at"):
            item = _decision_item(ctx, decision, now)
            if args.get("state") and item["state"] != args["state"]:
                continue
            least = args.get("pendingForDaysAtLeast")
            if least is not None and (item["pendingDays"] is None or item["pendingDays"] < least):
                continue
            if status and decision.status != status:
                continue
            if _matches(words, decision.decision, decision.decision_notes, decision.rationale):
                items.append(item)
    else:
        changes = ChangeRequest.objects.filter(project__in=projects).select_related("project")
        for change in changes.order_by("project__key", "-created_at"):
            item = _change_item(ctx, change)
            if (
                args.get("applicationState")
                and item["applicationState"] != args["applicationState"]
            ):
                continue
            if status and change.status != status:
                continue
            if _matches(words, change.summary, change.reason):
                items.append(item)
    return page(items, args)


@action(
    "business_case",
    title="Business case",
    kind=READ,
    description=(
        "A project's business case: approval state, version, theme, problem, outcome and "
        "expected return, adoption gap, frozen registers, open return notes."
    ),
    schema=_on_project(),
)
def business_case(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, caller = project(ctx, args["projectKey"])
    data = charter_to_dict(current_case(found), caller=caller)
    open_notes = [n for n in data.get("returnNotes") or [] if not n.get("addressed")]
    return {
        "projectKey": found.key,
        "approvalStatus": data["approvalStatus"],
        "version": data["version"],
        "theme": data["theme"] or None,
        "businessProblem": data["businessProblem"],
        "outcome": data["outcome"],
        "returnExpected": data["returnExpected"],
        "adoptionGap": data["adoptionGap"],
        "registersFrozen": data["registersFrozen"],
        "openReturnNotes": [
            {"section": n.get("section"), "ask": n.get("ask"), "severity": n.get("severity")}
            for n in open_notes
        ],
        "submittedAt": data.get("submittedAt"),
        "approvedAt": data.get("approvedAt"),
        "link": ctx.link(_url("charter:index", found.key)),
    }


@action(
    "project_status",
    title="Project status",
    kind=READ,
    description=(
        "A project's status: overall RAG and reason, the derived and effective RAG per "
        "dimension (cost, schedule, scope, risk) with the drivers behind each and any "
        "override with its reason, commentary, confidence and whether it is stale; the "
        "benefit forecast against the approved benefit (the shortfall in percent, or why "
        "there is none); and its earned value (PV, EV, AC, CPI, SPI, the cost-performance "
        "estimate BAC / CPI, VAC, TCPI, each read in words, or what is missing, and how the "
        "cost-performance estimate differs from the estimate at completion, the cost "
        "dimension's figures.eac)."
    ),
    schema=_on_project(),
)
def project_status(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, _ = project(ctx, args["projectKey"])
    view = status_selectors.view_for(found)
    status = view.status
    dimensions = {}
    for key in DIMENSIONS:
        dimension = view.dimensions[key]
        dimensions[key] = {
            "derived": dimension.rag,
            "effective": view.effective[f"{key}Rag"],
            "summary": dimension.summary,
            "figures": {name: plain(value) for name, value in dimension.figures.items()},
            "drivers": [d.as_dict() for d in dimension.drivers][:5],
        }
        override = getattr(status, f"{key}_rag_override", None)
        if override:
            dimensions[key]["override"] = override
            dimensions[key]["overrideReason"] = getattr(status, f"{key}_rag_override_reason", "")
    return {
        "projectKey": found.key,
        "overallRag": status.overall_rag,
        "overallReason": status.overall_reason or None,
        "phase": status.phase or None,
        "dimensions": dimensions,
        "commentary": status.structured_commentary or {},
        "pmKeyMessage": status.pm_key_message or None,
        "outcomeConfidence": status.outcome_confidence,
        "stale": view.stale,
        "lastUpdatedAt": _iso(status.last_updated_at),
        "revision": status.revision,
        "earnedValue": earned_value_body(view),
        "benefit": {name: plain(value) for name, value in view.benefit.items()},
        "exception": _exception_body(ctx, found, view),
        "link": ctx.link(_url("status:index", found.key)),
    }


def _exception_body(
    ctx: Context, found: Project, view: derive.StatusView | None = None
) -> dict[str, Any]:
    answer = exceptions.project_exception(found, view)
    return {**answer, "link": ctx.link(_url("status:exception", found.key))}


@action(
    "project_exception",
    title="Tolerances and exception",
    kind=READ,
    description=(
        "A project's tolerances (days late, cost over budget as % or amount, benefit under), "
        "which of them the current forecast crosses, and whether the project is in exception: "
        "the undecided exception with its age, what it crossed, its events (back within "
        "tolerance, beyond again) and the Project Lead's exception report."
    ),
    schema=_on_project(),
)
def project_exception(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, _ = project(ctx, args["projectKey"])
    return _exception_body(ctx, found)


@action(
    "status_reports",
    title="Status reports",
    kind=READ,
    description=(
        "A project's status reports, newest first, each with the overall and effective RAGs "
        "it froze: the trend. state: Draft or Published (default Published)."
    ),
    schema=_on_project(state={"enum": ["Draft", "Published"]}, **PAGING),
)
def status_reports(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, _ = project(ctx, args["projectKey"])
    reports = status_selectors.reports(found, states=[args.get("state") or "Published"])
    items = []
    for report in reports:
        summary = report_summary(report)
        items.append(
            {
                "id": summary["id"],
                "title": summary["title"],
                "state": summary["state"],
                "publishedAt": summary["publishedAt"],
                "overallRag": summary["overallRag"],
                "effective": summary["effective"],
                "link": ctx.link(_url("status:report", found.key, report.pk)),
            }
        )
    return page(items, args)


@action(
    "waiting_for_me",
    title="Waiting for me",
    kind=READ,
    description=(
        "What the Waiting-for-me page lists, from the same selector: the business cases and "
        "change requests you can decide now (as sponsor, approver or BAU owner); the changes "
        "routed to you that you cannot decide now (held), each with why and what to do or "
        "where it is decided; the exceptions that ask something of you (act: decide, "
        "report or wait), each with why; and the gate reviews (act: decide for the sponsor, "
        "request again for the lead once a Hold's date has come). Across the projects you can "
        "see. Deciding stays in the pages (but for the sponsor's decide_project_exception and "
        "decide_gate_review)."
    ),
    schema={"properties": {}},
)
def waiting_for_me(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    waiting = charter_selectors.waiting_for(ctx.request)
    return {
        "cases": [
            {
                "projectKey": a.project.key,
                "name": a.project.name,
                "what": a.what,
                "since": _iso(a.since),
                "link": ctx.link(_url(f"charter:{a.page}", a.project.key))
                if a.page != "case"
                else ctx.link(_url("charter:index", a.project.key)),
            }
            for a in waiting["cases"]
        ],
        "changes": [_change_item(ctx, c) for c in waiting["changes"]],
        "held": [
            {
                **_change_item(ctx, h.change),
                "whyNotNow": h.why,
                "whatToDo": h.link_label or h.todo,
                **({"decidedAt": ctx.link(h.url)} if h.url else {}),
            }
            for h in waiting["held"]
        ],
        "exceptions": [
            {
                "projectKey": x.project.key,
                "name": x.project.name,
                "act": x.act,
                "state": x.record.state,
                "why": x.why,
                "since": _iso(x.since),
                "link": ctx.link(_url("status:exception", x.project.key)),
            }
            for x in waiting.get("exceptions", [])
        ],
        "gateReviews": [
            {
                "projectKey": g.project.key,
                "name": g.project.name,
                "act": g.act,
                "stage": g.review.stage.name,
                "why": g.why,
                "since": _iso(g.since),
                "link": ctx.link(_url("gates:plan", g.project.key)),
            }
            for g in waiting.get("gateReviews", [])
        ],
    }


@action(
    "search_lessons",
    title="Search lessons",
    kind=READ,
    description=(
        "Lessons recorded at close-out (worked, differently, nextSponsor) and realisation "
        "(realisation) of the projects you can see, newest first; q matches every word."
    ),
    schema={
        "properties": {
            "q": {"type": "string"},
            "kind": {"enum": list(portfolio_selectors.LESSON_KINDS)},
            "theme": {"type": "string"},
            **PAGING,
        }
    },
)
def search_lessons(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found = portfolio_selectors.lessons(
        ctx.request,
        q=args.get("q") or "",
        kind=args.get("kind") or "",
        theme=args.get("theme") or "",
    )
    items = [
        {
            "projectKey": e["projectKey"],
            "projectName": e["projectName"],
            "kind": e["kind"],
            "text": e["text"],
            "recordedAt": e["recordedAt"],
            "link": ctx.link(_url("charter:closeout", e["projectKey"])),
        }
        for e in found.entries
    ]
    return page(items, args)


@action(
    "audit_trail",
    title="Audit trail",
    kind=READ,
    description="A project's audit trail, newest first: who changed what, when, through what.",
    schema=_on_project(
        kind={"type": "string", "description": "e.g. risk.created, decision.made"}, **PAGING
    ),
)
def audit_trail(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, _ = project(ctx, args["projectKey"])
    entries = AuditEntry.objects.filter(project_key=found.key)
    if args.get("kind"):
        entries = entries.filter(kind=args["kind"])
    limit = args.get("limit") or 20
    start = cursor_start(args.get("cursor"))
    chunk = list(entries[start : start + limit + 1])
    items = [entry_to_dict(e) for e in chunk[:limit]]
    return {
        "items": items,
        "nextCursor": str(start + limit) if len(chunk) > limit else None,
        "link": ctx.link(_url("project-audit", found.key)),
    }


# --- writes -----------------------------------------------------------------------------------


def _written(ctx: Context, kind: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"done": kind, **item}


def _named_project(ctx: Context, args: dict[str, Any]) -> tuple[Project, permissions.Caller] | None:
    """For the checks before a body's: the project the unchecked body names, with the caller's
    role on it; None when it names none (the schema's own refusal names the missing key)."""
    key = args.get("projectKey")
    if not isinstance(key, str) or not key.strip():
        return None
    return project(ctx, key)


def _revision_read(args: dict[str, Any]) -> int | None:
    """The unchecked body's expectedRevision where it is a whole number (else the schema's
    refusal names it)."""
    expected = args.get("expectedRevision")
    return expected if isinstance(expected, int) and not isinstance(expected, bool) else None


def gate(
    *,
    allowed: str = "can_edit",
    message: str = EDIT_MESSAGE,
    frozen: bool = True,
    model: type[Risk | WorkPackage | Decision | ChangeRequest] | None = None,
    id_arg: str = "",
    revision: Callable[[Project], int] | None = None,
) -> Callable[[Context, dict[str, Any]], None]:
    """The checks a write makes before it reads its body, in the house order: the project
    (404), the caller's right (403), frozen registers (409), the row named (404) and the
    revision read (412). `revision(project)` gives the revision of a write that names no
    row. Run by the catalogue when the schema refuses the body, so 422 comes last."""

    def check(ctx: Context, args: dict[str, Any]) -> None:
        named = _named_project(ctx, args)
        if named is None:
            return
        found, caller = named
        permissions.require(getattr(caller, allowed), message)
        if frozen:
            found.assert_registers_unfrozen()
        expected = _revision_read(args)
        if model is not None:
            row = get_in_project(model, found, args.get(id_arg), lock=False)
            check_version(row.revision, expected, current_repr=row)
        elif revision is not None:
            check_version(revision(found), expected)

    return check


def _data(args: dict[str, Any], *skip: str) -> dict[str, Any]:
    drop = {"projectKey", "expectedRevision", *skip}
    return {k: v for k, v in args.items() if k not in drop}


@action(
    "add_risk",
    title="Add a risk",
    kind=WRITE,
    description=(
        "Log a risk (or opportunity) on a project: title, description, likelihood and impact "
        "1-5, mitigation, owner. Project Lead and nominated editors only."
    ),
    schema=_creating(RiskSpec, specs.on_form(RiskSpec)),
    gate=gate(),
)
def add_risk(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _, caller = project(ctx, args["projectKey"])
    risk = register_services.risk_create(caller=caller, data=_data(args))
    return _written(ctx, "risk.created", _risk_item(ctx, risk))


@action(
    "update_risk",
    title="Update a risk",
    kind=WRITE,
    description="Change fields of a risk (scores, status, mitigation, owner...) by its id.",
    schema=_updating(RiskSpec, specs.on_form(RiskSpec), "riskId"),
    gate=gate(model=Risk, id_arg="riskId"),
)
def update_risk(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _, caller = project(ctx, args["projectKey"])
    risk = register_services.risk_update(
        caller=caller,
        risk_id=args["riskId"],
        data=_data(args, "riskId"),
        expected_revision=args.get("expectedRevision"),
    )
    return _written(ctx, "risk.updated", _risk_item(ctx, risk))


@action(
    "update_work_package",
    title="Update a work package",
    kind=WRITE,
    description=(
        "Change a work package's forecast or actual dates, status, progress (0-100 in tens), "
        "RAG or commentary, by its id."
    ),
    schema=_updating(
        WorkPackageSpec,
        (
            "forecastStartDate",
            "forecastEndDate",
            "actualStartDate",
            "actualEndDate",
            "plannedStartDate",
            "plannedEndDate",
            "status",
            "progress",
            "rag",
            "commentary",
        ),
        "workPackageId",
    ),
    gate=gate(model=WorkPackage, id_arg="workPackageId"),
)
def update_work_package(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _, caller = project(ctx, args["projectKey"])
    wp = register_services.work_package_update(
        caller=caller,
        wp_id=args["workPackageId"],
        data=_data(args, "workPackageId"),
        expected_revision=args.get("expectedRevision"),
    )
    return _written(ctx, "work_package.updated", _wp_item(ctx, wp, plan_baseline_of(wp.project)))


@action(
    "add_decision",
    title="Log a decision",
    kind=WRITE,
    description=(
        "Log a decision on a project: pending without madeOn, made when madeOn (a date) is "
        "given, with notes and rationale."
    ),
    schema=_creating(
        DecisionSpec, ("decision", "decisionNotes", "rationale", "madeOn", "madeByAccountId")
    ),
    gate=gate(),
)
def add_decision(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _, caller = project(ctx, args["projectKey"])
    decision = register_services.decision_create(caller=caller, data=_data(args))
    return _written(ctx, "decision.created", _decision_item(ctx, decision, timezone.now()))


@action(
    "record_decision_made",
    title="Record a decision as made",
    kind=WRITE,
    description=(
        "Record that a pending decision was made: madeOn (default today), who made it, the "
        "rationale. A made decision can no longer be changed, only annotated."
    ),
    schema=_updating(DecisionSpec, ("madeOn", "madeByAccountId", "rationale"), "decisionId"),
    gate=gate(model=Decision, id_arg="decisionId"),
)
def record_decision_made(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _, caller = project(ctx, args["projectKey"])
    data = _data(args, "decisionId")
    if data.get("madeOn") in (None, ""):  # made today unless said otherwise
        data["madeOn"] = timezone.localdate().isoformat()
    decision = register_services.decision_update(
        caller=caller,
        decision_id=args["decisionId"],
        data=data,
        expected_revision=args.get("expectedRevision"),
    )
    return _written(ctx, "decision.made", _decision_item(ctx, decision, timezone.now()))


@action(
    "add_decision_note",
    title="Add a note to a decision",
    kind=WRITE,
    description=(
        "Append a note to a decision (also allowed on made decisions and frozen registers)."
    ),
    schema={
        "properties": {
            "projectKey": PROJECT_KEY,
            "decisionId": ID,
            "text": required_text_schema(TEXT_MAX),
            "expectedRevision": REVISION,
        },
        "required": ["projectKey", "decisionId", "text"],
    },
    gate=gate(frozen=False, model=Decision, id_arg="decisionId"),
)
def add_decision_note(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _, caller = project(ctx, args["projectKey"])
    decision = register_services.decision_append_note(
        caller=caller,
        decision_id=args["decisionId"],
        text_value=args["text"],
        expected_revision=args.get("expectedRevision"),
    )
    return _written(ctx, "decision.note_added", _decision_item(ctx, decision, timezone.now()))


@action(
    "raise_change_request",
    title="Raise a change request",
    kind=WRITE,
    description=(
        "Raise a change request on a project: summary, reason, dimensions (Scope, Budget, "
        "Schedule, Quality, Other) and impacts; without dimensions they are inferred from the "
        "impacts and follow them. The proposer is you unless another person who can browse the "
        "project is named. It is decided by its approver in the pages (not by its proposer, "
        "whoever records it, the lead or an editor)."
    ),
    schema=_creating(ChangeSpec, specs.on_form(ChangeSpec)),
    gate=gate(),
)
def raise_change_request(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _, caller = project(ctx, args["projectKey"])
    change = register_services.change_create(caller=caller, data=_data(args))
    return _written(ctx, "change.created", _change_item(ctx, change))


@action(
    "apply_change_to_baseline",
    title="Apply a change to its work package's baseline",
    kind=WRITE,
    description=(
        "Project Lead only: apply an approved change request that awaits application and names "
        "a work package to that package's baseline (its baselined end date moves by the "
        "change's schedule impact, its baselined budget by the budget impact); the change then "
        "reads Applied. Refused while the business case has no approved plan baseline."
    ),
    schema={
        "properties": {
            "projectKey": PROJECT_KEY,
            "changeId": ID,
            "expectedRevision": REVISION,
        },
        "required": ["projectKey", "changeId"],
    },
    gate=gate(
        allowed="may_apply_change_to_baseline",
        message=LEAD_ONLY,
        model=ChangeRequest,
        id_arg="changeId",
    ),
)
def apply_change_to_baseline(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _, caller = project(ctx, args["projectKey"])
    change = charter_services.change_apply_to_baseline(
        caller=caller,
        change_id=args["changeId"],
        expected_revision=args.get("expectedRevision"),
    )
    return _written(ctx, "change.applied", _change_item(ctx, change))


@action(
    "update_project_status",
    title="Update the project status",
    kind=WRITE,
    description=(
        "Update a project's status: overall RAG and reason, key messages, key risks, "
        "decisions required, phase, and per-dimension RAG overrides with their reasons "
        "(null override = use the derived RAG)."
    ),
    schema=specs.tool_schema(
        StatusSpec,
        [
            "overallRag",
            "overallReason",
            "phase",
            "pmKeyMessage",
            *(f"{d}RagOverride" for d in DIMENSIONS),
            *STATUS_REASONS,
        ],
        extra={
            "projectKey": PROJECT_KEY,
            "expectedRevision": REVISION,
            **specs.properties(CommentarySpec),
        },
        required=["projectKey"],
        # The tool's stricter view: a RAG named exactly (no empty text), a reason that fits.
        overrides={
            "overallRag": {"enum": RAGS},
            **{f"{d}RagOverride": OVERRIDE for d in DIMENSIONS},
            **{name: REASON for name in ("overallReason", *STATUS_REASONS)},
        },
    ),
    gate=gate(
        message=STATUS_EDIT_MESSAGE,
        frozen=False,
        revision=lambda p: status_selectors.view_for(p).status.revision,
    ),
)
def update_project_status(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, caller = project(ctx, args["projectKey"])
    data = _data(args, *COMMENTARY_KEYS)
    commentary_keys = [k for k in COMMENTARY_KEYS if k in args]
    if commentary_keys:
        current = dict(status_selectors.view_for(found).status.structured_commentary or {})
        current.update({k: args[k] for k in commentary_keys})
        data["structuredCommentary"] = current
    permissions.require(
        caller.can_edit,
        "Only the Project Lead and the editors they nominate may change this project.",
    )
    status_services.status_update(
        caller=caller, data=data, expected_revision=args.get("expectedRevision")
    )
    return _written(ctx, "status.updated", project_status(ctx, {"projectKey": found.key}))


def _key_messages(ctx: Context, key: str) -> str:
    """Key messages made from the data: overall RAG, the bad dimensions with their drivers,
    the top open risks and the pending decisions."""
    status = project_status(ctx, {"projectKey": key})
    lines = [
        f"Overall {status['overallRag']}."
        + (f" {status['overallReason']}" if status["overallReason"] else "")
    ]
    for name, dimension in status["dimensions"].items():
        if dimension["effective"] in ("Red", "Amber"):
            lines.append(f"{name.title()}: {dimension['effective']} - {dimension['summary']}")
    risks = list_register(
        ctx, {"register": "risks", "projectKey": key, "status": "Open", "minScore": 12, "limit": 3}
    )["items"]
    for risk in risks:
        lines.append(f"Risk (score {risk['score']}): {risk['title']}")
    pending = list_register(
        ctx, {"register": "decisions", "projectKey": key, "state": "Pending", "limit": 100}
    )["total"]
    if pending:
        lines.append(f"{pending} decision(s) pending.")
    return "\n".join(lines)[:2000]


@action(
    "draft_status_report",
    title="Draft a status report",
    kind=WRITE,
    description=(
        "Start a draft status report for a project (one draft at a time). Without "
        "keyMessages, they are made from the data: overall RAG, the red and amber dimensions "
        "with their drivers, top risks, pending decisions. Publishing stays with people."
    ),
    schema=specs.tool_schema(
        StatusReportSpec, extra={"projectKey": PROJECT_KEY}, required=["projectKey"]
    ),
    gate=gate(
        message="Only the Project Lead and the editors they nominate draft reports.", frozen=False
    ),
)
def draft_status_report(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, caller = project(ctx, args["projectKey"])
    data = _data(args)
    permissions.require(
        caller.can_edit, "Only the Project Lead and the editors they nominate draft reports."
    )
    if "keyMessages" not in data:
        data["keyMessages"] = _key_messages(ctx, found.key)
    report = status_services.status_report_create(caller=caller, data=data)
    return _written(
        ctx,
        "status_report.created",
        {
            "id": str(report.pk),
            "projectKey": found.key,
            "title": report.title,
            "state": report.state,
            "keyMessages": report.key_messages,
            "link": ctx.link(_url("status:report", found.key, report.pk)),
        },
    )


def _exception_revision(found: Project) -> int:
    record = exceptions.current(found)
    return record.revision if record else 0


@action(
    "write_exception_report",
    title="Write the exception report",
    kind=WRITE,
    description=(
        "The Project Lead's exception report on a project in exception: cause, consequences, "
        "options (at least one), recommendation, and the exception plan's figures (budget and "
        "days added), which become a change request to the sponsor. Rewriting replaces the "
        "report until the sponsor decides (decide_project_exception)."
    ),
    schema=_creating(ExceptionReportSpec, expectedRevision=REVISION),
    gate=gate(
        allowed="may_report_exception",
        message="Only the Project Lead writes the exception report.",
        revision=_exception_revision,
    ),
)
def write_exception_report(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    _, caller = project(ctx, args["projectKey"])
    record = exceptions.exception_report(
        caller=caller, data=_data(args), expected_revision=args.get("expectedRevision")
    )
    return _written(ctx, "exception.reported", exceptions.to_dict(record))


def _decision_gate(
    open_for_decision: Callable[[permissions.Caller], Any],
) -> Callable[[Context, dict[str, Any]], None]:
    """A sponsor's decision's checks before its body, in the house order: the project (404),
    the record waiting for a decision (404) its caller may decide (403), as the service's
    `open_for_decision` finds it, then the revision read (412)."""

    def check(ctx: Context, args: dict[str, Any]) -> None:
        named = _named_project(ctx, args)
        if named is None:
            return
        _, caller = named
        record = open_for_decision(caller)
        check_version(record.revision, _revision_read(args), current_repr=record)

    return check


_Record = TypeVar("_Record")


def _sponsor_decision(
    spec: type[specs.Spec], open_for_decision: Callable[[permissions.Caller], Any]
) -> dict[str, Any]:
    """A sponsor's decision as an action declares it: the spec's body with the revision read,
    the checks before its body (`_decision_gate`), offered to the sponsor."""
    return {
        "schema": _creating(spec, expectedRevision=REVISION),
        "gate": _decision_gate(open_for_decision),
        "offered_to": lambda caller: caller.is_sponsor,
    }


def _decide(
    ctx: Context, args: dict[str, Any], decide: Callable[..., _Record]
) -> tuple[Project, _Record]:
    """The project and the record a sponsor's decision service answers."""
    found, caller = project(ctx, args["projectKey"])
    return found, decide(
        caller=caller, data=_data(args), expected_revision=args.get("expectedRevision")
    )


@action(
    "decide_project_exception",
    title="Decide on the exception",
    kind=WRITE,
    description=(
        "The sponsor's decision on a project's reported exception: AcceptPlan approves the "
        "exception plan's change request (the project comes back within its tolerances), Kill "
        "kills the project (the business case's Kill act, with the comment as its reason: "
        "required). Either closes the exception and cannot be undone: ask the person first. "
        "The sponsor only, and not on a report they wrote; pass the exception's revision."
    ),
    **_sponsor_decision(ExceptionDecisionSpec, exceptions.open_for_decision),
)
def decide_project_exception(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, record = _decide(ctx, args, exceptions.exception_decide)
    # The project's exception answer (no undecided exception any more), with the decided
    # record and its revision.
    return _written(
        ctx,
        "exception.decided",
        {
            **_exception_body(ctx, found),
            "decided": exceptions.to_dict(record),
            "revision": record.revision,
        },
    )


# --- the plan import (registers.services.import_preview / import_file) ------------------------

PLAN_REGISTER = "work-packages"
# An .mpp (an OLE2 compound file) read as text: its first bytes as Latin-1 (or Windows-1252)
# characters, or as UTF-8 with the undecodable bytes replaced.
_OLE2_AS_TEXT = (
    mspdi.OLE2_MAGIC.decode("latin-1"),
    mspdi.OLE2_MAGIC[:7].decode("utf-8", "replace"),
)


def _refuse_binary_plan(text: Any) -> None:
    """An .mpp sent as text is refused in the importer's words (the way to save it as XML),
    not as text holding control characters."""
    if isinstance(text, str) and text.startswith(_OLE2_AS_TEXT):
        raise ValidationFailed({"xml": [mspdi.MPP_MESSAGE]})


def _plan_gate(ctx: Context, args: dict[str, Any]) -> None:
    gate()(ctx, args)  # the import's own: 404, 403 (editors), 409 (frozen registers)
    _refuse_binary_plan(args.get("xml"))


def _plan_file(text: str) -> SimpleUploadedFile:
    """The plan as the importer reads an uploaded one: the text's UTF-8 bytes."""
    return SimpleUploadedFile("plan.xml", text.encode("utf-8"), content_type=mspdi.CONTENT_TYPE)


def _named_as_arguments(error: ValidationFailed) -> ValidationFailed:
    """The importer's refusal with the file named as the argument that carries it (`xml`)."""
    if "file" not in error.fields:
        return error
    fields = {("xml" if name == "file" else name): v for name, v in error.fields.items()}
    return ValidationFailed(fields, error.message, **error.extra)


@action(
    "import_project_plan",
    title="Import a Microsoft Project plan",
    kind=WRITE,
    description=(
        "Import a Microsoft Project plan saved as XML (File > Save As > 'XML Format', or "
        "ProjectLibre's XML; not an .mpp) into a project's work packages: the tasks at "
        "outlineLevel (default 1) become packages, the tasks below roll up into them. Without "
        "previewDigest it only previews: the rows it would create (createRows), the refused "
        "cells (errors), the warnings and a previewDigest; send the same xml and outlineLevel "
        "with that previewDigest to import all rows or none (refused if the file or the "
        "register changed since). Project Lead and nominated editors only."
    ),
    schema={
        "properties": {
            "projectKey": PROJECT_KEY,
            "xml": {
                "type": "string",
                "minLength": 1,
                "maxLength": uploads.MAX_BYTES,
                "description": (
                    "The plan file's text (MSPDI XML), at most "
                    f"{uploads.MAX_BYTES // (1024 * 1024)} MB as UTF-8."
                ),
            },
            "outlineLevel": {
                "type": "integer",
                "minimum": 1,
                "maximum": mspdi.MAX_OUTLINE_LEVEL,
                "default": mspdi.DEFAULT_OUTLINE_LEVEL,
                "description": "The outline level whose tasks become work packages.",
            },
            "previewDigest": {
                "type": "string",
                "pattern": "^[0-9a-f]{64}$",
                "description": "The previewDigest of the preview you checked: imports.",
            },
        },
        "required": ["projectKey", "xml"],
    },
    gate=_plan_gate,
)
def import_project_plan(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, caller = project(ctx, args["projectKey"])
    _refuse_binary_plan(args["xml"])
    upload = _plan_file(args["xml"])
    level = args.get("outlineLevel")
    digest = args.get("previewDigest")
    link = ctx.link(_url("registers:work-packages", found.key))
    try:
        if digest is None:
            preview = register_services.import_preview(
                caller=caller, register=PLAN_REGISTER, upload=upload, outline_level=level, plan=True
            )
            return {"projectKey": found.key, "dryRun": True, **preview.preview(), "link": link}
        outcome = register_services.import_file(
            caller=caller,
            register=PLAN_REGISTER,
            upload=upload,
            expected_digest=digest,
            outline_level=level,
            plan=True,
        )
    except ValidationFailed as refused:
        raise _named_as_arguments(refused) from None
    return _written(
        ctx,
        "work_packages.imported",
        {
            "projectKey": found.key,
            "created": outcome.created,
            "warnings": outcome.warnings,
            "link": link,
        },
    )


# --- stage gates (gates.selectors / gates.services) ----------------------------------------------

GATE_REQUEST_MESSAGE = "Only the Project Lead and the editors they nominate request a gate review."


def _plan_body(ctx: Context, found: Project, caller: permissions.Caller) -> dict[str, Any]:
    return {
        **gate_selectors.plan_answer(found, caller),
        "link": ctx.link(_url("gates:plan", found.key)),
    }


@action(
    "stage_plan",
    title="Stage plan and gates",
    kind=READ,
    description=(
        "A project's stage plan: the stages in order (dates, work packages, stage tolerances, "
        "state), each stage's entry and exit criteria judged live from the project's data (met "
        "or not, the figure and the rows behind it, or dismissed with the reason), the current "
        "stage, the gate review awaiting the sponsor (its end-stage report and days at the "
        "gate), and whether the plan may be edited now (and why not)."
    ),
    schema=_on_project(),
)
def stage_plan(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, caller = project(ctx, args["projectKey"])
    return _plan_body(ctx, found, caller)


@action(
    "request_gate_review",
    title="Request the gate review",
    kind=WRITE,
    description=(
        "The Project Lead (or an editor) requests the gate review of the current stage: the "
        "end-stage report is generated from the model (with the lessons given) and the sponsor "
        "is notified to decide. Refused without a stage under way or with a review waiting."
    ),
    schema=_creating(GateReviewRequestSpec),
    gate=gate(message=GATE_REQUEST_MESSAGE, frozen=False),
)
def request_gate_review(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, caller = project(ctx, args["projectKey"])
    permissions.require(caller.can_edit, GATE_REQUEST_MESSAGE)
    review = gate_services.gate_review_request(caller=caller, data=_data(args))
    return _written(
        ctx,
        "gate_review.requested",
        {
            **gate_selectors.review_to_dict(review),
            "projectKey": found.key,
            "link": ctx.link(_url("gates:plan", found.key)),
        },
    )


@action(
    "decide_gate_review",
    title="Decide the gate review",
    kind=WRITE,
    description=(
        "The sponsor's decision at a project's gate: Go (the next stage starts), Hold (give "
        "holdUntil, the date to come back), Recycle (stay in the stage and re-plan) or Stop "
        "(the business case's Kill act, the comment its reason: required). Going through with "
        "unmet criteria names each in unmetCriteria with a reason (read them with stage_plan). "
        "Recorded as a made decision of the log and cannot be undone: ask the person first. "
        "The sponsor only, and not on a review they requested; pass the review's revision."
    ),
    **_sponsor_decision(GateDecisionSpec, gate_services.open_for_decision),
)
def decide_gate_review(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
    found, review = _decide(ctx, args, gate_services.gate_review_decide)
    return _written(
        ctx,
        "gate_review.decided",
        {
            **gate_selectors.review_to_dict(review),
            "projectKey": found.key,
            "currentStage": getattr(gate_selectors.current_stage(found), "name", None),
            "link": ctx.link(_url("gates:plan", found.key)),
        },
    )
