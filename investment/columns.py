"""The portfolio's investment columns (`portfolio.extensions`, declared once in
`InvestmentConfig.ready`): a proposal's score (its total under the model version it came
from), its rank among the proposals the viewer can see, and the scenario the board
prioritised it in. Only for the viewers who may govern investment (site administrators, the
governance group): for anyone else the columns are absent. A project that is not a proposal
shows none of the three.

Read for a page in a constant number of queries: the viewer's projects (the access gate),
the board over their proposals (`investment.selectors.load`) and the markers of the page's
projects."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.db.models import Q
from django.http import HttpRequest

from governance import permissions, specs
from governance.cleaning import decimal_to_json
from investment import selectors
from investment.models import Prioritised
from portfolio import extensions

COLUMNS = (
    extensions.Column(
        key="score",
        label="Score",
        header="Investment score",
        num=True,
        title="Investment score (the proposal's total)",
        hint="The proposal's total under the scoring model version it was scored in: "
        "sum(weight x points) / sum(weight)",
        schema={
            **specs.NUMBER_OR_NULL_SCHEMA,
            "description": "The proposal's total score (two decimals), or null: not a "
            "proposal, or not scored.",
        },
    ),
    extensions.Column(
        key="rank",
        label="Rank",
        header="Investment rank",
        num=True,
        title="Investment rank (1 is the highest score)",
        schema={
            **specs.INTEGER_OR_NULL_SCHEMA,
            "description": "The proposal's rank among the proposals the viewer can see (1: "
            "the highest total; unscored last), or null for a project that is not a proposal.",
        },
    ),
    extensions.Column(
        key="scenario",
        label="Scenario",
        header="Prioritised in scenario",
        title="Prioritised in scenario (the board's choice)",
        schema={
            "type": ["string", "null"],
            "description": "The scenario the board chose with this proposal above its "
            "cut-line (the latest such choice), or null.",
        },
    ),
)


def shown_to(request: HttpRequest) -> bool:
    return permissions.may_govern_investment(permissions.request_user(request), request)


def values(request: HttpRequest, ids: Sequence[Any]) -> Mapping[Any, Mapping[str, Any]]:
    """{project id: {score, rank, scenario}} for the proposals among `ids`."""
    visible = [project for project, _ in permissions.viewable_projects(request)]
    board = selectors.load(selectors.proposal_projects(visible))
    ranked = {p.project.pk: p for p in selectors.ranked(board)}
    wanted = [pk for pk in ids if pk in ranked]
    # One query even for a page without a proposal: the page's count never depends on its rows.
    which = Q(business_case_id__in=wanted) if wanted else Q(pk__isnull=True)
    markers = dict(
        Prioritised.objects.filter(which).values_list("business_case_id", "scenario_name")
    )
    return {
        pk: {
            "score": decimal_to_json(ranked[pk].total),
            "rank": ranked[pk].rank,
            "scenario": markers.get(pk),
        }
        for pk in wanted
    }


SOURCE = extensions.Source(name="investment", columns=COLUMNS, shown_to=shown_to, values=values)
