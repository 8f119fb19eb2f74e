"""The portfolio benchmark's figures are of the whole portfolio: a small run sees every
project it built (the access gate's fast path included)."""

import pytest

from bench import bench_portfolio


@pytest.mark.django_db(transaction=True)
def test_the_portfolio_benchmark_sees_every_project_it_built(monkeypatch):
    monkeypatch.setattr(bench_portfolio, "PROJECTS", 12)
    monkeypatch.setattr(bench_portfolio, "REPEAT", 1)
    lines = bench_portfolio.run()
    assert any(line.startswith("portfolio computation") for line in lines)
