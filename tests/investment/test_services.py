"""Investment decisions' rules through their services: the model's versions never rewrite
old scores, each data criterion, the cut-line with phasing, must-haves, the comparison, the
board's choice (immutable, never approving or submitting), who may do what."""

import datetime as dt
from decimal import Decimal

import pytest

from charter.models import BusinessCase
from governance.errors import Conflict, Forbidden, ValidationFailed
from governance.models import AuditEntry, Notification
from investment import criteria, selectors, services
from investment.models import PortfolioDecision, Prioritised, Score
from tests.factories import WorkPackageFactory
from tests.investment.conftest import (
    builtin,
    caller,
    criterion,
    make_project,
    phased,
    proposal,
    three_proposals,
)

MINUTES = {"title": "Investment board, 1 December", "url": "https://wiki.example/board"}


# --- the model and its versions --------------------------------------------------------------


def test_versions_number_up_and_record_who_and_why(model, governed):
    assert model.number == 1
    second = services.model_version_create(
        user=governed.pmo,
        data={"why": "Strategy weighs more", "criteria": [criterion("strategy", weight=5)]},
    )
    assert second.number == 2 and second.created_by_account_id == governed.pmo.account_id
    entry = AuditEntry.objects.filter(kind="investment.model_version_created").order_by("pk").last()
    assert entry.changes["why"]["after"] == "Strategy weighs more"
    assert entry.changes["criteria"]["before"][0]["weight"] == 3


def test_only_admins_and_the_governance_group_define_the_model(model, governed):
    for user in (governed.lead, governed.sponsor, governed.viewer, governed.outsider):
        with pytest.raises(Forbidden):
            services.model_version_create(
                user=user, data={"why": "x", "criteria": [criterion("a")]}
            )


def test_a_criterion_is_refused_with_words_naming_the_member(governed):
    with pytest.raises(ValidationFailed) as refused:
        services.model_version_create(
            user=governed.site_admin,
            data={
                "why": "x",
                "criteria": [
                    criterion("a", points=["one"]),
                    criterion("b", source="npv", thresholds=[3, 2, 1, 0]),
                    criterion("c", thresholds=[1, 2, 3, 4]),
                    criterion("a"),
                ],
            },
        )
    fields = refused.value.fields
    assert "criteria[0].points" in fields
    assert "criteria[1].thresholds" in fields
    assert "criteria[2].thresholds" in fields
    assert "criteria[3].key" in fields


def test_a_new_version_never_rewrites_old_scores(model, governed):
    project = governed.project
    proposal(project)
    first = services.score_set(
        caller=caller(governed.pmo, project),
        data={"criterion": "strategy", "value": 4, "reason": "Core to the plan"},
    )
    services.model_version_create(
        user=governed.site_admin,
        data={"why": "Weights changed", "criteria": [criterion("strategy", weight=1)]},
    )
    first.refresh_from_db()
    assert (first.value, first.reason, first.version.number) == (4, "Core to the plan", 1)
    board = selectors.load([project])
    scored = selectors.ranked(board)[0]
    assert scored.version.number == 1 and scored.current.number == 2
    assert scored.as_dict()["scoredUnderOlderVersion"] is True
    # Scored again under the model in force: the old row stays, the new one counts.
    services.score_set(
        caller=caller(governed.sponsor, project),
        data={"criterion": "strategy", "value": 2, "reason": "Less central now"},
    )
    scored = selectors.ranked(selectors.load([project]))[0]
    assert scored.version.number == 2 and not scored.older
    assert scored.total == Decimal("2.00")
    assert Score.objects.filter(project=project).count() == 2


def test_a_rescore_supersedes_and_keeps_the_old_row(model, governed):
    project = governed.project
    proposal(project)
    who = caller(governed.pmo, project)
    old = services.score_set(caller=who, data={"criterion": "strategy", "value": 3, "reason": "a"})
    new = services.score_set(caller=who, data={"criterion": "strategy", "value": 5, "reason": "b"})
    old.refresh_from_db()
    assert old.superseded_by_id == new.pk and (old.value, old.reason) == (3, "a")
    entry = AuditEntry.objects.filter(kind="investment.scored").order_by("pk").last()
    assert entry.changes["value"] == {"before": 3, "after": 5}


