"""The scenario pages (HTML), for the governance group and site administrators only (everyone
else, a project's lead and sponsor included, gets 404): the scenarios with a create form; one
scenario's ranked rows with the cut-line where the budget runs out, each row's fit per year,
the totals above and below the line, the cost per year against the budget as a picture and a
table, what moving one project across the line does (`?move=KEY`), and its edit, copy, delete
and the board's choice (with the minutes, after a confirmation); and two or three scenarios
side by side. Reads go through `investment.selectors`, every write through
`investment.services`; a refusal shows on the page in words, keeping what was typed."""

from __future__ import annotations

from decimal import Decimal
from html import escape
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.template.defaultfilters import urlencode
from django.urls import include, path, reverse
from django.utils.safestring import SafeString, mark_safe

from governance import charts, labels, specs
from governance.errors import Conflict, NotFound, Stale, ValidationFailed
from governance.http import form_revision, page
from governance.models import Project
from governance.templatetags.gov import money
from investment import selectors, services
from investment.models import PortfolioDecision, Scenario
from investment.specs import ChoiceSpec
from investment.views import governor

YEAR_ROWS = 5  # the budget rows a form offers (filled ones kept, then blank ones up to this)
ZERO = Decimal(0)
STALE = (
    "This scenario was changed since this form was opened (by someone else or in another tab). "
    "It is shown below as it is now: make your changes again and save."
)


def _scenario(scenario_id: Any) -> Scenario:
    try:
        return services.scenario_get(str(scenario_id))
    except NotFound:
        raise NotFound() from None


# --- the scenario form (create and edit) -----------------------------------------------------


def form_data(post: QueryDict) -> tuple[dict[str, Any], dict[str, Any]]:
    """The form read back: the body for `scenario_create`/`scenario_update`, and what was
    typed (to show again on a refusal)."""
    mode = "total" if post.get("budgetMode") == "total" else "year"
    years = [
        (post.get(f"year-{i}", "").strip(), post.get(f"amount-{i}", "").strip())
        for i in range(YEAR_ROWS)
    ]
    total = post.get("budgetTotal", "")
    typed: dict[str, Any] = {
        "name": post.get("name", ""),
        "notes": post.get("notes", ""),
        "budgetMode": mode,
        "years": years,
        "budgetTotal": total,
        "selection": post.getlist("selection"),
        "mustHaves": post.getlist("mustHaves"),
    }
    by_year: dict[str, Any] = {}
    for year, amount in years:
        if year or amount:
            by_year[year] = amount or None
    data: dict[str, Any] = {
        "name": typed["name"],
        "notes": typed["notes"],
        "budgetByYear": by_year if mode == "year" else {},
        "budgetTotal": (total.strip() or None) if mode == "total" else None,
        "selection": typed["selection"],
        "mustHaves": typed["mustHaves"],
    }
    return data, typed


# The board's minutes, named as the choice form labels them (refusals say these words); the
# other fields keep the site's words for them (`labels.field_label`).
CHOICE_LABELS = {
    "minutesRef": "Minutes of the board's meeting",
    "minutesRef.title": "Minutes of the board's meeting (title)",
    "minutesRef.url": "Address of the minutes",
    "minutesTitle": "Minutes of the board's meeting (title)",
    "minutesUrl": "Address of the minutes",
}


def choice_words(errors: dict[str, list[str]]) -> dict[str, list[str]]:
    """The choice's refusals keyed by the field and, for the page, said with its label."""
    return {
        field: [
            f"{CHOICE_LABELS.get(field) or labels.field_label(field)}: {m}" if field else m
            for m in ms
        ]
        for field, ms in errors.items()
    }


def _amount_text(value: Any) -> str:
    """An amount as a person typed it: 1200000, 1200000.5 (never 1200000.0)."""
    return f"{Decimal(str(value)).normalize():f}"


