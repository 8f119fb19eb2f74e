"""Reading never writes: the access gate reads the project mirror and the tracker, and the
mirror's upkeep (`governance.mirror`) writes it at sign-in, from Jira's webhooks, from the
local tracker's own saves and in the periodic job."""

import re

import pytest
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from governance import mirror, permissions
from governance.errors import Moved, NotFound
from governance.models import AuditEntry, Project
from governance.tracker.local.models import LocalAccount, LocalProject
from tests.factories import UserFactory

WRITE = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE|MERGE|UPSERT)\b|\bFOR UPDATE\b", re.I)


def _request(user):
    request = RequestFactory().get("/")
    request.user = user
    return request


def _gate_reads(cast, keys):
    """Every read the gate offers, for each person of the cast and each key: the project's
    page gate, the list, the portfolio and site gates and a caller on a stored row."""
    people = (cast.lead, cast.editor, cast.viewer, cast.outsider, cast.site_admin, cast.pmo)
    answers = {}
    for user in people:
        for key in keys:
            try:
                project, caller = permissions.project_for(_request(user), key)
                answers[user.username, key] = (project.key, project.name, caller.is_lead)
            except (NotFound, Moved) as refusal:
                answers[user.username, key] = type(refusal).__name__
        listed = permissions.viewable_projects(_request(user))
        answers[user.username, "list"] = sorted((p.key, p.name) for p, _ in listed)
        permissions.has_portfolio_access(user, _request(user))
        permissions.may_read_site_settings(user, _request(user))
        permissions.caller_for(user, Project.objects.get(pk=cast.project.pk))
    return answers


def _writes(captured):
    return [q["sql"] for q in captured if WRITE.search(q["sql"])]


def _stored(pk):
    return Project.objects.values("key", "name", "lead_account_id", "former_keys").get(pk=pk)


def test_the_gate_writes_nothing_when_the_mirror_is_current(cast):
    with CaptureQueriesContext(connection) as ctx:
        answers = _gate_reads(cast, ["ALPHA", "OTHER", "NOPE"])
    assert ctx.captured_queries and _writes(ctx.captured_queries) == []
    assert answers["lead", "ALPHA"] == ("ALPHA", "Alpha programme", True)
    assert answers["outsider", "ALPHA"] == "NotFound"


def test_the_gate_writes_nothing_on_stale_mirror_rows_and_answers_as_the_tracker_says(cast):
    """The tracker renamed ALPHA, handed it to the outsider and changed its key (an update
    that tells nobody, as a tracker without webhooks): the gate answers from the tracker's
    values at once, in memory, and leaves the rows as stored for the upkeep."""
    before, audits = _stored(cast.project.pk), AuditEntry.objects.count()
    outsider = LocalAccount.objects.get(account_id=cast.outsider.account_id)
    LocalProject.objects.filter(key="ALPHA").update(key="ALPHA2", name="Renamed", lead=outsider)
    with CaptureQueriesContext(connection) as ctx:
        answers = _gate_reads(cast, ["ALPHA", "ALPHA2"])
    assert _writes(ctx.captured_queries) == []
    assert _stored(cast.project.pk) == before and AuditEntry.objects.count() == audits
    assert answers["outsider", "ALPHA2"] == ("ALPHA2", "Renamed", True)
    assert answers["lead", "ALPHA2"] == ("ALPHA2", "Renamed", False)
    assert answers["lead", "ALPHA"] == "Moved"  # the former key redirects
    assert ("ALPHA2", "Renamed") in answers["viewer", "list"]
    # The periodic upkeep writes what the tracker said, the key's change audited.
    mirror.refresh_all()
    stored = _stored(cast.project.pk)
    assert (stored["key"], stored["name"], stored["former_keys"]) == (
        "ALPHA2",
        "Renamed",
        ["ALPHA"],
    )
    assert stored["lead_account_id"] == cast.outsider.account_id
    assert AuditEntry.objects.filter(kind="project.key_changed", project_key="ALPHA2").exists()


def test_a_project_not_mirrored_yet_is_not_found_until_its_upkeep(cast):
    """A tracker project made without telling (no save signal: `bulk_create`) has no mirror:
    the gate does not make one; sign-in and the periodic job do."""
    lead = LocalAccount.objects.get(account_id=cast.lead.account_id)
    (fresh,) = LocalProject.objects.bulk_create([LocalProject(key="NEWP", name="New", lead=lead)])
    with CaptureQueriesContext(connection) as ctx:
        with pytest.raises(NotFound):
            permissions.project_for(_request(cast.lead), "NEWP")
        listed = [p.key for p, _ in permissions.viewable_projects(_request(cast.lead))]
    assert _writes(ctx.captured_queries) == [] and "NEWP" not in listed
    assert not Project.objects.filter(key="NEWP").exists()
    mirror.sync_browsable(cast.lead.account_id)  # what sign-in does
    project, caller = permissions.project_for(_request(cast.lead), "NEWP")
    assert project.tracker_id == str(fresh.pk) and caller.is_lead


def test_sign_in_mirrors_the_persons_projects(cast, client):
    lead = LocalAccount.objects.get(account_id=cast.viewer.account_id)
    LocalProject.objects.bulk_create([LocalProject(key="SIGNED", name="Signed", lead=lead)])
    assert not Project.objects.filter(key="SIGNED").exists()
    client.force_login(cast.viewer)
    assert Project.objects.get(key="SIGNED").lead_account_id == cast.viewer.account_id


def test_the_local_trackers_saves_are_its_webhook(db):
    user = UserFactory()
    account = LocalAccount.objects.get(account_id=user.account_id)
    project = LocalProject.objects.create(key="SAVED", name="Saved", lead=account)
    assert Project.objects.get(tracker_id=str(project.pk)).key == "SAVED"
    project.key, project.name = "SAVED2", "Saved again"
    project.save()
    stored = Project.objects.get(tracker_id=str(project.pk))
    assert (stored.key, stored.name, stored.former_keys) == ("SAVED2", "Saved again", ["SAVED"])


def test_the_compiled_gate_keeps_nothing_of_a_connection(cast, client_for):
    # The statements are kept per process; a converter bound to the connection that compiled
    # them would be another thread's connection for the next request.
    from governance import gatesql

    assert client_for(cast.lead).get("/projects/ALPHA/").status_code == 200
    assert client_for(cast.lead).get("/").status_code == 200
    assert gatesql._STATEMENTS
    for statement in gatesql._STATEMENTS.values():
        for _column, functions, _expression in statement.converters:
            for function in functions or ():
                assert getattr(function, "__self__", None) is None, function
