"""The steering pack of a demo project (a status report's page and its PDF, status/report.html)
beside each other, the PDF against its target.

The demo portfolio (`seed_demo`) is seeded on a fresh database; each project's latest published
report is fetched as the sponsor of the demo's data centre exit (BRIDGE: every section filled,
earned value included) and every other project's latest report, through the Django test client
signed in as the PMO reader. Each figure is the median of REPEAT requests after WARMUP requests
(the first PDF of a process also loads the fonts: the warm-up takes it). The ratio is PDF /
page. The target: the PDF of a demo project within 2 s, and at most two pages.
"""

import re
import statistics
import time

WARMUP = 2
REPEAT = 7
TARGET_SECONDS = 2.0
MAX_PAGES = 2


def _median_ms(client, url: str) -> tuple[float, bytes]:
    for _ in range(WARMUP):
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200
    return statistics.median(times) * 1000, response.content


def _pages(content: bytes) -> int:
    """The page count of a PDF WeasyPrint wrote (its page tree's /Count)."""
    counts = [int(n) for n in re.findall(rb"/Count (\d+)", content)]
    return max(counts, default=0)


def run() -> list[str]:
    from django.core.management import call_command
    from django.test import Client

    from governance.models import User
    from status.models import StatusReport

    if not User.objects.filter(username="priya").exists():
        call_command("seed_demo", verbosity=0)
    client = Client()
    client.force_login(User.objects.get(username="priya"))
    latest: dict[str, StatusReport] = {}
    for report in StatusReport.objects.filter(state="Published").select_related("project"):
        latest.setdefault(report.project.key, report)
    lines = []
    worst_ms, worst_pages, worst_key = 0.0, 0, ""
    for key in sorted(latest, key=lambda k: (k != "BRIDGE", k)):
        url = f"/projects/{key}/status/reports/{latest[key].pk}/"
        page_ms, _ = _median_ms(client, url)
        pdf_ms, content = _median_ms(client, url + "?format=pdf")
        pages = _pages(content)
        lines.append(
            f"{key}: page {page_ms:.1f} ms, PDF {pdf_ms:.0f} ms ({pages} page"
            f"{'s' if pages != 1 else ''}; ratio PDF / page {pdf_ms / page_ms:.0f}; median of "
            f"{REPEAT})"
        )
        if pdf_ms > worst_ms:
            worst_ms, worst_key = pdf_ms, key
        worst_pages = max(worst_pages, pages)
    met = worst_ms <= TARGET_SECONDS * 1000 and worst_pages <= MAX_PAGES
    lines.append(
        f"target: every demo project's steering pack PDF within {TARGET_SECONDS:.0f} s on at most "
        f"{MAX_PAGES} pages (slowest {worst_key} {worst_ms:.0f} ms, most pages {worst_pages}): "
        + ("met" if met else "NOT met")
    )
    return lines