def typed_of(scenario: Scenario) -> dict[str, Any]:
    """The form's values from a stored scenario."""
    years = [(y, _amount_text(v)) for y, v in sorted((scenario.budget_by_year or {}).items())]
    return {
        "name": scenario.name,
        "notes": scenario.notes,
        "budgetMode": "total" if scenario.budget_total is not None else "year",
        "years": years,
        "budgetTotal": "" if scenario.budget_total is None else _amount_text(scenario.budget_total),
        "selection": list(scenario.selection or []),
        "mustHaves": list(scenario.must_haves or []),
    }


def unseen_keys(scenario: Scenario, visible: list[Project]) -> tuple[list[str], list[str]]:
    """The scenario's stored selection and must-haves the editor cannot see: the form draws
    no box for them, so they are kept as they are (`keep_unseen`)."""
    seen = {p.key for p in visible}
    return (
        [k for k in scenario.selection or [] if k not in seen],
        [k for k in scenario.must_haves or [] if k not in seen],
    )


def keep_unseen(data: dict[str, Any], unseen: tuple[list[str], list[str]]) -> dict[str, Any]:
    """The body with the stored keys the editor cannot see put back: saving never drops a
    project only because its editor cannot see it (a must-have stays in the selection)."""
    selection, must = unseen
    chosen = list(data["selection"]) + [k for k in selection if k not in data["selection"]]
    musts = list(data["mustHaves"]) + [k for k in must if k not in data["mustHaves"]]
    if chosen:
        chosen += [k for k in must if k not in chosen]
    return {**data, "selection": chosen, "mustHaves": musts}


def form_context(
    request: HttpRequest,
    typed: dict[str, Any],
    errors: dict[str, list[str]],
    visible: list[Project] | None = None,
    unseen: tuple[list[str], list[str]] = ([], []),
) -> dict[str, Any]:
    """The form's rows: the budget years (filled, then blank) and the projects to select
    (the proposals first, then the other projects, each with its approval state), with the
    refusals by field; and how many of the scenario's projects the editor cannot see (they
    stay as they are)."""
    years = [y for y in typed["years"] if y[0] or y[1]]
    years += [("", "")] * max(YEAR_ROWS - len(years), 0)
    visible = selectors.visible_projects(request) if visible is None else visible
    proposals = {p.pk for p in selectors.proposal_projects(visible)}
    selected, must = set(typed["selection"]), set(typed["mustHaves"])
    projects = sorted(visible, key=lambda p: (p.pk not in proposals, p.key))
    general = [
        f"{specs_label(name)}: {word}"
        for name, words in errors.items()
        for word in words
        if name.split(".")[0].split("[")[0] not in ("name", "notes", "budgetTotal")
    ]
    return {
        "form": typed,
        "year_rows": [
            {"index": i, "year": y, "amount": a} for i, (y, a) in enumerate(years[:YEAR_ROWS])
        ],
        "choices": [
            {
                "key": p.key,
                "name": p.name,
                "proposal": p.pk in proposals,
                "approval": p.approval_status,
                "selected": p.key in selected,
                "must": p.key in must,
            }
            for p in projects
        ],
        "errors": errors,
        "general_errors": general,
        "unseen": len({*unseen[0], *unseen[1]}),
    }


LABELS = {
    "budgetByYear": "Budget per year",
    "budgetTotal": "Budget in total",
    "selection": "Selection",
    "mustHaves": "Must-haves",
    "name": "Name",
    "notes": "Notes",
    "": "The scenario",
}


def specs_label(name: str) -> str:
    """A refusal's field in words: "budgetByYear.9999" -> "Budget per year (9999)"."""
    head, _, rest = name.partition(".")
    base, _, index = head.partition("[")
    label = LABELS.get(base) or CHOICE_LABELS.get(base) or labels.field_label(base)
    number = index.rstrip("]")
    where = rest or (f"item {int(number) + 1}" if number.isascii() and number.isdigit() else "")
    return f"{label} ({where})" if where else label


# --- the scenarios -------------------------------------------------------------------------


def _index(
    request: HttpRequest, typed: dict[str, Any], errors: dict[str, list[str]], status: int = 200
) -> HttpResponse:
    chosen = set(PortfolioDecision.objects.values_list("scenario_id", flat=True))
    scenarios = [
        {
            "scenario": s,
            "chosen": s.pk in chosen,
            "count": len(s.selection or []),
            "budget": budget_words(s),
        }
        for s in Scenario.objects.order_by("name", "created_at")
    ]
    context = {
        "scenarios": scenarios,
        "section": "investment",
        **form_context(request, typed, errors),
    }
    return render(request, "investment/scenarios.html", context, status=status)


