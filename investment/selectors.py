"""What investment decisions read, as pure functions over rows loaded in a fixed number of
queries (`load`): the proposals and their scores under the model version they came from, the
total and the rank, each project's cost per year from its budget phasing, the cut-line of a
scenario, what moving one proposal across the line does, and the comparison of scenarios.

The rules (docs/product.md, "Investment decisions"):
- a proposal is a project whose business case is Exploring or Draft;
- its scores count under the newest model version it holds a current score in (the version in
  force when it holds none): scored under an older version, it says so;
- total = sum(weight x points) / sum(weight) over the criteria with points (a data criterion's
  points are read from its figure now; a person's are the current score), two decimals;
  complete when every criterion has points; rank 1 is the highest total (ties by key);
- cost per year: each work package's forecast (else its budget) spread by its budget phasing
  by month (`registers.pictures.profile`: the phasing, else the planned months), summed by
  calendar year; money without phasing or dates (or, with no package money, the financial
  case's total cost) is unphased and counts in the first budget year;
- the cut-line: must-haves first, then by total; each proposal is above the line while it fits
  every budgeted year it spends in (and the total); the first that does not draws the line and
  every one after stays below it, each showing per year whether it would fit in what is left."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, NamedTuple, cast

from django.db.models import F, Q

from charter import finance
from charter.models import BusinessCase
from governance import gatelist, permissions
from governance.cleaning import decimal_to_json
from governance.models import Project
from governance.sql import AnyOf
from investment import criteria as catalogue
from investment.models import PERSON, Criterion, ModelVersion, Scenario, Score
from registers.models import WorkPackage
from registers.pictures import profile
from status import health

PROPOSAL_STATES = ("Exploring", "Draft")
# What the rules read of a business case (its state, the financial case and the adoption
# inputs): its other members, a dozen JSON documents, are left undecoded.
CASE_FIELDS = (
    "project_id",
    "approval_status",
    "financial_case",
    "adoption_affected",
    "adoption_kpi",
    "change_saturation",
    "adoption_owner",
)
CENTS = Decimal("0.01")
ZERO = Decimal(0)


# --- loading (a fixed number of queries) -----------------------------------------------------


@dataclass
class Board:
    """Everything the rules read, loaded once: the model's versions and their criteria, the
    projects with their business cases, the current scores, the data criteria's inputs, the
    cost per year and the benefit of each project."""

    versions: dict[int, ModelVersion]  # by pk
    criteria: dict[int, list[Criterion]]  # by version pk, in order
    current: ModelVersion | None
    projects: dict[int, Project]
    cases: dict[int, BusinessCase]
    scores: dict[int, dict[int, Score]]  # project pk -> criterion pk -> current score
    inputs: dict[int, catalogue.Inputs]
    costs: dict[int, tuple[dict[str, Decimal], Decimal]]  # by year, unphased
    benefits: dict[int, Decimal | None]

    def by_key(self) -> dict[str, Project]:
        return {p.key: p for p in self.projects.values()}


def versions_with_criteria() -> tuple[dict[int, ModelVersion], dict[int, list[Criterion]]]:
    versions = {v.pk: v for v in ModelVersion.objects.all()}
    found: dict[int, list[Criterion]] = {pk: [] for pk in versions}
    for criterion in Criterion.objects.order_by("version_id", "position", "pk"):
        found.setdefault(criterion.version_id, []).append(criterion)
    return versions, found


def current_version() -> ModelVersion | None:
    return ModelVersion.objects.order_by("-number").first()


def is_proposal(case: BusinessCase | None) -> bool:
    return case is not None and case.approval_status in PROPOSAL_STATES


def proposal_condition(case: str = "") -> Q:
    """`is_proposal` as SQL, over business case rows reached through `case` (a prefix such as
    "business_case__" from a project)."""
    return Q(**{f"{case}approval_status__in": PROPOSAL_STATES})


def proposal_projects(projects: Iterable[Project]) -> list[Project]:
    """Of `projects`, the proposals (one query)."""
    listed = {p.pk: p for p in projects}
    ids = set(
        BusinessCase.objects.filter(
            AnyOf(F("project_id"), list(listed)), proposal_condition()
        ).values_list("project_id", flat=True)
    )
    return [p for pk, p in listed.items() if pk in ids]


class _Money(NamedTuple):
    """What `registers.pictures.profile` reads of a package (or of alike packages summed),
    with the money that falls by it: the forecast, else the budget."""

    budget_phasing: Any
    planned_start_date: dt.date | None
    planned_end_date: dt.date | None
    amount: Decimal | None


def money_rows(project_ids: Sequence[int]) -> dict[int, list[_Money]]:
    """Each project's packages' money and months in one query of plain values (no model
    instances, the phasing decoded only where there is one): a package with a phasing as
    itself; the others summed by project and by their planned months (the first day of the
    start's and of the end's month: a profile depends on the months alone, as
    `registers.pictures.budget_rows` sums them), each adding the money that counts here, its
    forecast, else its budget (exact sums: `costs_of` then spreads each sum once)."""
    if not project_ids:
        return {}
    packages = (
        WorkPackage.objects.filter(AnyOf(F("project_id"), list(project_ids)))
        .order_by()
        .values_list(
            "project_id",
            "budget_phasing",
            "planned_start_date",
            "planned_end_date",
            "budget",
            "budget_forecast",
        )
    )
    found: dict[int, list[_Money]] = {}
    sums: dict[tuple[int, dt.date | None, dt.date | None], Decimal] = {}
    months: dict[dt.date | None, dt.date | None] = {None: None}  # a day's month's first day
    for pk, phasing, first, last, budget, forecast in packages:
        amount = forecast if forecast is not None else budget
        if phasing:
            found.setdefault(pk, []).append(_Money(phasing, first, last, amount))
        elif amount is not None:
            for day in (first, last):
                if day not in months:
                    months[day] = _first_of(day)
            key = (pk, months[first], months[last])
            sums[key] = sums.get(key, ZERO) + amount
    for (pk, first, last), amount in sums.items():
        found.setdefault(pk, []).append(_Money(None, first, last, amount))
    return found


def _first_of(day: dt.date | None) -> dt.date | None:
    """The first day of `day`'s month (what an unphased package's profile reads)."""
    return None if day is None else day.replace(day=1)


def _by_year(shares: Mapping[str, Decimal]) -> list[tuple[str, Decimal]]:
    """A profile's months as (year, share), in its order."""
    return [(period[:4], share) for period, share in shares.items()]


