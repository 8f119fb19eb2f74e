"""Investment decisions at PROPOSALS proposals (bench.run; 500 by default): the ranked
proposals and a scenario's cut-line (computation, API and the scenario page) against the
portfolio page over the same projects in the same run; target within 1.5x of the portfolio
page.

The portfolio benchmark's data (`bench_portfolio._build`: 20 work packages, 20 risks, 10
decisions and 10 changes a project) with every business case made a proposal (Exploring or
Draft), a model of four criteria (one a person scores, three read from data) and one score
per proposal. The reader is the site administrator of the portfolio benchmark. Figures are
medians of REPEAT runs after a warm-up."""

import os
import random

DEFAULT_PROPOSALS = 500
TARGET_RATIO = 1.5
WORDS = ["None", "Little", "Some", "Much", "All"]


def _prepare(size: int):
    from bench.bench_portfolio import _build
    from charter.models import BusinessCase
    from governance.models import Project
    from investment.models import Criterion, ModelVersion, Scenario, Score
    from status import health

    admin = _build(size)
    ids = list(
        Project.objects.filter(key__startswith="B").order_by("key").values_list("pk", flat=True)
    )[:size]
    rng = random.Random(20261128)
    for status in ("Exploring", "Draft"):
        BusinessCase.objects.filter(project_id__in=ids[status == "Draft" :: 2]).update(
            approval_status=status
        )
    for chunk in range(0, len(ids), health.REFRESH_CHUNK):
        health.refresh(ids[chunk : chunk + health.REFRESH_CHUNK])
    version = ModelVersion.objects.order_by("-number").first()
    if version is None:
        version = ModelVersion.objects.create(number=1, why="Bench")
        for position, (key, source, weight) in enumerate(
            [
                ("strategy", "person", 3),
                ("value", "npv", 2),
                ("adoption", "adoptionInputs", 1),
                ("risk", "topRiskScore", 2),
            ]
        ):
            Criterion.objects.create(
                version=version,
                key=key,
                name=key.title(),
                points=WORDS,
                weight=weight,
                source=source,
                position=position,
                thresholds=None if source == "person" else [1, 2, 3, 4],
            )
    strategy = Criterion.objects.get(version=version, key="strategy")
    scored = set(Score.objects.values_list("project_id", flat=True))
    Score.objects.bulk_create(
        [
            Score(
                project_id=pk,
                version=version,
                criterion=strategy,
                value=rng.randint(1, 5),
                reason="Bench",
            )
            for pk in ids
            if pk not in scored
        ],
        batch_size=500,
    )
    scenario = Scenario.objects.filter(name="Bench").first() or Scenario.objects.create(
        name="Bench", budget_by_year={"2026": 5_000_000, "2027": 5_000_000}
    )
    return admin, scenario


def run() -> list[str]:
    from django.test import Client, RequestFactory

    from bench.bench_portfolio import _median
    from governance import permissions
    from investment import selectors
    from portfolio import selectors as portfolio_selectors

    size = int(os.environ.get("PROPOSALS") or DEFAULT_PROPOSALS)
    admin, scenario = _prepare(size)
    client = Client()
    client.force_login(admin)

    def request():
        made = RequestFactory().get("/portfolio/")
        made.user = admin
        return made

    def visible():
        return [p for p, _ in permissions.viewable_projects(request())]

    def get(url):
        answer = client.get(url)
        assert answer.status_code == 200, (url, answer.status_code)
        return answer

    figures = {
        "portfolio computation": _median(lambda: portfolio_selectors.portfolio(request(), {}))[0],
        "ranked proposals (computation)": _median(
            lambda: selectors.ranked(selectors.load(selectors.proposal_projects(visible())))
        )[0],
        "scenario cut-line (computation)": _median(
            lambda: selectors.evaluate(selectors.board_for(visible(), [scenario]), scenario)
        )[0],
        "GET /portfolio/": _median(lambda: get("/portfolio/"))[0],
        "GET /api/v1/investment/proposals": _median(lambda: get("/api/v1/investment/proposals"))[0],
        "GET /api/v1/investment/scenarios/{id}": _median(
            lambda: get(f"/api/v1/investment/scenarios/{scenario.pk}")
        )[0],
        "GET /investment/scenarios/{id}/ (the page)": _median(
            lambda: get(f"/investment/scenarios/{scenario.pk}/")
        )[0],
    }
    answer = client.get("/api/v1/investment/proposals")
    count = len(answer.json()["items"]) if answer.status_code == 200 else answer.status_code
    page = figures["GET /portfolio/"]
    lines = [f"{count} proposals ranked"]
    for name, seconds in figures.items():
        line = f"{name}: {seconds * 1000:.0f} ms"
        if name.startswith(("GET /api/v1/investment", "GET /investment")):
            ratio = seconds / page
            verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
            line += f" ({ratio:.2f}x the portfolio page, target {TARGET_RATIO}x: {verdict})"
        lines.append(line)
    return lines
