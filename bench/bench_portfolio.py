"""Portfolio at PROJECTS projects (bench.run; 1,000 by default) x (20 work packages, 20 risks,
10 decisions, 10 changes): the portfolio computation, the API and the page, each against one
aggregate SQL query over the same data in the same run, and the project list page and API;
without a target, the pages across every viewable project that show only what concerns the
reader ("Waiting for me", the lessons, the assistant, an action's form, the action catalogue).

The data is bulk-created, built up to each size in turn and left in place; every project's
health row is stored (a full refresh) before the timings, as the periodic job keeps them, and
on PostgreSQL the planner's statistics are read (`ANALYZE`), as autovacuum keeps them. The
reader is a site administrator with no governance group set who browses every local tracker
project built. Figures are medians of REPEAT runs after a warm-up. With more than one size,
each page and API at the largest size is judged against the same at the smallest: within
SCALE_TARGET_RATIO (1.2x) when the largest is 10,000 and the smallest 1,000 (work per page,
not per project).
"""

import os
import random
import statistics
import time

from bench.fixtures import CHANGES, DECISIONS, RISKS, WORK_PACKAGES

DEFAULT_PROJECTS = [1000]
BUILT = 0  # the projects built so far in this process (bench_memory reads it)
REPEAT = 5
TARGET_RATIO = 1.5
PAGE_TARGET_RATIO = 3.0
SCALE_TARGET_RATIO = 1.2
# Measured at each size without a target: "Waiting for me", the lessons, the assistant, an
# action's form (its project chosen among those the reader views) and the action catalogue.
ACROSS = [
    "/waiting/",
    "/portfolio/lessons/",
    "/assistant/",
    "/assistant/actions/project_overview/",
    "/api/v1/agent/actions",
]

AGGREGATE_SQL = """
SELECT p.id, p.key, b.theme, b.approval_status, b.version, s.overall_rag, s.last_updated_at,
       w.baseline, w.forecast, w.latest_end, w.blocked, w.complete, w.packages,
       r.top_score, r.materialised, d.pending, d.treating,
       c.variation_budget, c.variation_days, c.proposed, c.oldest_proposed
FROM governance_project p
LEFT JOIN charter_businesscase b ON b.project_id = p.id
LEFT JOIN status_projectstatus s ON s.project_id = p.id
LEFT JOIN (
    SELECT project_id,
           SUM(COALESCE(budget_baseline, budget, 0)) AS baseline,
           SUM(COALESCE(budget_forecast, budget, 0)) AS forecast,
           MAX(COALESCE(forecast_end_date, planned_end_date)) AS latest_end,
           SUM(CASE WHEN status = 'Blocked' THEN 1 ELSE 0 END) AS blocked,
           SUM(CASE WHEN status = 'Complete' THEN 1 ELSE 0 END) AS complete,
           COUNT(*) AS packages
    FROM registers_workpackage GROUP BY project_id
) w ON w.project_id = p.id
LEFT JOIN (
    SELECT project_id,
           MAX(CASE WHEN residual_impact IS NOT NULL AND residual_likelihood IS NOT NULL
                    THEN residual_impact * residual_likelihood
                    ELSE impact * likelihood END) AS top_score,
           SUM(CASE WHEN materialised THEN 1 ELSE 0 END) AS materialised
    FROM registers_risk WHERE status <> 'Closed' AND direction = 'Risk' GROUP BY project_id
) r ON r.project_id = p.id
LEFT JOIN (
    SELECT project_id,
           SUM(CASE WHEN made_on IS NULL THEN 1 ELSE 0 END) AS pending,
           COUNT(treated_risk_id) AS treating
    FROM registers_decision GROUP BY project_id
) d ON d.project_id = p.id
LEFT JOIN (
    SELECT project_id,
           SUM(CASE WHEN status = 'Approved' THEN COALESCE(impact_budget, 0) ELSE 0 END)
               AS variation_budget,
           SUM(CASE WHEN status = 'Approved' THEN COALESCE(impact_schedule_days, 0) ELSE 0 END)
               AS variation_days,
           SUM(CASE WHEN status = 'Proposed' THEN 1 ELSE 0 END) AS proposed,
           MIN(CASE WHEN status = 'Proposed' THEN created_at END) AS oldest_proposed
    FROM registers_changerequest GROUP BY project_id
) c ON c.project_id = p.id
ORDER BY p.key
"""


