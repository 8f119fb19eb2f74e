"""Work-package register page against Django admin's changelist, a 1,000-row register; the
page and the API list at each ROWS size (bench.run; 1,000 by default).

A project gets 1,000 work packages (owners, dates, budgets, linked issues). The same run
times the register page as the Project Lead sees it (inline-edit, reorder and delete controls
on every row) and as a viewer, and the admin changelist of the same register at 100 a page
(the rows the register page shows: it pages by 100) and at 1,000 a page, through the Django
test client with signed-in users. Each figure is the median of REPEAT requests after WARMUP
requests, the targets interleaved; the ratio is register page / admin. Nothing is cached:
every request renders the page from the stored rows and the project's register summary
(registers.summary, read in the transaction of each change). The page after a change (the first
row's name changed before each request, the register's revision raised with its summary read,
as a change's transaction does) is timed too, request by request interleaved with
admin's changelist of the same rows (100 a page) after the same change, and the target is
judged on it against that changelist.

At each ROWS size (`make bench ROWS=1000,5000,10000`) the register page and the register's
API list (its first page, the default page size) are timed as the Project Lead; with 1,000 and
10,000 among the sizes, each at 10,000 is judged against the same at 1,000 (within 1.2x:
both read a page of rows by keyset, so the work must not grow with the register).
"""

import statistics
import time

WARMUP = 3
REPEAT = 21
ROWS = 1000
DEFAULT_ROWS = [ROWS]
TARGET_RATIO = 0.5
SCALE_TARGET_RATIO = 1.2
PAGE = 100  # the register page's rows a page (registers.paging.PAGE_SIZE)


def _setup(rows: int = ROWS):
    from bench import fixtures
    from governance import mirror
    from governance.tracker import get_tracker
    from governance.tracker.local import scripting
    from registers.models import WorkPackage

    lead = scripting.ensure_user("bench-lead", display_name="Bench Lead", password="bench-pass")
    viewer = scripting.ensure_user("bench-viewer", display_name="Bench Viewer")
    admin = scripting.ensure_user("bench-admin", display_name="Bench Admin", admin=True)
    owners = [
        scripting.ensure_user(f"bench-owner-{n}", display_name=f"Owner Number {n}").account_id
        for n in range(8)
    ]
    scripting.ensure_project(
        "BENCH", name="Benchmark", lead="bench-lead", browsers=["bench-viewer"]
    )
    project = mirror.sync_project(get_tracker().get_project("BENCH"))
    fixtures.work_package_register(
        project, owners, rows, digits=4, issue_key=lambda n: f"BENCH-{n + 1}"
    )
    # The planner's statistics of the table, as autovacuum keeps them, read after the bulk
    # insert (without them, PostgreSQL plans the first page of 10,000 rows as a sort).
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {connection.ops.quote_name(WorkPackage._meta.db_table)}")
    return project, lead, viewer, admin


def _medians_ms(targets: dict[str, tuple]) -> dict[str, float]:
    """Median response time per target (client, url, text it must show), the targets
    interleaved request by request so a busy machine slows them alike."""
    for client, url, expect in targets.values():
        for _ in range(WARMUP):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            assert expect in response.content.decode(), f"{url} does not show {expect!r}"
    times: dict[str, list[float]] = {name: [] for name in targets}
    for _ in range(REPEAT):
        for name, (client, url, _) in targets.items():
            started = time.perf_counter()
            response = client.get(url)
            times[name].append(time.perf_counter() - started)
            assert response.status_code == 200
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


def run(sizes: list[int] | None = None) -> list[str]:
    from bench import run as bench_run

    sizes = sorted(sizes or bench_run.sizes("ROWS", DEFAULT_ROWS))
    lines: list[str] = []
    figures: dict[int, dict[str, float]] = {}
    for rows in sizes:
        found, figures[rows] = _scaled_at(rows)
        lines += found
        if rows == ROWS:
            lines += _against_admin()
    if ROWS not in sizes:
        lines += _against_admin()
    lines += bench_run.scaled(figures, SCALED, "rows", SCALE_TARGET_RATIO)
    return lines


# The figures judged from one size to another: (name, label).
SCALED = [
    ("page", "register page (Project Lead)"),
    ("api", "register API list (first page)"),
]


def _client_for(user):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


