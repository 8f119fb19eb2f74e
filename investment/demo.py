"""Demo investment decisions, built through the services as the demo cast would:

- twelve proposals: FALCON (Draft) and GARNET (Exploring) of the business-case demo, and ten
  more projects whose business cases are Exploring or Draft, each with a financial case and
  work packages whose budgets are phased by month over the next two calendar years;
- the scoring model at version 2: Priya made version 1, then version 2 weighs customer impact
  more, with the reason; every proposal was scored under version 1 and eight were scored
  again under version 2 (the other four say "scored under an older version"); Sofia, their
  sponsor, rescored two criteria, so the history shows superseded scores;
- three scenarios with budgets for the next two years (in "Lean years" a proposal fits the
  first year and not the second), and the board's choice of "Growth" with its minutes, so
  the portfolio decision log and the "prioritised" markers show.

Running twice changes nothing: a project that exists is left alone, and the model, the
scores and the scenarios are made only while there is no scoring model."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from charter import services as charter_services
from charter.demo import financial_case
from charter.models import BusinessCase
from governance import mirror
from governance.tracker import get_tracker
from governance.tracker.local import scripting
from investment import services
from investment.models import ModelVersion
from registers import services as register_services
from registers.models import WorkPackage

if TYPE_CHECKING:
    from governance.demo import DemoContext
    from governance.models import Project

WORDS = {
    "strategy": ["No link to the strategy", "Loose", "Supports a goal", "Serves a goal", "Core"],
    "customer": ["None", "A few users", "One team", "Many customers", "Every customer"],
    "delivery": ["Untried", "Shaky", "Plausible", "Proven pieces", "Done it before"],
    "npv": ["Negative", "Small", "Fair", "Strong", "Outstanding"],
    "risk": ["Severe", "High", "Moderate", "Low", "Negligible"],
}


def _criteria(customer_weight: int) -> list[dict[str, Any]]:
    return [
        {
            "key": "strategy",
            "name": "Strategic fit",
            "measures": "How directly the proposal serves the board's published strategy.",
            "points": WORDS["strategy"],
            "weight": 3,
            "source": "person",
        },
        {
            "key": "customer",
            "name": "Customer impact",
            "measures": "How many customers notice the difference, and how much.",
            "points": WORDS["customer"],
            "weight": customer_weight,
            "source": "person",
        },
        {
            "key": "delivery",
            "name": "Delivery confidence",
            "measures": "How sure we are that the team can deliver it as planned.",
            "points": WORDS["delivery"],
            "weight": 2,
            "source": "person",
        },
        {
            "key": "npv",
            "name": "Net present value",
            "measures": "The financial case's NPV.",
            "points": WORDS["npv"],
            "weight": 2,
            "source": "npv",
        },
        {
            "key": "risk",
            "name": "Risk exposure",
            "measures": "The highest open risk score on the risk register.",
            "points": WORDS["risk"],
            "weight": 1,
            "source": "topRiskScore",
        },
    ]


V2_WHY = (
    "The board's strategy for the next two years puts customers first: customer impact now "
    "weighs 3 instead of 2."
)

# key -> (name, lead, state, theme)
NEW = {
    "ORCHID": ("Procurement portal", "lena", "Draft", "Cost Out"),
    "PELICAN": ("Fleet telematics", "marco", "Exploring", "Productivity"),
    "QUARTZ": ("Cyber security uplift", "lena", "Draft", "Risk & Compliance"),
    "RAVEN": ("Customer analytics platform", "marco", "Draft", "Customer Experience"),
    "SAFFRON": ("Facilities booking app", "lena", "Exploring", "Productivity"),
    "TUNDRA": ("Cold-chain monitoring", "marco", "Exploring", "Risk & Compliance"),
    "UMBER": ("Document management renewal", "lena", "Draft", "Cost Out"),
    "VIOLET": ("Contact-centre assistant", "marco", "Draft", "Customer Experience"),
    "WILLOW": ("Sustainability reporting", "lena", "Exploring", "Risk & Compliance"),
    "YARROW": ("Network refresh", "marco", "Draft", "Strategic"),
}
# key -> ((cost in the next year, in the year after), benefit a year from the second year)
MONEY = {
    "ORCHID": ((300_000, 200_000), 260_000),
    "PELICAN": ((450_000, 0), 180_000),
    "QUARTZ": ((250_000, 350_000), 90_000),
    "RAVEN": ((600_000, 400_000), 520_000),
    "SAFFRON": ((80_000, 40_000), 45_000),
    "TUNDRA": ((200_000, 500_000), 300_000),
    "UMBER": ((150_000, 150_000), 120_000),
    "VIOLET": ((350_000, 250_000), 480_000),
    "WILLOW": ((120_000, 60_000), 20_000),
    "YARROW": ((500_000, 300_000), 150_000),
}

# key -> points (strategy, customer, delivery) under version 1, and under version 2 (None:
# not scored again, so it still counts under version 1)
SCORES: dict[str, tuple[tuple[int, int, int], tuple[int, int, int] | None]] = {
    "FALCON": ((4, 3, 4), (4, 3, 4)),
    "GARNET": ((3, 2, 2), None),
    "ORCHID": ((3, 2, 4), (3, 2, 4)),
    "PELICAN": ((2, 2, 3), None),
    "QUARTZ": ((5, 2, 3), (5, 2, 3)),
    "RAVEN": ((4, 5, 3), (4, 5, 3)),
    "SAFFRON": ((2, 3, 5), None),
    "TUNDRA": ((4, 4, 2), (4, 4, 3)),
    "UMBER": ((3, 2, 4), None),
    "VIOLET": ((4, 5, 4), (4, 5, 4)),
    "WILLOW": ((3, 1, 4), (3, 1, 4)),
    "YARROW": ((4, 2, 3), (4, 2, 3)),
}
# Sofia, the sponsor, scores these again under version 2 (the earlier score is superseded).
SPONSOR_RESCORES = {"VIOLET": ("delivery", 3), "RAVEN": ("customer", 4)}
REASONS = {
    "strategy": "Checked against the strategy paper's goals.",
    "customer": "From the customer survey and the contact-centre volumes.",
    "delivery": "From the team's track record and the supplier's references.",
}
CHOSEN = "Growth"
MINUTES = "Investment board, December"


def _months(year: int, first: int, count: int) -> list[str]:
    return [f"{year}-{month:02d}" for month in range(first, first + count)]


def _project(ctx: DemoContext, key: str) -> Project:
    name, lead, *_ = NEW[key]
    browsers = [n for n in ctx.users if n != "oscar"]
    scripting.ensure_project(key, name=name, lead=lead, browsers=browsers)
    found = get_tracker().get_project(key)
    assert found is not None  # ensured just above
    project = mirror.sync_project(found)
    if not project.sponsor_account_id:
        project.sponsor_account_id = ctx.account("sofia")
        project.save(update_fields=["sponsor_account_id"])
    ctx.projects[key] = project
    return project


def _packages(ctx: DemoContext, project: Project) -> None:
    """A package a year, its budget phased by month (none when the year costs nothing)."""
    lead = NEW[project.key][1]
    costs = MONEY[project.key][0]
    year = timezone.localdate().year + 1
    for n, (label, amount) in enumerate(zip(("Build", "Roll-out"), costs, strict=True)):
        if not amount:
            continue
        months = _months(year + n, 2 + n, 6)
        register_services.work_package_create(
            caller=ctx.caller(lead, project),
            data={
                "name": f"{label} {year + n}",
                "status": "Not Started",
                "plannedStartDate": f"{months[0]}-01",
                "plannedEndDate": f"{months[-1]}-28",
                "budget": amount,
                "budgetPhasing": [{"period": m, "amount": amount // 6} for m in months],
            },
        )


def _case(ctx: DemoContext, project: Project) -> None:
    name, lead, state, theme = NEW[project.key]
    costs, benefit = MONEY[project.key]
    lines = [
        {"year": 0, "cost": costs[0], "benefit": 0},
        {"year": 1, "cost": costs[1], "benefit": benefit},
    ]
    lines += [{"year": y, "cost": 0, "benefit": benefit} for y in (2, 3, 4)]
    charter_services.charter_update(
        caller=ctx.caller(lead, project),
        data={
            "businessProblem": f"{name}: the way it is done today costs time and money.",
            "outcome": f"{name} in use across the organisation.",
            "returnExpected": f"About {benefit:,} a year from the second year.",
            "theme": theme,
            "decisionAuthority": ctx.account("sofia"),
            "projectManager": ctx.account(lead),
            "financialCase": financial_case(lines),
        },
    )
    if state == "Draft":
        charter_services.charter_act(caller=ctx.caller(lead, project), act="draft")


def _score(ctx: DemoContext, who: str, key: str, criterion: str, value: int) -> None:
    project = ctx.projects[key]
    services.score_set(
        caller=ctx.caller(who, project),
        data={"criterion": criterion, "value": value, "reason": REASONS[criterion]},
    )


def seed(ctx: DemoContext) -> None:
    for key in NEW:
        project = ctx.projects.get(key) or _project(ctx, key)
        if not WorkPackage.objects.filter(project=project).exists():
            _packages(ctx, project)
        if not BusinessCase.objects.filter(project=project).exists():
            _case(ctx, project)
    if ModelVersion.objects.exists():
        return
    priya = ctx.users["priya"]
    services.model_version_create(
        user=priya, data={"why": "The board's first scoring model.", "criteria": _criteria(2)}
    )
    for key, (first, _) in SCORES.items():
        for criterion, value in zip(("strategy", "customer", "delivery"), first, strict=True):
            _score(ctx, "priya", key, criterion, value)
    services.model_version_create(user=priya, data={"why": V2_WHY, "criteria": _criteria(3)})
    for key, (_, again) in SCORES.items():
        for criterion, value in zip(
            ("strategy", "customer", "delivery"), again or (), strict=False
        ):
            _score(ctx, "priya", key, criterion, value)
    for key, (criterion, value) in SPONSOR_RESCORES.items():
        _score(ctx, "sofia", key, criterion, value)
    _scenarios(ctx)


def _scenarios(ctx: DemoContext) -> None:
    priya = ctx.users["priya"]
    year = timezone.localdate().year + 1
    budgets = {
        CHOSEN: (2_500_000, 1_800_000, "Fund the strongest proposals within the growth budget."),
        "Lean years": (1_600_000, 700_000, "What a flat budget buys."),
        "Customer first": (1_500_000, 1_200_000, "The contact-centre assistant as a must-have."),
    }
    made = {}
    for name, (first, second, notes) in budgets.items():
        data: dict[str, Any] = {
            "name": name,
            "notes": notes,
            "budgetByYear": {str(year): first, str(year + 1): second},
        }
        if name == "Customer first":
            data["mustHaves"] = ["VIOLET"]
            data["selection"] = ["VIOLET", "RAVEN", "FALCON", "ORCHID", "SAFFRON", "QUARTZ"]
        made[name] = services.scenario_create(user=priya, data=data)
    services.scenario_choose(
        user=priya,
        scenario_id=made[CHOSEN].pk,
        data={
            "minutesRef": {
                "title": MINUTES,
                "url": "https://wiki.example.test/investment-board/december",
            },
            "rationale": "The board funds what fits the growth budget, highest score first.",
            "madeOn": (timezone.localdate() - dt.timedelta(days=2)).isoformat(),
        },
        projects=list(ctx.projects.values()),
    )