def test_scoring_refusals(model, governed):
    project = governed.project
    proposal(project)
    with pytest.raises(ValidationFailed) as refused:
        services.score_set(
            caller=caller(governed.pmo, project), data={"criterion": "strategy", "value": 4}
        )
    assert "reason" in refused.value.fields
    with pytest.raises(ValidationFailed):
        services.score_set(
            caller=caller(governed.pmo, project),
            data={"criterion": "adoption", "value": 4, "reason": "data"},
        )
    for user in (governed.lead, governed.viewer, governed.editor):
        with pytest.raises(Forbidden):
            services.score_set(
                caller=caller(user, project),
                data={"criterion": "strategy", "value": 4, "reason": "mine"},
            )
    proposal(project, status="Approved")
    with pytest.raises(Conflict):
        services.score_set(
            caller=caller(governed.pmo, project),
            data={"criterion": "strategy", "value": 4, "reason": "late"},
        )


# --- the data criteria -----------------------------------------------------------------------


def test_each_data_criterion_reads_the_figure_the_site_derives():
    case = builtin((0, 1000, 0), (1, 0, 600), (2, 0, 600))
    inputs = criteria.Inputs(
        financial_case=case, adoption_missing=["adoptionKpi"], top_risk_score=12
    )
    figures = {key: source.figure(inputs) for key, source in criteria.CATALOGUE.items()}
    assert figures["npv"] == Decimal("200")
    assert figures["paybackYears"] == Decimal("1.67")
    assert figures["totalCost"] == Decimal("1000")
    assert figures["adoptionInputs"] == Decimal(3)
    assert figures["topRiskScore"] == Decimal(12)
    attached = {"mode": "attached", "attached": {"npv": 750000, "paybackYears": 4, "totalCost": 9}}
    assert criteria.headline(attached, "npv") == Decimal(750000)
    assert criteria.CATALOGUE["totalCost"].figure(criteria.Inputs(attached, [], None)) == Decimal(9)
    assert criteria.CATALOGUE["topRiskScore"].figure(criteria.Inputs(None, [], None)) == 0
    assert criteria.CATALOGUE["npv"].figure(criteria.Inputs(None, [], None)) is None


@pytest.mark.parametrize(
    ("figure", "higher", "expected"),
    [
        (-5, True, 1),
        (0, True, 2),
        (150, True, 3),
        (1000, True, 5),
        (0, False, 5),
        (25, False, 1),
        (10, False, 3),
    ],
)
def test_a_figure_maps_to_points_by_the_thresholds(figure, higher, expected):
    bounds = [0, 100, 500, 1000] if higher else [4, 9, 14, 19]
    assert criteria.points(Decimal(figure), bounds, higher) == expected


def test_a_data_criterion_counts_in_the_total_with_its_thresholds(governed):
    services.model_version_create(
        user=governed.site_admin,
        data={
            "why": "Data only",
            "criteria": [
                criterion("value", source="npv", thresholds=[0, 100, 500, 1000], weight=2),
                criterion("risk", source="topRiskScore"),
            ],
        },
    )
    project = governed.project
    proposal(project, financial_case=builtin((0, 1000, 0), (1, 0, 1200)))
    scored = selectors.ranked(selectors.load([project]))[0]
    values = {p.criterion.key: (p.figure, p.value) for p in scored.points}
    assert values["value"] == (Decimal(200), 3)
    assert values["risk"] == (Decimal(0), 5)
    assert scored.total == Decimal("3.67") and scored.complete


# --- scenarios and the cut-line --------------------------------------------------------------


@pytest.fixture
def three(model, governed):
    """A, B and C: proposals scored 5, 4, 3 (`three_proposals`)."""
    return three_proposals(governed)


def _scenario(governed, **data):
    return services.scenario_create(
        user=governed.pmo, data={"name": "Plan", "budgetByYear": {"2027": 100, "2028": 40}, **data}
    )


def test_cut_line_with_phasing_fits_this_year_and_not_next(three, governed):
    scenario = _scenario(governed)
    board = selectors.load(list(three.values()))
    result = selectors.evaluate(board, scenario)
    rows = {r.key: r for r in result.rows}
    assert [r.key for r in result.rows] == ["AAA", "BBB", "CCC"]
    assert rows["AAA"].above and rows["AAA"].cost_by_year == {"2027": Decimal("60.00")}
    # B fits 2027 (60 + 30 <= 100) but not 2028 (50 > 40): the line is drawn before it.
    assert not rows["BBB"].above
    assert rows["BBB"].fits_by_year == {"2027": True, "2028": False}
    # C would fit, but stands below the line drawn above B.
    assert not rows["CCC"].above and rows["CCC"].fits_by_year == {"2027": True, "2028": True}
    totals = result.totals()
    assert totals["costByYear"]["2027"] == 60 and totals["projects"] == 1
    assert result.cut_after == 1


