"""The investment pages of proposals and the scoring model: the ranked proposals, the model
and the decision log for site admins and the governance group, hidden (404) from everyone
else; a proposal's page also its lead's and sponsor's, its score form the PMO's and the
sponsor's. The model version the matrix needs is made by tests/permission_matrix/investment."""

from tests.permission_matrix import DENY, HIDE, OK, profile

GOVERNORS = profile(HIDE, site_admin=OK, pmo=OK)

CELLS = {
    "GET investment/": GOVERNORS,
    "GET investment/proposals/<str:key>/": profile(
        HIDE, lead=OK, sponsor=OK, site_admin=OK, pmo=OK
    ),
    "POST investment/proposals/<str:key>/score/": profile(
        HIDE, lead=DENY, sponsor=OK, site_admin=OK, pmo=OK
    ),
    "GET investment/model/": GOVERNORS,
    "POST investment/model/versions/": GOVERNORS,
    "GET investment/decisions/": GOVERNORS,
}
