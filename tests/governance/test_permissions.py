"""The access gate (docs/product.md section 1)."""

import pytest
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from governance import gatesql, permissions
from governance.errors import Forbidden, NotFound
from governance.tracker.local import scripting
from tests.conftest import PMO_GROUP as PMO
from tests.conftest import set_governance_group
from tests.factories import ProjectFactory, UserFactory, nominate


def _request(user):
    request = RequestFactory().get("/")
    request.user = user
    return request


def caller(user, project):
    return permissions.caller_for(user, project)


def test_lead_and_nominated_editor_edit_viewer_does_not(cast):
    assert caller(cast.lead, cast.project).can_edit
    assert caller(cast.editor, cast.project).can_edit
    assert not caller(cast.viewer, cast.project).can_edit
    assert caller(cast.viewer, cast.project).can_view


def test_site_admin_never_edits_unless_nominated(cast):
    admin = caller(cast.site_admin, cast.project)
    assert admin.is_site_admin and admin.can_view and not admin.can_edit
    nominate(cast.project, cast.site_admin)
    assert caller(cast.site_admin, cast.project).can_edit


def test_nominated_editor_who_cannot_browse_gets_nothing(cast):
    stranger = UserFactory(username="stranger")
    nominate(cast.project, stranger)
    role = caller(stranger, cast.project)
    assert not role.can_view and not role.can_edit


def test_outsider_gets_not_found_and_viewer_write_forbidden(cast):
    with pytest.raises(NotFound):
        permissions.project_for(_request(cast.outsider), "ALPHA")
    with pytest.raises(NotFound):
        permissions.project_for(_request(cast.outsider), "NOSUCH")
    with pytest.raises(Forbidden):
        permissions.editable_project_for(_request(cast.viewer), "ALPHA")
    with pytest.raises(Forbidden):
        permissions.lead_project_for(_request(cast.editor), "ALPHA")


def test_sponsor_role_follows_the_decision_authority(cast):
    assert caller(cast.sponsor, cast.project).is_sponsor
    assert not caller(cast.lead, cast.project).is_sponsor
    assert not caller(cast.sponsor, cast.project).can_edit


def test_group_gate_is_a_no_op_until_a_group_is_set(cast):
    assert caller(cast.viewer, cast.project).can_view
    set_governance_group("pmo")
    # A fresh computation (the memo is per request).
    assert not caller(cast.viewer, cast.project).can_view
    assert caller(cast.pmo, cast.project).can_view


def test_group_gate_admits_steering_committee_members_who_browse(cast):
    set_governance_group("pmo")
    cast.project.steering_account_ids = [cast.viewer.account_id, cast.outsider.account_id]
    cast.project.save()
    assert caller(cast.viewer, cast.project).can_view
    # Steering membership never replaces tracker browse permission.
    assert not caller(cast.outsider, cast.project).can_view


def test_group_gate_applies_to_the_lead_too(cast):
    set_governance_group("pmo")
    with pytest.raises(NotFound):
        permissions.project_for(_request(cast.lead), "ALPHA")


def test_portfolio_gate_admins_only_without_group_then_group_only(cast):
    assert permissions.has_portfolio_access(cast.site_admin)
    assert not permissions.has_portfolio_access(cast.lead)
    assert not permissions.has_portfolio_access(cast.pmo)
    set_governance_group("pmo")
    assert permissions.has_portfolio_access(cast.pmo)
    assert not permissions.has_portfolio_access(cast.site_admin)
    scripting.ensure_group("pmo", members=["site_admin"])
    assert permissions.has_portfolio_access(cast.site_admin)


def test_change_approver_is_the_named_person_else_the_sponsor(cast):
    sponsor, viewer, lead = (
        caller(u, cast.project) for u in (cast.sponsor, cast.viewer, cast.lead)
    )
    assert sponsor.is_change_decider(approver_account_id=None, approver_seat=None)
    assert not lead.is_change_decider(approver_account_id=None, approver_seat=None)
    assert viewer.is_change_decider(approver_account_id=cast.viewer.account_id, approver_seat=None)
    assert not sponsor.is_change_decider(
        approver_account_id=cast.viewer.account_id, approver_seat=None
    )
    seat = {"accountId": cast.viewer.account_id, "displayName": "Vera"}
    assert viewer.is_change_decider(approver_account_id=None, approver_seat=seat)
    external = {"displayName": "Outside Auditor", "email": "a@example.test"}
    assert sponsor.is_change_decider(approver_account_id=None, approver_seat=external)


