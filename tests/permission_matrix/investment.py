"""Investment decisions: the scoring model, scenarios and the portfolio decision log behind
the investment gate (site admins, the governance group); a proposal's scores also its lead's
and sponsor's, hidden from everyone else; scoring by the PMO and the sponsor."""

import datetime as dt

from investment.models import ModelVersion, PortfolioDecision, Scenario
from tests.permission_matrix import DENY, HIDE, OK, PORTFOLIO, profile


def setup(world):
    ModelVersion.objects.create(number=1, why="Matrix")
    world.scenario = Scenario.objects.create(name="Matrix", budget_total=100)
    chosen = Scenario.objects.create(name="Chosen", budget_total=100)
    world.portfolio_decision = PortfolioDecision.objects.create(
        decision="Prioritise",
        made_on=dt.date(2026, 11, 1),
        made_by_account_id="someone",
        minutes_ref={"title": "Board"},
        scenario=chosen,
        scenario_name=chosen.name,
        scenario_revision=1,
    )


RESOLVERS = {
    "scenario_id": lambda world, user: world.scenario.pk,
    "portfolio_decision_id": lambda world, user: world.portfolio_decision.pk,
}

# The lead and the sponsor see their own proposal's scores; the viewer and the editor do not.
SCORES_READ = profile(HIDE, lead=OK, sponsor=OK, site_admin=OK, pmo=OK)
SCORES_WRITE = profile(HIDE, lead=DENY, sponsor=OK, site_admin=OK, pmo=OK)
# A scenario's workbook: hidden (404) from anyone the investment gate does not admit.
GOVERNORS_SEE = profile(HIDE, site_admin=OK, pmo=OK)

CELLS = {
    "GET api/v1/investment/model": PORTFOLIO,
    "GET api/v1/investment/model/versions": PORTFOLIO,
    "POST api/v1/investment/model/versions": PORTFOLIO,
    "GET api/v1/investment/proposals": PORTFOLIO,
    "GET api/v1/investment/proposals/<key>/scores": SCORES_READ,
    "POST api/v1/investment/proposals/<key>/scores": SCORES_WRITE,
    "GET api/v1/investment/scenarios": PORTFOLIO,
    "POST api/v1/investment/scenarios": PORTFOLIO,
    "GET api/v1/investment/scenarios/<scenario_id>": PORTFOLIO,
    "PATCH api/v1/investment/scenarios/<scenario_id>": PORTFOLIO,
    "DELETE api/v1/investment/scenarios/<scenario_id>": PORTFOLIO,
    "POST api/v1/investment/scenarios/<scenario_id>/copy": PORTFOLIO,
    "GET api/v1/investment/compare": PORTFOLIO,
    "POST api/v1/investment/scenarios/<scenario_id>/choose": PORTFOLIO,
    "GET api/v1/investment/decisions": PORTFOLIO,
    "GET api/v1/investment/decisions/<portfolio_decision_id>": PORTFOLIO,
    "PATCH api/v1/investment/decisions/<portfolio_decision_id>": PORTFOLIO,
    "DELETE api/v1/investment/decisions/<portfolio_decision_id>": PORTFOLIO,
    "GET investment/scenarios/<uuid:scenario_id>/export.xlsx": GOVERNORS_SEE,
}
