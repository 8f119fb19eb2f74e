"""Stable project ids (item 8 of the Atlassian issue): governance mirrors are keyed by the
tracker's project id, so a project whose key changes in Jira keeps its governance project and
registers; the old key keeps working in URLs, as a redirect to the new key's URL (pages and
API), for people who may see the project. The Jira stand-in changes a key as Jira does: the
project keeps its id, `getProject` answers the old key with the project as it is now, and
`expand=projectKeys` lists every key it had
(https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-projects/#api-rest-api-3-project-projectidorkey-get;
https://support.atlassian.com/jira-cloud-administration/docs/edit-a-projects-details/)."""

import importlib

import pytest
from django.apps import apps as django_apps

from governance import mirror
from governance.models import AuditEntry, Project, TrackerFieldState
from governance.tracker.local.models import LocalProject
from registers.models import WorkPackage
from tests.factories import WorkPackageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(cast, fake_jira, settings):
    settings.ATLASSIAN_RETRIES = 0
    for person in (cast.lead, cast.viewer, cast.outsider):
        fake_jira.grant(person)
    return fake_jira


def alpha_id() -> str:
    return str(10000 + LocalProject.objects.get(name="Alpha programme").pk)


def test_a_renamed_key_is_the_same_governance_project_with_its_registers(site, cast, client_for):
    wp = WorkPackageFactory(project=cast.project, name="Build")
    before = Project.objects.get(key="ALPHA")
    assert before.tracker_id == alpha_id()
    site.rename("ALPHA", "OMEGA")

    page = client_for(cast.lead).get("/projects/OMEGA/registers/work-packages/")
    assert page.status_code == 200
    assert "Build" in page.content.decode()
    # Reading never writes: the page followed the key; the row waits for the upkeep.
    assert Project.objects.get(pk=before.pk).key == "ALPHA"
    assert not AuditEntry.objects.filter(kind="project.key_changed").exists()
    mirror.refresh_all()
    project = Project.objects.get(tracker_id=alpha_id())
    assert project.pk == before.pk and project.key == "OMEGA"  # not a new empty project
    assert project.former_keys == ["ALPHA"]
    assert Project.objects.count() == 2  # ALPHA (now OMEGA) and OTHER, nothing new
    assert WorkPackage.objects.get(pk=wp.pk).project_id == before.pk
    entry = AuditEntry.objects.get(kind="project.key_changed")
    assert entry.changes["key"] == {"before": "ALPHA", "after": "OMEGA"}


def test_the_old_key_in_a_page_url_redirects_to_the_new_key(site, cast, client_for):
    site.rename("ALPHA", "OMEGA")
    client = client_for(cast.viewer)
    old = client.get("/projects/ALPHA/registers/work-packages/?sort=name")
    assert old.status_code == 301
    assert old["Location"] == "/projects/OMEGA/registers/work-packages/?sort=name"
    assert client.get(old["Location"]).status_code == 200
    # Known now: the old key still redirects, without asking Jira to resolve it again.
    assert client.get("/projects/ALPHA/").status_code == 301


def test_the_old_key_in_an_api_url_redirects_reads_with_301_and_writes_with_308(
    site, cast, client_for, bearer
):
    site.rename("ALPHA", "OMEGA")
    headers = bearer(cast.lead)
    read = client_for(None).get("/api/v1/projects/ALPHA", **headers)
    assert read.status_code == 301
    assert read["Location"] == "/api/v1/projects/OMEGA"
    assert read.json()["error"] == {
        "code": "moved",
        "message": "Project ALPHA is now OMEGA.",
        "key": "OMEGA",
    }
    write = client_for(None).put(
        "/api/v1/projects/ALPHA/editors", {}, content_type="application/json", **headers
    )
    assert write.status_code == 308
    assert write["Location"] == "/api/v1/projects/OMEGA/editors"


def test_the_old_key_tells_nothing_to_someone_who_may_not_see_the_project(site, cast, client_for):
    site.rename("ALPHA", "OMEGA")
    assert client_for(cast.lead).get("/projects/OMEGA/").status_code == 200  # now known
    assert client_for(cast.outsider).get("/projects/ALPHA/").status_code == 404
    assert client_for(cast.outsider).get("/projects/OMEGA/").status_code == 404


def test_my_projects_follows_a_renamed_key_without_a_second_mirror(site, cast, client_for):
    site.rename("ALPHA", "OMEGA")
    page = client_for(cast.viewer).get("/")
    assert page.status_code == 200
    assert "/projects/OMEGA/" in page.content.decode()
    mirror.refresh_all()  # the upkeep writes what the page showed
    assert list(Project.objects.order_by("key").values_list("key", "tracker_id")) == [
        ("OMEGA", alpha_id()),
        ("OTHER", str(10000 + LocalProject.objects.get(key="OTHER").pk)),
    ]


def test_a_new_project_taking_an_old_key_gets_a_mirror_of_its_own(site, cast, client_for):
    from governance.tracker.local import scripting

    site.rename("ALPHA", "OMEGA")
    scripting.ensure_project("ALPHA", name="New alpha", lead="lead")
    # Not mirrored yet: not found (the old key does not redirect to a project that lost it).
    assert client_for(cast.lead).get("/projects/ALPHA/").status_code == 404
    mirror.sync_browsable(cast.lead.account_id)  # what signing in does
    page = client_for(cast.lead).get("/projects/ALPHA/")
    assert page.status_code == 200
    assert "New alpha" in page.content.decode()
    old = Project.objects.get(tracker_id=alpha_id())
    assert old.key == "OMEGA"  # followed when the new project took its old key
    assert Project.objects.get(key="ALPHA").name == "New alpha"


def test_the_local_tracker_keys_mirrors_by_its_row_id_too(cast, client_for):
    local = LocalProject.objects.get(key="ALPHA")
    assert cast.project.tracker_id == str(local.pk)
    local.key = "OMEGA"
    local.save()
    moved = client_for(cast.viewer).get("/projects/ALPHA/status/")
    assert moved.status_code == 301 and moved["Location"] == "/projects/OMEGA/status/"
    assert Project.objects.get(pk=cast.project.pk).key == "OMEGA"


def test_the_migration_backfills_ids_from_what_is_known_without_the_tracker(cast, settings):
    migration = importlib.import_module("governance.migrations.0009_project_tracker_id")
    Project.objects.update(tracker_id=None)
    migration.backfill_tracker_ids(django_apps, None)
    assert Project.objects.get(key="ALPHA").tracker_id == str(
        LocalProject.objects.get(key="ALPHA").pk
    )

    settings.TRACKER_BACKEND = "jira"
    Project.objects.update(tracker_id=None)
    TrackerFieldState.objects.create(name="Work Package", projects={"ALPHA": "10042"})
    migration.backfill_tracker_ids(django_apps, None)
    assert Project.objects.get(key="ALPHA").tracker_id == "10042"
    assert Project.objects.get(key="OTHER").tracker_id is None  # filled on its next read