def test_withdraw_by_proposer_or_editor(cast):
    viewer = caller(cast.viewer, cast.project)
    assert viewer.may_withdraw_change(proposer_account_id=cast.viewer.account_id)
    assert not viewer.may_withdraw_change(proposer_account_id=cast.lead.account_id)
    assert caller(cast.editor, cast.project).may_withdraw_change(
        proposer_account_id=cast.lead.account_id
    )


def test_viewable_projects_runs_a_constant_number_of_queries(db):
    def count_for(n):
        user = UserFactory()
        for _ in range(n):
            ProjectFactory(browsers=[user])
        permissions.viewable_projects(_request(user))  # first sight creates the mirrors
        with CaptureQueriesContext(connection) as ctx:
            rows = permissions.viewable_projects(_request(user))
        assert len(rows) == n
        return len(ctx.captured_queries)

    assert count_for(1) == count_for(25)


# --- the gate in one statement (docs/decisions/0080, "The access gate in one statement") ----


def _gate(user, key):
    with CaptureQueriesContext(connection) as ctx:
        _, caller = permissions.project_for(_request(user), key)
    return caller, len(ctx.captured_queries)


def test_project_for_reads_the_gate_in_one_statement(cast):
    set_governance_group(PMO)
    scripting.ensure_group(PMO, members=["pmo", "lead", "editor"])
    permissions.project_for(_request(cast.lead), "ALPHA")  # mirrors in place
    for user, can_edit in ((cast.lead, True), (cast.editor, True), (cast.pmo, False)):
        caller, queries = _gate(user, "ALPHA")
        assert caller.can_view and caller.can_edit == can_edit
        assert queries == 1
    with CaptureQueriesContext(connection) as ctx:
        request = _request(cast.site_admin)
        with pytest.raises(NotFound):  # browses, but outside the group and the committee
            permissions.project_for(request, "ALPHA")
        assert permissions.is_site_admin(cast.site_admin, request)
        assert permissions.governance_group(request) == PMO
    assert len(ctx.captured_queries) == 1


def test_viewable_projects_reads_the_gate_in_one_statement(db):
    user = UserFactory()
    for _ in range(5):
        ProjectFactory(browsers=[user])
    ProjectFactory(lead=user)
    permissions.viewable_projects(_request(user))  # first sight creates the mirrors
    with CaptureQueriesContext(connection) as ctx:
        rows = permissions.viewable_projects(_request(user))
    assert len(rows) == 6 and len(ctx.captured_queries) == 1
    ProjectFactory(browsers=[user])  # a new tracker project: its mirror is made, then 1 again
    assert len(permissions.viewable_projects(_request(user))) == 7
    with CaptureQueriesContext(connection) as ctx:
        assert len(permissions.viewable_projects(_request(user))) == 7
    assert len(ctx.captured_queries) == 1


def test_a_revoked_grant_or_nomination_takes_effect_on_the_next_request(cast):
    from governance.tracker.local.models import LocalBrowseGrant, LocalProject

    assert _gate(cast.editor, "ALPHA")[0].can_edit
    cast.project.editor_nominations.filter(account_id=cast.editor.account_id).delete()
    caller, queries = _gate(cast.editor, "ALPHA")
    assert caller.can_view and not caller.can_edit and queries == 1
    LocalBrowseGrant.objects.filter(account__account_id=cast.editor.account_id).delete()
    with pytest.raises(NotFound):
        permissions.project_for(_request(cast.editor), "ALPHA")
    assert [p.key for p, _ in permissions.viewable_projects(_request(cast.editor))] == []
    # The lead handed over in the tracker: the mirror follows on the next request.
    LocalProject.objects.filter(key="ALPHA").update(lead=LocalProject.objects.get(key="OTHER").lead)
    project, caller = permissions.project_for(_request(cast.outsider), "ALPHA")
    assert caller.is_lead and project.lead_account_id == cast.outsider.account_id
    assert not _gate(cast.sponsor, "ALPHA")[0].is_lead
    assert not _gate(cast.lead, "ALPHA")[0].can_edit  # browses still, by a grant


