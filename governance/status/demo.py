"""Demo data of project status: every RAG colour on the status pages and the portfolio, a few
published reports with a trend, lessons for the lessons page.

It runs after the registers and business-case demos and builds on what they made. Where the
data it needs is missing it creates it, always under names starting with "Status demo:"
(work packages, risks, decisions, change requests): register rows only in a project that has
none of its own, a business case only where none exists. Statuses are set through the status
services, once per project (a project whose status was already updated is left alone), so a
second run changes nothing."""

import datetime as dt
from decimal import Decimal

from django.utils import timezone

from charter.models import BusinessCase
from governance import permissions
from governance.models import Project
from governance.people import resolve
from governance.status import services
from governance.status.models import ProjectStatus, StatusReport
from registers.models import ChangeRequest, Decision, Risk, WorkPackage

PREFIX = "Status demo: "
K = Decimal(1000)

# name, budget (thousands), forecast (thousands), planned start/end (days from today),
# forecast end (days from today or None), status
PLANS = {
    "APOLLO": [
        ("Discovery and design", 100, 100, -200, -120, None, "Complete"),
        ("Portal build", 200, 230, -120, 60, 60, "In Progress"),
        ("Integrations", 150, 160, -60, 90, 90, "In Progress"),
        ("Launch and adoption", 50, 50, 90, 120, None, "Not Started"),
    ],
    "BRIDGE": [
        ("Inventory and planning", 80, 80, -300, -220, None, "Complete"),
        ("Wave 1 migration", 300, 360, -220, -20, 10, "In Progress"),
        ("Wave 2 migration", 250, 290, -20, 100, 130, "Blocked"),
        ("Decommissioning", 70, 75, 100, 150, 180, "Not Started"),
    ],
    "CEDAR": [
        ("Ledger upgrade", 220, 225, -400, -200, None, "Complete"),
        ("Reporting rebuild", 130, 128, -300, -150, None, "Complete"),
        ("Cut-over", 40, 42, -150, -120, None, "Complete"),
    ],
    "EMBER": [
        ("Regulation analysis", 60, 60, -150, -90, None, "Complete"),
        ("Reporting engine", 240, 244, -90, 120, 118, "In Progress"),
        ("Controls and sign-off", 90, 92, 60, 170, 167, "Not Started"),
    ],
    "FALCON": [
        ("Mobile app", 260, 275, -500, -260, None, "Complete"),
        ("Scheduling service", 180, 176, -450, -240, None, "Complete"),
    ],
    "GARNET": [
        ("Site selection", 40, 40, -60, 20, 20, "In Progress"),
        ("Fit-out design", 120, 120, 0, 120, 125, "Blocked"),
        ("Move logistics", 90, 90, 120, 200, None, "Not Started"),
    ],
}
# title, impact, likelihood, residual impact, residual likelihood, materialised
RISKS = {
    "APOLLO": [
        ("Identity provider contract lapses before go-live", 4, 4, None, None, False),
        ("Content owners miss the migration window", 3, 2, None, None, False),
    ],
    "BRIDGE": [
        ("Legacy storage array fails before wave 2", 4, 4, 4, 3, False),
        ("Network cut-over needs a second weekend", 3, 3, None, None, False),
    ],
    "CEDAR": [("Month-end close slips after cut-over", 3, 3, None, None, False)],
    "EMBER": [
        ("Regulator changes the template again", 3, 2, None, None, False),
        ("Key analyst leaves mid-project", 2, 2, None, None, False),
    ],
    "FALCON": [("Technicians keep paper forms", 3, 3, 2, 2, False)],
    "GARNET": [
        ("Landlord delays the lease signature", 4, 3, None, None, True),
        ("Furniture supplier capacity", 2, 3, None, None, False),
    ],
}
# summary, dimensions, impact budget (thousands), impact days, status, days since raised
CHANGES = {
    "APOLLO": [("Add self-service invoices to the portal", ["Scope"], None, None, "Proposed", 20)],
    "BRIDGE": [
        ("Move the archive tier to wave 2", ["Scope", "Schedule"], None, 30, "Proposed", 45),
        ("Extra migration engineers", ["Budget"], 20, None, "Approved", 90),
    ],
    "EMBER": [("Second reporting environment", ["Budget"], 8, None, "Approved", 40)],
    "GARNET": [],
}
CASES = {
    # theme, approval status, version, project manager, closed/realisation scenario
    "APOLLO": ("Customer Experience", "Approved", 1, "edward"),
    "BRIDGE": ("Cost Out", "Approved", 2, "edward"),
    "CEDAR": ("Productivity", "Closed", 1, "lena"),
    "EMBER": ("Risk & Compliance", "Approved", 1, "edward"),
    "FALCON": ("Productivity", "InRealisation", 1, "marco"),
    "GARNET": ("Strategic", "Submitted", 1, "marco"),
}
LESSONS = {
    "CEDAR": {
        "worked": "Running the old and new ledgers side by side for two month-ends caught "
        "every mapping error before cut-over.",
        "differently": "Book the finance team's time for testing at approval, not when the "
        "test window opens: we lost three weeks waiting for them.",
        "nextSponsor": "Insist on a data-migration rehearsal before approving the cut-over date.",
    },
    "FALCON": {
        "worked": "Shadowing technicians for a week shaped an app they actually wanted to use.",
        "differently": "Plan the device roll-out with the vendor's lead times; hardware, not "
        "software, set the critical path.",
        "nextSponsor": "Ask for adoption figures per region, not an average.",
    },
}
REALISATION_LESSONS = {
    "FALCON": "Benefits arrived region by region; the first review should be after the last "
    "region goes live, not after the first.",
}
# Status per project: (reporting cadence, [(days ago, fields, publish report title or None)]).
STATUS = {
    "APOLLO": (
        "Monthly",
        [
            (
                84,
                {
                    "overallRag": "Green",
                    "overallReason": "Design signed off; build starting on plan.",
                    "revisedForecast": "505000",
                    "phase": "Delivery",
                },
                "Status report: month 1 of build",
            ),
            (
                56,
                {
                    "overallRag": "Amber",
                    "overallReason": "Portal build is running over budget.",
                    "revisedForecast": "530000",
                },
                "Status report: month 2 of build",
            ),
            (
                28,
                {
                    "overallRag": "Amber",
                    "overallReason": "Integration costs confirmed; recovery plan in place.",
                    "revisedForecast": None,
                },
                "Status report: month 3 of build",
            ),
            (
                1,
                {
                    "overallRag": "Amber",
                    "overallReason": "Over budget by 8 %; a scope request is awaiting decision.",
                    "outcomeConfidence": "Modest",
                    "adoptionConfidence": "High",
                    "confidenceReason": "Pilot users adopted the portal within a week.",
                    "costRagOverrideReason": "Integration costs came in above the estimate.",
                    "pmKeyMessage": "Build is on schedule; cost pressure from integrations.",
                    "structuredCommentary": {
                        "keyMessages": "Portal build on schedule. Integrations 7 % over "
                        "budget. Self-service invoices requested by Finance.",
                        "keyRisks": "Identity provider contract must be renewed before launch.",
                        "decisionsRequired": "Decide on the self-service invoices change.",
                    },
                },
                None,
            ),
        ],
    ),
    "BRIDGE": (
        "Monthly",
        [
            (
                40,
                {
                    "overallRag": "Amber",
                    "overallReason": "Wave 1 slipping; storage array showing faults.",
                    "phase": "Migration",
                },
                "Steering report: wave 1",
            ),
            (
                3,
                {
                    "overallRag": "Red",
                    "overallReason": "Wave 2 blocked by the storage array; budget +12 %.",
                    "scheduleRagOverride": "Amber",
                    "scheduleRagOverrideReason": "Recovery plan agreed at steering: +30 days.",
                    "outcomeConfidence": "Low",
                    "adoptionConfidence": "Modest",
                    "pmKeyMessage": "We need a decision on moving the archive tier.",
                },
                "Steering report: wave 2 recovery",
            ),
        ],
    ),
    "CEDAR": (
        "Monthly",
        [
            (
                10,
                {
                    "overallRag": "Blue",
                    "overallReason": "Closed: the new ledger ran three clean month-ends.",
                    "phase": "Closed",
                    "outcomeConfidence": "High",
                    "adoptionConfidence": "High",
                },
                None,
            )
        ],
    ),
    "EMBER": (
        "Weekly",
        [
            (
                14,
                {
                    "overallRag": "Green",
                    "overallReason": "On plan.",
                    "phase": "Delivery",
                },
                "Weekly report 1",
            ),
            (
                2,
                {
                    "overallRag": "Green",
                    "overallReason": "On plan; second environment approved.",
                    "outcomeConfidence": "High",
                    "adoptionConfidence": "Modest",
                },
                "Weekly report 2",
            ),
        ],
    ),
    "FALCON": (
        "Monthly",
        [
            (
                6,
                {
                    "overallRag": "Blue",
                    "overallReason": "Delivered; benefits being measured.",
                    "phase": "Benefits realisation",
                    "brCadence": "Quarterly",
                },
                None,
            )
        ],
    ),
    "GARNET": (
        "Weekly",
        [
            (
                12,
                {
                    "overallRag": "Amber",
                    "overallReason": "Fit-out design waits for the lease.",
                    "phase": "Planning",
                },
                None,
            )
        ],
    ),
}