def costs_of(
    rows: Mapping[int, Sequence[_Money]],
) -> dict[int, tuple[dict[str, Decimal], Decimal]]:
    """Each project's cost per calendar year from its packages' phasing, and what has no
    month to fall in (unphased). Packages without a phasing that share their months share
    their profile (worked out once, as (year, share) pairs month by month)."""
    shared: dict[tuple[Any, Any], list[tuple[str, Decimal]]] = {}
    found: dict[int, tuple[dict[str, Decimal], Decimal]] = {}
    for pk, packages in rows.items():
        years: dict[str, Decimal] = {}
        unphased = ZERO
        for wp in packages:
            amount = wp.amount
            if not amount:
                continue
            if wp.budget_phasing:
                shares = _by_year(profile(cast(Any, wp)))
            else:
                dates = (wp.planned_start_date, wp.planned_end_date)
                if dates not in shared:
                    shared[dates] = _by_year(profile(cast(Any, wp)))
                shares = shared[dates]
            if not shares:
                unphased += amount
            for year, share in shares:
                years[year] = years.get(year, ZERO) + amount * share
        if years or unphased:
            found[pk] = (
                {y: v.quantize(CENTS) for y, v in sorted(years.items())},
                unphased.quantize(CENTS),
            )
    return found


def load(
    projects: Sequence[Project], *, now: dt.datetime | None = None, money: bool = True
) -> Board:
    """The board over `projects`: seven queries or so, whatever their number (the health rows
    missing or expired are derived again by `status.health.rows_for`, as the portfolio's).
    Without `money`, no costs or benefits (no packages read): a board only scored
    (`score_proposal` reads the scores and the data criteria's inputs, never the money), as
    `investment.totals` derives the totals it stores."""
    versions, by_version = versions_with_criteria()
    current = max(versions.values(), key=lambda v: v.number, default=None)
    ids = [p.pk for p in projects]
    cases = (
        {
            c.project_id: c
            for c in BusinessCase.objects.filter(AnyOf(F("project_id"), ids)).only(*CASE_FIELDS)
        }
        if ids
        else {}
    )
    scores: dict[int, dict[int, Score]] = {}
    current_scores = Score.objects.filter(AnyOf(F("project_id"), ids), superseded_by__isnull=True)
    for score in current_scores if ids else []:
        scores.setdefault(score.project_id, {})[score.criterion_id] = score
    # The one figure read of each health row, from its own column (the JSON row undecoded).
    rows = health.columns_for(list(projects), ["top_risk_score"], now=now)
    inputs = {
        p.pk: catalogue.Inputs(
            financial_case=getattr(cases.get(p.pk), "financial_case", None),
            adoption_missing=catalogue.adoption_missing(cases.get(p.pk)),
            top_risk_score=(rows.get(p.pk) or {}).get("top_risk_score"),
        )
        for p in projects
    }
    costs = costs_of(money_rows(ids)) if money else {}
    benefits: dict[int, Decimal | None] = {}
    for p in projects if money else []:
        stored = getattr(cases.get(p.pk), "financial_case", None)
        benefits[p.pk] = finance.total_benefit(stored) if stored else None
        if p.pk not in costs:
            total = finance.total_cost(stored) if stored else None
            if total:
                costs[p.pk] = ({}, total.quantize(CENTS))
    return Board(
        versions=versions,
        criteria=by_version,
        current=current,
        projects={p.pk: p for p in projects},
        cases=cases,
        scores=scores,
        inputs=inputs,
        costs=costs,
        benefits=benefits,
    )


