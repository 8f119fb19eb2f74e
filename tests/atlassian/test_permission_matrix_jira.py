"""The permission matrix once more, with TRACKER_BACKEND=jira answering from the contract
mock (the Jira stand-in over the same cast): every URL x role x method gives the same
outcome as with the local tracker. Only Atlassian sign-in itself differs: it exists here."""

import pytest

from tests import test_permission_matrix as matrix
from tests.permission_matrix import OK, ROLES

JIRA_CELLS = {
    "GET accounts/atlassian/login/": dict.fromkeys(ROLES, OK),
    "GET accounts/atlassian/callback/": dict.fromkeys(ROLES, OK),
}


@pytest.mark.parametrize("case", matrix.CASES)
def test_permission_matrix_with_jira(case, cast, fake_jira, monkeypatch):
    for person in (cast.lead, cast.editor, cast.viewer, cast.sponsor, cast.outsider):
        fake_jira.grant(person)
    for person in (cast.site_admin, cast.pmo):
        fake_jira.grant(person)
    for key, cells in JIRA_CELLS.items():
        monkeypatch.setitem(matrix.CELLS, key, cells)
    matrix.check(case, matrix.world_for(cast))
