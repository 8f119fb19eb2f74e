"""Throughput under gunicorn: register page, register API and portfolio against /healthz.

A bounded load run on loopback only. The app runs as production runs it: gunicorn with 2
workers, PostgreSQL, DEBUG=false, behind a (simulated) TLS proxy: the requests carry
X-Forwarded-Proto: https and BEHIND_TLS_PROXY=true. Its database is made afresh
(BENCH_LOAD_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/governance_bench_load)
with the demo data plus a project whose work-package register has 100 rows
(BENCH_LOAD_REUSE=1 keeps the previous run's database and data). The workers share one
cache, as production requires (BENCH_LOAD_CACHE_URL, default redis://127.0.0.1:6379/0): the
throttles and rate limits count across workers, not per worker.

Locust (headless, one run of BENCH_LOAD_SECONDS, default 30) drives 8 users. The run has one
phase per endpoint, of equal length, each with all 8 users on that endpoint alone: a phase
measures what the endpoint sustains, and /healthz (the process alone, no query) is the
ceiling of the server, the network and the load generator on this machine. Reported per
endpoint: requests per second, p50 and p95 latency, errors (anything but a 200 with the
expected content).
Target: the register page sustains at least 30 % of the /healthz rate, with 0 errors. The peer:
Django admin's changelist of the same 100 work packages (a superuser's session, the project's
filter, one page of 100), in the same run; target: the register page at least 2x its rate.

The run reports every throughput target of issue 21 with met or MISSED: the register page at
least 30 % of /healthz with 0 errors, at least 2x admin's changelist, its p95 under 60 ms at 8
users, and the stored page's ceiling at least 45 % of /healthz. The ceiling is its own phase
("stored page (ceiling)"): the register page's URL on a second gunicorn, idle in the other
phases, serving `bench.ceiling:stored_page` (the rendered page kept, the session, the user and
the access gate run on every request).

BENCH_LOAD_WSGI names the WSGI application the main gunicorn serves (default
config.wsgi); the instruments in bench/ceiling.py measure the register page's ceilings on
the machine.
"""

import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/governance_bench_load"
DEFAULT_CACHE_URL = "redis://127.0.0.1:6379/0"
USERS = 8
WORKERS = 2
ROWS = 100
PROJECT_KEY = "LOAD"
TARGET_SHARE = 0.30

# name shown in the table -> what the locust file requests (filled in by `setup`).
ENDPOINTS = [
    "/healthz",
    "register page (100 rows)",
    "admin changelist (100 rows)",
    "register API list",
    "portfolio page",
    "stored page (ceiling)",
]
ADMIN_TARGET = 2.0  # the register page at least twice Django admin's changelist of its rows
P95_TARGET_MS = 60.0  # the register page's p95 at 8 users
CEILING_TARGET = 0.45  # bench.ceiling:stored_page against /healthz
CEILING_WSGI = "bench.ceiling:stored_page"
CPU_GROUPS = ["locust", "app", "ceiling", "postgres", "redis"]


# --- the data, written by `python bench/bench_load.py setup CONFIG` in the load database ----