# --- scores, total and rank ------------------------------------------------------------------


@dataclass(frozen=True)
class CriterionPoints:
    criterion: Criterion
    value: int | None
    figure: Decimal | None = None
    score: Score | None = None

    def as_dict(self, *, reasons: bool = True) -> dict[str, Any]:
        c, s = self.criterion, self.score
        return {
            "key": c.key,
            "name": c.name,
            "source": c.source,
            "weight": c.weight,
            "value": self.value,
            "figure": decimal_to_json(self.figure),
            "reason": (s.reason if s else None) if reasons else None,
            "scoredByAccountId": s.created_by_account_id if s else None,
            "scoredAt": s.created_at.isoformat() if s else None,
            "scoreId": s.pk if s else None,
        }


@dataclass(frozen=True)
class Proposal:
    """A project's scores under the version they came from, and its total and rank."""

    project: Project
    state: str | None
    version: ModelVersion | None
    current: ModelVersion | None
    points: tuple[CriterionPoints, ...]
    total: Decimal | None
    complete: bool
    rank: int | None = None

    @property
    def older(self) -> bool:
        return (
            self.version is not None
            and self.current is not None
            and self.version.number < self.current.number
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "projectKey": self.project.key,
            "projectName": self.project.name,
            "approvalStatus": self.state,
            "modelVersion": self.version.number if self.version else None,
            "currentModelVersion": self.current.number if self.current else None,
            "scoredUnderOlderVersion": self.older,
            "total": decimal_to_json(self.total),
            "complete": self.complete,
            "rank": self.rank,
            "criteria": [p.as_dict() for p in self.points],
        }


def proposal_version(board: Board, pk: int) -> ModelVersion | None:
    """The newest version the project holds a current score in; the one in force when none."""
    held = {s.version_id for s in board.scores.get(pk, {}).values()}
    if not held:
        return board.current
    return max((board.versions[v] for v in held), key=lambda v: v.number)


def total_of(points: Iterable[CriterionPoints]) -> tuple[Decimal | None, bool]:
    counted = [(p.criterion.weight, p.value) for p in points if p.value is not None]
    complete = all(p.value is not None for p in points)
    weights = sum(w for w, _ in counted)
    if not weights:
        return None, complete
    total = Decimal(sum(w * v for w, v in counted)) / Decimal(weights)
    return total.quantize(CENTS), complete


def score_proposal(board: Board, pk: int) -> Proposal:
    project = board.projects[pk]
    version = proposal_version(board, pk)
    held = board.scores.get(pk, {})
    found: list[CriterionPoints] = []
    for criterion in board.criteria.get(version.pk, []) if version else []:
        if criterion.source == PERSON:
            score = held.get(criterion.pk)
            found.append(CriterionPoints(criterion, score.value if score else None, score=score))
        else:
            figure, value = catalogue.data_score(
                criterion.source, criterion.thresholds, board.inputs[pk]
            )
            found.append(CriterionPoints(criterion, value, figure=figure))
    total, complete = total_of(found)
    case = board.cases.get(pk)
    return Proposal(
        project=project,
        state=case.approval_status if case else None,
        version=version,
        current=board.current,
        points=tuple(found),
        total=total,
        complete=complete,
    )


