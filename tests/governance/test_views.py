"""Kernel pages: My projects, overview, editor nominations (HTMX), audit, profile, settings."""

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.models import ApiToken, AuditEntry, EditorNomination, SiteSettings
from governance.permissions import caller_for
from governance.services import editors_set, token_create
from tests.factories import ProjectFactory, UserFactory


def test_project_list_shows_only_viewable_projects(cast, client_for):
    page = client_for(cast.viewer).get("/").content.decode()
    assert "Alpha programme" in page and "Other project" not in page
    page = client_for(cast.outsider).get("/").content.decode()
    assert "Other project" in page and "Alpha programme" not in page


def test_project_list_empty_state_says_what_to_do(db, client_for):
    page = client_for(UserFactory()).get("/").content.decode()
    assert "You cannot see any projects yet" in page
    assert "grant you access" in page


def test_project_list_search(cast, client_for):
    page = client_for(cast.viewer).get("/?q=zzz").content.decode()
    assert "No project matches" in page


def test_project_list_runs_a_constant_number_of_queries(db, client_for):
    def count(n):
        user = UserFactory()
        for _ in range(n):
            ProjectFactory(browsers=[user])
        client = client_for(user)
        client.get("/")
        with CaptureQueriesContext(connection) as ctx:
            assert client.get("/").status_code == 200
        return len(ctx.captured_queries)

    assert count(1) == count(30)


def test_overview_offers_editor_management_to_the_lead_only(cast, client_for):
    lead_page = client_for(cast.lead).get("/projects/ALPHA/").content.decode()
    assert (
        "Manage editors" in lead_page and "Eddie Editor" in lead_page and "Sam Sponsor" in lead_page
    )
    for user in (cast.editor, cast.viewer, cast.site_admin):
        assert "Manage editors" not in client_for(user).get("/projects/ALPHA/").content.decode()


def test_project_tabs_link_every_section(cast, client_for):
    page = client_for(cast.viewer).get("/projects/ALPHA/").content.decode()
    for label, url in [
        ("Overview", "/projects/ALPHA/"),
        ("Registers", "/projects/ALPHA/registers/"),
        ("Business case", "/projects/ALPHA/charter/"),
        ("Status", "/projects/ALPHA/status/"),
        ("Audit", "/projects/ALPHA/audit/"),
    ]:
        assert f'href="{url}"' in page and label in page


