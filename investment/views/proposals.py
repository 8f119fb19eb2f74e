"""The investment pages of proposals and the scoring model (docs/product.md, "Investment
decisions"): the ranked proposals, one proposal's scores with the score form, the model in
force with its versions and the form for a new one, and the portfolio decision log. The
pages read `investment.selectors` and write only through `investment.services`; a refusal
shows on the page in words, keeping what was typed. Whoever may not see a page gets 404."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import path, reverse

from governance import permissions
from governance.errors import Conflict, Forbidden, NotFound, ValidationFailed
from governance.http import HtmxHttpRequest, page, render_htmx
from governance.models import Project
from governance.people import resolve
from investment import selectors, services
from investment.criteria import CATALOGUE, scale_words
from investment.models import PERSON, POINTS, Criterion, PortfolioDecision, Prioritised, Score
from investment.views import governor

# Where each data criterion's figure comes from, in words.
ORIGINS = {
    "npv": "the business case's financial case (net present value)",
    "paybackYears": "the business case's financial case (payback)",
    "totalCost": "the business case's financial case (total cost)",
    "adoptionInputs": "the business case's adoption inputs (affected, KPI, saturation, owner)",
    "topRiskScore": "the risk register (the highest open risk's score)",
}
NEW_ROWS = 1


def _cost(board: selectors.Board, pk: int) -> tuple[Decimal | None, dict[str, Decimal]]:
    years, unphased = board.costs.get(pk, ({}, Decimal(0)))
    if not years and not unphased:
        return None, {}
    return sum(years.values(), Decimal(0)) + unphased, years


def _marks(ids: list[int]) -> dict[int, Prioritised]:
    """The "prioritised in scenario X" marker of each business case (one query)."""
    if not ids:
        return {}
    found = Prioritised.objects.filter(business_case_id__in=ids)
    return {m.business_case_id: m for m in found}


# --- the ranked proposals --------------------------------------------------------------------


@page("GET")
def proposals_index(request: HtmxHttpRequest) -> HttpResponse:
    """Every proposal the governor can see, ranked by total, with the version it was scored
    under, its cost, benefit, the scenario it was prioritised in, its lead and sponsor."""
    governor(request)
    board = selectors.viewer_board(request)
    ranked = selectors.ranked(board)
    marks = _marks([p.project.pk for p in ranked])
    rows = []
    for proposal in ranked:
        pk = proposal.project.pk
        cost, years = _cost(board, pk)
        rows.append(
            {
                "p": proposal,
                "cost": cost,
                "years": years,
                "benefit": board.benefits.get(pk),
                "mark": marks.get(pk),
            }
        )
    people = resolve(
        [a for p in ranked for a in (p.project.lead_account_id, p.project.sponsor_account_id)]
    )
    return render_htmx(
        request,
        "investment/proposals.html",
        {
            "rows": rows,
            "people": people,
            "current": board.current,
            "older": sum(1 for p in ranked if p.older),
            "scenarios_url": reverse("investment:scenarios"),
            "section": "investment",
        },
    )


# --- one proposal ----------------------------------------------------------------------------


def _proposal_for(request: HtmxHttpRequest, key: str) -> tuple[Project, permissions.Caller]:
    """The project when the caller may read its scores (governors, its lead and sponsor)."""
    project, caller = permissions.project_for(request, key)
    if not permissions.may_govern_investment(caller.user, request, caller):
        raise NotFound(f"No project {project.key} that you can see.")
    return project, caller


def _point_words(criterion: Criterion, value: int | None) -> str:
    points = list(criterion.points or [])
    if value is None or not 1 <= value <= len(points):
        return ""
    return str(points[value - 1])


def _proposal_context(
    request: HtmxHttpRequest, project: Project, caller: permissions.Caller, **extra: Any
) -> dict[str, Any]:
    board = selectors.viewer_board(request, also=project)
    scored = selectors.all_scored(board)
    proposal = scored[project.key]
    ranked_count = sum(1 for p in scored.values() if p.rank is not None)
    lines: list[dict[str, Any]] = []
    for item in proposal.points:
        c = item.criterion
        source = CATALOGUE.get(c.source)
        lines.append(
            {
                "c": c,
                "value": item.value,
                "words": _point_words(c, item.value),
                "score": item.score,
                "figure": item.figure,
                "label": source.label if source else "",
                "unit": source.unit if source else "",
                "origin": ORIGINS.get(c.source, ""),
                "version": board.versions[item.score.version_id].number if item.score else None,
            }
        )
    counted = [line["score"].pk for line in lines if line["score"]]
    history = list(
        Score.objects.filter(project=project)
        .exclude(pk__in=counted)
        .select_related("criterion", "version")
        .order_by("-created_at", "-pk")
    )
    earlier = [
        {"s": score, "words": _point_words(score.criterion, score.value)} for score in history
    ]
    current = board.current
    person = [
        c for c in (board.criteria.get(current.pk, []) if current else []) if c.source == PERSON
    ]
    held = board.scores.get(project.pk, {})
    typed = extra.pop("typed", None)
    form = []
    for c in person:
        held_score = held.get(c.pk)
        form.append(
            {
                "c": c,
                "choices": list(enumerate(c.points or [], 1)),
                "value": (typed or {}).get(f"value-{c.key}", ""),
                "reason": (typed or {}).get(f"reason-{c.key}", ""),
                "now": held_score.value
                if held_score and current and held_score.version_id == current.pk
                else None,
            }
        )
    accounts = [s.created_by_account_id for s in history] + [
        line["score"].created_by_account_id for line in lines if line["score"]
    ]
    accounts += [project.lead_account_id, project.sponsor_account_id]
    cost, years = _cost(board, project.pk)
    return {
        "subject": project,
        "proposal": proposal,
        "ranked_count": ranked_count,
        "lines": lines,
        "history": earlier,
        "form": form,
        "may_score": services.may_score(caller, request),
        "is_proposal": proposal.rank is not None,
        "current": current,
        "cost": cost,
        "years": years,
        "benefit": board.benefits.get(project.pk),
        "mark": _marks([project.pk]).get(project.pk),
        "people": resolve(accounts),
        "governor": permissions.may_govern_investment(caller.user, request),
        "section": "investment",
        "points_max": POINTS,
        **extra,
    }


@page("GET")
def proposal_page(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """The proposal's scores, total and rank, its superseded scores, and the score form."""
    project, caller = _proposal_for(request, key)
    return render_htmx(
        request, "investment/proposal.html", _proposal_context(request, project, caller)
    )


