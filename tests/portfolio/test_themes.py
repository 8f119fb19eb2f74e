"""Renaming and disabling a theme: the cases move with the name (one transaction, each case
audited), a disabled theme stays on the cases that have it but no new case takes it, and the
portfolio's theme filter offers the enabled themes and those in use, never a forgotten name."""

import pytest

from charter.models import BusinessCase
from charter.services.thesis import charter_update
from governance.errors import ValidationFailed
from governance.models import AuditEntry, SiteSettings, User
from governance.permissions import caller_for
from governance.services import site_settings_update
from tests.portfolio.test_portfolio import keys, make_project

THEMES = [
    {"name": "Cost Out", "enabled": True},
    {"name": "Strategic", "enabled": True},
    {"name": "Productivity", "enabled": True},
]


@pytest.fixture
def themed(cast):
    site_settings_update(actor=cast.site_admin, data={"themes": THEMES})
    admin = cast.site_admin
    make_project("RED", browsers=[admin], theme="Cost Out")
    make_project("AMB", browsers=[admin], theme="cost out")
    make_project("GRN", browsers=[admin], theme="Strategic")
    return cast


def themes_of(*keys):
    return [BusinessCase.objects.get(project__key=k).theme for k in keys]


def renamed(index, new, was):
    themes = [dict(t) for t in THEMES]
    themes[index] = {**themes[index], "name": new, "renamedFrom": was}
    return themes


def test_renaming_a_theme_carries_every_case_and_audits_each(themed):
    revisions = {c.pk: c.revision for c in BusinessCase.objects.all()}
    site_settings_update(
        actor=themed.site_admin, data={"themes": renamed(0, "Cost Efficiency", "Cost Out")}
    )
    assert themes_of("RED", "AMB", "GRN") == ["Cost Efficiency", "Cost Efficiency", "Strategic"]
    site = SiteSettings.load()
    assert site.themes[0] == {"name": "Cost Efficiency", "enabled": True}  # no renamedFrom kept
    entries = AuditEntry.objects.filter(kind="charter.theme_renamed").order_by("project_key")
    assert [(e.project_key, e.changes["theme"]) for e in entries] == [
        ("AMB", {"before": "cost out", "after": "Cost Efficiency"}),
        ("RED", {"before": "Cost Out", "after": "Cost Efficiency"}),
    ]
    assert all(e.actor_account_id == themed.site_admin.account_id for e in entries)
    settings_entry = AuditEntry.objects.filter(kind="site_settings.updated").latest("pk")
    assert settings_entry.changes["themeRenamed"] == [
        {"before": "Cost Out", "after": "Cost Efficiency"}
    ]
    for case in BusinessCase.objects.filter(project__key__in=["RED", "AMB"]):
        assert case.revision == revisions[case.pk] + 1  # a form opened before cannot undo it


def test_a_refused_rename_moves_nothing(themed):
    with pytest.raises(ValidationFailed) as refused:
        site_settings_update(
            actor=themed.site_admin, data={"themes": renamed(0, "Cost Efficiency", "Nope")}
        )
    assert "themes[0].renamedFrom" in refused.value.fields
    assert themes_of("RED", "AMB") == ["Cost Out", "cost out"]
    assert not AuditEntry.objects.filter(kind="charter.theme_renamed").exists()


def test_an_item_that_keeps_its_name_renames_nothing(themed):
    site_settings_update(
        actor=themed.site_admin, data={"themes": renamed(0, "Cost Out", "Cost Out")}
    )
    assert themes_of("RED", "AMB") == ["Cost Out", "cost out"]
    assert not AuditEntry.objects.filter(kind="charter.theme_renamed").exists()


