"""The assistant: the action catalogue's API (each action x role is in
tests/agent/test_action_matrix.py), the Assistant page and its HTMX endpoints, and /mcp."""

from tests.permission_matrix import PORTFOLIO

RESOLVERS = {"name": lambda world, user: "find_projects"}

CELLS = {
    # API
    "GET api/v1/agent/actions": PORTFOLIO,
    "POST api/v1/agent/actions/<name>": PORTFOLIO,
}