def setup(config_path: Path) -> None:
    """Demo data, a 100-row work-package register, sessions and a token for the load run."""
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from bench import fixtures
    from governance import mirror, services
    from governance.models import User
    from governance.tracker import get_tracker
    from governance.tracker.local import scripting

    call_command("migrate", verbosity=0)
    call_command("seed_demo", verbosity=0)
    browsers = ["edward", "victor", "priya"]
    scripting.ensure_project(PROJECT_KEY, name="Load benchmark", lead="lena", browsers=browsers)
    for number in range(1, 21):
        scripting.ensure_issue(f"{PROJECT_KEY}-{number}", summary=f"Epic {number}")
    project = mirror.sync_project(get_tracker().get_project(PROJECT_KEY))
    owners = list(
        User.objects.filter(username__in=["lena", "marco", "edward", "sofia"]).values_list(
            "account_id", flat=True
        )
    )
    fixtures.work_package_register(
        project, owners, ROWS, digits=3, issue_key=lambda n: f"{PROJECT_KEY}-{n % 20 + 1}"
    )

    def session_for(username: str) -> str:
        client = Client()
        client.force_login(User.objects.get(username=username))
        return client.cookies[settings.SESSION_COOKIE_NAME].value

    admin = scripting.ensure_user("bench-admin", display_name="Bench Admin", admin=True)
    lena = User.objects.get(username="lena")
    _, token = services.token_create(user=lena, name="load benchmark")
    config = {
        "secretKey": settings.SECRET_KEY,
        "sessionCookie": settings.SESSION_COOKIE_NAME,
        "requests": {
            "/healthz": {"url": "/healthz", "expect": "ok"},
            "register page (100 rows)": {
                "url": f"/projects/{PROJECT_KEY}/registers/work-packages/",
                "session": session_for("lena"),
                "expect": f"Work package {ROWS - 1:03d}",
            },
            "admin changelist (100 rows)": {
                "url": f"/admin/registers/workpackage/?project__id__exact={project.pk}",
                "session": session_for(admin.username),
                "expect": f"Work package {ROWS - 1:03d}",
            },
            "register API list": {
                "url": f"/api/v1/projects/{PROJECT_KEY}/work-packages",
                "token": token,
                "expect": f"Work package {ROWS - 1:03d}",
            },
            "portfolio page": {
                "url": "/portfolio/",
                "session": session_for("priya"),
                "expect": PROJECT_KEY,
            },
            # The register page on the second server (bench.ceiling:stored_page).
            "stored page (ceiling)": {
                "url": f"/projects/{PROJECT_KEY}/registers/work-packages/",
                "session": session_for("lena"),
                "expect": f"Work package {ROWS - 1:03d}",
                "server": "ceiling",
            },
        },
    }
    config_path.write_text(json.dumps(config, indent=1))


# --- the run --------------------------------------------------------------------------------


def _database_reachable(url: str) -> str | None:
    """None when the server answers, else why not."""
    try:
        import psycopg

        psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", connect_timeout=3).close()
    except Exception as exc:
        return str(exc).strip().splitlines()[0]
    return None


def _cache_reachable(url: str) -> str | None:
    """None when the shared cache (Redis) answers, else why not."""
    try:
        import redis

        redis.Redis.from_url(url, socket_connect_timeout=3).ping()
    except Exception as exc:
        return str(exc).strip().splitlines()[0] or type(exc).__name__
    return None


def load_environment(environ, database_url: str, cache_url: str) -> dict[str, str]:
    """The app's environment for the load run: production settings, behind the (simulated)
    TLS proxy, on the shared cache."""
    from bench.run import production_environment

    env = production_environment(environ, database_url)
    env.pop("SECURE_SSL_REDIRECT", None)  # production: redirect to https, exempt behind the proxy
    env["BEHIND_TLS_PROXY"] = "true"
    env["CACHE_URL"] = cache_url
    env["PYTHONPATH"] = str(ROOT)
    return env


