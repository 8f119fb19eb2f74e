"""Run the benchmarks (bench/bench_*.py) on a fresh database and print their figures.

Each module defines `run() -> list[str]` (the lines to print). SQLite by default
(bench/results/bench.sqlite3); set BENCH_DATABASE_URL to measure on PostgreSQL. Timings are
medians of repeated runs.

The benchmarks measure the app as production runs it: DEBUG=false, hashed and compressed
static files (collected first), the production cache and outbox defaults. A SECRET_KEY and
ALLOWED_HOSTS are provided for the run when the environment has none; the garbage collector
runs as Python's default, as in a worker. The only difference:
requests come over plain loopback HTTP with no TLS proxy in front, so the redirect to https is
off for the in-process benchmarks (the load run keeps it and sends X-Forwarded-Proto, as a
proxy would).
"""

import importlib
import os
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"


BENCH_HOSTS = "127.0.0.1,localhost,testserver"


def production_environment(environ: Mapping[str, str], database_url: str) -> dict[str, str]:
    """The environment the benchmarks run in: production settings (DEBUG=false always), with
    a SECRET_KEY and ALLOWED_HOSTS made up for the run when `environ` has none."""
    env = dict(environ)
    env["DATABASE_URL"] = database_url
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    env["DEBUG"] = "false"
    if not env.get("SECRET_KEY"):
        env["SECRET_KEY"] = secrets.token_urlsafe(50)
    if not env.get("ALLOWED_HOSTS"):
        env["ALLOWED_HOSTS"] = BENCH_HOSTS
    env.setdefault("SECURE_SSL_REDIRECT", "false")
    return env


def collect_static(call_command) -> None:
    """collectstatic, as production runs it, unless the manifest is newer than every file
    under static/ (a full run compresses a thousand files)."""
    manifest = ROOT / "staticfiles" / "staticfiles.json"
    sources = [p for p in (ROOT / "static").rglob("*") if p.is_file()]
    if manifest.exists() and all(p.stat().st_mtime < manifest.stat().st_mtime for p in sources):
        return
    call_command("collectstatic", interactive=False, verbosity=0)


def main() -> int:
    RESULTS.mkdir(exist_ok=True)
    db_file = RESULTS / "bench.sqlite3"
    if db_file.exists():
        db_file.unlink()
    database_url = os.environ.get("BENCH_DATABASE_URL", f"sqlite:///{db_file}")
    os.environ.update(production_environment(os.environ, database_url))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    assert not settings.DEBUG
    call_command("migrate", verbosity=0)
    collect_static(call_command)
    print(
        f"== settings: DEBUG={settings.DEBUG}, database {settings.DATABASES['default']['ENGINE']}"
    )
    names = sorted(p.stem for p in HERE.glob("bench_*.py"))
    if len(sys.argv) > 1:
        names = [n for n in names if any(arg in n for arg in sys.argv[1:])]
    if not names:
        print("No benchmarks match.")
        return 1
    lines = []
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        print(f"== {name}: {module.__doc__.strip().splitlines()[0]}")
        for line in module.run():
            print("  " + line)
            lines.append(f"{name}: {line}")
    (RESULTS / "latest.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
