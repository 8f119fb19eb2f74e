"""The database connection's settings (config/settings.py): PostgreSQL compiles no statement
(record 0303), unless PGOPTIONS or DATABASE_URL's own `options` says otherwise, or
POSTGRES_JIT_OFF=false sends no startup option at all (a pooler that refuses them)."""

import runpy
from pathlib import Path

import pytest
from django.db import connection

SETTINGS = Path(__file__).resolve().parents[2] / "config" / "settings.py"


def _options(monkeypatch: pytest.MonkeyPatch, url: str, **env: str) -> dict:
    monkeypatch.setenv("DATABASE_URL", url)
    for name in ("TEST_DATABASE_NAME", "PGOPTIONS", "POSTGRES_JIT_OFF"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS))["DATABASES"]["default"].get("OPTIONS", {})


def test_postgresql_connections_turn_jit_off(monkeypatch):
    assert _options(monkeypatch, "postgres://u@db:5432/gov") == {"options": "-c jit=off"}


def test_options_in_the_url_are_kept_and_one_naming_jit_wins(monkeypatch):
    kept = _options(monkeypatch, "postgres://u@db:5432/gov?options=-c%20statement_timeout%3D5000")
    assert kept == {"options": "-c statement_timeout=5000 -c jit=off"}
    own = _options(monkeypatch, "postgres://u@db:5432/gov?options=-c%20jit%3Don")
    assert own == {"options": "-c jit=on"}
    # Another setting whose name begins with jit is not one that sets it.
    cost = _options(monkeypatch, "postgres://u@db:5432/gov?options=-c%20jit_above_cost%3D1")
    assert cost == {"options": "-c jit_above_cost=1 -c jit=off"}


def test_pgoptions_are_kept_and_may_set_jit(monkeypatch):
    """An explicit `options` makes libpq ignore PGOPTIONS: what it says is sent first."""
    url = "postgres://u@db:5432/gov"
    kept = _options(monkeypatch, url, PGOPTIONS="-c statement_timeout=5000")
    assert kept == {"options": "-c statement_timeout=5000 -c jit=off"}
    assert _options(monkeypatch, url, PGOPTIONS="--jit=on") == {"options": "--jit=on"}


def test_postgres_jit_off_false_sends_no_startup_option(monkeypatch):
    assert _options(monkeypatch, "postgres://u@db:5432/gov", POSTGRES_JIT_OFF="false") == {}


def test_sqlite_has_no_such_option(monkeypatch):
    assert "options" not in _options(monkeypatch, "sqlite:////tmp/gov.sqlite3")


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL setting")
def test_the_test_database_connection_runs_without_jit():
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone() == ("off",)
