"""Run the benchmarks (bench/bench_*.py) on a fresh database and print their figures.

Each module defines `run() -> list[tuple[str, float]]` (label, seconds) and may define
`ratio` pairs to report. SQLite by default (bench/results/bench.sqlite3); set
BENCH_DATABASE_URL to measure on PostgreSQL. Timings are medians of repeated runs.
"""

import importlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"


def main() -> int:
    RESULTS.mkdir(exist_ok=True)
    db_file = RESULTS / "bench.sqlite3"
    if db_file.exists():
        db_file.unlink()
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL", f"sqlite:///{db_file}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "governance.settings")
    os.environ.setdefault("DEBUG", "true")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
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