def budget_words(scenario: Scenario) -> str:
    if scenario.budget_total is not None:
        return f"{charts.full_money(scenario.budget_total)} in total"
    years = sorted((scenario.budget_by_year or {}).items())
    return "; ".join(f"{y}: {charts.full_money(Decimal(str(v)))}" for y, v in years) or "—"


BLANK: dict[str, Any] = {
    "name": "",
    "notes": "",
    "budgetMode": "year",
    "years": [],
    "budgetTotal": "",
    "selection": [],
    "mustHaves": [],
}


@page("GET", "POST")
def scenarios(request: HttpRequest) -> HttpResponse:
    """The scenarios (name, budget, how many projects, chosen or not, last changed) and the
    form that creates one (`services.scenario_create`)."""
    user = governor(request)
    if request.method != "POST":
        return _index(request, BLANK, {})
    data, typed = form_data(request.POST)
    try:
        scenario = services.scenario_create(user=user, data=data, request=request)
    except ValidationFailed as exc:
        return _index(request, typed, exc.by_field(), exc.status)
    messages.success(request, f"Scenario {scenario.name} created.")
    return redirect("investment:scenario", scenario.pk)


# --- one scenario ----------------------------------------------------------------------------


def _below_totals(rows: list[selectors.Row]) -> dict[str, Any]:
    benefits = [r.benefit for r in rows if r.benefit is not None]
    scores = [r.proposal.total for r in rows if r.proposal.total is not None]
    return {
        "projects": len(rows),
        "cost": sum((r.cost for r in rows), ZERO),
        "benefit": sum(benefits, ZERO),
        "score": sum(scores, ZERO),
    }


def _row_view(row: selectors.Row, years: list[str], budget: selectors.Budget) -> dict[str, Any]:
    """A row with its cost and its fit for every year, in words: the cost the cut-line walked
    (`Row.walked_by_year`, the unphased cost in the first budget year) and its fit."""
    cells = []
    for year in years:
        cost = row.walked_by_year.get(year, ZERO)
        if not cost:
            fit = "no cost"
        elif year not in budget.by_year:
            fit = "no budget"
        elif row.fits_by_year.get(year, True):
            fit = "fits"
        else:
            fit = "does not fit"
        cells.append({"year": year, "cost": cost, "fit": fit, "fits": fit != "does not fit"})
    return {"row": row, "years": cells}


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _money(value: Any) -> str:
    return _e(money(value))


NONE = '<span class="muted">—</span>'


def row_html(item: dict[str, Any]) -> SafeString:
    """A scenario row (`_row_view`) as the table's HTML, built in Python: five hundred rows
    through the template engine cost more than drawing the cut-line does. The markup is the
    template's own (`tests/investment/test_costs.py` renders the template's row
    beside it and compares the two); every value is escaped here."""
    r: selectors.Row = item["row"]
    p = r.proposal
    badges = ' <span class="badge">must-have</span>' if r.must_have else ""
    if p.state not in selectors.PROPOSAL_STATES:
        badges += ' <span class="badge">running</span>'
    total = "not scored" if p.total is None else _e(p.total)
    if p.total is not None and not p.complete:
        total += ' <span class="muted">(incomplete)</span>'
    if p.older:
        total += ' <span class="muted">(older model)</span>'
    cells = []
    for c in item["years"]:
        if c["fit"] == "no cost":
            inner = '<span class="muted">—<span class="visually-hidden"> no cost</span></span>'
        else:
            kind = "muted" if c["fits"] else "field-error"
            inner = f'{_money(c["cost"])}<br><span class="{kind}">{_e(c["fit"])}</span>'
        cells.append(f'<td class="num" data-label="{_e(c["year"])}">{inner}</td>')
    over = '<br><span class="field-error">over the total</span>' if r.fits_total is False else ""
    key = _e(r.key)
    move = "Move below" if r.above else "Move above"
    place = "above" if r.above else "below"
    return mark_safe(
        f'<tr class="{place}-line">\n'
        f'      <th scope="row"><span class="wrap">{key} {_e(p.project.name)}</span>{badges}</th>\n'
        f'      <td class="num" data-label="Rank">{"—" if p.rank is None else _e(p.rank)}</td>\n'
        f'      <td class="num" data-label="Score">{total}</td>\n'
        f"      {''.join(cells)}\n"
        f'      <td class="num" data-label="Not phased">'
        f"{_money(r.unphased) if r.unphased else NONE}</td>\n"
        f'      <td class="num" data-label="Cost">{_money(r.cost)}{over}</td>\n'
        f'      <td class="num" data-label="Benefit">{_money(r.benefit)}</td>\n'
        f'      <td data-label="Place"><span class="badge place place-{place}">'
        f'{place.capitalize()}<span class="visually-hidden"> the line</span></span></td>\n'
        f'      <td class="move" data-label="What if"><a class="button small secondary" '
        f'href="?move={_e(urlencode(r.key))}#move">'
        f'{move}<span class="visually-hidden">: {key}</span></a></td>\n'
        "    </tr>"
    )