def test_must_haves_stand_first_and_above_the_line(three, governed):
    scenario = _scenario(governed, mustHaves=["CCC"])
    result = selectors.evaluate(selectors.load(list(three.values())), scenario)
    assert [(r.key, r.above) for r in result.rows] == [
        ("CCC", True),
        ("AAA", True),
        ("BBB", False),
    ]
    assert result.totals()["cost"] == 80


def test_moving_one_across_the_line(three, governed):
    scenario = _scenario(governed, budgetByYear={"2027": 100, "2028": 60})
    board = selectors.load(list(three.values()))
    rows = selectors.scenario_rows(board, selectors.all_scored(board), scenario)
    budget = selectors.Budget.of(scenario)
    assert [r.key for r in selectors.cut_line(rows, budget).above] == ["AAA", "BBB"]
    out = selectors.move_across(rows, budget, "AAA")
    assert (out["direction"], out["joins"], out["leaves"]) == ("out", ["CCC"], [])
    assert out["after"]["costByYear"] == {"2027": 50, "2028": 50}
    moved_in = selectors.move_across(rows, budget, "CCC")
    assert (moved_in["direction"], moved_in["joins"], moved_in["leaves"]) == ("in", [], ["BBB"])
    assert moved_in["after"]["cost"] == 80


def test_a_total_budget_and_comparison_of_scenarios(three, governed):
    wide = services.scenario_create(user=governed.pmo, data={"name": "Wide", "budgetTotal": 1000})
    narrow = _scenario(governed)
    compared = selectors.compare(selectors.load(list(three.values())), [wide, narrow])
    assert [s["name"] for s in compared["scenarios"]] == ["Wide", "Plan"]
    assert compared["scenarios"][0]["totals"]["projects"] == 3
    differs = {p["projectKey"]: p["aboveLine"] for p in compared["projects"] if p["differs"]}
    assert differs == {"BBB": [True, False], "CCC": [True, False]}


def test_scenario_changes_are_audited_copied_and_refused_with_words(three, governed):
    scenario = _scenario(governed, selection=["AAA", "BBB"])
    updated = services.scenario_update(
        user=governed.site_admin,
        scenario_id=str(scenario.pk),
        data={"budgetTotal": 5},
        expected_revision=1,
    )
    assert updated.revision == 2
    entry = AuditEntry.objects.filter(kind="investment.scenario_updated").order_by("pk").last()
    assert entry.changes["budgetTotal"] == {"before": None, "after": 5}
    copy = services.scenario_copy(user=governed.pmo, scenario_id=str(scenario.pk))
    assert copy.copy_of_id == scenario.pk and copy.name == "Copy of Plan"
    assert copy.selection == ["AAA", "BBB"]
    with pytest.raises(ValidationFailed) as refused:
        services.scenario_update(
            user=governed.pmo, scenario_id=str(scenario.pk), data={"mustHaves": ["CCC", "NOPE"]}
        )
    assert "mustHaves" in refused.value.fields
    with pytest.raises(Forbidden):
        services.scenario_create(user=governed.lead, data={"name": "x", "budgetTotal": 1})
    services.scenario_delete(user=governed.pmo, scenario_id=str(copy.pk))
    assert AuditEntry.objects.filter(kind="investment.scenario_deleted").exists()


# --- the board's choice ----------------------------------------------------------------------


def test_choosing_records_a_made_decision_marks_and_notifies_and_never_approves(three, governed):
    scenario = _scenario(governed, mustHaves=["CCC"])
    before = {
        c.project_id: (c.approval_status, c.submitted_at, c.approved_at)
        for c in BusinessCase.objects.all()
    }
    decision = services.scenario_choose(
        user=governed.pmo,
        scenario_id=str(scenario.pk),
        data={"minutesRef": MINUTES, "rationale": "Within budget"},
        projects=list(three.values()),
    )
    assert decision.made_on == dt.date.today() or decision.made_on
    assert [p["projectKey"] for p in decision.proposals] == ["CCC", "AAA"]
    assert decision.minutes_ref == MINUTES
    marked = {m.business_case_id: m.scenario_name for m in Prioritised.objects.all()}
    assert marked == {three["CCC"].pk: "Plan", three["AAA"].pk: "Plan"}
    after = {
        c.project_id: (c.approval_status, c.submitted_at, c.approved_at)
        for c in BusinessCase.objects.all()
    }
    assert after == before
    told = Notification.objects.filter(kind="proposal_prioritised")
    assert {(n.project_key, n.recipient_account_id) for n in told} == {
        (key, account)
        for key in ("AAA", "CCC")
        for account in (governed.lead.account_id, governed.sponsor.account_id)
    }
    assert AuditEntry.objects.filter(kind="investment.scenario_chosen").count() == 1
    # Immutable: no edit, no delete, through the services or the model.
    with pytest.raises(Conflict):
        services.portfolio_decision_update(user=governed.pmo, decision_id=str(decision.pk))
    with pytest.raises(Conflict):
        services.portfolio_decision_delete(user=governed.site_admin, decision_id=str(decision.pk))
    decision.rationale = "Changed"
    with pytest.raises(Conflict):
        decision.save()
    with pytest.raises(Conflict):
        decision.delete()
    assert PortfolioDecision.objects.get().rationale == "Within budget"
    with pytest.raises(Conflict):
        services.scenario_delete(user=governed.pmo, scenario_id=str(scenario.pk))