def _words(exc: Any) -> list[str]:
    fields: dict[str, list[str]] = dict(getattr(exc, "fields", None) or {})
    found = [
        f"{'Points' if name == 'value' else name.capitalize()}: {m}" if name else m
        for name, ms in fields.items()
        for m in ms
    ]
    return found or [str(exc.message)]


class _Refused(Exception):
    """Some row of the score form was refused: nothing of the form is kept."""


@page("POST")
def proposal_score(request: HtmxHttpRequest, key: str) -> HttpResponse:
    """Score the proposal against the person-scored criteria filled in (each with a reason),
    all or none: one `services.score_set` per criterion in one transaction."""
    project, caller = _proposal_for(request, key)
    typed = {
        name: request.POST.get(name, "") for name in request.POST if name != "csrfmiddlewaretoken"
    }
    if not services.may_score(caller, request):
        raise Forbidden("Only the PMO (the governance group) and the sponsor score a proposal.")
    version = selectors.current_version()
    person = (
        list(Criterion.objects.filter(version=version, source=PERSON).order_by("position", "pk"))
        if version
        else []
    )
    errors: dict[str, list[str]] = {}
    done = 0
    status = 422
    try:
        with transaction.atomic():
            for c in person:
                value = request.POST.get(f"value-{c.key}", "")
                reason = request.POST.get(f"reason-{c.key}", "")
                if not value.strip() and not reason.strip():
                    continue
                try:
                    services.score_set(
                        caller=caller,
                        data={"criterion": c.key, "value": value or None, "reason": reason or None},
                        request=request,
                    )
                    done += 1
                except ValidationFailed as exc:
                    errors[c.key] = _words(exc)
            if not done and not errors:
                errors[""] = ["Choose the points of at least one criterion, with the reason."]
            if errors:
                raise _Refused
    except _Refused:
        pass
    except Conflict as exc:
        errors = {"": [exc.message]}
        status = exc.status
    if errors:
        context = _proposal_context(request, project, caller, typed=typed, score_errors=errors)
        return render_htmx(request, "investment/proposal.html", context, status=status)
    messages.success(
        request,
        f"{done} score{'s' if done != 1 else ''} recorded; any earlier score of the same "
        "criterion is kept in the history.",
    )
    return redirect("investment:proposal", project.key)


