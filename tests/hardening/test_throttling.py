"""Guessing credentials is throttled at every door, and only guessing: sign-in per (account,
address) and per address (django-axes, the login page and the admin's), invalid bearer tokens
per address at the API and /mcp alike (429 with Retry-After); a valid token always passes.
Behind a TLS proxy the address is the one the trusted proxies report."""

import json
import re

import pytest
from django.conf import settings
from django.test import Client, RequestFactory

from governance.throttling import client_ip
from tests.factories import UserFactory

PASSWORD = "right-password-42"


@pytest.fixture
def kim(db):
    user = UserFactory(username="kim", display_name="Kim Kit")
    user.set_password(PASSWORD)
    user.save()
    return user


def _sign_in(client, username, password, path="/accounts/login/", address="10.0.0.1", **extra):
    data = {"username": username, "password": password}
    return client.post(path, data, REMOTE_ADDR=address, **extra)


# --- Sign-in: per (account, address) and per address, never per account alone ----------


def test_the_21st_wrong_password_is_refused_even_when_right(kim):
    assert settings.AXES_FAILURE_LIMIT == 20
    client = Client()
    for attempt in range(1, 21):
        response = _sign_in(client, "kim", "wrong")
        # The form again ("did not match"); the 20th failure already says locked out.
        assert response.status_code == (429 if attempt == 20 else 200)
    refused = _sign_in(client, "kim", PASSWORD)
    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= settings.AXES_COOLOFF_TIME.total_seconds()
    assert "_auth_user_id" not in client.session


def test_wrong_passwords_from_one_address_do_not_lock_the_account_elsewhere(kim):
    for _ in range(25):
        _sign_in(Client(), "kim", "wrong", address="10.0.1.1")
    assert _sign_in(Client(), "kim", PASSWORD, address="10.0.1.1").status_code == 429
    elsewhere = Client()
    assert _sign_in(elsewhere, "kim", PASSWORD, address="10.9.9.9").status_code == 302
    assert elsewhere.session["_auth_user_id"] == str(kim.pk)


def test_the_locked_page_says_what_happened_and_when_to_try_again(kim):
    for _ in range(20):
        _sign_in(Client(), "kim", "wrong")
    page = _sign_in(Client(), "kim", PASSWORD).content.decode()
    assert "Too many failed sign-ins for this account from your address." in page
    assert re.search(r"Try again at \d\d:\d\d UTC \(in 15 minutes\)\.", page)


def test_an_address_is_locked_for_every_account_at_its_own_limit(kim, settings):
    settings.SIGNIN_ADDRESS_FAILURE_LIMIT = 30
    lou = UserFactory(username="lou")
    lou.set_password(PASSWORD)
    lou.save()
    for number in range(29):  # spread over accounts: no pair reaches its limit
        _sign_in(Client(), f"guess{number % 3}", "wrong", address="10.0.2.2")
    assert _sign_in(Client(), "lou", PASSWORD, address="10.0.2.2").status_code == 302
    _sign_in(Client(), "guess9", "wrong", address="10.0.2.2")  # the 30th
    refused = _sign_in(Client(), "lou", PASSWORD, address="10.0.2.2")
    assert refused.status_code == 429
    page = refused.content.decode()
    assert "Too many failed sign-ins from your address, for any account." in page
    assert re.search(r"try again at \d\d:\d\d UTC \(in 15 minutes\)\.", page)
    assert _sign_in(Client(), "lou", PASSWORD, address="10.0.2.3").status_code == 302


def test_signing_in_clears_the_own_pair_but_not_the_address_count(kim, settings):
    settings.SIGNIN_ADDRESS_FAILURE_LIMIT = 30
    for number in range(29):
        _sign_in(Client(), f"guess{number % 3}", "wrong", address="10.0.3.3")
    assert _sign_in(Client(), "kim", PASSWORD, address="10.0.3.3").status_code == 302
    _sign_in(Client(), "guess9", "wrong", address="10.0.3.3")
    assert _sign_in(Client(), "kim", PASSWORD, address="10.0.3.3").status_code == 429


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


# --- Bearer tokens: the API and /mcp, one count per address -------------------------------


def _api(client, token_headers, address, **extra):
    return client.get("/api/v1/me", REMOTE_ADDR=address, **token_headers, **extra)


def _mcp(client, token_headers, address, **extra):
    return client.post(
        "/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        content_type="application/json",
        HTTP_ACCEPT="application/json, text/event-stream",
        REMOTE_ADDR=address,
        **token_headers,
        **extra,
    )


def _wrong(number):
    return {"HTTP_AUTHORIZATION": f"Bearer gov_wrong{number}"}


def test_invalid_bearer_tokens_are_throttled_per_address(cast, bearer):
    limit = settings.API_TOKEN_FAILURE_LIMIT
    client = Client()
    for number in range(limit):
        assert _api(client, _wrong(number), "10.1.1.1").status_code == 401
    refused = _api(client, _wrong("x"), "10.1.1.1")
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "throttled"
    assert 0 < int(refused["Retry-After"]) <= settings.API_TOKEN_FAILURE_WINDOW_SECONDS
    assert _api(client, _wrong("y"), "10.1.1.2").status_code == 401  # another address


