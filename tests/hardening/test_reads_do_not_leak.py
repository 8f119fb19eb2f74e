"""Reads that do not leak: a local wiki page is read only by those who can view the project
it was made for (404 otherwise, even with its sequential id), and the page picker offers a
project's own pages alone; the site settings are read whole by site admins and the
governance group, and by anyone else signed in only as far as editing a case needs."""

import json

import pytest
from django.test import Client

from governance.tracker.local import scripting
from governance.wiki.local.models import LocalWikiPage
from tests.conftest import PMO_GROUP, set_governance_group
from tests.factories import ProjectFactory

ROLES = ["outsider", "viewer", "editor", "lead", "sponsor", "site_admin", "pmo"]


def _read(client_for, user, page):
    return client_for(user).get(f"/wiki/pages/{page.pk}/")


@pytest.fixture
def falcon(cast):
    """FALCON: a project the outsider (oscar) leads and ALPHA's people cannot browse."""
    ProjectFactory(key="FALCON", name="Falcon programme", lead=cast.outsider)
    return LocalWikiPage.objects.create(
        space_key="GOV",
        title="Board paper: Falcon programme (FALCON)",
        body="Confidential figures",
        project_key="FALCON",
    )


def test_a_page_made_from_a_template_belongs_to_its_project(cast, bearer):
    response = Client().post(
        "/api/v1/projects/ALPHA/charter/supporting-links/from-template",
        json.dumps({"templateKind": "boardPaper"}),
        content_type="application/json",
        **bearer(cast.lead),
    )
    assert response.status_code == 201, response.content
    assert LocalWikiPage.objects.get().project_key == "ALPHA"


def test_a_project_page_is_read_by_its_viewers_alone(cast, client_for, falcon):
    alpha = LocalWikiPage.objects.create(
        space_key="GOV",
        title="Board paper: Alpha (ALPHA)",
        body="Alpha figures",
        project_key="ALPHA",
    )
    for role in ROLES:
        user = cast.user(role)
        own = _read(client_for, user, alpha)
        expected = 404 if role == "outsider" else 200
        assert own.status_code == expected, role
        other = _read(client_for, user, falcon)
        assert other.status_code == (200 if role == "outsider" else 404), role
        assert b"Confidential figures" not in other.content or role == "outsider"
        assert b"FALCON" not in other.content or role == "outsider"


def test_the_governance_group_gate_applies_to_a_project_page(cast, client_for):
    page = LocalWikiPage.objects.create(
        space_key="GOV", title="Minutes", body="Steering notes", project_key="ALPHA"
    )
    set_governance_group(PMO_GROUP)
    assert _read(client_for, cast.viewer, page).status_code == 404  # browses, not in the group
    assert _read(client_for, cast.pmo, page).status_code == 200
    scripting.ensure_group(PMO_GROUP, members=["pmo", "viewer"])
    assert _read(client_for, cast.viewer, page).status_code == 200


def test_a_page_of_no_project_is_read_by_site_admins_alone(cast, client_for):
    page = LocalWikiPage.objects.create(space_key="GOV", title="Site notes", body="Admin only")
    for role in ROLES:
        response = _read(client_for, cast.user(role), page)
        assert response.status_code == (200 if role == "site_admin" else 404), role
    assert Client().get(f"/wiki/pages/{page.pk}/").status_code == 302  # sign in first


def test_the_page_picker_offers_the_project_s_own_pages_alone(cast, client_for, falcon):
    LocalWikiPage.objects.create(space_key="GOV", title="Board paper: Alpha", project_key="ALPHA")
    LocalWikiPage.objects.create(space_key="GOV", title="Board paper: site draft")
    html = client_for(cast.editor).get(
        "/projects/ALPHA/charter/wiki/", {"q": "board paper"}, HTTP_HX_REQUEST="true"
    )
    assert html.status_code == 200
    text = html.content.decode()
    assert "Board paper: Alpha" in text
    assert "Falcon" not in text and "site draft" not in text
    by_body = client_for(cast.editor).get(
        "/projects/ALPHA/charter/wiki/", {"q": "Confidential"}, HTTP_HX_REQUEST="true"
    )
    assert "Falcon" not in by_body.content.decode()


EVERYONE = {"themes", "currency"}
WHOLE = {
    "governanceGroup",
    "themes",
    "brCadenceDefault",
    "currency",
    "ragThresholds",
    "toleranceDaysDefault",
    "toleranceCostPercentDefault",
    "toleranceBenefitPercentDefault",
    "updatedAt",
    "updatedByAccountId",
    "revision",
}


@pytest.mark.parametrize("group", [None, PMO_GROUP])
def test_site_settings_are_read_whole_by_site_admins_and_the_governance_group(cast, bearer, group):
    from governance.models import SiteSettings

    site = SiteSettings.load()
    site.themes = [{"name": "Cost Out", "enabled": True}, {"name": "Secret", "enabled": False}]
    site.governance_group = group or ""
    site.save()
    whole = {"site_admin", "pmo"} if group else {"site_admin"}
    for role in ROLES:
        response = Client().get("/api/v1/site-settings", **bearer(cast.user(role)))
        assert response.status_code == 200, role
        body = response.json()
        if role in whole:
            assert set(body) == WHOLE, role
            assert [t["name"] for t in body["themes"]] == ["Cost Out", "Secret"]
            assert response.has_header("ETag")
        else:
            assert set(body) == EVERYONE, role
            assert body["themes"] == [{"name": "Cost Out", "enabled": True}], role
            assert not response.has_header("ETag")
            assert "pmo" not in response.content.decode()
    assert Client().get("/api/v1/site-settings").status_code == 401


def test_another_projects_page_cannot_be_linked_nor_its_title_read(cast, bearer, falcon):
    """A supporting link, a decision's evidence link and steering minutes all check a pageId
    against the wiki: another project's page is not there for ALPHA, so its title is never
    copied in and its existence not confirmed."""
    client, auth, api = Client(), bearer(cast.lead), "/api/v1/projects/ALPHA"

    def send(method, path, body):
        return getattr(client, method)(
            f"{api}/{path}", json.dumps(body), content_type="application/json", **auth
        )

    link = {"type": "confluence", "pageId": str(falcon.pk), "label": "", "url": ""}
    answers = [
        send("patch", "charter", {"supportingLinks": [link]}),
        send("post", "decisions", {"decision": "Go", "evidenceLinks": [link]}),
        send(
            "post",
            "minutes",
            {"title": "Steering 1", "heldOn": "2026-01-10", "pageId": str(falcon.pk)},
        ),
    ]
    for answer in answers:
        assert answer.status_code == 422, answer.content
        body = answer.content.decode()
        assert f"No wiki page with id {falcon.pk}" in body
        assert "Falcon" not in body
    own = LocalWikiPage.objects.create(space_key="GOV", title="Alpha notes", project_key="ALPHA")
    linked = send("patch", "charter", {"supportingLinks": [{**link, "pageId": str(own.pk)}]})
    assert linked.status_code == 200, linked.content
    assert "Alpha notes" in linked.content.decode()
