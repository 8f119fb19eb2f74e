"""The health refresh benchmark (bench/bench_refresh.py) runs at a small size and says what it
measured: the full refresh, and the periodic job with nothing and with some projects changed."""

from bench import bench_refresh
from status.models import ProjectHealth


def test_the_refresh_benchmark_measures_the_full_refresh_and_the_periodic_job(db):
    lines = bench_refresh.run([3, 5])
    assert lines[0].startswith("database: ")
    assert lines[1].startswith("full health refresh of 3 projects: ")
    assert "nothing changed: 0 refreshed" in lines[2]
    assert "1 changed (1 %): 1 refreshed" in lines[3]
    assert lines[4].startswith("full health refresh of 5 projects: ")
    assert ProjectHealth.objects.count() == 5


def test_the_full_refresh_at_10000_projects_is_judged_against_3_s(db, monkeypatch):
    monkeypatch.setattr(bench_refresh, "TARGET_PROJECTS", 2)
    lines = bench_refresh.run([2])
    assert "target 3 s at 2: " in lines[1]
