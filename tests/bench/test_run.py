"""`make bench` measures the app with production settings (DEBUG=false), not DEBUG=true."""

import json
import subprocess
import sys
from pathlib import Path

from bench import run as bench_run
from bench.run import production_environment

ROOT = Path(__file__).resolve().parents[2]


def test_debug_is_off_even_when_the_caller_has_it_on():
    env = production_environment({"DEBUG": "true", "PATH": "/bin"}, "sqlite:////tmp/x.sqlite3")
    assert env["DEBUG"] == "false"
    assert env["DATABASE_URL"] == "sqlite:////tmp/x.sqlite3"
    assert len(env["SECRET_KEY"]) >= 50
    assert "127.0.0.1" in env["ALLOWED_HOSTS"].split(",")
    assert env["PATH"] == "/bin"


def test_a_given_secret_key_and_hosts_are_kept():
    env = production_environment(
        {"SECRET_KEY": "k" * 60, "ALLOWED_HOSTS": "bench.example.com"}, "sqlite:///x"
    )
    assert env["SECRET_KEY"] == "k" * 60
    assert env["ALLOWED_HOSTS"] == "bench.example.com"


def test_the_settings_load_as_production_in_that_environment(tmp_path):
    """Without the provided SECRET_KEY and ALLOWED_HOSTS, DEBUG=false would stop start-up."""
    env = production_environment(
        {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, f"sqlite:///{tmp_path}/b.sqlite3"
    )
    code = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        "print(json.dumps([s.DEBUG, s.STORAGES['staticfiles']['BACKEND'], "
        "s.OUTBOX_RUN_ON_COMMIT, s.SESSION_COOKIE_SECURE]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    debug, storage, run_on_commit, secure_cookie = json.loads(done.stdout.strip().splitlines()[-1])
    assert debug is False
    assert "Manifest" in storage
    assert run_on_commit is False
    assert secure_cookie is True


def test_static_files_are_collected_when_the_manifest_is_missing(tmp_path, monkeypatch):
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "app.css").write_text("body {}")
    monkeypatch.setattr(bench_run, "ROOT", tmp_path)
    calls = []
    bench_run.collect_static(lambda *args, **kwargs: calls.append(args))
    assert calls == [("collectstatic",)]