# --- the scoring model -----------------------------------------------------------------------


def _thresholds_text(c: Criterion) -> str:
    return ", ".join(f"{Decimal(str(t)).normalize():f}" for t in (c.thresholds or []))


def _row_from(c: Criterion) -> dict[str, Any]:
    points = list(c.points or [])
    return {
        "key": c.key,
        "name": c.name,
        "measures": c.measures,
        "points": points + [""] * (POINTS - len(points)),
        "weight": str(c.weight),
        "source": c.source,
        "thresholds": _thresholds_text(c),
        "remove": False,
        "new": False,
    }


def _blank_row() -> dict[str, Any]:
    return {
        "key": "",
        "name": "",
        "measures": "",
        "points": [""] * POINTS,
        "weight": "",
        "source": PERSON,
        "thresholds": "",
        "remove": False,
        "new": True,
    }


def _key_of(name: str, taken: set[str]) -> str:
    """A new criterion's key from its name: ASCII letters and digits joined by '-'."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:48] or "criterion"
    key, n = base, 2
    while key in taken:
        key, n = f"{base}-{n}", n + 1
    return key


def model_data(post: Any) -> tuple[dict[str, Any], list[dict[str, Any]], list[int]]:
    """The new-version form read back: the body for `model_version_create` (the rows kept, in
    order; a blank new row ignored), the rows as typed, and for each criterion sent the index
    of the form row it came from (a refusal of `criteria[i]` is about row `origins[i]`)."""
    count = min(len(post.getlist("row")), 40)
    rows, criteria, origins = [], [], []
    taken = {post.get(f"c{i}-key", "") for i in range(count)}
    for i in range(count):
        row = {
            "key": post.get(f"c{i}-key", ""),
            "name": post.get(f"c{i}-name", ""),
            "measures": post.get(f"c{i}-measures", ""),
            "points": [post.get(f"c{i}-point{n}", "") for n in range(1, POINTS + 1)],
            "weight": post.get(f"c{i}-weight", ""),
            "source": post.get(f"c{i}-source", PERSON),
            "thresholds": post.get(f"c{i}-thresholds", ""),
            "remove": bool(post.get(f"c{i}-remove")),
            "new": bool(post.get(f"c{i}-new")),
        }
        rows.append(row)
        blank = not (
            row["name"].strip() or row["weight"].strip() or any(p.strip() for p in row["points"])
        )
        if row["remove"] or (row["new"] and blank):
            continue
        key = row["key"] if not row["new"] else _key_of(row["name"], taken)
        taken.add(key)
        thresholds: Any = None
        if row["source"] != PERSON and row["thresholds"].strip():
            thresholds = [t.strip() for t in row["thresholds"].split(",")]
        origins.append(i)
        criteria.append(
            {
                "key": key,
                "name": row["name"],
                "measures": row["measures"],
                "points": row["points"],
                "weight": row["weight"],
                "source": row["source"],
                "thresholds": thresholds,
            }
        )
    return {"why": post.get("why", ""), "criteria": criteria}, rows, origins


def _model_context(**extra: Any) -> dict[str, Any]:
    versions, criteria = selectors.versions_with_criteria()
    ordered = sorted(versions.values(), key=lambda v: -v.number)
    current = ordered[0] if ordered else None
    in_force = criteria.get(current.pk, []) if current else []
    lines = [
        {
            "c": c,
            "points": list(enumerate(c.points or [], 1)),
            "label": CATALOGUE[c.source].label if c.source in CATALOGUE else "",
            "origin": ORIGINS.get(c.source, ""),
            "scale": scale_words(c.source, c.thresholds) if c.source in CATALOGUE else "",
        }
        for c in in_force
    ]
    rows = extra.pop("rows", None)
    if rows is None:
        rows = [_row_from(c) for c in in_force] + [_blank_row() for _ in range(NEW_ROWS)]
    return {
        "current": current,
        "lines": lines,
        "versions": [
            {
                "v": v,
                "criteria": criteria.get(v.pk, []),
                "weights": sum(c.weight for c in criteria.get(v.pk, [])),
            }
            for v in ordered
        ],
        "rows": rows,
        "sources": [(PERSON, "A person scores it (with a reason)")]
        + [(s.key, f"Data: {s.label}") for s in CATALOGUE.values()],
        "people": resolve([v.created_by_account_id for v in ordered]),
        "section": "investment",
        **extra,
    }


@page("GET")
def model_page(request: HtmxHttpRequest) -> HttpResponse:
    """The model in force, its versions, and the form for a new version."""
    governor(request)
    return render_htmx(request, "investment/model.html", _model_context())


def _model_errors(
    exc: ValidationFailed, rows: list[dict[str, Any]], origins: list[int]
) -> list[str]:
    """The refusals in words, each naming the criterion it is about: the form row the sent
    criterion came from (`model_data`'s origins), by its name, else its place on the form."""
    found = []
    for name, ms in (exc.fields or {}).items():
        where = ""
        match = re.match(r"criteria\[(\d+)\]\.?(\w*)", name)
        if match:
            index, field = int(match.group(1)), match.group(2)
            origin = origins[index] if index < len(origins) else None
            row = rows[origin] if origin is not None else None
            place = origin + 1 if origin is not None else index + 1
            label = (row["name"].strip() if row else "") or f"criterion {place}"
            where = f"{label}{': ' + field if field else ''}: "
        elif name == "why":
            where = "Why: "
        elif name == "criteria":
            where = "Criteria: "
        found += [f"{where}{m}" for m in ms]
    return found or [exc.message]


@page("POST")
def model_version_create(request: HtmxHttpRequest) -> HttpResponse:
    """A new version of the model (`services.model_version_create`): the criteria as edited
    and why. Scores given under older versions are never rewritten."""
    user = governor(request)
    data, rows, origins = model_data(request.POST)
    try:
        version = services.model_version_create(user=user, data=data, request=request)
    except (ValidationFailed, Conflict) as exc:
        if isinstance(exc, ValidationFailed):
            words = _model_errors(exc, rows, origins)
        else:
            words = [exc.message]
        context = _model_context(rows=rows, why=data["why"], model_errors=words)
        return render_htmx(request, "investment/model.html", context, status=exc.status)
    messages.success(
        request,
        f"Version {version.number} of the scoring model is in force. Scores given under "
        "earlier versions keep their meaning; proposals say when they were scored under one.",
    )
    return redirect("investment:model")


# --- the portfolio decision log --------------------------------------------------------------


@page("GET")
def decisions_page(request: HtmxHttpRequest) -> HttpResponse:
    """The portfolio decision log: the board's made choices, newest first, read-only."""
    governor(request)
    decisions = list(PortfolioDecision.objects.all())
    viewable = {p.key for p in selectors.visible_projects(request)}
    entries = []
    for d in decisions:
        shown, hidden = selectors.decision_proposals(d.proposals or [], viewable)
        entries.append(
            {
                "d": d,
                "minutes": d.minutes_ref or {},
                "scenario_url": reverse("investment:scenario", args=[d.scenario_id]),
                "shown": shown,
                "hidden": hidden,
            }
        )
    return render_htmx(
        request,
        "investment/decisions.html",
        {
            "entries": entries,
            "people": resolve([d.made_by_account_id for d in decisions]),
            "scenarios_url": reverse("investment:scenarios"),
            "section": "investment",
        },
    )


urlpatterns = [
    path("", proposals_index, name="proposals"),
    path("proposals/<str:key>/", proposal_page, name="proposal"),
    path("proposals/<str:key>/score/", proposal_score, name="proposal-score"),
    path("model/", model_page, name="model"),
    path("model/versions/", model_version_create, name="model-version-create"),
    path("decisions/", decisions_page, name="decisions"),
]
