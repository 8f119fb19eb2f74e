"""Work-package register page against Django admin's changelist, 1,000 rows each.

A project gets 1,000 work packages (owners, dates, budgets, linked issues). The same run
times the register page as the Project Lead sees it (inline-edit, reorder and delete controls
on every row) and as a viewer, and the admin changelist of the same 1,000 rows with
list_per_page 1000, through the Django test client with signed-in users. Each figure is the
median of REPEAT requests after WARMUP requests, the three interleaved; the ratio is
register page / admin. The register page keeps its rendered body (and table and pictures)
under the register's revision, so a repeated request is served from that cache; the page
after a change (one row's name changed and the revision raised before each request, so the
body, the table and the pictures are rendered again) is timed too, and the target is judged
on it: Django admin keeps nothing.
"""

import datetime as dt
import statistics
import time
from decimal import Decimal

WARMUP = 3
REPEAT = 21
ROWS = 1000
TARGET_RATIO = 0.15


def _setup():
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
    statuses = [("Not Started", None), ("In Progress", 40), ("Blocked", 20), ("Complete", 100)]
    start = dt.date(2026, 1, 5)
    WorkPackage.objects.filter(project=project).delete()
    WorkPackage.objects.bulk_create(
        [
            WorkPackage(
                project=project,
                name=f"Work package {n:04d}: integration stream",
                type="Epic",
                owner_account_id=owners[n % len(owners)] if n % 7 else None,
                status=statuses[n % 4][0],
                progress=statuses[n % 4][1],
                rag=["Red", "Amber", "Green", "Blue", "None"][n % 5],
                planned_start_date=start + dt.timedelta(days=n % 300),
                planned_end_date=start + dt.timedelta(days=n % 300 + 60),
                forecast_start_date=start + dt.timedelta(days=n % 300),
                forecast_end_date=start + dt.timedelta(days=n % 300 + 60 + n % 11),
                budget=Decimal(10_000 + n * 17),
                budget_forecast=Decimal(10_500 + n * 17),
                budget_actual=Decimal(n * 9),
                commentary="On track." if n % 3 else "",
                linked_issue_keys=[f"BENCH-{n + 1}"] if n % 2 else [],
                sort_order=n if n % 4 else None,
            )
            for n in range(ROWS)
        ],
        batch_size=500,
    )
    return project, lead, viewer, admin


def _medians_ms(targets: dict[str, tuple], expect: str) -> dict[str, float]:
    """Median response time per target, the targets interleaved request by request so a
    busy machine slows them alike."""
    for client, url in targets.values():
        for _ in range(WARMUP):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            assert expect in response.content.decode(), f"{url} does not show {expect!r}"
    times: dict[str, list[float]] = {name: [] for name in targets}
    for _ in range(REPEAT):
        for name, (client, url) in targets.items():
            started = time.perf_counter()
            response = client.get(url)
            times[name].append(time.perf_counter() - started)
            assert response.status_code == 200
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


def run() -> list[str]:
    from django.contrib import admin as django_admin
    from django.test import Client

    from registers.models import WorkPackage

    project, lead, viewer, admin = _setup()
    model_admin = django_admin.site._registry[WorkPackage]
    model_admin.list_per_page = ROWS

    def client_for(user):
        client = Client()
        client.force_login(user)
        return client

    page_url = f"/projects/{project.key}/registers/work-packages/"
    admin_url = f"/admin/registers/workpackage/?project__id__exact={project.pk}"
    medians = _medians_ms(
        {
            "lead": (client_for(lead), page_url),
            "viewer": (client_for(viewer), page_url),
            "admin": (client_for(admin), admin_url),
        },
        expect=f"Work package {ROWS - 1:04d}",
    )
    ours_lead, ours_viewer, theirs = medians["lead"], medians["viewer"], medians["admin"]
    changed = _after_a_change_ms(project, client_for(lead), page_url)
    cold = max(changed / theirs, ours_lead / theirs, ours_viewer / theirs)
    return [
        f"register page after a change, Project Lead ({ROWS} rows, rendered again): "
        f"{changed:.1f} ms (median of {REPEAT}; ratio to admin {changed / theirs:.2f})",
        f"register page, Project Lead ({ROWS} rows): {ours_lead:.1f} ms (median of {REPEAT})",
        f"register page, viewer ({ROWS} rows): {ours_viewer:.1f} ms (median of {REPEAT})",
        f"admin changelist, list_per_page {ROWS}: {theirs:.1f} ms (median of {REPEAT})",
        f"ratio register page / admin: lead {ours_lead / theirs:.2f}, "
        f"viewer {ours_viewer / theirs:.2f} (target: at most {TARGET_RATIO:.2f})",
        f"target: register page within {TARGET_RATIO:.2f}x of admin's changelist: "
        + ("met" if cold <= TARGET_RATIO else "NOT met")
        + " (judged on the page after a change)",
    ]


def _after_a_change_ms(project, client, url: str) -> float:
    """The page as the first request after a change of the register sees it: one row's
    text changed and the register's revision raised before each timed request."""
    from registers.models import WorkPackage
    from registers.revision import bump_registers_revision

    first = WorkPackage.objects.filter(project=project).order_by("pk").first()
    times = []
    for n in range(REPEAT):
        WorkPackage.objects.filter(pk=first.pk).update(name=f"Changed {n}")
        bump_registers_revision(project_ids=[project.pk])
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200 and f"Changed {n}" in response.content.decode()
    return statistics.median(times) * 1000