def seed(ctx) -> None:
    today = timezone.localdate()
    for key in PLANS:
        project = Project.objects.get(pk=ctx.projects[key].pk)
        _ensure_registers(project, key, today)
        _ensure_case(ctx, project, key, today)
    for key in STATUS:
        project = Project.objects.get(pk=ctx.projects[key].pk)
        _ensure_status(ctx, project, key)


def _day(today: dt.date, offset: int) -> dt.date:
    return today + dt.timedelta(days=offset)


def _ensure_registers(project: Project, key: str, today: dt.date) -> None:
    if not project.work_packages.exclude(name__startswith=PREFIX).exists():
        for order, (name, budget, forecast, start, end, forecast_end, status) in enumerate(
            PLANS[key]
        ):
            progress = {"Complete": 100, "Not Started": 0}.get(status, 50)
            WorkPackage.objects.get_or_create(
                project=project,
                name=PREFIX + name,
                defaults={
                    "budget": budget * K,
                    "budget_forecast": forecast * K,
                    "planned_start_date": _day(today, start),
                    "planned_end_date": _day(today, end),
                    "forecast_end_date": _day(today, forecast_end)
                    if forecast_end is not None
                    else None,
                    "actual_end_date": _day(today, end) if status == "Complete" else None,
                    "status": status,
                    "progress": progress,
                    "sort_order": order,
                },
            )
    if not project.risks.exclude(title__startswith=PREFIX).exists():
        for title, impact, likelihood, r_impact, r_likelihood, materialised in RISKS.get(key, []):
            Risk.objects.get_or_create(
                project=project,
                title=PREFIX + title,
                defaults={
                    "impact": impact,
                    "likelihood": likelihood,
                    "residual_impact": r_impact,
                    "residual_likelihood": r_likelihood,
                    "materialised": materialised,
                    "treatment": "Mitigate",
                },
            )
    if not project.changes.exclude(summary__startswith=PREFIX).exists():
        now = timezone.now()
        for summary, dims, budget, days, status, age in CHANGES.get(key, []):
            change, created = ChangeRequest.objects.get_or_create(
                project=project,
                summary=PREFIX + summary,
                defaults={
                    "dimensions": dims,
                    "impact_budget": budget * K if budget else None,
                    "impact_schedule_days": days,
                    "impact_scope": "See the summary." if "Scope" in dims else "",
                    "status": status,
                    "decided_at": now - dt.timedelta(days=age - 5)
                    if status != "Proposed"
                    else None,
                    "reason": "Raised by the project team.",
                },
            )
            if created:
                ChangeRequest.objects.filter(pk=change.pk).update(
                    created_at=now - dt.timedelta(days=age)
                )
    if key == "GARNET" and not project.decisions.exclude(decision__startswith=PREFIX).exists():
        Decision.objects.get_or_create(
            project=project,
            decision=PREFIX + "Choose between the two shortlisted sites",
            defaults={"decision_notes": "Pending the landlord's answer."},
        )


