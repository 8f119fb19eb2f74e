"""The portfolio benchmark's figures are of the whole portfolio: a small run sees every
project it built (the access gate's fast path included)."""

import pytest

from bench import bench_portfolio


@pytest.mark.django_db(transaction=True)
def test_the_portfolio_benchmark_sees_every_project_it_built(monkeypatch):
    monkeypatch.setattr(bench_portfolio, "REPEAT", 1)
    lines = bench_portfolio.run([6, 12])
    assert any(line.startswith("portfolio computation") for line in lines)
    across = [line for line in lines if line.startswith("pages across every viewable project")]
    assert len(across) == 2 and all(f"GET {url} " in across[0] for url in bench_portfolio.ACROSS)
    assert lines[0].startswith("== 6 projects: ")
    scaled = [line for line in lines if " at 12 projects / at 6: " in line]
    assert len(scaled) == len(bench_portfolio.SCALED)
    # Judged only from 1,000 to 10,000 projects.
    assert not any("target within" in line for line in scaled)
