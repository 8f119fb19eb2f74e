"""The stored health rows at PROJECTS projects (bench.run: 1,000 and 10,000 by default): a full
refresh of every row (status.health.refresh, in the periodic job's chunks), and the periodic
job (status.health.refresh_changed) with nothing changed and with 1 % of the projects changed.

Each project has 20 work packages, 20 risks, 10 decisions and 10 changes, a business case
with an approved plan and a status, as the portfolio benchmark's projects (keys R00000...).
The data is built up to each size in turn and left in place. The target: a full refresh of
10,000 projects within 3 s.
"""

import datetime as dt
import random
import statistics
import time
import uuid
from decimal import Decimal

DEFAULT_PROJECTS = [1000, 10000]
TARGET_SECONDS = 3.0
TARGET_PROJECTS = 10000
WORK_PACKAGES, RISKS, DECISIONS, CHANGES = 20, 20, 10, 10


def _build(start: int, stop: int, rng: random.Random) -> None:
    """Projects R{start}..R{stop-1} with their facts, in multi-row inserts."""
    from django.utils import timezone

    from charter.models import BusinessCase
    from governance.models import Project
    from governance.tracker.local import scripting
    from governance.tracker.local.models import LocalAccount, LocalProject
    from registers.models import ChangeRequest, Decision, Risk, WorkPackage
    from status.models import ProjectStatus

    lead = scripting.ensure_user("bench_refresh_lead", display_name="Refresh Lead")
    account = LocalAccount.objects.get(name="bench_refresh_lead")
    keys = [f"R{n:05d}" for n in range(start, stop)]
    LocalProject.objects.bulk_create(
        [LocalProject(key=k, name=f"Refresh project {k}", lead=account) for k in keys],
        batch_size=1000,
    )
    Project.objects.bulk_create(
        [
            Project(
                key=k,
                name=f"Refresh project {k}",
                lead_account_id=lead.account_id,
                approval_status=rng.choice(["Approved"] * 6 + ["Draft", "Closed", "Submitted"]),
            )
            for k in keys
        ],
        batch_size=1000,
    )
    now, today = timezone.now(), timezone.localdate()
    rows: dict[type, list] = {
        WorkPackage: [],
        Risk: [],
        Decision: [],
        ChangeRequest: [],
        BusinessCase: [],
        ProjectStatus: [],
    }
    for project in Project.objects.filter(key__in=keys):
        plan = {}
        for n in range(WORK_PACKAGES):
            budget = Decimal(rng.randrange(10, 200) * 1000)
            end = today + dt.timedelta(days=rng.randrange(-200, 300))
            package = WorkPackage(
                id=uuid.uuid4(),
                project=project,
                name=f"Work package {n}",
                status=rng.choice(["Not Started", "In Progress", "Blocked", "Complete"]),
                budget=budget,
                budget_baseline=budget,
                budget_forecast=budget * Decimal(rng.choice(["0.95", "1", "1.08", "1.2"])),
                planned_start_date=end - dt.timedelta(days=90),
                planned_end_date=end,
                forecast_end_date=end + dt.timedelta(days=rng.randrange(-5, 25)),
            )
            rows[WorkPackage].append(package)
            plan[str(package.id)] = {
                "budget": float(budget),
                "plannedStartDate": package.planned_start_date.isoformat(),
                "plannedEndDate": end.isoformat(),
            }
        for n in range(RISKS):
            rows[Risk].append(
                Risk(
                    project=project,
                    title=f"Risk {n}",
                    status=rng.choice(["Open", "Open", "Closed"]),
                    direction=rng.choice(["Risk", "Risk", "Opportunity"]),
                    impact=rng.randrange(1, 6),
                    likelihood=rng.randrange(1, 6),
                    residual_impact=rng.choice([None, 1, 2, 3]),
                    residual_likelihood=rng.choice([None, 1, 2, 3]),
                )
            )
        for n in range(DECISIONS):
            rows[Decision].append(
                Decision(
                    project=project,
                    decision=f"Decision {n}",
                    made_on=rng.choice([None, today - dt.timedelta(days=n)]),
                )
            )
        for n in range(CHANGES):
            rows[ChangeRequest].append(
                ChangeRequest(
                    project=project,
                    summary=f"Change {n}",
                    status=rng.choice(["Proposed", "Approved", "Rejected"]),
                    dimensions=["Budget"],
                    impact_budget=Decimal(rng.randrange(-5, 20) * 1000),
                )
            )
        rows[BusinessCase].append(
            BusinessCase(
                project=project,
                theme=rng.choice(["Cost Out", "Revenue Growth", "Strategic"]),
                approval_status=project.approval_status,
                plan_baseline={
                    "version": 1,
                    "approvedAt": now.isoformat(),
                    "workPackages": plan,
                    "totalBudget": sum(p["budget"] for p in plan.values()),
                }
                if project.approval_status != "Draft"
                else None,
            )
        )
        rows[ProjectStatus].append(
            ProjectStatus(
                project=project,
                overall_rag=rng.choice(["Red", "Amber", "Green"]),
                last_updated_at=now - dt.timedelta(days=rng.randrange(0, 60)),
            )
        )
    for model, records in rows.items():
        model.objects.bulk_create(records, batch_size=2000)


def _timed(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def run(sizes: list[int] | None = None) -> list[str]:
    from django.db import connection
    from django.utils import timezone

    from bench import bench_portfolio
    from bench import run as bench_run
    from governance.models import Project
    from registers.models import Risk
    from status import health

    sizes = sorted(sizes or bench_run.sizes("PROJECTS", DEFAULT_PROJECTS))
    rng = random.Random(20261128)
    lines = [f"database: {connection.vendor}"]
    built = 0
    for n in sizes:
        started = time.perf_counter()
        _build(built, n, rng)
        built = n
        ids = list(
            Project.objects.filter(key__startswith="R").order_by("key").values_list("pk", flat=True)
        )
        building = time.perf_counter() - started
        health.refresh(ids[:500])  # warm-up
        repeat = 3 if n <= 2000 else 1

        def full(ids=ids):
            for chunk in range(0, len(ids), health.REFRESH_CHUNK):
                health.refresh(ids[chunk : chunk + health.REFRESH_CHUNK])

        seconds, _ = _timed(full, repeat)
        line = (
            f"full health refresh of {n:,} projects: {seconds:.2f} s "
            f"({seconds / n * 1000:.2f} ms a project; median of {repeat}; data built in "
            f"{building:.0f} s; load average {bench_portfolio._load()})"
        )
        if n == TARGET_PROJECTS:
            verdict = "met" if seconds <= TARGET_SECONDS else "MISSED"
            line += f"; target {TARGET_SECONDS:.0f} s at {TARGET_PROJECTS:,}: {verdict}"
        lines.append(line)
        health.refresh_changed()  # every other project of the database, once
        quiet, count = _timed(health.refresh_changed, 1)
        lines.append(
            f"  the periodic job at {n:,} projects, nothing changed: {count} refreshed in "
            f"{quiet:.2f} s"
        )
        changed = ids[::100]
        Risk.objects.filter(project_id__in=changed).update(updated_at=timezone.now())
        busy, count = _timed(health.refresh_changed, 1)
        lines.append(
            f"  the periodic job at {n:,} projects, {len(changed)} changed (1 %): {count} "
            f"refreshed in {busy:.2f} s"
        )
    return lines