def test_a_valid_token_passes_from_an_address_past_the_limit(cast, bearer):
    valid = bearer(cast.lead)
    client = Client()
    for number in range(settings.API_TOKEN_FAILURE_LIMIT + 1):
        _api(client, _wrong(number), "10.1.1.1")
    assert _api(client, _wrong("z"), "10.1.1.1").status_code == 429
    assert _api(client, valid, "10.1.1.1").status_code == 200
    assert (
        _mcp(client, valid, "10.1.1.1").status_code == _mcp(client, valid, "10.7.7.7").status_code
    )
    assert _mcp(client, valid, "10.1.1.1").status_code != 429


def test_valid_tokens_are_not_counted(cast, bearer):
    valid = bearer(cast.lead)
    client = Client()
    for _ in range(settings.API_TOKEN_FAILURE_LIMIT + 5):
        assert _api(client, valid, "10.1.1.3").status_code == 200
    assert _api(client, _wrong(1), "10.1.1.3").status_code == 401


def test_mcp_counts_invalid_tokens_with_the_api_and_obeys_the_throttle(cast):
    client = Client()
    half = settings.API_TOKEN_FAILURE_LIMIT // 2
    for number in range(half):
        assert _api(client, _wrong(number), "10.2.2.2").status_code == 401
    for number in range(settings.API_TOKEN_FAILURE_LIMIT - half):
        assert _mcp(client, _wrong(number), "10.2.2.2").status_code == 401
    refused = _mcp(client, _wrong("x"), "10.2.2.2")
    assert refused.status_code == 429
    assert refused.json()["error"]["data"]["code"] == "throttled"  # inside a JSON-RPC error
    assert int(refused["Retry-After"]) > 0
    assert _api(client, _wrong("y"), "10.2.2.2").status_code == 429


def test_mcp_alone_reaches_the_limit(cast):
    client = Client()
    for number in range(settings.API_TOKEN_FAILURE_LIMIT):
        assert _mcp(client, _wrong(number), "10.2.2.3").status_code == 401
    assert _mcp(client, _wrong("x"), "10.2.2.3").status_code == 429


# --- The client's address behind a TLS proxy ----------------------------------------------


def _address_of(remote, forwarded=None):
    extra = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return client_ip(RequestFactory().get("/", REMOTE_ADDR=remote, **extra))


def test_without_the_proxy_setting_x_forwarded_for_is_ignored(settings):
    settings.BEHIND_TLS_PROXY = False
    assert _address_of("10.0.0.9", "203.0.113.5") == "10.0.0.9"


def test_behind_the_proxy_the_client_is_the_entry_the_trusted_hops_appended(settings):
    settings.BEHIND_TLS_PROXY = True
    settings.TRUSTED_PROXY_HOPS = 1
    assert _address_of("10.0.0.9", "203.0.113.5") == "203.0.113.5"
    # Entries the client wrote itself (to the left) are not believed.
    assert _address_of("10.0.0.9", "198.51.100.1, 203.0.113.5") == "203.0.113.5"
    assert _address_of("10.0.0.9") == "10.0.0.9"
    assert _address_of("10.0.0.9", "not-an-address") == "10.0.0.9"
    settings.TRUSTED_PROXY_HOPS = 2
    assert _address_of("10.0.0.9", "198.51.100.1, 203.0.113.5, 10.0.0.8") == "203.0.113.5"
    assert _address_of("10.0.0.9", "203.0.113.5") == "203.0.113.5"


def test_behind_the_proxy_an_address_with_its_port_is_read_as_the_address(settings):
    """Some proxies append `ip:port` (or `[v6]:port`): read as the address, never as unusable
    (which would put every client in the proxy's bucket)."""
    settings.BEHIND_TLS_PROXY = True
    settings.TRUSTED_PROXY_HOPS = 1
    assert _address_of("10.0.0.9", "203.0.113.5:51234") == "203.0.113.5"
    assert _address_of("10.0.0.9", "[2001:db8::7]:443") == "2001:db8::7"
    assert _address_of("10.0.0.9", "[2001:db8::7]") == "2001:db8::7"
    assert _address_of("10.0.0.9", "2001:db8::7") == "2001:db8::7"


def test_behind_the_proxy_tokens_are_throttled_per_client_not_per_proxy(cast, settings):
    settings.BEHIND_TLS_PROXY = True
    client = Client()
    proxy = "10.0.0.9"
    for number in range(settings.API_TOKEN_FAILURE_LIMIT):
        _api(client, _wrong(number), proxy, HTTP_X_FORWARDED_FOR="203.0.113.5")
    assert _mcp(client, _wrong(0), proxy, HTTP_X_FORWARDED_FOR="203.0.113.5").status_code == 429
    other = _api(client, _wrong(0), proxy, HTTP_X_FORWARDED_FOR="203.0.113.6")
    assert other.status_code == 401


def test_behind_the_proxy_sign_in_is_locked_per_client_not_per_proxy(kim, settings):
    settings.BEHIND_TLS_PROXY = True
    proxy = "10.0.0.9"
    for _ in range(20):
        _sign_in(Client(), "kim", "wrong", address=proxy, HTTP_X_FORWARDED_FOR="203.0.113.5")
    locked = _sign_in(Client(), "kim", PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR="203.0.113.5")
    assert locked.status_code == 429
    other = _sign_in(Client(), "kim", PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR="203.0.113.6")
    assert other.status_code == 302
