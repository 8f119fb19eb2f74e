"""The project's own apps, in layer order: each imports only from the apps before it
(tests/test_layering.py holds it). The settings, the API's routers and the source scans of the
tests read this one list, so a new app is named here once."""

APPS: tuple[str, ...] = (
    "governance",
    "registers",
    "charter",
    "status",
    "gates",
    "portfolio",
    "investment",
    "agent",
)