def ranks(totals: Mapping[Any, tuple[Decimal | None, str]]) -> dict[Any, int]:
    """The rank of each proposal from its (total, project key), by whatever names it: 1 is the
    highest total, ties by key, the unscored last. The ranked list (`ranked`) and the
    portfolio's columns (over the totals stored, `investment.totals`) both rank by it."""
    order = sorted(totals, key=lambda name: _order(*totals[name]))
    return {name: n for n, name in enumerate(order, 1)}


def _order(total: Decimal | None, key: str) -> tuple[Any, ...]:
    return (total is None, -(total or ZERO), key)


def ranked(board: Board) -> list[Proposal]:
    """Every proposal of the board, highest total first, with its rank (unscored last)."""
    found = {
        pk: score_proposal(board, pk) for pk in board.projects if is_proposal(board.cases.get(pk))
    }
    rank = ranks({pk: (p.total, p.project.key) for pk, p in found.items()})
    return [replace(found[pk], rank=n) for pk, n in sorted(rank.items(), key=lambda r: r[1])]


# --- the cut-line ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    by_year: dict[str, Decimal]
    total: Decimal | None

    @classmethod
    def of(cls, scenario: Scenario) -> Budget:
        return cls(
            {str(y): Decimal(str(v)) for y, v in sorted((scenario.budget_by_year or {}).items())},
            scenario.budget_total,
        )


@dataclass(frozen=True)
class Row:
    proposal: Proposal
    must_have: bool
    cost_by_year: dict[str, Decimal]
    unphased: Decimal
    benefit: Decimal | None
    above: bool = False
    fits_by_year: dict[str, bool] = field(default_factory=dict)
    fits_total: bool | None = None
    # The cost per year the cut-line walked (`cut_line`): the phased cost, with the unphased
    # cost in the first budget year; each year's fit is of this cost.
    walked_by_year: dict[str, Decimal] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return self.proposal.project.key

    @property
    def cost(self) -> Decimal:
        return sum(self.cost_by_year.values(), ZERO) + self.unphased

    def as_dict(self) -> dict[str, Any]:
        p = self.proposal
        return {
            "projectKey": self.key,
            "projectName": p.project.name,
            "approvalStatus": p.state,
            "proposal": p.state in PROPOSAL_STATES,
            "rank": p.rank,
            "total": decimal_to_json(p.total),
            "complete": p.complete,
            "modelVersion": p.version.number if p.version else None,
            "scoredUnderOlderVersion": p.older,
            "mustHave": self.must_have,
            "aboveLine": self.above,
            "costByYear": {y: decimal_to_json(v) for y, v in self.cost_by_year.items()},
            "unphasedCost": decimal_to_json(self.unphased),
            "cost": decimal_to_json(self.cost),
            "benefit": decimal_to_json(self.benefit),
            "fitsByYear": self.fits_by_year,
            "fitsTotal": self.fits_total,
        }


@dataclass(frozen=True)
class Evaluation:
    budget: Budget
    rows: tuple[Row, ...]

    @property
    def above(self) -> list[Row]:
        return [r for r in self.rows if r.above]

    @property
    def cut_after(self) -> int:
        """How many rows stand above the line (the line is drawn after them)."""
        return len(self.above)

    def years(self) -> list[str]:
        """Every budget year and every year a row costs in, in order (the columns of the
        scenario's table and of its export)."""
        return sorted({*self.budget.by_year, *(y for r in self.rows for y in r.cost_by_year)})

    def totals(self) -> dict[str, Any]:
        above = self.above
        years = sorted({*self.budget.by_year, *(y for r in above for y in r.walked_by_year)})
        by_year = {y: sum((r.walked_by_year.get(y, ZERO) for r in above), ZERO) for y in years}
        benefits = [r.benefit for r in above if r.benefit is not None]
        scores = [r.proposal.total for r in above if r.proposal.total is not None]
        return {
            "costByYear": {y: decimal_to_json(v) for y, v in by_year.items()},
            "cost": decimal_to_json(sum((r.cost for r in above), ZERO)),
            "benefit": decimal_to_json(sum(benefits, ZERO)),
            "score": decimal_to_json(sum(scores, ZERO)),
            "projects": len(above),
            "budgetByYear": {y: decimal_to_json(v) for y, v in self.budget.by_year.items()},
            "budgetTotal": decimal_to_json(self.budget.total),
            "overBudgetYears": [
                y for y, b in self.budget.by_year.items() if by_year.get(y, ZERO) > b
            ],
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": [r.as_dict() for r in self.rows],
            "cutAfter": self.cut_after,
            "totals": self.totals(),
        }


