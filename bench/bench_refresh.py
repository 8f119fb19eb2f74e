"""The stored health rows at PROJECTS projects (bench.run: 1,000 and 10,000 by default): a full
refresh of every row as the jobs run it (`status.health.refresh_in_chunks`: chunks of
`REFRESH_CHUNK`, the collector paused for each, as `refresh_all`), and the periodic
job (status.health.refresh_changed) with nothing changed and with 1 % of the projects changed.

Each project has 20 work packages, 20 risks, 10 decisions and 10 changes, a business case
with an approved plan and a status, as the portfolio benchmark's projects (keys R00000...).
The data is built up to each size in turn and left in place. The target: a full refresh of
10,000 projects within 3 s.
"""

import random
import statistics
import time

DEFAULT_PROJECTS = [1000, 10000]
TARGET_SECONDS = 3.0
TARGET_PROJECTS = 10000


def _build(start: int, stop: int, rng: random.Random) -> None:
    """Projects R{start}..R{stop-1} with their facts, in multi-row inserts (bench.fixtures)."""
    from bench import fixtures
    from governance.tracker.local import scripting

    scripting.ensure_user("bench_refresh_lead", display_name="Refresh Lead")
    fixtures.projects_with_facts(
        [f"R{n:05d}" for n in range(start, stop)],
        rng,
        title="Refresh project",
        lead="bench_refresh_lead",
    )


def _timed(fn, repeat: int) -> tuple[float, object]:
    seconds, _, result = _timed_cpu(fn, repeat)
    return seconds, result


def _timed_cpu(fn, repeat: int) -> tuple[float, float, object]:
    """The median wall time and CPU time (`time.process_time`: this process only, not the
    database server's) of `repeat` runs, and the last run's result."""
    times, cpu, result = [], [], None
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return statistics.median(times), statistics.median(cpu), result


def run(sizes: list[int] | None = None) -> list[str]:
    from django.db import connection
    from django.utils import timezone

    from bench import bench_portfolio
    from bench import run as bench_run
    from governance.models import Project
    from registers.models import Risk
    from status import health

    sizes = sorted(sizes or bench_run.sizes("PROJECTS", DEFAULT_PROJECTS))
    rng = random.Random(20261128)
    lines = [f"database: {connection.vendor}"]
    built = 0
    for n in sizes:
        started = time.perf_counter()
        _build(built, n, rng)
        built = n
        ids = list(
            Project.objects.filter(key__startswith="R").order_by("key").values_list("pk", flat=True)
        )
        building = time.perf_counter() - started
        health.refresh(ids[:500])  # warm-up
        repeat = 3 if n <= 2000 else 1

        def full(ids=ids):
            # As the jobs run it (`refresh_all`): in chunks, the collector paused for each.
            health.refresh_in_chunks(ids, None, job=True)

        seconds, cpu, _ = _timed_cpu(full, repeat)
        line = (
            f"full health refresh of {n:,} projects: {seconds:.2f} s "
            f"({seconds / n * 1000:.2f} ms a project; {cpu:.2f} s CPU, {cpu / n * 1000:.2f} ms "
            f"a project; median of {repeat}; as the jobs run it, the collector paused a "
            f"chunk; data built in "
            f"{building:.0f} s; load average {bench_portfolio._load()})"
        )
        if n == TARGET_PROJECTS:
            verdict = "met" if seconds <= TARGET_SECONDS else "MISSED"
            line += f"; target {TARGET_SECONDS:.0f} s at {TARGET_PROJECTS:,}: {verdict}"
        lines.append(line)
        health.refresh_changed()  # every other project of the database, once
        quiet, count = _timed(health.refresh_changed, 1)
        lines.append(
            f"  the periodic job at {n:,} projects, nothing changed: {count} refreshed in "
            f"{quiet:.2f} s"
        )
        changed = ids[::100]
        Risk.objects.filter(project_id__in=changed).update(updated_at=timezone.now())
        busy, count = _timed(health.refresh_changed, 1)
        lines.append(
            f"  the periodic job at {n:,} projects, {len(changed)} changed (1 %): {count} "
            f"refreshed in {busy:.2f} s"
        )
    return lines