def cost_chart(evaluation: selectors.Evaluation, totals: dict[str, Any]) -> charts.Chart:
    """The cost above the line per year against the budget, as grouped bars (with its table)."""
    years = evaluation.years()
    by_year = totals["costByYear"]
    budget = evaluation.budget.by_year
    series = [
        charts.Series(
            "Budget", "series-baseline", [float(budget[y]) if y in budget else None for y in years]
        ),
        charts.Series(
            "Cost above the line",
            "series-actual",
            [float(by_year.get(y) or 0) for y in years],
        ),
    ]
    return charts.line_chart(
        years,
        series,
        chart_id="scenario-cost",
        title="Cost per year above the line against the budget",
        bars=True,
        label_column="Year",
    )


def _decision_link(decision: PortfolioDecision | None) -> str:
    if decision is None:
        return ""
    return reverse("investment:decisions") + f"#decision-{decision.pk}"


def _scenario_page(
    request: HttpRequest, scenario: Scenario, status: int = 200, **extra: Any
) -> HttpResponse:
    board = selectors.board_for(selectors.visible_projects(request), [scenario])
    rows = selectors.scenario_rows(board, selectors.all_scored(board), scenario)
    budget = selectors.Budget.of(scenario)
    evaluation = selectors.cut_line(rows, budget)
    totals = evaluation.totals()
    years = evaluation.years()
    decision = PortfolioDecision.objects.filter(scenario=scenario).first()
    move_key = extra.pop("move_key", None)
    moved = None
    if move_key:
        moved = selectors.move_across(rows, budget, move_key) or None
        if moved is None:
            status = 404
            extra["move_error"] = f"{move_key} is not in this scenario: nothing to move."
        else:
            moved["name"] = next(r.proposal.project.name for r in rows if r.key == move_key)
    chart = cost_chart(evaluation, totals)
    context = {
        "scenario": scenario,
        "decision": decision,
        "decision_href": _decision_link(decision),
        "export_href": reverse("investment:scenario-export", args=[scenario.pk]),
        "years": years,
        "rows": [row_html(_row_view(r, years, budget)) for r in evaluation.rows],
        "cut_after": evaluation.cut_after,
        "count": len(evaluation.rows),
        "totals": totals,
        "below": _below_totals([r for r in evaluation.rows if not r.above]),
        "first_below": next((r for r in evaluation.rows if not r.above), None),
        "over_years": totals["overBudgetYears"],
        "chart": chart,
        "moved": moved,
        "chosen_rows": selectors.prioritised(evaluation),
        "copy_name": f"Copy of {scenario.name}",
        "section": "investment",
        "choice": {"minutesTitle": "", "minutesUrl": "", "madeOn": "", "rationale": ""},
        **extra,
    }
    return render(request, "investment/scenario.html", context, status=status)


