"""The load run's report: rate, p50, p95 and errors per endpoint, against /healthz."""

from bench import bench_load


def _sample(times, errors=0, first=100.0, last=110.0):
    return {"times": times, "errors": errors, "first_start": first, "last_end": last}


def test_rate_and_percentiles_per_endpoint():
    table = bench_load.summarise(
        {
            "/healthz": _sample([1.0] * 1000),
            "register page (100 rows)": _sample([float(n) for n in range(1, 101)], errors=2),
        }
    )
    assert table["/healthz"]["rps"] == 100.0
    page = table["register page (100 rows)"]
    assert page["requests"] == 100 and page["rps"] == 10.0
    assert page["p50"] == 50.5 and page["p95"] == 95.0
    assert page["errors"] == 2


def test_an_endpoint_that_never_answered_reports_zero():
    table = bench_load.summarise({"portfolio page": _sample([], errors=5, first=None, last=None)})
    assert table["portfolio page"] == {
        "requests": 0,
        "rps": 0.0,
        "p50": 0.0,
        "p95": 0.0,
        "errors": 5,
    }


def test_the_table_says_whether_the_target_is_met():
    rows = {
        "/healthz": {"requests": 1, "rps": 100.0, "p50": 1.0, "p95": 2.0, "errors": 0},
        "register page (100 rows)": {"requests": 1, "rps": 30.0, "p50": 9, "p95": 12, "errors": 0},
    }
    lines = bench_load.format_table(rows)
    assert lines[0].split() == [
        "endpoint",
        "rps",
        "p50",
        "ms",
        "p95",
        "ms",
        "errors",
        "%",
        "healthz",
    ]
    assert any(line.startswith("register page (100 rows)") and "30 %" in line for line in lines)
    assert lines[-1].endswith("met")
    rows["register page (100 rows)"]["errors"] = 1
    assert bench_load.format_table(rows)[-1].endswith("MISSED")
    rows["register page (100 rows)"].update(errors=0, rps=29.0)
    assert bench_load.format_table(rows)[-1].endswith("MISSED")


def test_the_table_gives_the_register_page_against_django_admin_in_the_same_run():
    rows = {
        "/healthz": {"requests": 1, "rps": 100.0, "p50": 1.0, "p95": 2.0, "errors": 0},
        "register page (100 rows)": {"requests": 1, "rps": 40.0, "p50": 9, "p95": 12, "errors": 0},
        "admin changelist (100 rows)": {
            "requests": 1,
            "rps": 20.0,
            "p50": 9,
            "p95": 9,
            "errors": 0,
        },
    }
    lines = bench_load.format_table(rows)
    assert any(line.startswith("admin changelist (100 rows)") for line in lines)
    assert "register page / admin changelist: 2.00 (target: at least 2.00) met" in lines
    rows["admin changelist (100 rows)"]["rps"] = 21.0
    assert any(
        line.endswith("MISSED") and "admin" in line for line in bench_load.format_table(rows)
    )
    assert bench_load.ENDPOINTS.index("admin changelist (100 rows)") == 2


def test_the_run_is_bounded_and_on_loopback_only():
    assert bench_load.USERS == 8 and bench_load.WORKERS == 2
    source = (bench_load.HERE / "bench_load.py").read_text()
    assert '"127.0.0.1:' in source or "127.0.0.1:{port}" in source
    assert "0.0.0.0" not in source
    locustfile = (bench_load.HERE / "locustfile.py").read_text()
    assert "X-Forwarded-Proto" in locustfile and "allow_redirects=False" in locustfile


def test_without_postgresql_the_load_run_says_so(monkeypatch):
    monkeypatch.setenv("BENCH_LOAD_DATABASE_URL", "postgres://nobody@127.0.0.1:1/none")
    lines = bench_load.run()
    assert len(lines) == 1 and lines[0].startswith("skipped: PostgreSQL is not reachable")


def test_the_load_run_serves_from_the_shared_cache():
    env = bench_load.load_environment({}, "postgres://x/y", "redis://127.0.0.1:6379/8")
    assert env["CACHE_URL"] == "redis://127.0.0.1:6379/8"
    assert env["DEBUG"] == "false" and env["BEHIND_TLS_PROXY"] == "true"
    assert bench_load.DEFAULT_CACHE_URL.startswith("redis://")


def test_without_the_shared_cache_the_load_run_says_so(monkeypatch):
    monkeypatch.setattr(bench_load, "_database_reachable", lambda url: None)
    monkeypatch.setenv("BENCH_LOAD_CACHE_URL", "redis://127.0.0.1:1/8")
    lines = bench_load.run()
    assert len(lines) == 1 and lines[0].startswith("skipped: the shared cache is not reachable")


def test_the_table_reports_every_target_of_the_load_run():
    """The register page's p95 and the stored page's ceiling are reported met or MISSED in
    the same run, beside the healthz and admin ratios."""
    rows = {
        "/healthz": {"requests": 1, "rps": 100.0, "p50": 1.0, "p95": 2.0, "errors": 0},
        "register page (100 rows)": {"requests": 1, "rps": 40.0, "p50": 9, "p95": 59, "errors": 0},
        "stored page (ceiling)": {"requests": 1, "rps": 45.0, "p50": 5, "p95": 9, "errors": 0},
    }
    lines = bench_load.format_table(rows)
    assert any(line.startswith("stored page (ceiling)") and "45 %" in line for line in lines)
    assert "register page p95: 59.0 ms (target: under 60 ms at 8 users) met" in lines
    assert (
        "stored page (bench.ceiling:stored_page) / healthz: 0.45 (target: at least 0.45) met"
        in (lines)
    )
    assert lines[-1].startswith("register page / healthz") and lines[-1].endswith("met")
    rows["register page (100 rows)"]["p95"] = 60
    rows["stored page (ceiling)"]["rps"] = 44.0
    lines = bench_load.format_table(rows)
    assert "register page p95: 60.0 ms (target: under 60 ms at 8 users) MISSED" in lines
    assert any(line.startswith("stored page (bench") and line.endswith("MISSED") for line in lines)


def test_the_ceiling_is_a_phase_on_its_own_server():
    source = (bench_load.HERE / "bench_load.py").read_text()
    assert bench_load.CEILING_WSGI == "bench.ceiling:stored_page"
    assert '"server": "ceiling"' in source and "BENCH_LOAD_CEILING_URL" in source
    assert "BENCH_LOAD_CEILING_URL" in (bench_load.HERE / "locustfile.py").read_text()
