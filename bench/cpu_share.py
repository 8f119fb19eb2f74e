"""Where the load run's CPU goes, per phase: the load generator, the app's workers, PostgreSQL,
the shared cache, and what the machine left idle.

The load run shares one machine (2 cores here) between locust and the servers, so a rate is
bounded by whichever side runs out first. `Sampler` reads /proc (Linux) every few hundred
milliseconds while locust runs: the CPU time of each process group (utime + stime, the
process and its children that are alive at the sample) and the machine's busy and idle time
from /proc/stat. `per_phase` turns the samples into, for each phase, the milliseconds of CPU
each group spent per request served in that phase, and the share of the machine left idle. A
phase with no idle time left is bounded by the CPU; which group spends it per request says
whether the client or the server is the cost.

On a system without /proc the sampler records nothing and the report says so.
"""

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

PROC = Path("/proc")
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, str, float] | None:
    """(parent pid, command name, CPU seconds) of a process, None when it is gone."""
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces; the fields follow the last ')'.
    name = raw[raw.index("(") + 1 : raw.rindex(")")]
    fields = raw[raw.rindex(")") + 2 :].split()
    # fields[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
    return int(fields[1]), name, (int(fields[11]) + int(fields[12])) / TICKS


def processes() -> dict[int, tuple[int, str, float]]:
    """Every process's (parent, name, CPU seconds)."""
    found = {}
    for entry in PROC.iterdir() if PROC.exists() else ():
        if entry.name.isascii() and entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat:
                found[int(entry.name)] = stat
    return found


def _descendants(root: int, table: dict[int, tuple[int, str, float]]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    seen, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        todo.extend(children.get(pid, ()))
    return seen & set(table)


def machine_times() -> tuple[float, float]:
    """(busy, idle) CPU seconds of the whole machine since boot, all cores."""
    try:
        first = (PROC / "stat").read_text().splitlines()[0].split()
    except OSError:
        return 0.0, 0.0
    values = [int(v) for v in first[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    # guest time is already counted in user and nice.
    total = sum(values[:8])
    return (total - idle) / TICKS, idle / TICKS


def group_times(roots: dict[str, int], names: dict[str, tuple[str, ...]]) -> dict[str, float]:
    """CPU seconds per group: a group is a process and its descendants (`roots`), or every
    process whose command name is one of `names`."""
    table = processes()
    out = {}
    for group, pid in roots.items():
        out[group] = sum(table[p][2] for p in _descendants(pid, table))
    for group, commands in names.items():
        out[group] = sum(cpu for _, name, cpu in table.values() if name in commands)
    return out


class Sampler:
    """Samples `group_times` and `machine_times` every `interval` seconds in a thread."""

    def __init__(
        self,
        roots: Callable[[], dict[str, int]],
        names: dict[str, tuple[str, ...]],
        interval: float = 0.25,
    ) -> None:
        self.roots = roots
        self.names = names
        self.interval = interval
        self.samples: list[tuple[float, dict[str, float], tuple[float, float]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.samples.append(
                (time.time(), group_times(self.roots(), self.names), machine_times())
            )
            self._stop.wait(self.interval)

    def __enter__(self) -> "Sampler":
        if PROC.exists():
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()


def _at(samples: list, moment: float):
    """The last sample taken at or before `moment` (the first one if none)."""
    chosen = samples[0]
    for sample in samples:
        if sample[0] <= moment:
            chosen = sample
        else:
            break
    return chosen


def per_phase(
    samples: list, started: float, phase_seconds: float, order: list[str], served: dict[str, int]
) -> dict[str, dict]:
    """For each phase (in `order`, each `phase_seconds` long from `started`): CPU ms per
    request of each group, and the machine's idle share. `served[name]` is the number of
    requests the phase counted. The first and last second of a phase are left out (users
    still finishing the previous phase's requests)."""
    report: dict[str, dict] = {}
    if len(samples) < 2:
        return report
    for index, name in enumerate(order):
        begin = started + index * phase_seconds + 1.0
        end = started + (index + 1) * phase_seconds - 1.0
        if end <= begin:
            continue
        first, last = _at(samples, begin), _at(samples, end)
        span = last[0] - first[0]
        if span <= 0:
            continue
        # The requests of the window, at the phase's average rate.
        requests = served.get(name, 0) * span / phase_seconds
        busy = last[2][0] - first[2][0]
        idle = last[2][1] - first[2][1]
        row = {
            "idle": idle / (busy + idle) if busy + idle else 0.0,
            "ms": {
                group: (last[1].get(group, 0.0) - first[1].get(group, 0.0)) * 1000 / requests
                if requests
                else 0.0
                for group in last[1]
            },
        }
        row["ms"]["machine"] = busy * 1000 / requests if requests else 0.0
        report[name] = row
    return report


def format_report(report: dict[str, dict], groups: list[str]) -> list[str]:
    if not report:
        return ["CPU per request: not measured (no /proc on this system)"]
    lines = [
        "CPU ms per request by process group, and the machine's idle share, per phase:",
        f"{'endpoint':<28}" + "".join(f"{g:>10}" for g in [*groups, "machine"]) + f"{'idle':>7}",
    ]
    for name, row in report.items():
        lines.append(
            f"{name:<28}"
            + "".join(f"{row['ms'].get(g, 0.0):>10.2f}" for g in [*groups, "machine"])
            + f"{row['idle'] * 100:>6.0f}%"
        )
    return lines
