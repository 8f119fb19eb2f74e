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

Sizes: `PROJECTS` and `ROWS` (environment or make variables, comma-separated, e.g.
`make bench PROJECTS=1000,5000,10000 ROWS=1000,10000`) are the numbers of projects and of
register rows the benchmarks that scale measure at (`sizes`); each keeps its own defaults.
Names given as arguments pick the benchmarks (`bench/run.py refresh imports`).

Targets: every line a benchmark prints that judges a figure against its target ends its
judgement with "met" or "MISSED" (also "NOT met"); the run ends with those lines gathered, and
`latest.txt` keeps them.
"""

import importlib
import os
import secrets
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"


BENCH_HOSTS = "127.0.0.1,localhost,testserver"
VERDICTS = ("MISSED", "NOT met", "met")


def sizes(name: str, default: list[int], environ: Mapping[str, str] | None = None) -> list[int]:
    """The sizes `name` (PROJECTS, ROWS) gives, comma-separated ("1000,10000", "10k"), or
    `default` when it is not set."""
    text = (os.environ if environ is None else environ).get(name, "").strip()
    if not text:
        return list(default)
    found = []
    for part in text.replace(" ", ",").split(","):
        if not part:
            continue
        part = part.lower().replace("_", "")
        scale = 1000 if part.endswith("k") else 1
        value = int(part.removesuffix("k")) * scale
        if value <= 0:
            raise ValueError(f"{name}: sizes are positive numbers, not {part!r}")
        found.append(value)
    return found


def scaled(
    figures: Mapping[int, Mapping[str, float]],
    named: Iterable[tuple[str, str]],
    unit: str,
    target: float,
) -> list[str]:
    """Each figure (name, label) at the largest size against the same at the smallest, from
    `figures` ({size: {name: ms}}); judged against `target` (a ratio) when the sizes are
    1,000 and 10,000, the sizes the targets name."""
    sizes = sorted(figures)
    if len(sizes) < 2:
        return []
    small, large = sizes[0], sizes[-1]
    judged = small == 1000 and large == 10000
    lines = []
    for name, label in named:
        ratio = figures[large][name] / figures[small][name]
        line = (
            f"{label} at {large:,} {unit} / at {small:,}: "
            f"{figures[large][name]:.1f} / {figures[small][name]:.1f} ms = {ratio:.2f}x"
        )
        if judged:
            verdict = "met" if ratio <= target else "MISSED"
            line += f"; target within {target:.1f}x: {verdict}"
        lines.append(line)
    return lines


def verdict(line: str) -> str | None:
    """The verdict a benchmark's line gives against its target ("met", "MISSED", "NOT met"),
    or None for a line that judges nothing."""
    if "target" not in line.lower():
        return None
    for word in VERDICTS:
        if word in line:
            return "MISSED" if word == "NOT met" else word
    return None


def summary(lines: list[str]) -> list[str]:
    """The lines that judge a figure against its target, the missed ones first."""
    judged = [(verdict(line), line) for line in lines]
    missed = [line for word, line in judged if word == "MISSED"]
    met = [line for word, line in judged if word == "met"]
    return [
        f"{len(met)} met, {len(missed)} missed",
        *(f"MISSED  {line}" for line in missed),
        *(f"met     {line}" for line in met),
    ]


def order(names: Iterable[str]) -> list[str]:
    """The benchmarks in the order they run: by name, the memory benchmark last (it reads the
    portfolio benchmark's data at its largest size, built by then; run first, it would build
    the largest size before the portfolio measured the smallest)."""
    return sorted(names, key=lambda name: (name == "bench_memory", name))


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
    print(
        f"== sizes: PROJECTS={os.environ.get('PROJECTS') or 'each benchmark default'}, "
        f"ROWS={os.environ.get('ROWS') or 'each benchmark default'}"
    )
    names = order(p.stem for p in HERE.glob("bench_*.py"))
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
    targets = summary(lines)
    print("== targets: " + targets[0])
    for line in targets[1:]:
        print("  " + line)
    (RESULTS / "latest.txt").write_text("\n".join([*lines, "", *targets]) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
