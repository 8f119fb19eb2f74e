"""The access gate with TRACKER_BACKEND=jira: Jira's answers come from its cache
(TRACKER_CACHE_SECONDS), the app's part is one SQL statement, read fresh on every request."""

import pytest
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from governance import permissions
from governance.atlassian.context import acting_account
from governance.errors import NotFound
from governance.models import AtlassianGrant


def _request(user):
    request = RequestFactory().get("/")
    request.user = user
    return request


@pytest.fixture
def acting():
    tokens = []

    def act(user):
        tokens.append(acting_account.set(user.account_id))

    yield act
    for token in reversed(tokens):
        acting_account.reset(token)


def _counted(call, user, *args):
    """The call's result and the app's SQL statements (the Jira stand-in answers HTTP from
    the local tracker's tables: those reads are Jira's, not the app's)."""
    with CaptureQueriesContext(connection) as ctx:
        result = call(_request(user), *args)
    return result, sum("local_tracker_" not in q["sql"] for q in ctx.captured_queries)


def test_project_for_is_one_statement_with_jira(cast, fake_jira, acting):
    for person in (cast.lead, cast.editor, cast.viewer):
        fake_jira.grant(person)
    for person, can_edit in ((cast.lead, True), (cast.editor, True), (cast.viewer, False)):
        acting(person)
        permissions.project_for(_request(person), "ALPHA")  # Jira's answers cached
        (_, caller), queries = _counted(permissions.project_for, person, "ALPHA")
        assert caller.can_view and caller.can_edit == can_edit
        assert queries == 1


def test_viewable_projects_is_one_statement_with_jira(cast, fake_jira, acting):
    fake_jira.grant(cast.editor)
    acting(cast.editor)
    permissions.viewable_projects(_request(cast.editor))  # Jira's listing cached
    rows, queries = _counted(permissions.viewable_projects, cast.editor)
    assert [p.key for p, _ in rows] == ["ALPHA"] and rows[0][1].can_edit
    assert queries == 1


def test_revocations_take_effect_on_the_next_request_with_jira(cast, fake_jira, acting):
    fake_jira.grant(cast.editor)
    acting(cast.editor)
    assert permissions.project_for(_request(cast.editor), "ALPHA")[1].can_edit
    assert permissions.viewable_projects(_request(cast.editor))
    cast.project.editor_nominations.filter(account_id=cast.editor.account_id).delete()
    (_, caller), queries = _counted(permissions.project_for, cast.editor, "ALPHA")
    assert caller.can_view and not caller.can_edit and queries == 1
    # Signed out of Atlassian (the grant deleted): nothing, although Jira's answers are cached.
    AtlassianGrant.objects.filter(account_id=cast.editor.account_id).delete()
    with pytest.raises(NotFound):
        permissions.project_for(_request(cast.editor), "ALPHA")
    assert permissions.viewable_projects(_request(cast.editor)) == []
