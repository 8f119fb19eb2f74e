"""Guessing credentials is throttled: sign-in per account and per address (django-axes, the
login page and the admin's), invalid bearer tokens per address (429 with Retry-After)."""

import pytest
from django.conf import settings
from django.test import Client

from tests.factories import UserFactory

PASSWORD = "right-password-42"


@pytest.fixture
def kim(db):
    user = UserFactory(username="kim", display_name="Kim Kit")
    user.set_password(PASSWORD)
    user.save()
    return user


def _sign_in(client, username, password, path="/accounts/login/", address="10.0.0.1"):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def test_the_21st_wrong_password_is_refused_even_when_right(kim):
    assert settings.AXES_FAILURE_LIMIT == 20
    client = Client()
    for attempt in range(1, 21):
        response = _sign_in(client, "kim", "wrong")
        # The form again ("did not match"); the 20th failure already says locked out.
        assert response.status_code == (429 if attempt == 20 else 200)
    refused = _sign_in(client, "kim", PASSWORD)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) == settings.AXES_COOLOFF_TIME.total_seconds()
    assert "Too many failed sign-ins" in refused.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_account_is_locked_from_another_address_too(kim):
    for number in range(20):
        _sign_in(Client(), "kim", "wrong", address=f"10.0.1.{number}")
    refused = _sign_in(Client(), "kim", PASSWORD, address="10.9.9.9")
    assert refused.status_code == 429


def test_an_address_is_locked_for_every_account(kim):
    other = UserFactory(username="lou")
    other.set_password(PASSWORD)
    other.save()
    for number in range(20):
        _sign_in(Client(), f"guess{number}", "wrong", address="10.0.2.2")
    assert _sign_in(Client(), "lou", PASSWORD, address="10.0.2.2").status_code == 429
    ok = _sign_in(Client(), "lou", PASSWORD, address="10.0.2.3")
    assert ok.status_code == 302


def test_a_success_before_the_limit_signs_in(kim):
    client = Client()
    for _ in range(19):
        _sign_in(client, "kim", "wrong")
    response = _sign_in(client, "kim", PASSWORD)
    assert response.status_code == 302 and client.session["_auth_user_id"] == str(kim.pk)


def test_the_admin_sign_in_is_throttled_too(db):
    admin = UserFactory(username="root", admin=True)
    admin.set_password(PASSWORD)
    admin.save()
    client = Client()
    for _ in range(20):
        _sign_in(client, "root", "wrong", path="/admin/login/")
    refused = _sign_in(client, "root", PASSWORD, path="/admin/login/")
    assert refused.status_code == 429 and refused.has_header("Retry-After")


def test_invalid_bearer_tokens_are_throttled_per_address(cast, bearer):
    valid = bearer(cast.lead)
    limit = settings.API_TOKEN_FAILURE_LIMIT
    client = Client()
    for number in range(limit):
        response = client.get(
            "/api/v1/me", HTTP_AUTHORIZATION=f"Bearer gov_wrong{number}", REMOTE_ADDR="10.1.1.1"
        )
        assert response.status_code == 401
    refused = client.get("/api/v1/me", HTTP_AUTHORIZATION="Bearer gov_x", REMOTE_ADDR="10.1.1.1")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "throttled"
    assert 0 < int(refused["Retry-After"]) <= settings.API_TOKEN_FAILURE_WINDOW_SECONDS
    # A valid token from that address waits too; from another address it works.
    assert client.get("/api/v1/me", REMOTE_ADDR="10.1.1.1", **valid).status_code == 429
    assert client.get("/api/v1/me", REMOTE_ADDR="10.1.1.2", **valid).status_code == 200


def test_valid_tokens_are_not_counted(cast, bearer):
    valid = bearer(cast.lead)
    client = Client()
    for _ in range(settings.API_TOKEN_FAILURE_LIMIT + 5):
        assert client.get("/api/v1/me", REMOTE_ADDR="10.1.1.3", **valid).status_code == 200
