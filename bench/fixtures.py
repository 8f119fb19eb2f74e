"""The rows the benchmarks build, written once: a project's register of work packages
(bench_load, bench_registers) and projects with their registers, business case and status
(bench_portfolio, bench_refresh, bench_investment, bench_memory).

Imports of the app's models stand inside the functions: Django is set up by bench.run first.
"""

import datetime as dt
import random
import uuid
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

PACKAGE_STATUSES = [("Not Started", None), ("In Progress", 40), ("Blocked", 20), ("Complete", 100)]
WORK_PACKAGES, RISKS, DECISIONS, CHANGES = 20, 20, 10, 10


def work_package_register(
    project: Any, owners: list[str], rows: int, *, digits: int, issue_key: Callable[[int], str]
) -> None:
    """`rows` work packages of `project`, replacing its register: owners, dates, budgets and
    linked issues spread over the rows (`issue_key(n)` names row n's issue)."""
    from django.db import transaction

    from governance import signals
    from registers.models import WorkPackage

    start = dt.date(2026, 1, 5)
    # One announcement for the whole replacement (a delete announces each row it deletes).
    with transaction.atomic(), signals.deferred_project_changes():
        WorkPackage.objects.filter(project=project).delete()
        WorkPackage.objects.bulk_create(
            [
                WorkPackage(
                    project=project,
                    name=f"Work package {n:0{digits}d}: integration stream",
                    type="Epic",
                    owner_account_id=owners[n % len(owners)] if n % 7 else None,
                    status=PACKAGE_STATUSES[n % 4][0],
                    progress=PACKAGE_STATUSES[n % 4][1],
                    rag=["Red", "Amber", "Green", "Blue", "None"][n % 5],
                    planned_start_date=start + dt.timedelta(days=n % 300),
                    planned_end_date=start + dt.timedelta(days=n % 300 + 60),
                    forecast_start_date=start + dt.timedelta(days=n % 300),
                    forecast_end_date=start + dt.timedelta(days=n % 300 + 60 + n % 11),
                    budget=Decimal(10_000 + n * 17),
                    budget_forecast=Decimal(10_500 + n * 17),
                    budget_actual=Decimal(n * 9),
                    commentary="On track." if n % 3 else "",
                    linked_issue_keys=[issue_key(n)] if n % 2 else [],
                    sort_order=n if n % 4 else None,
                )
                for n in range(rows)
            ],
            batch_size=500,
        )
        # bulk_create sends no post_save: the project's facts are announced here, as the app's
        # own bulk writes do (the stored health row and register summary are read again).
        signals.project_facts_changed(project.pk)