def _scaled_at(rows: int) -> tuple[list[str], dict[str, float]]:
    """The register page and its API list at `rows` work packages, as the Project Lead."""
    project, lead, _, _ = _setup(rows)
    client = _client_for(lead)
    found = _medians_ms(
        {
            "page": (
                client,
                f"/projects/{project.key}/registers/work-packages/",
                f"Showing {PAGE} of {rows} work packages",
            ),
            "api": (client, f"/api/v1/projects/{project.key}/work-packages", "Work package"),
        }
    )
    return [
        f"== {rows:,} rows: register page (Project Lead, {PAGE} a page) {found['page']:.1f} ms, "
        f"register API list (first page) {found['api']:.1f} ms (medians of {REPEAT})"
    ], found


def _against_admin() -> list[str]:
    from django.contrib import admin as django_admin

    from registers.models import WorkPackage

    project, lead, viewer, admin = _setup(ROWS)
    model_admin = django_admin.site._registry[WorkPackage]

    client_for = _client_for
    page_url = f"/projects/{project.key}/registers/work-packages/"
    admin_url = f"/admin/registers/workpackage/?project__id__exact={project.pk}"
    shows = f"Showing {PAGE} of {ROWS} work packages"
    medians = {}
    for per_page in (PAGE, ROWS):
        model_admin.list_per_page = per_page
        found = _medians_ms(
            {
                "lead": (client_for(lead), page_url, shows),
                "viewer": (client_for(viewer), page_url, shows),
                "admin": (client_for(admin), admin_url, "Work package"),
            }
        )
        medians[per_page] = found
    model_admin.list_per_page = PAGE
    ours_lead, ours_viewer = medians[PAGE]["lead"], medians[PAGE]["viewer"]
    theirs, theirs_all = medians[PAGE]["admin"], medians[ROWS]["admin"]
    changed, admin_changed = _after_a_change_ms(
        project, [(client_for(lead), page_url, True), (client_for(admin), admin_url, False)]
    )
    cold = changed / admin_changed
    return [
        f"register page after a change, Project Lead ({ROWS} rows, {PAGE} a page): "
        f"{changed:.1f} ms (median of {REPEAT}; ratio to admin's changelist after the same "
        f"change {cold:.2f})",
        f"admin changelist after a change, list_per_page {PAGE}: {admin_changed:.1f} ms",
        f"register page, Project Lead ({ROWS} rows, {PAGE} a page): {ours_lead:.1f} ms "
        f"(median of {REPEAT})",
        f"register page, viewer ({ROWS} rows, {PAGE} a page): {ours_viewer:.1f} ms",
        f"admin changelist, list_per_page {PAGE}: {theirs:.1f} ms (median of {REPEAT})",
        f"admin changelist, list_per_page {ROWS}: {theirs_all:.1f} ms (median of {REPEAT})",
        f"ratio register page / admin ({PAGE} a page): lead {ours_lead / theirs:.2f}, "
        f"viewer {ours_viewer / theirs:.2f}; to admin at {ROWS} a page: lead "
        f"{ours_lead / theirs_all:.2f}",
        f"target: register page after a change at most {TARGET_RATIO:.2f}x of admin's "
        f"changelist of the same rows: " + ("met" if cold <= TARGET_RATIO else "NOT met"),
    ]


def _after_a_change_ms(project, targets: list[tuple]) -> list[float]:
    """Each target (client, url, whether it shows the row's name) as the first request after
    a change of the register sees it: the first row's name changed (and the register's
    revision raised) before each timed request. The targets are interleaved round by round
    (a change, the first target's request; a change, the second's), so a load that drifts
    during the run slows them alike."""
    from registers import selectors
    from registers.models import WorkPackage
    from registers.revision import bump_registers_revision

    first = selectors.ordered(WorkPackage.objects.filter(project=project)).first()
    times: list[list[float]] = [[] for _ in targets]
    for n in range(REPEAT):
        for index, (client, url, shown) in enumerate(targets):
            name = f"Changed {n}-{index}"
            WorkPackage.objects.filter(pk=first.pk).update(name=name)
            bump_registers_revision(project_ids=[project.pk])
            started = time.perf_counter()
            response = client.get(url)
            times[index].append(time.perf_counter() - started)
            assert response.status_code == 200
            assert not shown or name in response.content.decode()
    return [statistics.median(values) * 1000 for values in times]
