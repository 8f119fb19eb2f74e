"""The database connection's settings (config/settings.py): PostgreSQL compiles no statement
(record 0303), unless DATABASE_URL's own `options` says otherwise."""

import runpy
from pathlib import Path

import pytest
from django.db import connection

SETTINGS = Path(__file__).resolve().parents[2] / "config" / "settings.py"


def _options(monkeypatch: pytest.MonkeyPatch, url: str) -> dict:
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.delenv("TEST_DATABASE_NAME", raising=False)
    return runpy.run_path(str(SETTINGS))["DATABASES"]["default"].get("OPTIONS", {})


def test_postgresql_connections_turn_jit_off(monkeypatch):
    assert _options(monkeypatch, "postgres://u@db:5432/gov") == {"options": "-c jit=off"}


def test_options_in_the_url_are_kept_and_one_naming_jit_wins(monkeypatch):
    kept = _options(monkeypatch, "postgres://u@db:5432/gov?options=-c%20statement_timeout%3D5000")
    assert kept == {"options": "-c statement_timeout=5000 -c jit=off"}
    own = _options(monkeypatch, "postgres://u@db:5432/gov?options=-c%20jit%3Don")
    assert own == {"options": "-c jit=on"}


def test_sqlite_has_no_such_option(monkeypatch):
    assert "options" not in _options(monkeypatch, "sqlite:////tmp/gov.sqlite3")


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL setting")
def test_the_test_database_connection_runs_without_jit():
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone() == ("off",)
