"""A worker's memory over 100 portfolio requests: its resident set (RSS) after the first 5
requests and after all 100, and the growth between them (target: under 10 %).

Reuses the portfolio benchmark's data (bench/bench_portfolio.py, at the largest of its
PROJECTS sizes) when it ran first in the same process, else builds it at that size. The
collector runs as Python's default."""

import gc
import resource
from pathlib import Path

REQUESTS = 100
WARM = 5
TARGET_GROWTH_PCT = 10.0


def rss_bytes() -> int:
    """This process's resident set now (Linux: /proc/self/statm), else its peak."""
    statm = Path("/proc/self/statm")
    if statm.exists():
        pages = int(statm.read_text().split()[1])
        return pages * resource.getpagesize()
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run() -> list[str]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from bench import bench_portfolio
    from bench import run as bench_run

    size = max(bench_run.sizes("PROJECTS", bench_portfolio.DEFAULT_PROJECTS))
    admin = get_user_model().objects.filter(username="bench_admin").first()
    if admin is None or size > bench_portfolio.BUILT:
        admin = bench_portfolio._build(size)
    client = Client()
    client.force_login(admin)
    urls = ["/portfolio/", "/api/v1/portfolio"]
    samples = []
    for n in range(REQUESTS):
        response = client.get(urls[n % 2])
        assert response.status_code == 200, response.status_code
        del response
        samples.append(rss_bytes())
    warm, last = samples[WARM - 1], samples[-1]
    growth = (last - warm) / warm * 100
    mib = 1024 * 1024
    return [
        f"RSS after {WARM} requests {warm / mib:.1f} MiB, after {REQUESTS} {last / mib:.1f} MiB, "
        f"peak {max(samples) / mib:.1f} MiB (collector thresholds {gc.get_threshold()}, "
        f"{gc.get_freeze_count()} frozen)",
        f"growth after the first {WARM}: {growth:.1f} % (page and API alternately, "
        f"{bench_portfolio.BUILT:,} projects; load average {bench_portfolio._load()})",
        f"target at {bench_portfolio.BUILT:,} projects: growth under {TARGET_GROWTH_PCT:.0f} %: "
        + ("met" if growth < TARGET_GROWTH_PCT else "NOT met"),
    ]
