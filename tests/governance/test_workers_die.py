"""Workers that die (SIGKILL), in real processes on a database file they share.

- A web worker killed in the middle of a request, its transaction open: that request's write
  is gone whole (no row, no audit entry); the next request is served and stored.
- An outbox worker killed in the middle of a task: the task stays leased; another worker
  leaves it alone until the lease ends, then runs it, once (the handler is idempotent)."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)

DRIVER = textwrap.dedent(
    """
    import json, os, sys, time
    import django
    django.setup()
    from django.db import transaction
    from django.test import Client
    from governance import audit, outbox, services
    from governance.models import AuditEntry, OutboundTask, User
    from registers.models import Risk

    LOG = os.environ["FAULTS_LOG"]

    def note(line):
        with open(LOG, "a") as f:
            f.write(line + "\\n")

    @outbox.handler("faults.once")
    def once(payload):
        note("task started")
        if os.environ.get("FAULTS_HANG"):
            time.sleep(120)  # killed here
        done = os.environ["FAULTS_DONE"]
        seen = open(done).read().split() if os.path.exists(done) else []
        if payload["id"] not in seen:  # idempotent: one effect per task
            with open(done, "a") as f:
                f.write(payload["id"] + "\\n")

    mode = sys.argv[1]
    if mode == "setup":
        from tests.factories import ProjectFactory, UserFactory
        lead = UserFactory(username="lead", display_name="Lena Lead")
        ProjectFactory(key="ALPHA", name="Alpha", lead=lead)
        _, raw = services.token_create(user=lead, name="faults")
        with transaction.atomic():
            outbox.enqueue("faults.once", {"id": "task-1"})
        print(raw)
    elif mode == "request":
        if os.environ.get("FAULTS_HANG"):
            record = audit.record
            def hanging(**kwargs):
                entry = record(**kwargs)
                note("inside the transaction")
                time.sleep(120)  # killed here, before the commit
                return entry
            audit.record = hanging
        response = Client().post(
            "/api/v1/projects/ALPHA/risks",
            json.dumps({"title": sys.argv[2]}),
            "application/json",
            HTTP_AUTHORIZATION="Bearer " + os.environ["FAULTS_TOKEN"],
        )
        print(response.status_code)
    elif mode == "work":
        print(json.dumps(outbox.run_due()))
    elif mode == "lease-ends":  # the clock moves past the dead worker's lease
        from datetime import timedelta
        from django.utils import timezone
        OutboundTask.objects.filter(name="faults.once").update(
            locked_until=timezone.now() - timedelta(seconds=1)
        )
    elif mode == "state":
        task = OutboundTask.objects.get(name="faults.once")
        print(json.dumps({
            "risks": sorted(Risk.objects.values_list("title", flat=True)),
            "audits": {
                title: AuditEntry.objects.filter(target_id=str(pk)).count()
                for pk, title in Risk.objects.values_list("pk", "title")
            },
            "task": [task.state, task.attempts],
        }))
    """
)


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    """One migrated SQLite file for the module; each test works on a copy."""
    path = tmp_path_factory.mktemp("faults") / "migrated.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{path}", "DEBUG": "true"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    return path


@pytest.fixture
def app(tmp_path, migrated):
    """Run the driver in a process of its own, on a migrated SQLite file."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    database = tmp_path / "db.sqlite3"
    shutil.copyfile(migrated, database)
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "CACHE_URL": "locmemcache://faults",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "true",
        "OUTBOX_RUN_ON_COMMIT": "false",
        "OUTBOX_LEASE_SECONDS": "600",
        "FAULTS_LOG": str(tmp_path / "log.txt"),
        "FAULTS_DONE": str(tmp_path / "done.txt"),
        "PYTHONPATH": str(ROOT),
    }

    class App:
        log = tmp_path / "log.txt"
        done = tmp_path / "done.txt"

        def run(self, *args, **extra) -> str:
            result = subprocess.run(
                [sys.executable, str(driver), *args],
                cwd=ROOT,
                env={**env, **extra},
                check=True,
                capture_output=True,
                text=True,
            )
            lines = result.stdout.strip().splitlines()
            return lines[-1] if lines else ""

        def kill_when(self, line: str, *args, **extra) -> int:
            """Start the driver, SIGKILL it once it logs `line`; its exit status."""
            process = subprocess.Popen(
                [sys.executable, str(driver), *args],
                cwd=ROOT,
                env={**env, **extra},
                stdout=subprocess.DEVNULL,
            )
            try:
                while line not in (self.log.read_text() if self.log.exists() else ""):
                    assert process.poll() is None, "the worker ended before it was killed"
                    time.sleep(0.05)
            finally:
                process.send_signal(signal.SIGKILL)
            return process.wait()

    app = App()
    app.token = app.run("setup")
    return app


def test_a_web_worker_killed_mid_request_loses_only_that_request(app):
    import json

    status = app.kill_when(
        "inside the transaction",
        "request",
        "Killed mid-request",
        FAULTS_HANG="1",
        FAULTS_TOKEN=app.token,
    )
    assert status == -signal.SIGKILL
    assert app.run("request", "Stored after", FAULTS_TOKEN=app.token) == "201"
    state = json.loads(app.run("state"))
    assert state["risks"] == ["Stored after"]  # nothing of the killed request
    assert state["audits"] == {"Stored after": 1}


def test_an_outbox_worker_killed_mid_task_has_it_run_once_after_the_lease(app):
    import json

    status = app.kill_when("task started", "work", FAULTS_HANG="1")
    assert status == -signal.SIGKILL
    assert json.loads(app.run("state"))["task"] == ["running", 1]
    assert json.loads(app.run("work")) == [0, 0]  # still leased by the dead worker
    app.run("lease-ends")
    assert json.loads(app.run("work")) == [1, 0]  # another worker picks it up
    assert json.loads(app.run("work")) == [0, 0]  # and it is not run again
    assert json.loads(app.run("state"))["task"] == ["done", 2]
    assert app.done.read_text().split() == ["task-1"]
    assert app.log.read_text().count("task started") == 2  # the killed try and the one run
