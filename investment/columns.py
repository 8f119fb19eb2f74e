"""The portfolio's investment columns (`portfolio.extensions`, declared once in
`InvestmentConfig.ready`): a proposal's score (its total under the model version it came
from), its rank among the proposals the viewer can see, and the scenario the board
prioritised it in. Only for the viewers who may govern investment (site administrators, the
governance group): for anyone else the columns are absent. A project that is not a proposal
shows none of the three.

Read for a page in a constant number of queries: the viewer's proposals (the access gate),
their totals as stored (`investment.totals`; those derived again when their inputs changed)
and the markers of the page's projects."""

from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.http import HttpRequest

from governance import permissions, specs, summaries
from governance.cleaning import decimal_to_json
from investment import selectors
from investment import totals as stored_totals
from investment.models import Prioritised
from portfolio import extensions

TEXT_OR_NULL = {"type": ["string", "null"]}


def _column(
    key: str, label: str, header: str, answer: specs.JsonSchema, description: str, **more: Any
) -> extensions.Column:
    """A column named on the page (`label`), in the exports (`header`) and in the API (`key`,
    its `answer` schema said in `description`)."""
    schema = {**answer, "description": description}
    return extensions.Column(key=key, label=label, header=header, schema=schema, **more)


COLUMNS = (
    _column(
        "score",
        "Score",
        "Investment score",
        specs.NUMBER_OR_NULL_SCHEMA,
        "The proposal's total score (two decimals), or null: not a proposal, or not scored.",
        num=True,
        places=2,
        title="Investment score (the proposal's total)",
        hint="The proposal's total under the scoring model version it was scored in: "
        "sum(weight x points) / sum(weight)",
    ),
    _column(
        "rank",
        "Rank",
        "Investment rank",
        specs.INTEGER_OR_NULL_SCHEMA,
        "The proposal's rank among the proposals the viewer can see (1: the highest total; "
        "unscored last), or null for a project that is not a proposal.",
        num=True,
        title="Investment rank (1 is the highest score)",
    ),
    _column(
        "scenario",
        "Scenario",
        "Prioritised in scenario",
        TEXT_OR_NULL,
        "The scenario the board chose with this proposal above its cut-line (the latest such "
        "choice), or null.",
        title="Prioritised in scenario (the board's choice)",
    ),
)


def shown_to(request: HttpRequest) -> bool:
    return permissions.may_govern_investment(permissions.request_user(request), request)


def values(request: HttpRequest, ids: Sequence[Any]) -> Mapping[Any, Mapping[str, Any]]:
    """{project id: {score, rank, scenario}} for the proposals among `ids`."""
    # The rank among every proposal the viewer can view (the same projects as the ranked
    # list's board, `selectors.viewer_board`, ranked by the same rule), from their totals as
    # stored (`investment.totals`): the page shows none of their costs or criteria.
    # Kept for the reader while nothing it reads changes (`governance.summaries`).
    ranked = summaries.read(
        request, "investment-ranks", lambda: _ranked(request), depends=[settings.DEPLOY_VERSION]
    )
    rank = {int(pk): place for pk, (place, _) in ranked.items()}
    total = {int(pk): score for pk, (_, score) in ranked.items()}
    wanted = [pk for pk in ids if pk in rank]
    # One query even for a page without a proposal: the page's count never depends on its rows.
    which = Q(business_case_id__in=wanted) if wanted else Q(pk__isnull=True)
    markers = dict(
        Prioritised.objects.filter(which).values_list("business_case_id", "scenario_name")
    )
    return {
        pk: {
            "score": total[pk],
            "rank": rank[pk],
            "scenario": markers.get(pk),
        }
        for pk in wanted
    }


def _ranked(request: HttpRequest) -> tuple[dict[str, list[Any]], None]:
    """{project id: [rank, total]} of every proposal the viewer can view, in JSON."""
    proposals = selectors.visible_proposal_revisions(request)
    totals = stored_totals.of({pk: revision for pk, _, revision in proposals})
    # (A project deleted since the gate read it has no total: it is ranked as unscored.)
    rank = selectors.ranks({pk: (totals.get(pk), key) for pk, key, _ in proposals})
    return {str(pk): [place, decimal_to_json(totals.get(pk))] for pk, place in rank.items()}, None


SOURCE = extensions.Source(name="investment", columns=COLUMNS, shown_to=shown_to, values=values)