def test_the_api_renames_through_the_same_service(themed, client_for):
    response = client_for(themed.site_admin).patch(
        "/api/v1/site-settings",
        {"themes": renamed(1, "Strategy", "Strategic")},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert [t["name"] for t in response.json()["themes"]] == [
        "Cost Out",
        "Strategy",
        "Productivity",
    ]
    assert themes_of("GRN") == ["Strategy"]
    assert AuditEntry.objects.filter(kind="charter.theme_renamed", project_key="GRN").exists()


def test_renaming_on_the_settings_page_carries_the_cases(themed, client_for):
    client = client_for(themed.site_admin)
    page = client.get("/portfolio/settings/").content.decode()
    assert 'name="theme-0-was" value="Cost Out"' in page
    form = {"br_cadence_default": "Quarterly"}
    for index, theme in enumerate(THEMES):
        form[f"theme-{index}-name"] = theme["name"]
        form[f"theme-{index}-was"] = theme["name"]
        form[f"theme-{index}-enabled"] = "on"
    form["theme-0-name"] = "Cost Efficiency"
    form["theme-3-name"] = "Growth"  # a new row: no stored name
    response = client.post("/portfolio/settings/", form)
    assert response.status_code == 302, response.content.decode()
    assert themes_of("RED", "AMB") == ["Cost Efficiency", "Cost Efficiency"]
    assert [t["name"] for t in SiteSettings.load().themes] == [
        "Cost Efficiency",
        "Strategic",
        "Productivity",
        "Growth",
    ]
    assert AuditEntry.objects.filter(kind="charter.theme_renamed").count() == 2


def test_a_disabled_theme_stays_on_its_cases_but_no_case_takes_it_anew(themed, client_for):
    themes = [dict(t) for t in THEMES]
    themes[1]["enabled"] = False
    site_settings_update(actor=themed.site_admin, data={"themes": themes})
    assert themes_of("GRN") == ["Strategic"]
    page = client_for(themed.site_admin).get("/projects/GRN/charter/").content.decode()
    assert "Strategic" in page and "disabled" in page
    red = BusinessCase.objects.get(project__key="RED")
    red.approval_status = "Exploring"
    red.save()
    lead = User.objects.get(account_id=red.project.lead_account_id)
    caller = caller_for(lead, red.project)
    with pytest.raises(ValidationFailed) as refused:
        charter_update(caller=caller, data={"theme": "strategic"})
    assert refused.value.fields["theme"] == ["The theme 'Strategic' is disabled: choose another."]
    charter_update(caller=caller, data={"theme": "productivity"})
    assert themes_of("RED") == ["Productivity"]  # the site's spelling


def filter_options(client):
    html = client.get("/portfolio/").content.decode()
    start = html.index('id="p-theme"')
    return html[start : html.index("</select>", start)]


def test_the_portfolio_filter_offers_enabled_and_used_themes_only(themed, client_for):
    client = client_for(themed.site_admin)
    themes = renamed(0, "Cost Efficiency", "Cost Out")
    themes[1]["enabled"] = False  # Strategic: disabled, still on GRN
    themes[2]["enabled"] = False  # Productivity: disabled, on no case
    site_settings_update(actor=themed.site_admin, data={"themes": themes})
    options = filter_options(client)
    assert ">Cost Efficiency</option>" in options
    assert ">Strategic (disabled)</option>" in options
    assert "Productivity" not in options
    assert "Cost Out" not in options and "cost out" not in options
    assert "?theme=Cost" not in options
    assert sorted(keys(client, "?theme=Cost%20Efficiency")) == ["AMB", "RED"]


def test_a_swap_of_two_names_moves_each_case_once(themed):
    """Cost Out and Strategic swap their names in one save: each case takes the other name
    once (chosen before any is written), not back again."""
    themes = [dict(t) for t in THEMES]
    themes[0] = {**themes[0], "name": "Strategic", "renamedFrom": "Cost Out"}
    themes[1] = {**themes[1], "name": "Cost Out", "renamedFrom": "Strategic"}
    site_settings_update(actor=themed.site_admin, data={"themes": themes})
    assert themes_of("RED", "AMB", "GRN") == ["Strategic", "Strategic", "Cost Out"]
    assert AuditEntry.objects.filter(kind="charter.theme_renamed").count() == 3


def test_a_theme_kept_and_renamed_in_one_save_is_refused(themed):
    themes = [dict(t) for t in THEMES]
    themes.append({"name": "Cost Efficiency", "enabled": True, "renamedFrom": "Cost Out"})
    with pytest.raises(ValidationFailed) as refused:
        site_settings_update(actor=themed.site_admin, data={"themes": themes})
    assert "both kept and renamed" in str(refused.value.body())
    assert themes_of("RED", "AMB") == ["Cost Out", "cost out"]
