"""Portfolio and site settings."""

from tests.permission_matrix import PORTFOLIO, SITE_ADMIN

CELLS = {
    "GET portfolio/": PORTFOLIO,
    "GET portfolio/settings/": SITE_ADMIN,
    "POST portfolio/settings/": SITE_ADMIN,
}