def _seat(people, account_id: str) -> dict:
    return people[account_id].as_seat()


def _ensure_case(ctx, project: Project, key: str, today: dt.date) -> None:
    if BusinessCase.objects.filter(project=project).exists():
        return
    theme, approval, version, manager = CASES[key]
    people = resolve([ctx.account("sofia"), ctx.account(manager), ctx.account("priya")])
    now = timezone.now()
    approved = approval not in ("Exploring", "Draft", "Submitted")
    case = BusinessCase(
        project=project,
        theme=theme,
        approval_status=approval,
        version=version,
        business_problem=f"{project.name}: the current way of working costs too much.",
        outcome=f"{project.name} delivered and adopted.",
        decision_authority=_seat(people, ctx.account("sofia")),
        project_manager=_seat(people, ctx.account(manager)),
        steering_committee=[
            {"id": "sc-1", "role": "Chair", **_seat(people, ctx.account("sofia"))},
            {"id": "sc-2", "role": "PMO", **_seat(people, ctx.account("priya"))},
        ],
        adoption_affected="Staff who use the service every day.",
        adoption_kpi="80 % weekly active users three months after launch.",
        adoption_owner=_seat(people, ctx.account(manager)),
        change_saturation="Modest" if key != "GARNET" else "",
        first_steerco_scheduled_for=_day(today, -150) if approved else _day(today, 14),
        first_steerco_held_at=now - dt.timedelta(days=150) if approved else None,
        updated_at=now,
        updated_by_account_id=ctx.account(manager),
    )
    if approved:
        case.approved_at = now - dt.timedelta(days=180)
        case.approved_by_account_id = ctx.account("sofia")
        case.submitted_at = now - dt.timedelta(days=185)
        packages = list(project.work_packages.all())
        for package in packages:
            package.budget_baseline = package.budget
        WorkPackage.objects.bulk_update(packages, ["budget_baseline"])
        case.plan_baseline = {
            "version": version,
            "approvedAt": case.approved_at.isoformat(),
            "workPackages": {
                str(p.pk): {
                    "budget": float(p.budget) if p.budget is not None else None,
                    "plannedStartDate": p.planned_start_date.isoformat()
                    if p.planned_start_date
                    else None,
                    "plannedEndDate": p.planned_end_date.isoformat()
                    if p.planned_end_date
                    else None,
                }
                for p in packages
            },
            "totalBudget": float(sum((p.budget or 0) for p in packages)),
        }
    if key in LESSONS:
        case.close_out = {
            "asBuiltOutcome": "Delivered as chartered.",
            "lessons": LESSONS[key],
            "bauHandover": {"state": "Acknowledged"},
            "startedAt": (now - dt.timedelta(days=60)).isoformat(),
            "submittedAt": (now - dt.timedelta(days=40)).isoformat(),
        }
        case.closed_at = now - dt.timedelta(days=30 if key == "CEDAR" else 120)
        case.closed_by_account_id = ctx.account("sofia")
    if key == "FALCON":
        case.realisation_started_at = now - dt.timedelta(days=110)
        case.last_realisation_review_at = now - dt.timedelta(days=100)
        case.realisation_confidence = "Modest"
        case.realisation_lessons = REALISATION_LESSONS[key]
        case.realisation_reviews = [
            {
                "id": "review-1",
                "at": case.last_realisation_review_at.isoformat(),
                "byAccountId": ctx.account("sofia"),
                "note": "Two of five regions show the expected drop in repeat visits.",
                "confidence": "Modest",
            }
        ]
    case.save()
    project.approval_status = approval
    project.sponsor_account_id = ctx.account("sofia")
    project.steering_account_ids = [ctx.account("sofia"), ctx.account("priya")]
    project.save(update_fields=["approval_status", "sponsor_account_id", "steering_account_ids"])
    if approved:
        services.status_initiation_start(project=project, at=case.approved_at)
        services.status_initiation_complete(project=project, at=case.first_steerco_held_at)


def _ensure_status(ctx, project: Project, key: str) -> None:
    existing = ProjectStatus.objects.filter(project=project).first()
    if existing is not None and existing.last_updated_at is not None:
        return
    if StatusReport.objects.filter(project=project).exists():
        return
    lead = ctx.users["marco" if key in ("EMBER", "FALCON", "GARNET") else "lena"]
    caller = permissions.caller_for(lead, project, can_browse=True)
    cadence, steps = STATUS[key]
    now = timezone.now()
    first = True
    for days_ago, fields, report_title in steps:
        at = now - dt.timedelta(days=days_ago)
        data = dict(fields)
        if first:
            data["reportingCadence"] = cadence
            first = False
        services.status_update(caller=caller, data=data, now=at)
        if report_title:
            report = services.status_report_create(caller=caller, data={"title": report_title})
            services.status_report_publish(caller=caller, report_id=report.pk, now=at)