@page("GET")
def scenario(request: HttpRequest, scenario_id: Any) -> HttpResponse:
    """The scenario's ranked rows and cut-line; `?move=KEY` shows what moving KEY across the
    line does (`selectors.move_across`)."""
    governor(request)
    found = _scenario(scenario_id)
    move = request.GET.get("move", "")
    move_key = move.strip().upper()[:64] if move.strip() else None
    return _scenario_page(request, found, move_key=move_key)


def _edit(
    request: HttpRequest,
    found: Scenario,
    typed: dict[str, Any],
    errors: dict[str, list[str]],
    status: int = 200,
) -> HttpResponse:
    visible = selectors.visible_projects(request)
    context = {
        "scenario": found,
        "revision": found.revision,
        "section": "investment",
        **form_context(request, typed, errors, visible, unseen_keys(found, visible)),
    }
    return render(request, "investment/scenario_edit.html", context, status=status)


@page("GET", "POST")
def scenario_edit(request: HttpRequest, scenario_id: Any) -> HttpResponse:
    """Change the scenario's name, budget, selection and must-haves (`scenario_update`, with
    the revision the form was opened at); refused once the board chose it."""
    user = governor(request)
    found = _scenario(scenario_id)
    if request.method != "POST":
        return _edit(request, found, typed_of(found), {})
    data, typed = form_data(request.POST)
    unseen = unseen_keys(found, selectors.visible_projects(request))
    try:
        services.scenario_update(
            user=user,
            scenario_id=found.pk,
            data=keep_unseen(data, unseen),
            expected_revision=form_revision(request.POST),
            request=request,
        )
    except Stale:
        found = _scenario(found.pk)
        return _edit(request, found, typed_of(found), {"": [STALE]}, 412)
    except (ValidationFailed, Conflict) as exc:
        return _edit(request, found, typed, exc.by_field(), exc.status)
    messages.success(request, "Scenario saved.")
    return redirect("investment:scenario", found.pk)


@page("POST")
def scenario_copy(request: HttpRequest, scenario_id: Any) -> HttpResponse:
    """A copy of the scenario, named as typed (`scenario_copy`); a chosen one is copied too."""
    user = governor(request)
    found = _scenario(scenario_id)
    name = request.POST.get("name", "")
    try:
        copy = services.scenario_copy(
            user=user, scenario_id=found.pk, data={"name": name}, request=request
        )
    except ValidationFailed as exc:
        return _scenario_page(
            request, found, exc.status, copy_errors=exc.by_field(), copy_name=name, open_copy=True
        )
    messages.success(request, f"Scenario copied as {copy.name}: change it here.")
    return redirect("investment:scenario", copy.pk)


@page("POST")
def scenario_delete(request: HttpRequest, scenario_id: Any) -> HttpResponse:
    """Delete the scenario (`scenario_delete`); refused in words once the board chose it."""
    user = governor(request)
    found = _scenario(scenario_id)
    try:
        services.scenario_delete(
            user=user,
            scenario_id=found.pk,
            expected_revision=form_revision(request.POST),
            request=request,
        )
    except Stale:
        return _scenario_page(request, _scenario(found.pk), 412, page_errors=[STALE])
    except Conflict as exc:
        return _scenario_page(request, found, exc.status, page_errors=[exc.message])
    messages.success(request, f"Scenario {found.name} deleted.")
    return redirect("investment:scenarios")


def choice_data(post: QueryDict) -> tuple[dict[str, Any], dict[str, str]]:
    typed = {
        name: post.get(name, "")
        for name in ("minutesTitle", "minutesUrl", "madeOn", "decision", "rationale")
    }
    minutes: dict[str, Any] = {"title": typed["minutesTitle"]}
    if typed["minutesUrl"].strip():
        minutes["url"] = typed["minutesUrl"].strip()
    data = {
        "minutesRef": minutes,
        "madeOn": typed["madeOn"].strip() or None,
        "decision": typed["decision"].strip() or None,
        "rationale": typed["rationale"] or None,
    }
    return data, typed


