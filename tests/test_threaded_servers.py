"""Parallel requests through every server the docs name (`make run`, docs/operations.md), on
PostgreSQL with DEBUG=true: runserver (threaded) and gunicorn with threads. The rest of the
suite serves one request at a time in one thread, so an object of the request path bound to the
thread that made it (a connection kept across requests, a cursor class closing over one) passes
there and answers 500 here. Four threads send 25 authenticated GETs each, as different roles, to
project pages and the API: no 5xx, and each role gets its 200 or its 404.

The servers are subprocesses on free loopback ports, reading this test's own database (the
test database, with the rows committed: a transactional test); they are stopped whatever
happens. Skipped on SQLite only."""

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from governance.services import token_create
from tests.factories import RiskFactory, WorkPackageFactory

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
THREADS, REQUESTS = 4, 25
START_LIMIT = 40.0

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the threaded servers run on PostgreSQL"
)

# (path, API?) -> the status each role answers.
PATHS = [
    ("/api/v1/projects/ALPHA", True),
    ("/api/v1/projects/ALPHA/risks", True),
    ("/api/v1/projects/ALPHA/work-packages", True),
    ("/projects/ALPHA/", False),
    ("/projects/ALPHA/registers/risks/", False),
    ("/projects/ALPHA/registers/work-packages/", False),
]
EXPECTED = {"viewer": 200, "lead": 200, "sponsor": 200, "outsider": 404}


def _free_port(taken: tuple[int, ...] = ()) -> int:
    """A free loopback port: from TEST_SERVER_PORTS ("8620-8629") when set, for a machine
    whose ports are shared out, else any the system gives."""
    first, _, last = os.environ.get("TEST_SERVER_PORTS", "0-0").partition("-")
    for port in range(int(first), int(last or first) + 1):
        if port in taken:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise OSError("no free port in TEST_SERVER_PORTS")


def _database_url() -> str:
    db = connection.settings_dict
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


def _commands(port: int) -> dict[str, list[str]]:
    return {
        "runserver": [
            sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload",
        ],
        "gunicorn --threads 4": [
            str(BIN / "gunicorn"), "config.wsgi", "--workers", "1", "--threads", "4",
            "--bind", f"127.0.0.1:{port}", "--timeout", "60",
        ],
    }  # fmt: skip


class Server:
    def __init__(self, name: str, command: list[str], port: int, log: Path):
        self.name, self.port, self.log = name, port, log
        env = {
            **os.environ,
            "DATABASE_URL": _database_url(),
            "DEBUG": "true",
            "OUTBOX_RUN_ON_COMMIT": "true",
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("TEST_DATABASE_NAME", None)
        self._out = log.open("wb")
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=self._out, stderr=subprocess.STDOUT
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_ready(self, deadline: float) -> None:
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/healthz", timeout=2):
                    return
            except urllib.error.HTTPError:
                return  # it answers
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        f"{self.name} did not start:\n{self.log.read_text(errors='replace')}"
                    ) from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._out.close()


def _get(url: str, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        error.read()
        return error.code


def _credentials(cast) -> dict[str, tuple[dict, dict]]:
    """Each role's headers: (the API's bearer token, the pages' session cookie)."""
    found = {}
    for role in EXPECTED:
        user = getattr(cast, role)
        _, raw = token_create(user=user, name="threads")
        client = Client()
        client.force_login(user)
        session = client.cookies[settings.SESSION_COOKIE_NAME].value
        found[role] = (
            {"Authorization": f"Bearer {raw}"},
            {"Cookie": f"{settings.SESSION_COOKIE_NAME}={session}"},
        )
    return found


def _load(server: Server, credentials) -> list[str]:
    """THREADS clients x REQUESTS GETs, each client turning through the roles and paths."""
    roles = sorted(EXPECTED)

    def client(number: int) -> list[str]:
        wrong = []
        for n in range(REQUESTS):
            role = roles[(number + n) % len(roles)]
            path, api = PATHS[(number * 7 + n) % len(PATHS)]
            headers = credentials[role][0 if api else 1]
            status = _get(server.base + path, headers)
            if status != EXPECTED[role]:
                wrong.append(f"{server.name}: {role} GET {path} -> {status}")
        return wrong

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return [line for lines in pool.map(client, range(THREADS)) for line in lines]


def test_parallel_requests_through_every_server(transactional_db, cast, tmp_path):
    RiskFactory(project=cast.project, title="Outage")
    WorkPackageFactory(project=cast.project, name="Build")
    credentials = _credentials(cast)
    servers = []
    try:
        for name in ("runserver", "gunicorn --threads 4"):
            port = _free_port(tuple(server.port for server in servers))
            log = tmp_path / f"{name.split()[0]}.log"
            servers.append(Server(name, _commands(port)[name], port, log))
        deadline = time.monotonic() + START_LIMIT
        for server in servers:
            server.wait_ready(deadline)
        wrong = []
        for server in servers:
            wrong += _load(server, credentials)
    finally:
        for server in servers:
            server.stop()
    logs = {s.name: s.log.read_text(errors="replace") for s in servers}
    assert not wrong, "\n".join(wrong[:20]) + "".join(
        f"\n--- {name} ---\n{text[-4000:]}" for name, text in logs.items() if "Error" in text
    )
    for name, text in logs.items():
        assert "can only be used in that same thread" not in text, f"{name}:\n{text[-4000:]}"
