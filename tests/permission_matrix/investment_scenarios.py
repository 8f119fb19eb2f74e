"""The scenario pages: the governance group and site admins only; everyone else, a project's
lead and sponsor included, is told nothing (404). The scenario is investment.py's."""

from tests.permission_matrix import HIDE, OK, profile

GOVERNORS_PAGE = profile(HIDE, site_admin=OK, pmo=OK)

CELLS = {
    "GET investment/scenarios/": GOVERNORS_PAGE,
    "POST investment/scenarios/": GOVERNORS_PAGE,
    "GET investment/scenarios/compare/": GOVERNORS_PAGE,
    "GET investment/scenarios/<uuid:scenario_id>/": GOVERNORS_PAGE,
    "GET investment/scenarios/<uuid:scenario_id>/edit/": GOVERNORS_PAGE,
    "POST investment/scenarios/<uuid:scenario_id>/edit/": GOVERNORS_PAGE,
    "POST investment/scenarios/<uuid:scenario_id>/copy/": GOVERNORS_PAGE,
    "POST investment/scenarios/<uuid:scenario_id>/delete/": GOVERNORS_PAGE,
    "POST investment/scenarios/<uuid:scenario_id>/choose/": GOVERNORS_PAGE,
}