def projects_with_facts(
    keys: list[str], rng: random.Random, *, title: str, lead: str, readers: Iterable[Any] = ()
) -> None:
    """Projects `keys` ("{title} {key}", led by the tracker account `lead`, browsed by `readers`
    too), each with WORK_PACKAGES work packages, RISKS risks, DECISIONS decisions and CHANGES
    changes, a business case with an approved plan (unless a draft) and a status, in
    multi-row inserts."""
    from django.utils import timezone

    from charter.models import BusinessCase
    from governance.models import Project
    from governance.tracker.local.models import LocalAccount, LocalBrowseGrant, LocalProject
    from registers.models import ChangeRequest, Decision, Risk, WorkPackage
    from status.models import ProjectStatus

    lead_account = LocalAccount.objects.get(name=lead)
    LocalProject.objects.bulk_create(
        [LocalProject(key=k, name=f"{title} {k}", lead=lead_account) for k in keys],
        batch_size=500,
    )
    LocalBrowseGrant.objects.bulk_create(
        [
            LocalBrowseGrant(project=p, account=a)
            for p in LocalProject.objects.filter(key__in=keys)
            for a in (*readers, lead_account)
        ],
        batch_size=1000,
    )
    Project.objects.bulk_create(
        [
            Project(
                key=k,
                name=f"{title} {k}",
                lead_account_id=lead_account.account_id,
                approval_status=rng.choice(["Approved"] * 6 + ["Draft", "Closed", "Submitted"]),
            )
            for k in keys
        ],
        batch_size=500,
    )
    now = timezone.now()
    today = timezone.localdate()
    themes = ["Cost Out", "Revenue Growth", "Productivity", "Risk & Compliance", "Strategic", ""]
    rows: dict[Any, list[Any]] = {
        WorkPackage: [],
        Risk: [],
        Decision: [],
        ChangeRequest: [],
        BusinessCase: [],
        ProjectStatus: [],
    }
    for project in Project.objects.filter(key__in=keys):
        plan: dict[str, dict[str, Any]] = {}
        for n in range(WORK_PACKAGES):
            budget = Decimal(rng.randrange(10, 200) * 1000)
            end = today + dt.timedelta(days=rng.randrange(-200, 300))
            package = WorkPackage(
                id=uuid.uuid4(),
                project=project,
                name=f"Work package {n}",
                status=rng.choice(
                    ["Not Started", "In Progress", "In Progress", "Blocked", "Complete"]
                ),
                budget=budget,
                budget_baseline=budget,
                budget_forecast=budget * Decimal(rng.choice(["0.95", "1", "1.04", "1.08", "1.2"])),
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
        risk_ids = [uuid.uuid4() for _ in range(RISKS)]
        rows[Risk] += [
            Risk(
                id=risk_id,
                project=project,
                title=f"Risk {n}",
                status=rng.choice(["Open", "Open", "Closed"]),
                direction=rng.choice(["Risk", "Risk", "Opportunity"]),
                materialised=rng.random() < 0.05,
                impact=rng.randrange(1, 6),
                likelihood=rng.randrange(1, 6),
                residual_impact=rng.choice([None, 1, 2, 3]),
                residual_likelihood=rng.choice([None, 1, 2, 3]),
            )
            for n, risk_id in enumerate(risk_ids)
        ]
        rows[Decision] += [
            Decision(
                project=project,
                decision=f"Decision {n}",
                made_on=rng.choice([None, today - dt.timedelta(days=n)]),
                treated_risk_id=str(rng.choice(risk_ids)) if n == 0 else None,
            )
            for n in range(DECISIONS)
        ]
        for n in range(CHANGES):
            status = rng.choice(["Proposed", "Approved", "Approved", "Rejected", "Withdrawn"])
            dims = rng.choice(
                [["Scope"], ["Budget"], ["Schedule"], ["Budget", "Scope"], ["Quality"]]
            )
            rows[ChangeRequest].append(
                ChangeRequest(
                    project=project,
                    summary=f"Change {n}",
                    status=status,
                    dimensions=dims,
                    impact_budget=Decimal(rng.randrange(-5, 20) * 1000)
                    if "Budget" in dims
                    else None,
                    impact_schedule_days=rng.randrange(-5, 30) if "Schedule" in dims else None,
                    application_record={"kind": "baseline", "ref": "x"}
                    if status == "Approved" and rng.random() < 0.3
                    else None,
                )
            )
        rows[BusinessCase].append(
            BusinessCase(
                project=project,
                theme=rng.choice(themes),
                approval_status=project.approval_status,
                version=rng.choice([1, 1, 2]),
                plan_baseline={
                    "version": 1,
                    "approvedAt": now.isoformat(),
                    "workPackages": plan,
                    "totalBudget": sum(p["budget"] for p in plan.values()),
                }
                if project.approval_status != "Draft"
                else None,
                adoption_affected="Staff",
                adoption_kpi="Usage" if rng.random() < 0.8 else "",
                change_saturation="Low",
                adoption_owner={
                    "accountId": lead_account.account_id,
                    "displayName": lead_account.display_name,
                },
            )
        )
        rows[ProjectStatus].append(
            ProjectStatus(
                project=project,
                overall_rag=rng.choice(["Red", "Amber", "Green", "Blue", "None"]),
                last_updated_at=now - dt.timedelta(days=rng.randrange(0, 60)),
                cost_rag_override=rng.choice([None] * 9 + ["Amber"]),
            )
        )
    for model, records in rows.items():
        model.objects.bulk_create(records, batch_size=2000)
    # created_at is set on insert; spread the proposed changes' ages over three months (one
    # update per day of age).
    ages: dict[int, list[Any]] = {}
    proposed = ChangeRequest.objects.filter(status="Proposed", project__key__in=keys)
    for pk in proposed.values_list("pk", flat=True):
        ages.setdefault(rng.randrange(0, 90), []).append(pk)
    for days, pks in ages.items():
        ChangeRequest.objects.filter(pk__in=pks).update(created_at=now - dt.timedelta(days=days))
