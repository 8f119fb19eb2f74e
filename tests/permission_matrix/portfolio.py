"""Portfolio, its exports, the lessons across projects, and site settings."""

from tests.permission_matrix import PORTFOLIO, SITE_ADMIN

CELLS = {
    "GET portfolio/": PORTFOLIO,
    "POST portfolio/columns/": PORTFOLIO,
    "GET portfolio/export/": PORTFOLIO,
    "GET portfolio/lessons/": PORTFOLIO,
    "GET portfolio/settings/": SITE_ADMIN,
    "POST portfolio/settings/": SITE_ADMIN,
    # API
    "GET api/v1/portfolio": PORTFOLIO,
    "GET api/v1/portfolio/lessons": PORTFOLIO,
}