def rows_for(
    board: Board, proposals: Mapping[str, Proposal], keys: Sequence[str], must_haves: Iterable[str]
) -> list[Row]:
    """The scenario's rows, must-haves first, then by total (unscored last, by key)."""
    must = set(must_haves)
    rows = []
    for key in keys:
        proposal = proposals.get(key)
        if proposal is None:
            continue
        pk = proposal.project.pk
        years, unphased = board.costs.get(pk, ({}, ZERO))
        rows.append(Row(proposal, key in must, dict(years), unphased, board.benefits.get(pk)))
    rows.sort(key=lambda r: (not r.must_have, *_order(r.proposal.total, r.key)))
    return rows


def cut_line(rows: Sequence[Row], budget: Budget) -> Evaluation:
    """Walk the ordered rows against the budget (the module's rule). Costs in a year without
    a budget are not limited by it; unphased cost counts in the first budget year."""
    first = next(iter(budget.by_year), None)
    spent = dict.fromkeys(budget.by_year, ZERO)
    spent_total = ZERO
    drawn = False
    walked = []
    for row in rows:
        costs = dict(row.cost_by_year)
        if first is not None:
            costs[first] = costs.get(first, ZERO) + row.unphased
        fits = {y: not costs.get(y) or spent[y] + costs[y] <= b for y, b in budget.by_year.items()}
        fits_total = None if budget.total is None else spent_total + row.cost <= budget.total
        above = row.must_have or (not drawn and all(fits.values()) and fits_total is not False)
        if not above:
            drawn = True
        else:
            for y in spent:
                spent[y] += costs.get(y, ZERO)
            spent_total += row.cost
        walked.append(
            replace(
                row, above=above, fits_by_year=fits, fits_total=fits_total, walked_by_year=costs
            )
        )
    return Evaluation(budget, tuple(walked))


def move_across(rows: Sequence[Row], budget: Budget, key: str) -> dict[str, Any]:
    """What moving one project across the line does: one above the line is taken out (the
    line is drawn again without it); one below is put in as a must-have. Answers which
    projects join or leave the funded set and the totals before and after."""
    before = cut_line(rows, budget)
    row = next((r for r in before.rows if r.key == key), None)
    if row is None:
        return {}
    if row.above:
        after = cut_line([r for r in rows if r.key != key], budget)
        direction = "out"
    else:
        after = cut_line(
            sorted(
                [replace(r, must_have=r.must_have or r.key == key) for r in rows],
                key=lambda r: (not r.must_have, *_order(r.proposal.total, r.key)),
            ),
            budget,
        )
        direction = "in"
    was = {r.key for r in before.above}
    now = {r.key for r in after.above}
    totals = before.totals(), after.totals()
    # Before and after name the same years: a year the move empties reads 0, not missing.
    years = sorted({y for t in totals for y in t["costByYear"]})
    for t in totals:
        t["costByYear"] = {y: t["costByYear"].get(y, decimal_to_json(ZERO)) for y in years}
    return {
        "projectKey": key,
        "direction": direction,
        "joins": sorted(now - was - {key}),
        "leaves": sorted(was - now - {key}),
        "before": totals[0],
        "after": totals[1],
    }


def scenario_rows(board: Board, proposals: Mapping[str, Proposal], scenario: Scenario) -> list[Row]:
    """The scenario's selection (empty: every proposal on the board) as ordered rows."""
    keys = list(scenario.selection or []) or [
        p.project.key for p in proposals.values() if p.state in PROPOSAL_STATES
    ]
    return rows_for(board, proposals, keys, scenario.must_haves or [])


def all_scored(board: Board) -> dict[str, Proposal]:
    """Every project of the board scored, proposals with their rank."""
    placed = {p.project.pk: p for p in ranked(board)}
    return {
        board.projects[pk].key: placed.get(pk) or score_proposal(board, pk) for pk in board.projects
    }


