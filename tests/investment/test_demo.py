"""The investment demo: twelve proposals ranked under a model at version 2 (some still scored
under version 1), three scenarios (in one a proposal fits the first year and not the next),
the board's choice with its minutes and the "prioritised" markers; running it twice changes
nothing, and the pages show it."""

from io import StringIO

from django.core.management import call_command
from django.test import Client

from governance.models import Project, User
from investment import selectors
from investment.models import ModelVersion, PortfolioDecision, Prioritised, Scenario, Score

MODELS = [ModelVersion, Score, Scenario, PortfolioDecision, Prioritised, Project]


def test_the_demo_shows_ranked_proposals_scenarios_and_a_choice(demo):
    board = selectors.load(selectors.proposal_projects(Project.objects.all()))
    ranked = selectors.ranked(board)
    assert len(ranked) == 12
    assert {p.version.number for p in ranked} == {1, 2}
    assert sum(1 for p in ranked if p.older) == 4
    assert all(board.costs.get(p.project.pk) for p in ranked)
    assert ModelVersion.objects.get(number=2).why.startswith("The board's strategy")
    assert Score.objects.filter(superseded_by__isnull=False).exists()

    assert Scenario.objects.count() == 3
    fits_first_not_next = []
    for scenario in Scenario.objects.all():
        evaluation = selectors.evaluate(
            selectors.board_for(list(Project.objects.all()), [scenario]), scenario
        )
        years = list(evaluation.budget.by_year)
        fits_first_not_next += [
            r.key
            for r in evaluation.rows
            if r.fits_by_year[years[0]] and not r.fits_by_year[years[1]]
        ]
    assert fits_first_not_next
    decision = PortfolioDecision.objects.get()
    assert decision.scenario_name == "Growth" and decision.minutes_ref["title"]
    assert Prioritised.objects.count() == len(decision.proposals) > 0


def test_the_demo_is_idempotent_and_its_pages_show_it(demo):
    counts = {model: model.objects.count() for model in MODELS}
    call_command("seed_demo", stdout=StringIO())
    assert {model: model.objects.count() for model in MODELS} == counts
    client = Client()
    client.force_login(User.objects.get(username="priya"))
    html = client.get("/investment/").content.decode()
    assert "scored under an older version (v1; v2 is in force)" in html
    assert "prioritised in Growth" in html
    assert "VIOLET" in client.get("/investment/proposals/VIOLET/").content.decode()
    assert "Investment board" in client.get("/investment/decisions/").content.decode()
    oscar = Client()
    oscar.force_login(User.objects.get(username="oscar"))
    assert oscar.get("/investment/").status_code == 404