def test_choosing_needs_minutes_and_the_governance_group(three, governed):
    scenario = _scenario(governed)
    with pytest.raises(ValidationFailed) as refused:
        services.scenario_choose(
            user=governed.pmo, scenario_id=str(scenario.pk), data={}, projects=list(three.values())
        )
    assert "minutesRef" in refused.value.fields
    with pytest.raises(Forbidden):
        services.scenario_choose(
            user=governed.sponsor,
            scenario_id=str(scenario.pk),
            data={"minutesRef": MINUTES},
            projects=list(three.values()),
        )
    assert not PortfolioDecision.objects.exists()


def _queries(projects, scenario):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    selectors.load(projects)  # the health rows stored once
    with CaptureQueriesContext(connection) as captured:
        board = selectors.load(projects)
        selectors.ranked(board)
        selectors.evaluate(board, scenario)
        selectors.compare(board, [scenario, scenario])
    return len(captured)


def test_the_board_reads_a_fixed_number_of_queries_whatever_the_proposals(model, governed):
    """Ranking, the cut-line and a comparison are pure functions over rows loaded once (eight
    queries)."""
    projects = []
    for n in range(12):
        project = make_project(f"Q{n:02d}", governed, sponsor=governed.sponsor)
        proposal(project)
        phased(project, {"2027-01": 10 + n, "2028-01": 5})
        services.score_set(
            caller=caller(governed.pmo, project),
            data={"criterion": "strategy", "value": 1 + n % 5, "reason": "r"},
        )
        projects.append(project)
    scenario = services.scenario_create(
        user=governed.pmo, data={"name": "All", "budgetByYear": {"2027": 100}}
    )
    few, many = _queries(projects[:3], scenario), _queries(projects, scenario)
    assert few == many <= 8, (few, many)


def test_unphased_cost_counts_in_the_first_budget_year(model, governed):
    """Money with no month (no phasing, no dates), or a financial case's total cost where
    the packages hold none, counts in the first budget year."""
    undated = make_project("UND", governed)
    proposal(undated)
    WorkPackageFactory(project=undated, budget=70, planned_start_date=None, planned_end_date=None)
    costed = make_project("FIN", governed)
    proposal(costed, financial_case=builtin((0, 50, 0), (1, 0, 90)))
    board = selectors.load([undated, costed])
    assert board.costs[undated.pk] == ({}, Decimal("70.00"))
    assert board.costs[costed.pk] == ({}, Decimal("50.00"))
    scenario = services.scenario_create(
        user=governed.pmo, data={"name": "Tight", "budgetByYear": {"2027": 100, "2028": 500}}
    )
    result = selectors.evaluate(board, scenario)
    assert [(r.key, r.above) for r in result.rows] == [("FIN", True), ("UND", False)]
    assert result.rows[1].fits_by_year == {"2027": False, "2028": True}
    assert result.totals()["costByYear"] == {"2027": 50, "2028": 0}
    assert result.totals()["benefit"] == 90


def test_the_audit_log_reads_investment_entries_in_words():
    from governance.audit_text import kind_label

    assert kind_label("investment.scored") == "Scored a proposal"
    assert kind_label("investment.scenario_chosen") == "Recorded the board's choice of a scenario"


