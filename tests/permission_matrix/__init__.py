"""Expected outcomes of the permission matrix, one module per app. Each module defines:

- CELLS: {"METHOD route": {role: outcome}} for every URL pattern it owns, where route is the
  Django route of the whole pattern (for example "api/v1/projects/<key>/editors") and every
  role of ROLES has a cell;
- RESOLVERS (optional): {url kwarg name: fn(world, user) -> value};
- setup(world) (optional): create the objects its URLs need, on the shared `world`.

Outcomes: OK (passed the gate: any answer but 401/403/404/405 or a redirect to sign-in),
LOGIN (302 to sign-in, or 401 from the API), DENY (403), HIDE (404).
"""

import importlib
import pkgutil

OK, LOGIN, DENY, HIDE = "ok", "login", "deny", "hide"
ROLES = ["anonymous", "outsider", "viewer", "editor", "lead", "sponsor", "site_admin", "pmo"]


def profile(default: str, anonymous: str = LOGIN, **roles: str) -> dict[str, str]:
    cells = {role: default for role in ROLES}
    cells["anonymous"] = anonymous
    cells.update(roles)
    return cells


PUBLIC = profile(OK, anonymous=OK)
SIGNED_IN = profile(OK)
# Project surfaces. The outsider cannot browse the project: it is hidden. The pmo role is
# tested with the governance group set to a group they belong to.
READ = profile(OK, outsider=HIDE)
EDIT = profile(DENY, outsider=HIDE, editor=OK, lead=OK)
LEAD_ONLY = profile(DENY, outsider=HIDE, lead=OK)
SPONSOR_ONLY = profile(DENY, outsider=HIDE, sponsor=OK)
# Site-wide: site admins; the portfolio gate admits site admins while no group is set and the
# group's members (pmo) once it is.
SITE_ADMIN = profile(DENY, site_admin=OK)
PORTFOLIO = profile(DENY, site_admin=OK, pmo=OK)


def load() -> tuple[dict, dict, list]:
    cells: dict = {}
    resolvers: dict = {}
    setups: list = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for key, value in module.CELLS.items():
            if key in cells:
                raise AssertionError(f"{key} has cells in two modules")
            cells[key] = value
        resolvers.update(getattr(module, "RESOLVERS", {}))
        if hasattr(module, "setup"):
            setups.append(module.setup)
    return cells, resolvers, setups
