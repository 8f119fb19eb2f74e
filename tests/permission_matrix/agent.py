"""The assistant: the action catalogue's API (each action x role is in
tests/agent/test_action_matrix.py) and the Assistant page with its HTMX endpoints. Everything
is behind the portfolio/agent gate; a proposal belongs to its person alone."""

import datetime as dt

from django.utils import timezone

from agent.models import Proposal
from tests.permission_matrix import LOGIN, PORTFOLIO, profile

# MCP takes a bearer token only, a personal API token or an OAuth token for /mcp
# (tests/agent/test_mcp.py, test_mcp_oauth.py): a browser session is not enough.
TOKEN_ONLY = profile(LOGIN)


def _own_proposal(world, user):
    if user is None:
        return "00000000-0000-0000-0000-000000000000"
    return Proposal.objects.create(
        user=user,
        action="add_risk",
        arguments={"projectKey": world.project.key, "title": "Matrix"},
        expires_at=timezone.now() + dt.timedelta(minutes=5),
    ).pk


RESOLVERS = {
    "name": lambda world, user: "find_projects",
    "proposal_id": _own_proposal,
}

CELLS = {
    # HTML
    "GET assistant/": PORTFOLIO,
    "POST assistant/": PORTFOLIO,
    "POST assistant/clear/": PORTFOLIO,
    "GET assistant/actions/<str:name>/": PORTFOLIO,
    "POST assistant/actions/<str:name>/": PORTFOLIO,
    "POST assistant/proposals/<uuid:proposal_id>/confirm/": PORTFOLIO,
    "POST assistant/proposals/<uuid:proposal_id>/dismiss/": PORTFOLIO,
    "GET mcp": TOKEN_ONLY,
    "POST mcp": TOKEN_ONLY,
    "DELETE mcp": TOKEN_ONLY,
    # API
    "GET api/v1/agent/actions": PORTFOLIO,
    "POST api/v1/agent/actions/<name>": PORTFOLIO,
}
