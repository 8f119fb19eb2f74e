"""The session and the signed-in user from the shared cache (docs/decisions/0082, "The
session and the user from the shared cache"): no round trip for either on a warm request, and
sign-out, a password change, a deactivation or a deletion still take effect at once."""

import pytest
from django.conf import settings
from django.contrib.auth import get_user
from django.core.cache import cache
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext

from governance.auth_backends import user_cache_key
from tests.factories import ProjectFactory, UserFactory


@pytest.fixture
def signed_in(db, client_for):
    user = UserFactory()
    ProjectFactory(key="GATE", browsers=[user])
    return user, client_for(user)


def _user_of(client):
    """The user Django's auth middleware would load for the client's session, and the SQL
    statements that took."""
    request = RequestFactory().get("/")
    request.session = client.session
    with CaptureQueriesContext(connection) as ctx:
        user = get_user(request)
    return user, len(ctx.captured_queries)


def test_a_warm_request_reads_neither_session_nor_user_from_the_database(signed_in):
    assert settings.SESSION_ENGINE == "django.contrib.sessions.backends.cached_db"
    user, client = signed_in
    assert client.get("/projects/GATE/").status_code == 200  # warms the user's cache entry
    loaded, queries = _user_of(client)
    assert loaded.pk == user.pk and queries == 0


def test_sign_out_takes_effect_at_once(signed_in, client_for):
    user, client = signed_in
    other = client_for(user)  # a second session of the same person stays signed in
    assert client.get("/projects/GATE/").status_code == 200
    stolen = client.cookies[settings.SESSION_COOKIE_NAME].value
    client.post("/accounts/logout/")
    assert client.get("/projects/GATE/").status_code == 302
    client.cookies[settings.SESSION_COOKIE_NAME] = stolen  # the old cookie is dead too
    assert client.get("/projects/GATE/").status_code == 302
    assert other.get("/projects/GATE/").status_code == 200


def test_a_password_change_signs_out_other_sessions_at_once(signed_in):
    user, client = signed_in
    assert client.get("/projects/GATE/").status_code == 200
    assert cache.get(user_cache_key(user.pk)) is not None
    user.set_password("a-new-long-passphrase")
    user.save()
    assert cache.get(user_cache_key(user.pk)) is None
    assert client.get("/projects/GATE/").status_code == 302


def test_deactivation_and_deletion_take_effect_at_once(signed_in, client_for):
    user, client = signed_in
    assert client.get("/projects/GATE/").status_code == 200
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert client.get("/projects/GATE/").status_code == 302
    other = UserFactory()
    other_client = client_for(other)
    assert other_client.get("/").status_code == 200
    other.delete()
    assert other_client.get("/").status_code == 302


def test_the_database_is_the_truth_when_the_cache_forgets(signed_in):
    user, client = signed_in
    assert client.get("/projects/GATE/").status_code == 200
    cache.clear()  # sessions and users gone from the cache: read back from the database
    loaded, queries = _user_of(client)
    assert loaded.pk == user.pk and queries == 2
    assert client.get("/projects/GATE/").status_code == 200
