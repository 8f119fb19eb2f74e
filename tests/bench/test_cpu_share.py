"""The load run's CPU report: per phase, each group's CPU ms per request and the idle share."""

import os

import pytest

from bench import bench_load, cpu_share


def _sample(at, locust, app, busy, idle):
    return (at, {"locust": locust, "app": app}, (busy, idle))


def test_cpu_per_request_and_idle_share_per_phase():
    # Two phases of 10 s from t=100; the windows are 101-109 and 111-119.
    samples = [
        _sample(100.0, 0.0, 0.0, 0.0, 0.0),
        _sample(101.0, 0.5, 1.0, 1.0, 1.0),
        _sample(109.0, 4.5, 9.0, 17.0, 1.0),  # 8 s: locust 4 s, app 8 s, machine 16 s busy
        _sample(111.0, 5.0, 10.0, 19.0, 1.0),
        _sample(119.0, 7.0, 14.0, 27.0, 9.0),  # 8 s: locust 2 s, app 4 s, half idle
    ]
    report = cpu_share.per_phase(
        samples, 100.0, 10.0, ["/healthz", "page"], {"/healthz": 1000, "page": 100}
    )
    # 800 requests in the first window: 4 s / 800 = 5 ms for locust, 10 ms for the app.
    assert report["/healthz"]["ms"]["locust"] == pytest.approx(5.0)
    assert report["/healthz"]["ms"]["app"] == pytest.approx(10.0)
    assert report["/healthz"]["ms"]["machine"] == pytest.approx(20.0)
    assert report["/healthz"]["idle"] == 0.0
    assert report["page"]["ms"]["app"] == pytest.approx(50.0)
    assert report["page"]["idle"] == pytest.approx(0.5)
    lines = cpu_share.format_report(report, ["locust", "app"])
    assert "50.00" in lines[-1] and "50%" in lines[-1]


def test_no_samples_says_not_measured():
    assert cpu_share.per_phase([], 0.0, 10.0, ["x"], {"x": 1}) == {}
    assert "not measured" in cpu_share.format_report({}, ["app"])[0]


def test_the_run_record_is_not_an_endpoint():
    table = bench_load.summarise(
        {
            "/healthz": {"times": [1.0], "errors": 0, "first_start": 1.0, "last_end": 2.0},
            "__run__": {"started": 1.0, "phaseSeconds": 5.0, "order": ["/healthz"]},
        }
    )
    assert list(table) == ["/healthz"]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="no /proc")
def test_this_process_is_read_from_proc():
    times = cpu_share.group_times({"me": os.getpid()}, {})
    assert times["me"] > 0
    busy, idle = cpu_share.machine_times()
    assert busy > 0 and idle >= 0
