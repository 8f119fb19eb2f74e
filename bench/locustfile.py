"""The load run of bench/bench_load.py (started by it; not run on its own).

One locust run, one phase per endpoint, of equal length: in a phase every user requests that
endpoint alone, back to back. Every request is checked (a 200, no redirect, the expected
content) and timed against its own phase; the samples are written as JSON for bench_load to
summarise.
"""

import json
import os
import time
from pathlib import Path

from locust import HttpUser, events, task

CONFIG = json.loads(Path(os.environ["BENCH_LOAD_CONFIG"]).read_text())
SECONDS = float(os.environ.get("BENCH_LOAD_SECONDS", "30"))
# The endpoints in the order bench_load.ENDPOINTS gives them (the config keeps that order).
ORDER = list(CONFIG["requests"])
PHASE = SECONDS / len(ORDER)
SAMPLES: dict[str, dict] = {
    name: {"times": [], "errors": 0, "first_start": None, "last_end": None} for name in ORDER
}
STARTED: list[float] = []


def _headers(spec: dict) -> dict[str, str]:
    headers = {"X-Forwarded-Proto": "https"}
    if spec.get("session"):
        headers["Cookie"] = f"{CONFIG['sessionCookie']}={spec['session']}"
    if spec.get("token"):
        headers["Authorization"] = f"Bearer {spec['token']}"
    return headers


HEADERS = {name: _headers(CONFIG["requests"][name]) for name in ORDER}


def _url(spec: dict) -> str:
    """The request's URL: on the main server, or on the ceiling's (bench.ceiling)."""
    if spec.get("server") == "ceiling":
        return os.environ["BENCH_LOAD_CEILING_URL"] + spec["url"]
    return spec["url"]


URLS = {name: _url(CONFIG["requests"][name]) for name in ORDER}


@events.test_start.add_listener
def _start(environment, **kwargs):
    STARTED.append(time.time())


class PhasedUser(HttpUser):
    @task
    def hit(self):
        started = time.time()
        phase = int((started - STARTED[0]) // PHASE)
        if phase >= len(ORDER):
            time.sleep(0.05)
            return
        name = ORDER[phase]
        spec = CONFIG["requests"][name]
        with self.client.get(
            URLS[name],
            name=name,
            headers=HEADERS[name],
            allow_redirects=False,
            catch_response=True,
        ) as response:
            ended = time.time()
            if int((ended - STARTED[0]) // PHASE) != phase:
                # Finished in the next phase: neither counted nor timed, so each phase is
                # measured alone.
                response.success()
                return
            sample = SAMPLES[name]
            if response.status_code == 200 and spec["expect"] in response.text:
                response.success()
                sample["times"].append((ended - started) * 1000)
            else:
                response.failure(f"HTTP {response.status_code}")
                sample["errors"] += 1
            if sample["first_start"] is None:
                sample["first_start"] = started
            sample["last_end"] = ended


@events.quitting.add_listener
def _write_samples(environment, **kwargs):
    # "__run__": when the phases began and how long each was, for the CPU report.
    run = {"started": STARTED[0] if STARTED else None, "phaseSeconds": PHASE, "order": ORDER}
    Path(os.environ["BENCH_LOAD_SAMPLES"]).write_text(json.dumps({**SAMPLES, "__run__": run}))
