"""Permissions about other people as a real Jira site answers them (item 3 of the Atlassian
issue), against the Jira stand-in: the service account asks about anyone, in one request per
form; the signed-in person's own access comes from their own token; portal-only customers of
a service project are not members."""

import contextlib

import pytest
from django.core.cache import cache

from governance.atlassian.context import acting_account
from governance.tracker.local.models import LocalAccount, LocalBrowseGrant, LocalProject
from tests.atlassian.fake_jira import project_json

pytestmark = pytest.mark.django_db


@contextlib.contextmanager
def acting(account_id: str):
    token = acting_account.set(account_id)
    try:
        yield
    finally:
        acting_account.reset(token)


@pytest.fixture
def site(cast, fake_jira, settings):
    settings.ATLASSIAN_RETRIES = 0
    return fake_jira


@pytest.fixture
def customer(site):
    """A portal-only customer of ALPHA's service desk: Jira grants them Browse."""
    account = LocalAccount.objects.create(
        account_id="qm:customer-1", name="carla", display_name="Carla Customer"
    )
    site.customers.add(account.account_id)
    return account


def test_browse_about_another_person_is_asked_as_the_service_account(site, tracker, cast):
    # Nobody but the lead has signed in here: the others have no stored token.
    site.grant(cast.lead)
    with acting(cast.lead.account_id):
        assert tracker.can_browse(cast.viewer.account_id, "ALPHA")
        assert not tracker.can_browse(cast.outsider.account_id, "ALPHA")
    assert site.mock.count("getMyPermissions") == 0
    bodies = site.mock.bodies("getBulkPermissions")
    alpha = int(project_json(LocalProject.objects.get(key="ALPHA"))["id"])  # Jira's project id
    assert bodies[0] == {
        "accountId": cast.viewer.account_id,
        "projectPermissions": [{"permissions": ["BROWSE_PROJECTS"], "projects": [alpha]}],
    }


def test_the_signed_in_persons_own_access_comes_from_their_own_token(site, tracker, cast):
    site.grant(cast.viewer)
    with acting(cast.viewer.account_id):
        assert tracker.can_browse(cast.viewer.account_id, "ALPHA")
    assert site.mock.count("getMyPermissions") == 1
    assert site.mock.count("getBulkPermissions") == 0


def test_a_portal_only_customer_does_not_pass_the_browse_check(site, tracker, cast, customer):
    with acting(cast.lead.account_id):
        assert not tracker.can_browse(customer.account_id, "ALPHA")
        assert customer.account_id not in tracker.browsers_among(
            "ALPHA", [customer.account_id, cast.viewer.account_id]
        )
        assert [u.account_id for u in tracker.search_browsers("ALPHA", "carla")] == []
    # Jira itself said yes: the app refused because of the account type.
    assert site.mock.count("getBulkPermissions") == 1


def test_the_picker_asks_once_for_people_who_may_browse_matching_the_text(site, tracker, cast):
    found = tracker.search_browsers("ALPHA", "e")
    assert site.mock.count("findUsersWithAllPermissions") == 1
    names = {u.display_name for u in found}
    assert "Eddie Editor" in names and "Vera Viewer" in names
    assert "Otto Outsider" not in names
    query = site.mock.params("findUsersWithAllPermissions")[0]
    assert query["query"] == ["e"] and query["projectKey"] == ["ALPHA"]


def test_many_people_are_checked_in_one_listing_not_one_request_each(site, tracker, cast):
    people = [
        LocalAccount.objects.create(account_id=f"acc-{n:03}", name=f"p{n}", display_name=f"P {n}")
        for n in range(100)
    ]
    project = LocalProject.objects.get(key="ALPHA")
    LocalBrowseGrant.objects.bulk_create(
        LocalBrowseGrant(project=project, account=a) for a in people[:60]
    )
    ids = [a.account_id for a in people] + [cast.outsider.account_id]
    allowed = tracker.browsers_among("ALPHA", ids)
    assert allowed == {a.account_id for a in people[:60]}
    # One page of up to 1000 accounts, then the empty page that ends the listing.
    assert site.mock.count("findUsersWithAllPermissions") == 2
    assert site.mock.count("getBulkPermissions") == 0
    assert site.mock.count("getMyPermissions") == 0
    before = len(site.mock.calls)
    assert tracker.browsers_among("ALPHA", ids) == allowed  # cached
    assert len(site.mock.calls) == before


def test_the_register_form_asks_jira_about_people_once_not_per_person(
    site, cast, client_for, settings
):
    for person in (cast.lead, cast.editor, cast.viewer, cast.sponsor, cast.site_admin):
        site.grant(person)
    cache.clear()
    page = client_for(cast.lead).get(
        "/projects/ALPHA/registers/work-packages/new/", HTTP_HX_REQUEST="true"
    )
    assert page.status_code == 200
    assert "Eddie Editor" in page.content.decode()
    assert site.mock.count("findUsersWithAllPermissions") <= 2
    assert site.mock.count("getBulkPermissions") == 0
    # The lead's own access, once, with their token; nobody else's through /mypermissions.
    asked = [q for q in site.mock.params("getMyPermissions") if "projectKey" in q]
    assert asked == [{"projectKey": ["ALPHA"], "permissions": ["BROWSE_PROJECTS"]}]


def test_the_seat_picker_offers_only_people_who_may_browse(site, cast, client_for, customer):
    site.grant(cast.lead)
    page = client_for(cast.lead).get(
        "/projects/ALPHA/charter/people/", {"field": "decisionAuthority", "q": "a"}
    )
    assert page.status_code == 200
    text = page.content.decode()
    assert "Carla Customer" not in text and "Otto Outsider" not in text
    assert site.mock.count("findUsersWithAllPermissions") == 1