def board_for(projects: Sequence[Project], scenarios: Sequence[Scenario]) -> Board:
    """The board a scenario (or a comparison) is drawn on: of `projects`, the proposals and
    those the scenarios select (a running project named in one), and no other."""
    named = {key for scenario in scenarios for key in (scenario.selection or [])}
    proposals = {p.pk for p in proposal_projects(projects)}
    return load([p for p in projects if p.pk in proposals or p.key in named])


def prioritised(evaluation: Evaluation) -> list[Row]:
    """The rows a board's choice of the scenario prioritises: the proposals above its line
    (a running project the scenario names is weighed, never prioritised). The choice records
    these and its confirmation lists these."""
    return [r for r in evaluation.above if r.proposal.state in PROPOSAL_STATES]


def evaluate(board: Board, scenario: Scenario) -> Evaluation:
    return cut_line(scenario_rows(board, all_scored(board), scenario), Budget.of(scenario))


def compare(board: Board, scenarios: Sequence[Scenario]) -> dict[str, Any]:
    """Two or three scenarios side by side: each one's cut-line totals, and for each project
    named by any of them whether it stands above the line in each."""
    scored = all_scored(board)
    evaluations = [cut_line(scenario_rows(board, scored, s), Budget.of(s)) for s in scenarios]
    keys: dict[str, str] = {}
    for evaluation in evaluations:
        for row in evaluation.rows:
            keys.setdefault(row.key, row.proposal.project.name)
    placed = [{r.key: r.above for r in e.rows} for e in evaluations]
    return {
        "scenarios": [
            {"id": str(s.pk), "name": s.name, "revision": s.revision, **e.as_dict()}
            for s, e in zip(scenarios, evaluations, strict=True)
        ],
        "projects": [
            {
                "projectKey": key,
                "projectName": name,
                "aboveLine": [p.get(key) for p in placed],
                # Funded in one and not in another: below the line and not named are alike.
                "differs": len({bool(p.get(key)) for p in placed}) > 1,
            }
            for key, name in sorted(keys.items())
        ],
    }


def visible_projects(request: Any) -> list[Project]:
    """The projects the caller can view: every board a page, the API or the assistant draws
    for them is drawn over these."""
    return [project for project, _ in permissions.viewable_projects(request)]


def decision_proposals(
    proposals: Sequence[Mapping[str, Any]], viewable: Collection[str]
) -> tuple[list[Mapping[str, Any]], int]:
    """A made decision's prioritised proposals as a viewer may read them: those whose project
    they can view (`viewable`: the keys), and how many more there are (never their keys). The
    decision log's page and the API's answer both read it."""
    shown = [p for p in proposals if p.get("projectKey") in viewable]
    return shown, len(proposals) - len(shown)


def visible_proposals(request: Any) -> list[Project]:
    """The proposals the caller can view (`proposal_projects` of `visible_projects`, the same
    projects): the access gate as a filter in SQL (`gatelist.viewable`) with the proposals'
    states in the same statement, each as the gate gives a list's rows (the tracker's name and
    lead of the moment, `gatelist.page_callers`); never every viewable project made first."""
    found = gatelist.viewable(request, shown=True).filter(proposal_condition("business_case__"))
    return [project for project, _ in gatelist.page_callers(request, list(found.order_by("key")))]


def visible_proposal_revisions(request: Any) -> list[tuple[int, str, int]]:
    """The same projects as `visible_proposals`, in the same order, as (id, key, registers
    revision) as the mirror holds them: for the portfolio's rank column, which names none and
    reads each one's stored total (`investment.totals`)."""
    found = gatelist.viewable(request).filter(proposal_condition("business_case__"))
    return list(found.order_by("key").values_list("pk", "key", "registers_revision"))


def viewer_board(request: Any, also: Project | None = None) -> Board:
    """The board over the proposals the caller can view (and `also`, a project read on its
    own): the one ranking the ranked list, a proposal's page and answer and the assistant
    show. The portfolio's columns rank the same proposals by the same rule (`ranks`) from
    their stored totals (`investment.totals`), so a proposal's rank means one thing
    everywhere."""
    listed = {p.pk: p for p in visible_proposals(request)}
    if also is not None:
        listed[also.pk] = also
    return load(list(listed.values()))
