"""Demo data of project status: statuses and published reports that tell each demo project's
story as the registers and business-case demos built it (the derived RAG comes from their
registers: calm, typical and troubled projects, see registers/demo.py), with a trend in the
reports, a schedule override on the troubled project, stale statuses and projects nobody has
reported on yet. Statuses are set through the status services, once per project (a project
whose status was already updated is left alone), so a second run changes nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from governance.demo import DemoContext
    from governance.permissions import Caller


import datetime as dt
import uuid

from django.utils import timezone

from governance import permissions
from governance.models import Project
from registers.models import WorkPackage
from registers.services import work_package_update
from status import exceptions, services
from status.models import ProjectException, ProjectStatus, StatusReport

# project -> (reporting cadence, [(days ago, status fields, published report title or None)])
# Every project is reported on; GARNET's status is stale (weekly cadence, 12 days ago).
# Per project: its reporting cadence and the reports it has published, oldest first (days ago,
# the status fields then, the report's title).
STATUS: dict[str, tuple[str, list[tuple[int, dict[str, Any], str | None]]]] = {
    "APOLLO": (
        "Monthly",
        [
            (
                84,
                {
                    "overallRag": "Green",
                    "overallReason": "Discovery done; design signed off on plan.",
                    "phase": "Design",
                },
                "Status report: design sign-off",
            ),
            (
                56,
                {
                    "overallRag": "Amber",
                    "overallReason": "Integration supplier late; build start at risk.",
                    "phase": "Build",
                },
                "Status report: month 1 of build",
            ),
            (
                28,
                {
                    "overallRag": "Amber",
                    "overallReason": "Integrations blocked on supplier credentials.",
                },
                "Status report: month 2 of build",
            ),
            (
                1,
                {
                    "overallRag": "Amber",
                    "overallReason": "Core platform late; integrations blocked.",
                    "outcomeConfidence": "Modest",
                    "adoptionConfidence": "High",
                    "confidenceReason": "Pilot users adopted the portal within a week.",
                    "scheduleRagOverrideReason": "Blocked on the supplier's API credentials.",
                    "pmKeyMessage": "Core platform and data migration late against their "
                    "baselines; integrations blocked.",
                    "structuredCommentary": {
                        "keyMessages": "Core platform running late against its baseline, and "
                        "the data migration behind it. Integrations blocked on "
                        "supplier credentials. Business case submitted for approval.",
                        "keyRisks": "The integration supplier has missed two drops.",
                        "decisionsRequired": "Approve the business case; decide on the "
                        "accessibility audit.",
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
                    "overallReason": "Go-live slipped six weeks; integrations double the estimate.",
                    "scheduleRagOverride": "Amber",
                    "scheduleRagOverrideReason": "Recovery plan agreed at steering: +30 days.",
                    "outcomeConfidence": "Low",
                    "adoptionConfidence": "Modest",
                    "pmKeyMessage": "We need a decision on the penetration test now.",
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
                    "overallReason": "Close-out submitted; the new ledger ran three month-ends.",
                    "phase": "Close-out",
                    "outcomeConfidence": "High",
                    "adoptionConfidence": "High",
                },
                "Close-out report",
            )
        ],
    ),
    "EMBER": (
        "Weekly",
        [
            (
                14,
                {
                    "overallRag": "Blue",
                    "overallReason": "Delivered; first benefits measured.",
                    "phase": "Benefits realisation",
                },
                "Weekly report 1",
            ),
            (
                2,
                {
                    "overallRag": "Blue",
                    "overallReason": "Delivered; adoption below the KPI so far.",
                    "outcomeConfidence": "Modest",
                    "adoptionConfidence": "Low",
                    "confidenceReason": "64 % adoption against an 80 % target.",
                },
                "Weekly report 2",
            ),
        ],
    ),
    "FALCON": (
        "Monthly",
        [
            (
                5,
                {
                    "overallRag": "Green",
                    "overallReason": "Discovery on plan; business case being drafted.",
                    "phase": "Initiation",
                    "brCadence": "Monthly",
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
                    "overallReason": "Options wait on the landlord; risks not yet assessed.",
                    "phase": "Exploring",
                },
                None,
            )
        ],
    ),
    # The finished projects: their phase and overall RAG say what the lifecycle says.
    "DELTA": (
        "Monthly",
        [
            (
                6,
                {
                    "overallRag": "Blue",
                    "overallReason": "Closed: automated picking live in the main warehouse.",
                    "phase": "Closed",
                    "outcomeConfidence": "High",
                    "adoptionConfidence": "High",
                },
                "Closing report",
            )
        ],
    ),
    "HARBOUR": (
        "Monthly",
        [
            (
                4,
                {
                    "overallRag": "None",
                    "overallReason": "Stopped: the port authority builds its own platform.",
                    "phase": "Stopped",
                },
                None,
            )
        ],
    ),
    "IRIS": (
        "Monthly",
        [
            (
                8,
                {
                    "overallRag": "Blue",
                    "overallReason": "Benefits realised: four FTE redeployed.",
                    "phase": "Benefits realised",
                    "outcomeConfidence": "High",
                    "adoptionConfidence": "High",
                },
                None,
            )
        ],
    ),
    "JUNIPER": (
        "Monthly",
        [
            (
                9,
                {
                    "overallRag": "Blue",
                    "overallReason": "Delivered, but the benefits were not realised.",
                    "phase": "Benefits not realised",
                    "outcomeConfidence": "Low",
                    "adoptionConfidence": "Low",
                    "confidenceReason": "Ticket volume fell 12%, not the 50% planned.",
                },
                None,
            )
        ],
    ),
    "KESTREL": (
        "Monthly",
        [
            (
                7,
                {
                    "overallRag": "Blue",
                    "overallReason": "One CRM in service; the legacy system is switched off.",
                    "phase": "In maintenance",
                    "outcomeConfidence": "High",
                    "adoptionConfidence": "High",
                },
                None,
            )
        ],
    ),
}
LEADS = {
    "EMBER": "marco",
    "FALCON": "marco",
    "GARNET": "marco",
    "IRIS": "marco",
    "KESTREL": "marco",
}


# The project with an earned-value history: before each of its published reports its work
# packages' progress and actual cost are set back to what they were then (these shares of
# the registers demo's values: progress, actual cost), and after the last report to today's
# (the troubled project has spent 12 % more than the registers demo's actuals), so each
# report froze a different point and the cost index reads below 1.
EARNED_VALUE_HISTORY: dict[str, dict[int, tuple[float, float]]] = {
    "BRIDGE": {40: (0.55, 0.65), 3: (0.9, 1.0), 0: (1.0, 1.12)}
}


# The project in exception (its forecast beyond the tolerances its sponsor set): the lead's
# report, undecided, so the sponsor has a decision waiting.
EXCEPTION_REPORTS = {
    "BRIDGE": {
        "cause": (
            "A package was re-planned three weeks later after approval, and the supplier's "
            "actual costs run above plan."
        ),
        "consequences": "Go-live slips by about a month and the forecast exceeds the budget.",
        "options": [
            "Accept the later end and the extra cost (the exception plan).",
            "Cut the reporting workstream to hold the date.",
            "Stop the project.",
        ],
        "recommendation": "Accept the exception plan: the return still justifies it.",
        "planScheduleDays": 45,
        "planBudget": 150000,
    }
}


def seed(ctx: DemoContext) -> None:
    for key in STATUS:
        project = Project.objects.get(pk=ctx.projects[key].pk)
        _ensure_status(ctx, project, key)
    for key, report in EXCEPTION_REPORTS.items():
        project = Project.objects.get(pk=ctx.projects[key].pk)
        record = exceptions.current(project)
        if record is None or record.reported_at is not None:
            continue
        lead = ctx.users[LEADS.get(key, "lena")]
        caller = permissions.caller_for(lead, project, can_browse=True)
        exceptions.exception_report(caller=caller, data=report)
        # Demo history: the exception opened nine days ago and was reported two days later,
        # so it shows its age; its events carry the same moments.
        opened = timezone.now() - dt.timedelta(days=9)
        reported = opened + dt.timedelta(days=2)
        moments = {"opened": opened, "reported": reported}
        record.refresh_from_db()
        events = [
            {**event, "at": moments[event["kind"]].isoformat()}
            if event.get("kind") in moments
            else event
            for event in record.events or []
        ]
        ProjectException.objects.filter(pk=record.pk).update(
            opened_at=opened, reported_at=reported, events=events
        )
        Project.objects.filter(pk=project.pk).update(exception_opened_at=opened)


def _ensure_status(ctx: DemoContext, project: Project, key: str) -> None:
    existing = ProjectStatus.objects.filter(project=project).first()
    if existing is not None and existing.last_updated_at is not None:
        return
    if StatusReport.objects.filter(project=project).exists():
        return
    lead = ctx.users[LEADS.get(key, "lena")]
    caller = permissions.caller_for(lead, project, can_browse=True)
    cadence, steps = STATUS[key]
    now = timezone.now()
    first = True
    history = EARNED_VALUE_HISTORY.get(key, {})
    today = _progress_and_actuals(project) if history else {}
    for days_ago, fields, report_title in steps:
        if days_ago in history:
            _set_back(caller, today, *history[days_ago])
        at = now - dt.timedelta(days=days_ago)
        data = dict(fields)
        if first:
            data["reportingCadence"] = cadence
            first = False
        services.status_update(caller=caller, data=data, now=at)
        if report_title:
            report = services.status_report_create(caller=caller, data={"title": report_title})
            services.status_report_publish(caller=caller, report_id=report.pk, now=at)
    if history:
        _set_back(caller, today, *history[0])


def _progress_and_actuals(project: Project) -> dict[uuid.UUID, tuple[Any, ...]]:
    return {
        wp.pk: (wp.status, wp.progress, wp.budget_actual, wp.actual_end_date)
        for wp in WorkPackage.objects.filter(project=project).order_by("pk")
    }


def _set_back(
    caller: Caller,
    today: dict[uuid.UUID, tuple[Any, ...]],
    progress_share: float | None,
    actual_share: float | None,
) -> None:
    """Each started package's progress and actual cost at these shares of today's (a package
    not complete then is In Progress, or still Blocked), or today's when the shares are None;
    through the register service, audited like any edit."""
    for pk, (status, progress, actual, ended) in today.items():
        if status == "Not Started" or progress is None:
            continue
        if progress_share is None:
            data = {"status": status, "progress": progress, "actualEndDate": _iso(ended)}
        else:
            then = min(max(round(progress * progress_share / 10) * 10, 10), 100)
            if then == 100:
                data = {"status": status, "progress": progress, "actualEndDate": _iso(ended)}
            else:
                kept = status if status == "Blocked" else "In Progress"
                data = {"status": kept, "progress": min(then, 90), "actualEndDate": None}
        if actual is not None:
            data["budgetActual"] = (
                float(actual)
                if actual_share is None
                else int(round(float(actual) * actual_share, -2))
            )
        work_package_update(caller=caller, wp_id=pk, data=data)


def _iso(day: dt.date) -> str | None:
    return day.isoformat() if day else None
