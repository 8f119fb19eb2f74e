"""Pagination without a silent cap (item 7 of the Atlassian issue), against the Jira stand-in
with thousands of projects: pages of 100 (searchProjects allows at most 100), every project
listed up to the ceiling, and past it the page and the log say the list is incomplete."""

import pytest
from django.core.cache import cache

pytestmark = pytest.mark.django_db


@pytest.fixture
def big_site(cast, fake_jira, settings):
    settings.ATLASSIAN_RETRIES = 0
    fake_jira.grant(cast.lead)
    return fake_jira


def test_my_projects_on_a_5000_project_site_lists_all_of_them(big_site, tracker, cast, caplog):
    big_site.extra_projects = 4999  # and ALPHA, which the lead leads
    projects = tracker.browsable_projects(cast.lead.account_id)
    assert len(projects) == 5000  # before: 2,500 (50 pages of 50), the rest lost silently
    assert big_site.mock.count("searchProjects") == 50
    assert {q["maxResults"][0] for q in big_site.mock.params("searchProjects")} == {"100"}
    assert "stopped" not in caplog.text


def test_a_listing_stopped_by_the_ceiling_is_said_on_the_page_and_in_the_log(
    big_site, cast, client_for, settings, caplog
):
    settings.ATLASSIAN_MAX_PAGES = 2
    big_site.extra_projects = 450
    cache.clear()
    page = client_for(cast.lead).get("/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "This list is incomplete" in text
    assert "searchProjects: listing stopped after 2 pages" in caplog.text
    # Served from the cache, it still says so.
    again = client_for(cast.lead).get("/")
    assert "This list is incomplete" in again.content.decode()


def test_a_complete_list_says_nothing_of_the_kind(big_site, cast, client_for):
    page = client_for(cast.lead).get("/")
    assert "This list is incomplete" not in page.content.decode()


def test_the_portfolio_lists_what_jira_lists_for_the_person(big_site, cast, client_for):
    """Jira answers the gate from its listing (no SQL of its own): the portfolio's stored rows
    are filtered by the listed projects' ids, on the project each row joins
    (`gatelist.condition`), for the page and the API alike."""
    from status import health
    from tests.factories import ProjectFactory

    big_site.grant(cast.site_admin)  # the portfolio's reader: a site administrator
    hidden = ProjectFactory(key="HIDDEN", name="Hidden from them", lead=cast.sponsor)
    health.refresh([hidden.pk])  # a stored row the filter must leave out
    page = client_for(cast.site_admin).get("/portfolio/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "/projects/ALPHA/" in text and "HIDDEN" not in text
    api = client_for(cast.site_admin).get("/api/v1/portfolio")
    assert api.status_code == 200
    assert [row["projectKey"] for row in api.json()["items"]] == ["ALPHA"]


def test_the_assistant_s_offers_on_jira_read_every_listed_caller(big_site, cast):
    """Jira answers the gate from its listing: the offers are asked of every caller it
    listed (`gatelist.role_callers`), two projects of the same roles included, and they are
    the offers the rule gives when asked of each viewable project."""
    from agent import catalogue
    from governance import gatelist, permissions
    from governance.models import Project
    from governance.tracker.local.models import LocalProject
    from tests.factories import ProjectFactory

    big_site.grant(cast.site_admin)
    ProjectFactory(key="BETA", lead=cast.lead, browsers=[cast.site_admin])
    ProjectFactory(key="HIDDEN", lead=cast.sponsor)  # mirrored, not listed for them
    for key in ("BETA", "HIDDEN"):  # the site's ids, as the stand-in gives them
        tracked = LocalProject.objects.get(key=key)
        Project.objects.filter(key=key).update(tracker_id=str(10000 + tracked.pk))
    request = catalogue.request_for(cast.site_admin)
    callers = [c for _, c in permissions.viewable_projects(request)]
    assert [c.project.key for c in callers] == ["ALPHA", "BETA"]
    request = catalogue.request_for(cast.site_admin)
    assert [p.key for p, _ in gatelist.role_callers(request)] == ["ALPHA", "BETA"]
    offered = {a.name for a in catalogue.available(catalogue.request_for(cast.site_admin))}
    assert offered == {
        a.name
        for a in catalogue.CATALOGUE.values()
        if a.offered_to is None or any(a.offered_to(c) for c in callers)
    }