def _build(projects: int | None = None):
    """Projects B00000.. up to `projects` (those missing), with their facts and browse
    grants (bench.fixtures); returns the site administrator who reads them."""
    from bench import fixtures
    from governance.models import Project
    from governance.tracker.local import scripting
    from governance.tracker.local.models import LocalAccount

    admin = scripting.ensure_user("bench_admin", display_name="Bench Admin", admin=True)
    global BUILT
    start = Project.objects.filter(key__startswith="B").count()
    stop = max(start, projects or DEFAULT_PROJECTS[0])
    BUILT = stop
    rng = random.Random(20260601 + start)
    if start == stop:
        return admin  # built by another benchmark of this run
    scripting.ensure_user("bench_lead", display_name="Bench Lead")
    fixtures.projects_with_facts(
        [f"B{n:05d}" for n in range(start, stop)],
        rng,
        title="Bench project",
        lead="bench_lead",
        readers=[LocalAccount.objects.get(name="bench_admin")],
    )
    return admin


def _getter(client, url: str):
    """A timed request: GET `url`, which must answer 200."""

    def get():
        response = client.get(url)
        assert response.status_code == 200, response.status_code
        return response

    return get


def _after_a_write(get):
    """`get` right after a write of what the stored summaries read (their revision raised,
    as every such write does)."""
    from governance.models import summaries_changed

    def written():
        summaries_changed()
        return get()

    return written


def _median(fn) -> tuple[float, object]:
    result = fn()  # warm-up
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def run(sizes: list[int] | None = None) -> list[str]:
    from bench import run as bench_run

    sizes = sorted(sizes or bench_run.sizes("PROJECTS", DEFAULT_PROJECTS))
    lines: list[str] = []
    figures: dict[int, dict[str, float]] = {}
    for n in sizes:
        found, measured = _run_at(n)
        lines += found
        figures[n] = measured
    lines += bench_run.scaled(figures, SCALED, "projects", SCALE_TARGET_RATIO)
    return lines


# The figures judged from one size to another: (name, label).
SCALED = [
    ("page", "GET /portfolio/"),
    ("api", "GET /api/v1/portfolio"),
    ("list", "GET / (project list)"),
    ("list_api", "GET /api/v1/projects"),
]