def test_lead_searches_and_nominates_an_editor_with_htmx(cast, client_for):
    client = client_for(cast.lead)
    response = client.get("/projects/ALPHA/editors/?q=vera", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert "<html" not in body and 'id="editors-panel"' in body and "Vera Viewer" in body
    assert "HX-Request" in response["Vary"]
    response = client.post(
        "/projects/ALPHA/editors/",
        {"action": "add", "account_id": cast.viewer.account_id},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert "Vera Viewer added as an editor." in response.content.decode()
    assert EditorNomination.objects.filter(
        project=cast.project, account_id=cast.viewer.account_id
    ).exists()
    response = client.post(
        "/projects/ALPHA/editors/", {"action": "remove", "account_id": cast.viewer.account_id}
    )
    assert response.status_code == 302
    assert not EditorNomination.objects.filter(account_id=cast.viewer.account_id).exists()


def test_nominating_an_unknown_account_is_refused_in_the_panel(cast, client_for):
    response = client_for(cast.lead).post(
        "/projects/ALPHA/editors/", {"action": "add", "account_id": "bogus"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 422
    assert "No tracker user with account bogus" in response.content.decode()


def test_search_excludes_current_editors_and_the_lead(cast, client_for):
    body = client_for(cast.lead).get("/projects/ALPHA/editors/?q=e").content.decode()
    assert 'Nominate<span class="visually-hidden"> Eddie Editor' not in body
    assert 'Nominate<span class="visually-hidden"> Lena Lead' not in body


def test_editor_search_says_so_when_the_tracker_cannot_be_searched(cast, client_for, monkeypatch):
    from governance.tracker import TrackerError
    from governance.tracker.local.backend import LocalTracker

    def down(self, query, *, limit=20):
        raise TrackerError("Jira is not answering (findUsers, HTTP 503).")

    monkeypatch.setattr(LocalTracker, "search_users", down)
    client = client_for(cast.lead)
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        response = client.get("/projects/ALPHA/editors/?q=vera", **headers)
        assert response.status_code == 200
        body = response.content.decode()
        assert "People cannot be searched in the tracker right now" in body
        assert "Nobody matches" not in body and "Eddie Editor" in body


def test_audit_page_filters_by_kind_and_actor(cast, client_for):
    lead = caller_for(cast.lead, cast.project)
    editors_set(caller=lead, account_ids=[cast.viewer.account_id])
    client = client_for(cast.viewer)
    page = client.get("/projects/ALPHA/audit/").content.decode()
    assert "project.editors_changed" in page and "Lena Lead" in page
    page = client.get(f"/projects/ALPHA/audit/?actor={cast.viewer.account_id}").content.decode()
    assert "No audit entries match these filters" in page
    response = client.get(
        "/projects/ALPHA/audit/?kind=project.editors_changed", HTTP_HX_REQUEST="true"
    )
    assert (
        "<html" not in response.content.decode()
        and "project.editors_changed" in response.content.decode()
    )


def test_profile_creates_shows_once_and_revokes_tokens(cast, client_for):
    client = client_for(cast.viewer)
    response = client.post("/profile/", {"name": "nightly export"})
    assert response.status_code == 201
    token = ApiToken.objects.get(user=cast.viewer)
    page = response.content.decode()
    assert "Copy your new token now" in page and token.prefix in page
    listing = client.get("/profile/").content.decode()
    assert "nightly export" in listing and "Copy your new token now" not in listing
    assert client.post("/profile/", {"name": "  "}).status_code == 422
    response = client.post(f"/profile/tokens/{token.pk}/revoke/")
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_nobody_revokes_someone_elses_token(cast, client_for):
    token, _ = token_create(user=cast.lead, name="mine")
    assert client_for(cast.viewer).post(f"/profile/tokens/{token.pk}/revoke/").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_a_threshold_s_error_names_the_other_threshold_in_words(cast, client_for):
    response = client_for(cast.site_admin).post(
        "/portfolio/settings/",
        {
            "br_cadence_default": "Quarterly",
            "threshold-costGreenMaxPct": "150",
            "threshold-costAmberMaxPct": "20",
        },
    )
    assert response.status_code == 422
    errors = re.findall(r'<p class="field-error">([^<]*)</p>', response.content.decode())
    assert errors == ["Must be at least cost green max % (150)."]


def test_site_settings_page_saves_and_reports_errors(cast, client_for):
    client = client_for(cast.site_admin)
    data = {
        "governance_group": "nope",
        "theme-0-name": "Cost Out",
        "theme-0-enabled": "on",
        "br_cadence_default": "Annual",
        "threshold-costGreenMaxPct": "",
    }
    response = client.post("/portfolio/settings/", data)
    assert response.status_code == 422
    assert "The tracker has no group called" in response.content.decode()
    assert SiteSettings.load().br_cadence_default == "Quarterly"
    data["governance_group"] = "pmo"
    data["threshold-riskRedMinScore"] = "16"
    assert client.post("/portfolio/settings/", data).status_code == 302
    site = SiteSettings.load()
    assert (site.governance_group, site.br_cadence_default, site.rag_thresholds) == (
        "pmo",
        "Annual",
        {"riskRedMinScore": 16},
    )
    assert site.themes == [{"name": "Cost Out", "enabled": True}]
    assert AuditEntry.objects.filter(kind="site_settings.updated").count() == 1


def test_django_admin_is_for_staff_only(cast, client_for):
    assert client_for(cast.lead).get("/admin/").status_code == 302
    response = client_for(cast.site_admin).get("/admin/governance/project/")
    assert response.status_code == 200 and "ALPHA" in response.content.decode()
    for url in (
        "/admin/governance/auditentry/",
        "/admin/governance/apitoken/",
        "/admin/governance/outboundtask/",
        "/admin/local_tracker/localissue/",
        "/admin/local_wiki/localwikipage/",
        "/admin/governance/user/",
    ):
        assert client_for(cast.site_admin).get(url).status_code == 200, url


def test_site_settings_form_refuses_a_stale_save(cast, client_for):
    client = client_for(cast.site_admin)
    page = client.get("/portfolio/settings/").content.decode()
    assert 'name="revision" value="1"' in page
    base = {
        "theme-0-name": "Cost Out",
        "theme-0-enabled": "on",
        "br_cadence_default": "Annual",
        "revision": "1",
    }
    assert client.post("/portfolio/settings/", base).status_code == 302
    response = client.post("/portfolio/settings/", {**base, "br_cadence_default": "Monthly"})
    assert response.status_code == 409
    assert "Another administrator saved these settings" in response.content.decode()
    assert SiteSettings.load().br_cadence_default == "Annual"


def test_person_chip_renders_a_dash_for_an_unnamed_person():
    from django.template import Context, Template

    html = Template("{% load gov %}{% person_chip people '' %}").render(Context({"people": {}}))
    assert html == '<span class="muted">—</span>'


def test_error_pages_vary_on_htmx(cast, client_for):
    client = client_for(cast.viewer)
    for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
        response = client.post("/projects/ALPHA/editors/", {"action": "add"}, **headers)
        assert response.status_code == 403
        assert "HX-Request" in response["Vary"]
    fragment = client.post("/projects/ALPHA/editors/", {"action": "add"}, HTTP_HX_REQUEST="true")
    assert "<html" not in fragment.content.decode()


def test_every_model_has_an_admin():
    from django.apps import apps
    from django.contrib import admin

    from config.layers import APPS

    # The assistant's conversations and proposals are their people's own, not administered.
    ours = (*(app for app in APPS if app != "agent"), "local_tracker", "local_wiki")
    missing = [
        f"{model._meta.app_label}.{model.__name__}"
        for model in apps.get_models()
        if model._meta.app_label in ours and not admin.site.is_registered(model)
    ]
    assert missing == []


def test_admin_cannot_write_governance_records(cast, client_for):
    """Site-admin rights never confer edit: nominations, the project mirror and settings are
    read-only in Django admin; they change only through their audited services."""
    client = client_for(cast.site_admin)
    for url in (
        "/admin/governance/editornomination/add/",
        "/admin/governance/project/add/",
        "/admin/governance/sitesettings/add/",
        "/admin/charter/businesscase/add/",
        "/admin/status/projectstatus/add/",
        "/admin/registers/workpackage/add/",
    ):
        assert client.get(url).status_code == 403, url
    response = client.post(
        f"/admin/governance/project/{cast.project.pk}/change/",
        {
            "key": "ALPHA",
            "name": "x",
            "approval_status": "Draft",
            "sponsor_account_id": cast.site_admin.account_id,
        },
    )
    assert response.status_code == 403
    cast.project.refresh_from_db()
    assert cast.project.sponsor_account_id == cast.sponsor.account_id
    page = client.get(f"/admin/governance/user/{cast.lead.pk}/change/").content.decode()
    assert 'name="account_id"' not in page  # shown, not editable


def test_editor_panel_refuses_an_empty_or_unknown_person(cast, client_for):
    client = client_for(cast.lead)
    for action, account_id in (("remove", ""), ("add", "  "), ("remove", cast.viewer.account_id)):
        response = client.post(
            "/projects/ALPHA/editors/",
            {"action": action, "account_id": account_id},
            HTTP_HX_REQUEST="true",
        )
        assert response.status_code == 422, (action, account_id)
    assert EditorNomination.objects.filter(project=cast.project).count() == 1