@page("POST")
def scenario_choose(request: HttpRequest, scenario_id: Any) -> HttpResponse:
    """The board's choice, in two steps: the form (minutes required) shows what will be
    prioritised and asks to confirm; the confirmation records it (`scenario_choose`)."""
    user = governor(request)
    found = _scenario(scenario_id)
    data, typed = choice_data(request.POST)
    _, errors = specs.validate(ChoiceSpec, data, creating=True)
    if errors:
        return _scenario_page(
            request,
            found,
            422,
            choice=typed,
            choice_errors=choice_words(dict(errors)),
            open_choice=True,
        )
    if request.POST.get("confirmed") != "yes":
        return _scenario_page(request, found, choice=typed, confirm=True, open_choice=True)
    try:
        decision = services.scenario_choose(
            user=user,
            scenario_id=found.pk,
            data=data,
            projects=selectors.visible_projects(request),
            expected_revision=form_revision(request.POST),
            expected_keys=request.POST.getlist("confirmedKeys"),
            request=request,
        )
    except Stale:
        return _scenario_page(
            request, _scenario(found.pk), 412, page_errors=[STALE], choice=typed, open_choice=True
        )
    except Conflict as exc:  # chosen already, or what it prioritises changed: confirm anew
        return _scenario_page(
            request,
            _scenario(found.pk),
            exc.status,
            page_errors=[exc.message],
            choice=typed,
            confirm=True,
            open_choice=True,
        )
    except ValidationFailed as exc:
        return _scenario_page(
            request,
            found,
            exc.status,
            choice=typed,
            choice_errors=choice_words(exc.by_field()),
            open_choice=True,
        )
    messages.success(
        request,
        f"The board's choice is recorded: {len(decision.proposals)} proposal"
        f"{'' if len(decision.proposals) == 1 else 's'} prioritised in {found.name}.",
    )
    return redirect("investment:scenario", found.pk)


# --- the comparison --------------------------------------------------------------------------


@page("GET")
def compare(request: HttpRequest) -> HttpResponse:
    """Two or three scenarios side by side (`selectors.compare`); fewer or more refused."""
    governor(request)
    wanted = list(dict.fromkeys(i.strip() for i in request.GET.getlist("ids") if i.strip()))
    everyone = list(Scenario.objects.order_by("name", "created_at"))
    context: dict[str, Any] = {"all": everyone, "wanted": wanted, "section": "investment"}
    if len(wanted) == 1 and request.GET.get("from"):
        # "Compare with others" from a scenario's page: this one ticked, the others to pick.
        context["hint"] = "Tick one or two more scenarios to compare with this one."
        return render(request, "investment/compare.html", context)
    if not wanted:
        return render(request, "investment/compare.html", context)
    if not 2 <= len(wanted) <= 3:
        context["error"] = (
            f"Choose two or three scenarios to compare (this asks for {len(wanted)})."
        )
        return render(request, "investment/compare.html", context, status=422)
    found = {str(s.pk): s for s in everyone}
    missing = [i for i in wanted if i not in found]
    if missing:
        context["error"] = "One of the scenarios asked for does not exist (any more)."
        return render(request, "investment/compare.html", context, status=404)
    chosen = [found[i] for i in wanted]
    board = selectors.board_for(selectors.visible_projects(request), chosen)
    compared = selectors.compare(board, chosen)
    columns = []
    for s, answer in zip(chosen, compared["scenarios"], strict=True):
        above = [r for r in answer["rows"] if r["aboveLine"]]
        columns.append({"scenario": s, "answer": answer, "above": above})
    context.update(
        columns=columns,
        projects=compared["projects"],
        differing=sum(1 for p in compared["projects"] if p["differs"]),
    )
    return render(request, "investment/compare.html", context)


urlpatterns = [
    path("scenarios/", scenarios, name="scenarios"),
    path("scenarios/compare/", compare, name="compare"),
    path(
        "scenarios/<uuid:scenario_id>/",
        include(
            [
                path("", scenario, name="scenario"),
                path("edit/", scenario_edit, name="scenario-edit"),
                path("copy/", scenario_copy, name="scenario-copy"),
                path("delete/", scenario_delete, name="scenario-delete"),
                path("choose/", scenario_choose, name="scenario-choose"),
            ]
        ),
    ),
]