def _run_at(size: int) -> tuple[list[str], dict[str, float]]:
    from django.db import connection
    from django.test import Client, RequestFactory
    from django.test.utils import CaptureQueriesContext

    from governance import gatelist, permissions
    from governance.models import Project
    from portfolio import selectors
    from status import health
    from status import selectors as status_selectors

    start = time.perf_counter()
    admin = _build(size)
    built = time.perf_counter() - start
    keys = Project.objects.filter(key__startswith="B").order_by("key")
    all_ids = list(keys.values_list("pk", flat=True))
    start = time.perf_counter()
    for chunk in range(0, len(all_ids), health.REFRESH_CHUNK):
        health.refresh(all_ids[chunk : chunk + health.REFRESH_CHUNK])
    stored_in = time.perf_counter() - start
    count = len(all_ids)
    if connection.vendor == "postgresql":
        # The planner's statistics of every table, as autovacuum keeps them after a bulk
        # load (the benchmark's server runs without it): without them PostgreSQL estimates
        # two rows a table and joins 10,000 stored rows to the gate one at a time.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")

    def aggregate():
        with connection.cursor() as cursor:
            cursor.execute(AGGREGATE_SQL)
            return cursor.fetchall()

    def request():
        made = RequestFactory().get("/portfolio/")
        made.user = admin
        return made

    def computation():
        return selectors.portfolio(request(), {})

    def access_gate():
        return permissions.viewable_projects(request())

    def gate_page():
        made = request()
        page = list(gatelist.viewable(made, shown=True).order_by("key")[:100])
        return gatelist.page_callers(made, page)

    projects = [project for project, _ in access_gate()][: health.REFRESH_CHUNK]

    def derivation():
        return status_selectors.views_for(projects)

    def stored_rows():
        return health.rows_for(projects)

    def rewrite_rows():
        return health.refresh([project.pk for project in projects])

    client = Client()
    client.force_login(admin)

    api = _getter(client, "/api/v1/portfolio")
    page = _getter(client, "/portfolio/")
    sql_time, sql_rows = _median(aggregate)
    compute_time, rows = _median(computation)
    gate_time, _ = _median(access_gate)
    gate_page_time, _ = _median(gate_page)
    derive_time, _ = _median(derivation)
    stored_time, _ = _median(stored_rows)
    rewrite_time, _ = _median(rewrite_rows)
    api_time, _ = _median(api)
    page_time, _ = _median(page)

    project_list = _getter(client, "/")
    project_api = _getter(client, "/api/v1/projects")
    list_time, _ = _median(project_list)
    list_api_time, _ = _median(project_api)
    # The first read after a write: the summaries stored for the reader are read again
    # (governance.summaries), as after any write of what they read.
    page_written_time, _ = _median(_after_a_write(page))
    list_written_time, _ = _median(_after_a_write(project_list))
    # Pages across every viewable project that show only what concerns the reader (none of it
    # here: nothing awaits the administrator, no project has a lesson), for how they grow.
    across = {url: _median(_getter(client, url))[0] for url in ACROSS}
    matched = rows.summary["projects"]
    assert matched == count, (matched, count)
    with CaptureQueriesContext(connection) as queries:
        computation()
    with CaptureQueriesContext(connection) as page_queries:
        page()
    chunk = len(projects)
    lines = [
        f"== {count:,} projects: database: {connection.vendor}; data built in {built:.1f} s "
        f"({count * WORK_PACKAGES} work packages, "
        f"{count * RISKS} risks, {count * DECISIONS} decisions, "
        f"{count * CHANGES} changes; {len(sql_rows)} projects in all); every health row "
        f"stored in {stored_in:.1f} s; load average {_load()}",
        f"one aggregate SQL query (every project):  {sql_time * 1000:8.1f} ms",
        f"portfolio computation (a page):    {compute_time * 1000:8.1f} ms  "
        f"ratio {compute_time / sql_time:4.2f}x  ({len(queries)} queries)",
        f"  the access gate (permissions.viewable_projects, every project): "
        f"{gate_time * 1000:.1f} ms; the gate as a filter, a page of 100 with their roles "
        f"(permissions.viewable, page_callers): {gate_page_time * 1000:.1f} ms; "
        f"for {chunk} projects: loading and deriving "
        f"(status.selectors.views_for) {derive_time * 1000:.1f} ms, reading the stored rows "
        f"(status.health.rows_for) {stored_time * 1000:.1f} ms, deriving and writing them "
        f"(status.health.refresh) {rewrite_time * 1000:.1f} ms",
        f"GET /api/v1/portfolio:             {api_time * 1000:8.1f} ms  "
        f"ratio {api_time / sql_time:4.2f}x",
        f"GET /portfolio/ (HTML page):       {page_time * 1000:8.1f} ms  "
        f"ratio {page_time / sql_time:4.2f}x  ({len(page_queries)} queries)",
        f"GET / (project list page):         {list_time * 1000:8.1f} ms",
        f"  the first read after a write (the reader's stored summaries read again), without "
        f"a target: GET /portfolio/ {page_written_time * 1000:.1f} ms, "
        f"GET / {list_written_time * 1000:.1f} ms",
        f"GET /api/v1/projects:              {list_api_time * 1000:8.1f} ms",
        "pages across every viewable project: "
        + "; ".join(f"GET {url} {took * 1000:.1f} ms" for url, took in across.items()),
        f"target at {count:,}: computation within {TARGET_RATIO:.1f}x of the aggregate "
        "query: " + ("met" if compute_time / sql_time <= TARGET_RATIO else "NOT met"),
        f"target at {count:,}: HTML page within {PAGE_TARGET_RATIO:.0f}x of the aggregate "
        "query: " + ("met" if page_time / sql_time <= PAGE_TARGET_RATIO else "NOT met"),
    ]
    measured = {
        "page": page_time * 1000,
        "api": api_time * 1000,
        "list": list_time * 1000,
        "list_api": list_api_time * 1000,
    }
    return lines, measured


def _load() -> str:
    """The machine's load average (1, 5, 15 minutes), as `uptime` shows it."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"
