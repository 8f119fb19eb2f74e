"""When Jira cannot answer and nothing is cached, access fails closed with a 503 that says
so; a revoked grant sends the person back through sign-in. Never a 500, never a traceback."""

import pytest
import responses
from django.test import Client

from governance.models import AtlassianGrant
from tests.atlassian.conftest import AUTH_URL, give_grant
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def person(db):
    user = UserFactory(username="pat")
    give_grant(user)
    return user


def signed_in(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def test_jira_down_and_nothing_cached_is_a_503_page(tracker, jira, person, settings):
    settings.ATLASSIAN_RETRIES = 0
    jira.default = (503, {"errorMessages": ["down"]})
    response = signed_in(person).get("/projects/ALPHA/")
    assert response.status_code == 503
    assert b"Jira is not answering" in response.content
    assert b"Traceback" not in response.content


def test_jira_down_answers_the_api_with_a_503_error_body(tracker, jira, person, settings):
    settings.ATLASSIAN_RETRIES = 0
    jira.default = (503, {"errorMessages": ["down"]})
    response = signed_in(person).get("/api/v1/projects/ALPHA/work-packages")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "unavailable"


def test_a_cached_refusal_still_answers_while_jira_is_down(tracker, jira, person, settings):
    settings.ATLASSIAN_RETRIES = 0
    jira.default = (503, {"errorMessages": ["down"]})
    jira.on(
        "getMyPermissions",
        (200, {"permissions": {"BROWSE_PROJECTS": {"havePermission": False}}}),
    )
    assert signed_in(person).get("/projects/ALPHA/").status_code == 404
    jira.on("getMyPermissions", (503, {"errorMessages": ["down"]}))
    assert signed_in(person).get("/projects/ALPHA/").status_code == 404


def test_a_revoked_grant_goes_back_through_sign_in(tracker, jira, rsps, person):
    give_grant(person, expires_in=-5)
    rsps.add(responses.POST, AUTH_URL + "/oauth/token", status=400, json={"error": "invalid_grant"})
    client = signed_in(person)
    response = client.get("/projects/ALPHA/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not AtlassianGrant.objects.exists()
    page = client.get(response["Location"])
    assert b"Sign in again" in page.content
    assert "_auth_user_id" not in client.session


def test_names_come_from_the_saved_copy_with_a_banner_when_jira_stops_answering(
    tracker, fake_jira, cast, settings
):
    from django.core.cache import cache

    from governance.people import _PREFIX

    settings.ATLASSIAN_RETRIES = 0
    for person in (cast.lead, cast.viewer):
        fake_jira.grant(person)
    client = signed_in(cast.viewer)
    first = client.get("/projects/ALPHA/")
    assert first.status_code == 200 and b"Lena Lead" in first.content
    assert b"is not answering" not in first.content
    # Names expire from the short cache; browse permission is still cached; Jira goes down.
    cache.delete_many([_PREFIX + cast.lead.account_id, _PREFIX + cast.viewer.account_id])
    fake_jira.down = True
    second = client.get("/projects/ALPHA/")
    assert second.status_code == 200
    assert b"Lena Lead" in second.content
    assert b"The tracker is not answering: names on this page are as they were" in second.content