def test_a_running_project_in_the_selection_counts_against_the_budget_and_is_not_marked(
    three, governed
):
    running = make_project("RUN", governed, sponsor=governed.sponsor)
    proposal(running, status="Approved")
    phased(running, {"2027-01": 30})
    scenario = _scenario(governed, selection=["AAA", "RUN", "CCC"], mustHaves=["RUN"])
    everything = [*three.values(), running, governed.project]
    board = selectors.board_for(everything, [scenario])
    assert governed.project.pk not in board.projects  # neither a proposal nor selected
    result = selectors.evaluate(board, scenario)
    rows = {r.key: r for r in result.rows}
    assert rows["RUN"].above and rows["RUN"].proposal.rank is None
    assert rows["RUN"].as_dict()["proposal"] is False
    assert [r.key for r in result.rows if r.above] == ["RUN", "AAA"]
    decision = services.scenario_choose(
        user=governed.pmo,
        scenario_id=str(scenario.pk),
        data={"minutesRef": MINUTES},
        projects=everything,
    )
    assert [p["projectKey"] for p in decision.proposals] == ["AAA"]
    assert not Prioritised.objects.filter(business_case_id=running.pk).exists()


def test_a_move_names_the_same_years_before_and_after(three, governed):
    """Taking out the only project that spends in a year shows that year at 0 after the move,
    not missing (the preview compares year by year)."""
    scenario = services.scenario_create(
        user=governed.pmo, data={"name": "All", "budgetTotal": 1000, "selection": ["AAA", "BBB"]}
    )
    board = selectors.load(list(three.values()))
    rows = selectors.scenario_rows(board, selectors.all_scored(board), scenario)
    out = selectors.move_across(rows, selectors.Budget.of(scenario), "BBB")
    assert out["before"]["costByYear"] == {"2027": 90, "2028": 50}
    assert out["after"]["costByYear"] == {"2027": 60, "2028": 0}


def test_below_the_line_and_not_named_are_the_same_side_in_a_comparison(three, governed):
    """A project funded in neither (below the line in one, not in the other) does not differ."""
    narrow = services.scenario_create(
        user=governed.pmo, data={"name": "Narrow", "budgetTotal": 70, "selection": ["AAA", "BBB"]}
    )
    only_a = services.scenario_create(
        user=governed.pmo, data={"name": "Only A", "budgetTotal": 1000, "selection": ["AAA"]}
    )
    compared = selectors.compare(selectors.load(list(three.values())), [narrow, only_a])
    placed = {p["projectKey"]: (p["aboveLine"], p["differs"]) for p in compared["projects"]}
    assert placed["BBB"] == ([False, None], False)
    assert placed["AAA"] == ([True, True], False)


def test_a_chosen_scenario_is_neither_changed_nor_chosen_again(three, governed):
    scenario = _scenario(governed)
    kwargs = {"user": governed.pmo, "scenario_id": scenario.pk}
    services.scenario_choose(**kwargs, data={"minutesRef": MINUTES}, projects=list(three.values()))
    with pytest.raises(Conflict, match="kept as it was chosen"):
        services.scenario_update(**kwargs, data={"name": "Changed"})
    with pytest.raises(Conflict, match="chosen again"):
        services.scenario_choose(
            **kwargs, data={"minutesRef": MINUTES}, projects=list(three.values())
        )
    assert PortfolioDecision.objects.count() == 1


def test_the_choice_records_what_was_confirmed_or_nothing(three, governed):
    """`expected_keys`: what the chooser confirmed (`selectors.prioritised`, as the page lists
    it); a difference is refused (409) and nothing is recorded."""
    scenario = _scenario(governed)
    projects = list(three.values())
    evaluation = selectors.evaluate(selectors.board_for(projects, [scenario]), scenario)
    assert [r.key for r in selectors.prioritised(evaluation)] == ["AAA"]
    with pytest.raises(Conflict, match="changed since it was confirmed"):
        services.scenario_choose(
            user=governed.pmo,
            scenario_id=scenario.pk,
            data={"minutesRef": MINUTES},
            projects=projects,
            expected_keys=["AAA", "CCC"],
        )
    assert not PortfolioDecision.objects.exists() and not Prioritised.objects.exists()
    decision = services.scenario_choose(
        user=governed.pmo,
        scenario_id=scenario.pk,
        data={"minutesRef": MINUTES},
        projects=projects,
        expected_keys=["AAA"],
    )
    assert [p["projectKey"] for p in decision.proposals] == ["AAA"]


def test_a_data_criterion_s_scale_in_words_follows_its_direction():
    from investment.criteria import points, scale_words

    assert scale_words("topRiskScore", None) == (
        "lower is better: 5 points up to 4, 4 points up to 9, 3 points up to 14, "
        "2 points up to 19; 1 point above"
    )
    # As `points` decides it: a risk score of 6 earns 4 points.
    assert points(Decimal(6), [4, 9, 14, 19], higher_is_better=False) == 4
    assert scale_words("npv", None).startswith("higher is better: 2 points from 0, ")
    assert "5 points from 1,000,000" in scale_words("npv", None)