def test_the_portfolio_gate_is_one_statement(cast):
    set_governance_group(PMO)
    for user, admitted in ((cast.pmo, True), (cast.site_admin, False), (cast.viewer, False)):
        request = _request(user)
        with CaptureQueriesContext(connection) as ctx:
            assert permissions.has_portfolio_access(user, request) == admitted
            assert permissions.may_read_site_settings(user, request) == (user != cast.viewer)
            assert permissions.site_settings(request).governance_group == PMO
        assert len(ctx.captured_queries) == 1
    from governance.tracker.local.models import LocalGroup

    LocalGroup.objects.get(name=PMO).members.clear()  # refused on the next request
    assert not permissions.has_portfolio_access(cast.pmo, _request(cast.pmo))


def _bound(statement, account_id, key=""):
    return tuple(
        account_id if p == gatesql.ACCOUNT else key if p == gatesql.KEY else p
        for p in statement.params
    )


def test_the_gate_statement_is_compiled_once_and_binds_each_requests_values(cast):
    """The gate's SQL is compiled once per process; a request binds the person and the key
    into the very statement Django would compile for them (docs/decisions/0085, "The
    gate's statement compiled once")."""
    from governance.tracker import get_tracker

    tracker = get_tracker()
    permissions.project_for(_request(cast.lead), "ALPHA")
    permissions.viewable_projects(_request(cast.lead))
    for user in (cast.lead, cast.viewer):
        account = user.account_id
        compiled = gatesql.statement("project", tracker, account, None)
        assert compiled is gatesql.statement("project", tracker, "another", None)
        queryset, gate_names, site_names = gatesql.gate_queryset(account, tracker)
        fresh = gatesql.compile_statement(queryset.filter(key="ALPHA"), gate_names, site_names)
        assert (compiled.sql, _bound(compiled, account, "ALPHA")) == (fresh.sql, fresh.params)
        listed = gatesql.statement("browsable", tracker, account, None)
        keys, count = tracker.gate_browsable_keys(account)
        every, gate_names, site_names = gatesql.gate_queryset(account, tracker, every=True)
        fresh = gatesql.compile_statement(
            every.filter(key__in=keys).annotate(gate_count=count),
            [*gate_names, "gate_count"],
            site_names,
        )
        assert (listed.sql, _bound(listed, account)) == (fresh.sql, fresh.params)
    # Each person reads their own answers from the one statement, and the row as stored.
    project, role = permissions.project_for(_request(cast.lead), "ALPHA")
    stored = type(project).objects.get(key="ALPHA")
    assert role.is_lead and project._state.db == stored._state.db and not project._state.adding
    assert {f.attname: getattr(project, f.attname) for f in stored._meta.concrete_fields} == {
        f.attname: getattr(stored, f.attname) for f in stored._meta.concrete_fields
    }
    assert project.created_at.utcoffset() is not None
    assert not permissions.project_for(_request(cast.viewer), "ALPHA")[1].is_lead


@pytest.mark.parametrize("listing", [False, True])
def test_the_gates_site_settings_are_the_stored_row_json_fields_included(cast, listing):
    """The gate reads the site settings in its one statement, JSON columns as text parsed
    once a request: they are the stored values, whatever the database returns."""
    from governance.models import SiteSettings

    site = SiteSettings.load()
    site.themes = ["Growth", "Ünïcode"]
    site.rag_thresholds = {"costAmberPct": 7.5}
    site.save()
    request = RequestFactory().get("/")
    request.user = cast.lead
    if listing:
        assert permissions.viewable_projects(request)
    else:
        permissions.project_for(request, "ALPHA")
    read = permissions.site_settings(request)
    assert read.themes == ["Growth", "Ünïcode"]
    assert read.rag_thresholds == {"costAmberPct": 7.5}
    assert read.pk == site.pk
