"""The backup drill: the demo seeded into a fresh database, `pg_dump --format=custom`, restored
with `pg_restore` into another new database, and the app pointed at the copy serves the same
pages and API answers (same status, same body but for CSRF tokens and CSP nonces) as from the
original. Needs PostgreSQL and its client tools (`make test-postgres` runs it)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from governance.models import User
from governance.services import token_create

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="the drill dumps and restores PostgreSQL"
    ),
    pytest.mark.skipif(
        not (shutil.which("pg_dump") and shutil.which("pg_restore")),
        reason="the drill needs pg_dump and pg_restore on PATH",
    ),
]

PROJECT_PAGES = [
    "/projects/APOLLO/",
    "/projects/APOLLO/registers/work-packages/",
    "/projects/APOLLO/registers/risks/",
    "/projects/APOLLO/registers/decisions/",
    "/projects/APOLLO/registers/changes/",
    "/projects/APOLLO/charter/",
    "/projects/APOLLO/status/",
    "/projects/APOLLO/audit/",
]
API = [
    "/api/v1/me",
    "/api/v1/projects",
    "/api/v1/projects/APOLLO",
    "/api/v1/projects/APOLLO/work-packages",
    "/api/v1/projects/APOLLO/risks",
    "/api/v1/projects/APOLLO/decisions",
    "/api/v1/projects/APOLLO/changes",
    "/api/v1/projects/APOLLO/charter",
    "/api/v1/projects/APOLLO/status",
    "/api/v1/projects/APOLLO/audit",
]


def _server_args() -> list[str]:
    db = connection.settings_dict
    return ["-h", db["HOST"] or "127.0.0.1", "-p", str(db["PORT"] or 5432), "-U", db["USER"]]


def _admin_connection():
    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"] or "127.0.0.1",
        port=db["PORT"] or 5432,
        user=db["USER"],
        password=db["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    )


def _database_url(name: str) -> str:
    db = connection.settings_dict
    secret = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return (
        f"postgres://{db['USER']}{secret}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}"
    )


def _tool_env() -> dict:
    env = dict(os.environ)
    if connection.settings_dict["PASSWORD"]:
        env["PGPASSWORD"] = connection.settings_dict["PASSWORD"]
    return env


def _fetch(database: str, requests: list[dict]) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "TEST_DATABASE_NAME"}
    env.update(DATABASE_URL=_database_url(database), DEBUG="true", DJANGO_ALLOW_ASYNC_UNSAFE="1")
    result = subprocess.run(
        [sys.executable, "-m", "tests.governance.drill_fetch", json.dumps(requests)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def _signed_in(username: str) -> str:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client.cookies[settings.SESSION_COOKIE_NAME].value


@pytest.mark.django_db(transaction=True)
def test_a_restored_backup_serves_the_same_pages_and_api_answers(tmp_path, demo):
    lead, pmo = _signed_in("lena"), _signed_in("priya")
    _, token = token_create(user=User.objects.get(username="lena"), name="drill")
    requests = [{"label": "/", "path": "/", "session": lead}]
    requests += [{"label": path, "path": path, "session": lead} for path in PROJECT_PAGES]
    requests += [{"label": "/portfolio/", "path": "/portfolio/", "session": pmo}]
    requests += [{"label": path, "path": path, "token": token} for path in API]

    source = connection.settings_dict["NAME"]
    restored = f"{source}_restored"[:63]
    dump = tmp_path / "governance.dump"
    with _admin_connection() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{restored}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{restored}"')
    try:
        dump_args = ["--format=custom", "--no-owner", "--file", str(dump), "--dbname", source]
        subprocess.run(
            ["pg_dump", *dump_args, *_server_args()],
            env=_tool_env(),
            check=True,
            capture_output=True,
        )
        restore_args = ["--no-owner", "--exit-on-error", "--dbname", restored, str(dump)]
        subprocess.run(
            ["pg_restore", *restore_args, *_server_args()],
            env=_tool_env(),
            check=True,
            capture_output=True,
        )
        original = _fetch(source, requests)
        copy = _fetch(restored, requests)
    finally:
        with _admin_connection() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{restored}" WITH (FORCE)')

    assert {label: answer[0] for label, answer in original.items()} == {
        request["label"]: 200 for request in requests
    }
    assert "Customer portal relaunch" in original["/projects/APOLLO/"][1]
    assert json.loads(original["/api/v1/projects/APOLLO/risks"][1])  # not an empty register
    for label, answer in original.items():
        assert copy[label] == answer, label
