"""Outages degrade and say so, never lose a write (issue "Faults").

- The cache down (pointed at a closed port): pages, API and sign-in answer from the
  database; sessions (`cached_db`) stay valid; invalid bearer tokens are counted in the
  database instead; the Assistant asks the model nothing it cannot count.
- The database down (its cursor raising OperationalError): 503 with Retry-After, the API's
  error body `unavailable` or a page in words, nothing stored; the next request after it
  answers again is served.
- /healthz is liveness only; /readyz tells the database, the cache and the outbox backlog."""

import datetime as dt
import json
import logging
import socket

import pytest
from django.conf import settings
from django.db import OperationalError, connection
from django.test import Client, override_settings
from django.utils import timezone

from governance import cache as soft_cache
from governance import errors
from governance.models import AuditEntry, FailureCount, OutboundTask
from registers.models import Risk

API = "/api/v1/projects/ALPHA"
PAGES = "/projects/ALPHA/registers"
CACHED_DB = "django.contrib.sessions.backends.cached_db"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def cache_down():
    """The shared cache pointed at a port nothing listens on (and sessions on cached_db)."""
    caches = {
        "default": {
            "BACKEND": "governance.cache.SoftRedisCache",
            "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
    with override_settings(CACHES=caches, SESSION_ENGINE=CACHED_DB):
        yield


# --- 1. The cache fails soft ----------------------------------------------------------------


def test_the_soft_cache_misses_and_skips_and_logs_once_a_minute(cache_down, monkeypatch, caplog):
    from django.core.cache import cache

    monkeypatch.setattr(soft_cache, "RETRY_SECONDS", 0.0)  # every call tries Redis
    with caplog.at_level(logging.WARNING, logger="governance.cache"):
        assert cache.get("k", "default") == "default"
        cache.set("k", 1)
        assert cache.add("k", 1) is False
        assert cache.get_many(["a", "b"]) == {}
        cache.delete("k")
        cache.delete_many(["a"])
        with pytest.raises(ValueError):
            cache.incr("k")
    logged = [r for r in caplog.records if r.name == "governance.cache"]
    assert len(logged) == 1 and "cannot be reached" in logged[0].getMessage()
    assert soft_cache.cache_status() == "down"


def test_settings_make_a_redis_cache_url_soft():
    import environ

    config = environ.Env.cache_url_config("redis://127.0.0.1:6379/0")
    assert config["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    # config.settings swaps that backend for the soft one; locmem stays as it is.
    assert settings.CACHES["default"]["BACKEND"] != "django.core.cache.backends.redis.RedisCache"


def test_pages_and_api_answer_from_the_database_while_the_cache_is_down(cast, bearer, cache_down):
    browser = Client()
    browser.force_login(cast.lead)  # the session is stored in the database all the same
    assert browser.get(f"{PAGES}/risks/").status_code == 200
    assert browser.get("/projects/ALPHA/").status_code == 200
    created = browser.post(
        f"{PAGES}/risks/",
        {"title": "Page risk", "direction": "Risk", "status": "Open", "impact": "2",
         "likelihood": "2", "treatment": "Mitigate"},
        HTTP_HX_REQUEST="true",
    )  # fmt: skip
    assert created.status_code == 201

    headers = bearer(cast.lead)
    api = Client()
    assert api.get(f"{API}/risks", **headers).status_code == 200
    stored = api.post(
        f"{API}/risks", json.dumps({"title": "API risk"}), "application/json", **headers
    )
    assert stored.status_code == 201
    risks = Risk.objects.filter(title__in=["Page risk", "API risk"])
    assert risks.count() == 2
    for risk in risks:
        assert AuditEntry.objects.filter(target_id=str(risk.pk)).count() == 1


def test_a_session_stays_valid_when_the_cache_goes_away(cast):
    browser = Client()
    with override_settings(SESSION_ENGINE=CACHED_DB):
        browser.force_login(cast.lead)
        assert browser.get(f"{PAGES}/risks/").status_code == 200
    with (
        override_settings(
            CACHES={
                "default": {
                    "BACKEND": "governance.cache.SoftRedisCache",
                    "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0",
                }
            },
            SESSION_ENGINE=CACHED_DB,
        ),
    ):
        assert browser.get(f"{PAGES}/risks/").status_code == 200


def test_sign_in_works_and_stays_throttled_while_the_cache_is_down(cast, cache_down):
    cast.lead.set_password("right-password-42")
    cast.lead.save()
    client = Client()
    signed_in = client.post(
        "/accounts/login/", {"username": "lead", "password": "right-password-42"}
    )
    assert signed_in.status_code == 302
    for _ in range(settings.AXES_FAILURE_LIMIT):
        Client().post("/accounts/login/", {"username": "lead", "password": "wrong"})
    refused = Client().post(
        "/accounts/login/", {"username": "lead", "password": "right-password-42"}
    )
    assert refused.status_code == 429  # django-axes counts in the database


@override_settings(API_TOKEN_FAILURE_LIMIT=3)
def test_invalid_tokens_are_counted_in_the_database_while_the_cache_is_down(
    cast, bearer, cache_down
):
    bad = {"HTTP_AUTHORIZATION": "Bearer not-a-token"}
    answers = [Client().get(f"{API}/risks", **bad).status_code for _ in range(5)]
    assert answers == [401, 401, 401, 429, 429]
    throttled = Client().get(f"{API}/risks", **bad)
    assert int(throttled["Retry-After"]) > 0
    assert FailureCount.objects.get().count == 3
    # A valid token from the same address always passes.
    assert Client().get(f"{API}/risks", **bearer(cast.lead)).status_code == 200


def test_the_assistant_asks_nothing_it_cannot_count_while_the_cache_is_down(cast, cache_down):
    from agent.assistant import AssistantUnavailable, take_turn

    with pytest.raises(AssistantUnavailable, match="cannot count"):
        take_turn(cast.lead)


# --- 2. The database fails clearly ------------------------------------------------------------


def _api_headers(cast):
    from governance.services import token_create

    _, raw = token_create(user=cast.lead, name="faults")
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


@pytest.mark.parametrize("method", ["get", "post"])
def test_api_reads_and_writes_answer_503_with_retry_after(cast, monkeypatch, method):
    headers = _api_headers(cast)
    audits = AuditEntry.objects.count()
    monkeypatch.setattr(connection, "cursor", _refused)
    client = Client(raise_request_exception=False)
    if method == "get":
        response = client.get(f"{API}/risks", **headers)
    else:
        response = client.post(
            f"{API}/risks", json.dumps({"title": "Lost?"}), "application/json", **headers
        )
    monkeypatch.undo()
    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    error = response.json()["error"]
    assert error["code"] == "unavailable"
    assert "nothing you sent was stored" in error["message"]
    assert not Risk.objects.filter(title="Lost?").exists()
    assert AuditEntry.objects.count() == audits
    # Answering again: the next request is served.
    assert Client().get(f"{API}/risks", **headers).status_code == 200


def _refused(*args, **kwargs):
    raise OperationalError("connection refused: is the server running?")


def test_pages_answer_503_in_words_and_store_nothing(cast, monkeypatch):
    browser = Client(raise_request_exception=False)
    browser.force_login(cast.lead)
    monkeypatch.setattr(connection, "cursor", _refused)
    read = browser.get(f"{PAGES}/risks/")
    write = browser.post(
        f"{PAGES}/risks/",
        {"title": "Lost page risk", "direction": "Risk", "status": "Open", "impact": "2",
         "likelihood": "2", "treatment": "Mitigate"},
    )  # fmt: skip
    monkeypatch.undo()
    for response in (read, write):
        assert response.status_code == 503
        assert int(response["Retry-After"]) > 0
        page = response.content.decode()
        assert "The service is briefly unavailable; nothing you sent was stored" in page
    assert not Risk.objects.filter(title="Lost page risk").exists()
    assert browser.get(f"{PAGES}/risks/").status_code == 200


def test_a_failure_outside_the_views_is_a_503_too(cast, monkeypatch):
    """An unknown path reads the session and the user in middleware and in the 404 page."""
    browser = Client(raise_request_exception=False)
    browser.force_login(cast.lead)
    monkeypatch.setattr(connection, "cursor", _refused)
    responses = [browser.get("/no-such-page/"), browser.get("/accounts/login/")]
    monkeypatch.undo()
    for response in responses:
        assert response.status_code == 503
        assert "briefly unavailable" in response.content.decode()


def test_mcp_answers_503_unavailable(cast, monkeypatch):
    headers = _api_headers(cast)
    monkeypatch.setattr(connection, "cursor", _refused)
    response = Client(raise_request_exception=False).post(
        "/mcp", "{}", "application/json", **headers
    )
    monkeypatch.undo()
    assert response.status_code == 503
    error = response.json()["error"]  # a JSON-RPC error whose data is the API's error
    assert error["data"]["code"] == "unavailable" and "briefly unavailable" in error["message"]


def test_the_handler_for_anything_else_is_still_500(rf):
    from governance.middleware import server_error

    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        response = server_error(rf.get("/"))
    assert response.status_code == 500


def test_work_after_the_commit_never_turns_a_stored_write_into_an_error(
    db, monkeypatch, django_capture_on_commit_callbacks
):
    """An outbox wake-up (run right after the commit) that fails on the database is logged,
    not raised: the write it follows is answered as stored."""
    from django.db import transaction

    from governance import outbox

    def broken(task_id):
        raise OperationalError("the server closed the connection")

    monkeypatch.setattr(outbox, "run_task", broken)
    with (
        override_settings(OUTBOX_RUN_ON_COMMIT=True),
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        transaction.atomic(),
    ):
        outbox.enqueue("registers.work_package_field", {"noop": True})
    assert len(callbacks) == 1
    assert OutboundTask.objects.filter(name="registers.work_package_field").exists()


def test_connection_health_checks_stay_on_for_postgresql():
    import environ

    text = (settings.BASE_DIR / "config" / "settings.py").read_text()
    assert 'DATABASES["default"]["CONN_HEALTH_CHECKS"] = True' in text
    assert environ  # the settings module reads DATABASE_URL through django-environ


# --- 3. Health that tells the truth -----------------------------------------------------------


def test_healthz_is_liveness_only(db, monkeypatch):
    monkeypatch.setattr(connection, "cursor", _refused)
    response = Client(raise_request_exception=False).get("/healthz")
    monkeypatch.undo()
    assert response.status_code == 200 and response.content == b"ok"


def test_readyz_reports_the_database_the_cache_and_the_outbox(db):
    OutboundTask.objects.create(name="x.y", payload={})
    OutboundTask.objects.filter(name="x.y").update(
        created_at=timezone.now() - dt.timedelta(seconds=90)
    )
    OutboundTask.objects.create(name="x.z", payload={}, state=OutboundTask.State.DEAD)
    OutboundTask.objects.create(name="x.w", payload={}, state=OutboundTask.State.DONE)
    response = Client().get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["database"] == "ok" and body["cache"] == "ok"
    assert body["outbox"]["pending"] == 1 and body["outbox"]["dead"] == 1
    assert body["outbox"]["oldestPendingSeconds"] >= 90


def test_readyz_is_ready_with_the_cache_down(db, cache_down):
    response = Client().get("/readyz")
    assert response.status_code == 200
    assert response.json()["cache"] == "down"
    assert response.json()["outbox"] == {"pending": 0, "dead": 0, "oldestPendingSeconds": None}


def test_readyz_is_503_with_the_database_down(db, monkeypatch):
    monkeypatch.setattr(connection, "cursor", _refused)
    response = Client(raise_request_exception=False).get("/readyz")
    monkeypatch.undo()
    assert response.status_code == 503
    assert response.json()["database"] == "down"
    assert int(response["Retry-After"]) > 0


def test_a_failure_after_a_committed_write_says_the_write_was_stored(transactional_db):
    from django.db import transaction

    from governance import audit
    from governance.errors import database_unavailable

    with errors.noting_stored_writes():
        with pytest.raises(RuntimeError), transaction.atomic():
            audit.record(actor_account_id="a", kind="test.rolled_back", target_type="t")
            raise RuntimeError("rolled back")
        before = database_unavailable(OperationalError("gone"))
        with transaction.atomic():
            audit.record(actor_account_id="a", kind="test.stored", target_type="t")
        after = database_unavailable(OperationalError("gone"))
    assert before.stored is False and "nothing you sent was stored" in before.message
    assert after.stored is True and after.body()["error"]["stored"] is True
    assert "Your change was stored" in after.message
    assert after.status == 503 and after.code == "unavailable"
