"""`make bench` measures the app with production settings (DEBUG=false), not DEBUG=true."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_sizes_come_from_projects_and_rows_or_the_benchmarks_defaults():
    assert bench_run.sizes("PROJECTS", [1000], {}) == [1000]
    assert bench_run.sizes("PROJECTS", [1000], {"PROJECTS": "1000,5000,10000"}) == [
        1000,
        5000,
        10000,
    ]
    assert bench_run.sizes("ROWS", [1], {"ROWS": " 1k, 10_000 "}) == [1000, 10000]
    with pytest.raises(ValueError):
        bench_run.sizes("ROWS", [1], {"ROWS": "0"})


def test_each_figure_is_reported_against_its_target():
    lines = [
        "bench_refresh: database: postgresql",
        "bench_refresh: full health refresh of 10,000 projects: 2.50 s; target 3 s: met",
        "bench_imports: CSV: preview 1 s + commit 2 s = 3 s (target 5 s for preview plus "
        "commit: MISSED)",
        "bench_portfolio: target: HTML page within 3x of the aggregate query: NOT met",
    ]
    assert [bench_run.verdict(line) for line in lines] == [None, "met", "MISSED", "MISSED"]
    summary = bench_run.summary(lines)
    assert summary[0] == "1 met, 2 missed"
    assert summary[1].startswith("MISSED  bench_imports") and summary[3].startswith("met ")


def test_the_make_target_passes_projects_and_rows_to_the_run(tmp_path):
    """`make bench PROJECTS=... ROWS=...`: make exports command-line variables to the run."""
    makefile = tmp_path / "Makefile"
    makefile.write_text("show:\n\t@echo $$PROJECTS/$$ROWS\n")
    done = subprocess.run(
        ["make", "-s", "-f", str(makefile), "show", "PROJECTS=1000,10000", "ROWS=1000"],
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == "1000,10000/1000"


def test_the_memory_benchmark_runs_after_the_portfolio_whose_data_it_reads():
    names = ["bench_refresh", "bench_memory", "bench_portfolio", "bench_imports"]
    assert bench_run.order(names) == [
        "bench_imports",
        "bench_portfolio",
        "bench_refresh",
        "bench_memory",
    ]


def test_a_figure_at_10000_is_judged_against_the_same_at_1000():
    figures = {1000: {"page": 100.0}, 5000: {"page": 150.0}, 10000: {"page": 130.0}}
    (line,) = bench_run.scaled(figures, [("page", "register page")], "rows", 1.2)
    assert line == (
        "register page at 10,000 rows / at 1,000: 130.0 / 100.0 ms = 1.30x; "
        "target within 1.2x: MISSED"
    )
    assert bench_run.verdict(line) == "MISSED"
    (line,) = bench_run.scaled(
        {1000: {"page": 1.0}, 2000: {"page": 1.0}}, [("page", "p")], "rows", 1.2
    )
    assert bench_run.verdict(line) is None  # only 1,000 against 10,000 is judged
    assert bench_run.scaled({1000: {"page": 1.0}}, [("page", "p")], "rows", 1.2) == []