def _recreate_database(url: str) -> None:
    import psycopg

    server, name = url.rsplit("/", 1)
    with psycopg.connect(server + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_up(base_url: str, server: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.returncode}")
        try:
            with urllib.request.urlopen(base_url + "/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError("gunicorn did not answer /healthz in time")


def _gunicorn(application: str, port: int, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            application,
            "--workers",
            str(WORKERS),
            "--bind",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
            *_no_control_socket(),
        ],
        cwd=ROOT,
        env=env,
    )


def _no_control_socket() -> list[str]:
    """Gunicorn's control socket off where it has one: the two servers (and any other
    gunicorn on the machine) would share its default path under ~/.gunicorn."""
    from gunicorn import config

    known = any(
        getattr(setting, "name", None) == "control_socket_disable"
        for setting in vars(config).values()
    )
    return ["--no-control-socket"] if known else []


def summarise(samples: dict[str, dict]) -> dict[str, dict]:
    """Per endpoint: rps over its phase, p50 and p95 in ms, errors. `samples[name]` holds
    `times` (ms), `errors`, `first_start` and `last_end` (epoch seconds)."""
    table = {}
    for name, sample in samples.items():
        if name.startswith("__"):
            continue
        times = sorted(sample["times"])
        span = sample["last_end"] - sample["first_start"] if times else 0
        table[name] = {
            "requests": len(times),
            "rps": len(times) / span if span > 0 else 0.0,
            "p50": statistics.median(times) if times else 0.0,
            "p95": times[max(0, math.ceil(0.95 * len(times)) - 1)] if times else 0.0,
            "errors": sample["errors"],
        }
    return table


def format_table(table: dict[str, dict]) -> list[str]:
    healthz = table.get("/healthz", {}).get("rps") or 0.0
    lines = [
        f"{'endpoint':<26} {'rps':>8} {'p50 ms':>8} {'p95 ms':>8} {'errors':>7} {'% healthz':>9}"
    ]
    for name in ENDPOINTS:
        row = table.get(name)
        if row is None:
            continue
        share = f"{row['rps'] / healthz * 100:.0f} %" if healthz else "-"
        lines.append(
            f"{name:<26} {row['rps']:>8.1f} {row['p50']:>8.1f} {row['p95']:>8.1f} "
            f"{row['errors']:>7} {share:>9}"
        )
    page = table.get("register page (100 rows)")
    admin = table.get("admin changelist (100 rows)")
    if page and admin and admin["rps"]:
        ratio = page["rps"] / admin["rps"]
        lines.append(
            f"register page / admin changelist: {ratio:.2f} "
            f"(target: at least {ADMIN_TARGET:.2f}) {'met' if ratio >= ADMIN_TARGET else 'MISSED'}"
        )
    if page and page["requests"]:
        met = page["p95"] < P95_TARGET_MS
        lines.append(
            f"register page p95: {page['p95']:.1f} ms "
            f"(target: under {P95_TARGET_MS:.0f} ms at {USERS} users) {'met' if met else 'MISSED'}"
        )
    ceiling = table.get("stored page (ceiling)")
    if ceiling and healthz:
        share = ceiling["rps"] / healthz
        met = share >= CEILING_TARGET and ceiling["errors"] == 0
        lines.append(
            f"stored page ({CEILING_WSGI}) / healthz: {share:.2f} "
            f"(target: at least {CEILING_TARGET:.2f}) {'met' if met else 'MISSED'}"
        )
    if page and healthz:
        errors = sum(row["errors"] for row in table.values())
        met = page["rps"] >= TARGET_SHARE * healthz and errors == 0
        lines.append(
            f"register page / healthz: {page['rps'] / healthz:.2f}, errors {errors} "
            f"(target: at least {TARGET_SHARE:.2f} and 0 errors) {'met' if met else 'MISSED'}"
        )
    return lines


def run() -> list[str]:
    from bench import cpu_share

    database_url = os.environ.get("BENCH_LOAD_DATABASE_URL", DEFAULT_DATABASE_URL)
    why_not = _database_reachable(database_url)
    if why_not:
        return [f"skipped: PostgreSQL is not reachable at {database_url} ({why_not})"]
    cache_url = os.environ.get("BENCH_LOAD_CACHE_URL", DEFAULT_CACHE_URL)
    why_not = _cache_reachable(cache_url)
    if why_not:
        return [f"skipped: the shared cache is not reachable at {cache_url} ({why_not})"]
    seconds = float(os.environ.get("BENCH_LOAD_SECONDS", "30"))
    port = int(os.environ.get("BENCH_LOAD_PORT", "0")) or _free_port()
    RESULTS.mkdir(exist_ok=True)
    config_path = RESULTS / "load-config.json"
    samples_path = RESULTS / "load-samples.json"
    samples_path.unlink(missing_ok=True)

    reuse = bool(os.environ.get("BENCH_LOAD_REUSE")) and config_path.exists()
    env = load_environment(os.environ, database_url, cache_url)
    if reuse:  # the sessions of the kept data were signed with the kept key
        env["SECRET_KEY"] = json.loads(config_path.read_text())["secretKey"]
    if not reuse:
        _recreate_database(database_url)
        subprocess.run(
            [sys.executable, str(HERE / "bench_load.py"), "setup", str(config_path)],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.core.management import call_command; "
            "from bench.run import collect_static; collect_static(call_command)",
        ],
        cwd=ROOT,
        env=env,
        check=True,
    )
    base_url = f"http://127.0.0.1:{port}"
    ceiling_port = _free_port()
    ceiling_url = f"http://127.0.0.1:{ceiling_port}"
    server = _gunicorn(os.environ.get("BENCH_LOAD_WSGI") or "config.wsgi", port, env)
    ceiling = _gunicorn(CEILING_WSGI, ceiling_port, env)
    try:
        _wait_until_up(base_url, server)
        _wait_until_up(ceiling_url, ceiling)
        locust_env = {
            **env,
            "BENCH_LOAD_CONFIG": str(config_path),
            "BENCH_LOAD_SAMPLES": str(samples_path),
            "BENCH_LOAD_SECONDS": str(seconds),
            "BENCH_LOAD_CEILING_URL": ceiling_url,
        }
        locust = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "locust",
                "-f",
                str(HERE / "locustfile.py"),
                "--headless",
                "--host",
                base_url,
                "--users",
                str(USERS),
                "--spawn-rate",
                str(USERS * 10),
                "--run-time",
                f"{seconds:g}s",
                "--stop-timeout",
                "5",
                "--only-summary",
                "--loglevel",
                "ERROR",
                "--exit-code-on-error",
                "0",
            ],
            cwd=ROOT,
            env=locust_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        with cpu_share.Sampler(
            lambda: {"locust": locust.pid, "app": server.pid, "ceiling": ceiling.pid},
            {"postgres": ("postgres",), "redis": ("redis-server",)},
        ) as sampler:
            _, stderr = locust.communicate()
        if locust.returncode or not samples_path.exists():
            raise RuntimeError(f"locust failed:\n{stderr[-3000:]}")
    finally:
        for process in (server, ceiling):
            process.terminate()
        for process in (server, ceiling):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
    samples = json.loads(samples_path.read_text())
    (RESULTS / "load-cpu-samples.json").write_text(json.dumps(sampler.samples))
    table = summarise(samples)
    run_info = samples.get("__run__") or {}
    cpu = (
        cpu_share.per_phase(
            sampler.samples,
            run_info["started"],
            run_info["phaseSeconds"],
            run_info["order"],
            {name: row["requests"] + row["errors"] for name, row in table.items()},
        )
        if run_info.get("started")
        else {}
    )
    served = os.environ.get("BENCH_LOAD_WSGI", "")
    header = (
        (f"serving {served}: " if served else "")
        + f"gunicorn {WORKERS} workers, PostgreSQL, shared cache {cache_url}, DEBUG=false; "
        f"locust {USERS} users, "
        f"{seconds:g} s in {len(ENDPOINTS)} equal phases, loopback"
    )
    return [header, *format_table(table), *cpu_share.format_report(cpu, CPU_GROUPS)]


if __name__ == "__main__":
    if sys.argv[1:2] == ["setup"]:
        sys.path.insert(0, str(ROOT))
        setup(Path(sys.argv[2]))
    else:
        sys.path.insert(0, str(ROOT))
        print("\n".join(run()))
