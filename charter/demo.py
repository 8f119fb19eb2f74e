"""Demo business cases, one lifecycle state or more per project, each reached through the
business-case services as the people of the demo cast would (so the audit log, the kernel
mirror, the plan baselines and the version history are real). Sofia is the sponsor of every
case. Runs after the registers demo; creates the few register rows a case needs when the
project has none. A project whose business case exists is left alone: running twice changes
nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from governance.demo import DemoContext
    from governance.models import Project


import datetime as dt
from collections.abc import Iterable

from django.utils import timezone

from charter import services
from charter.models import BusinessCase
from charter.services.closeout import pending_register_rows
from registers.models import WorkPackage
from registers.services import change_adjudicate, change_create, change_update, work_package_update

# BRIDGE's amendment: what the enabling change costs, and how far a package is re-planned.
DR_SITE_COST = 60_000
REPLAN_DAYS = 21

# project -> (the state its case is brought to, what the case is about)
PLAN = {
    "APOLLO": "Submitted",
    "BRIDGE": "Approved",
    "CEDAR": "ClosingSubmitted",
    "DELTA": "Closed",
    "EMBER": "InRealisation",
    "FALCON": "Draft",
    "GARNET": "Exploring",
    "HARBOUR": "Archived",
    "IRIS": "Realised",
    "JUNIPER": "NotRealised",
    "KESTREL": "InMaintenance",
    # Approved and running their stage plans: their gates are the stage-gate demo's.
    "LUMEN": "Running",
    "MOSAIC": "Running",
    "NIMBUS": "Running",
}
# Approved, then stopped by the sponsor at its gate: the stage-gate demo (gates/demo.py)
# takes the Kill act there, with the reason below.
STOPPED_AT_GATE = {"HARBOUR": "The port authority is building its own booking platform."}
THESES = {
    "APOLLO": (
        "Customers cannot self-serve: 60% of contact-centre calls are status enquiries.",
        "Customers find order status, invoices and returns online, without calling.",
        "Contact-centre volume down 35%, about 1.1m a year from year two.",
        "Customer Experience",
    ),
    "BRIDGE": (
        "The leased data centre's contract ends in 2027 and its hardware is out of support.",
        "Every production workload runs in the cloud landing zone; the lease is not renewed.",
        "Avoid 2.4m of hardware refresh and 0.6m a year of lease and power.",
        "Cost Out",
    ),
    "CEDAR": (
        "The finance system is two major versions behind and loses vendor support in 2026.",
        "Finance closes the month on a supported version in four days instead of seven.",
        "Three days faster close; audit findings on unsupported software cleared.",
        "Risk & Compliance",
    ),
    "DELTA": (
        "Picking errors and overtime grow with volume in the main warehouse.",
        "Automated picking for the fastest-moving 2,000 lines.",
        "Picking errors halved; overtime down 40%.",
        "Productivity",
    ),
    "EMBER": (
        "Regulatory returns are assembled by hand from six spreadsheets.",
        "Returns are produced from one governed data set, with a full audit trail.",
        "No late filings; two analysts freed for analysis.",
        "Risk & Compliance",
    ),
    "FALCON": (
        "Field engineers re-key job sheets at the end of each day.",
        "Engineers close jobs on a phone app that syncs with scheduling.",
        "One extra job per engineer per week.",
        "Productivity",
    ),
    "GARNET": (
        "The head office lease ends and the building no longer fits hybrid working.",
        "",
        "",
        "Strategic",
    ),
    "HARBOUR": (
        "Port bookings are handled by e-mail and phone.",
        "A booking platform shared with hauliers.",
        "Booking costs down 20%.",
        "Revenue Growth",
    ),
    "IRIS": (
        "Supplier invoices are keyed by hand; 8% need rework.",
        "Invoices are captured and matched automatically.",
        "Four FTE redeployed; early-payment discounts captured.",
        "Cost Out",
    ),
    "JUNIPER": (
        "HR answers the same questions by e-mail hundreds of times a month.",
        "Staff find answers and raise requests in a self-service portal.",
        "HR ticket volume down 50%.",
        "Customer Experience",
    ),
    "KESTREL": (
        "Two CRMs run side by side; the old one costs 300k a year.",
        "One CRM; the legacy system is switched off.",
        "300k a year saved from year two.",
        "Cost Out",
    ),
    "LUMEN": (
        "Branch lighting is fluorescent and costs 180k a year in power.",
        "Every branch lit by LED with presence sensors.",
        "Power for lighting down 60%.",
        "Cost Out",
    ),
    "MOSAIC": (
        "Four data marts answer the same question four ways.",
        "One governed data platform feeds every report.",
        "One figure per question; two marts switched off.",
        "Strategic",
    ),
    "NIMBUS": (
        "The on-premises mail servers reach end of support next year.",
        "Every mailbox runs on the hosted platform.",
        "No unsupported mail servers; 120k a year of hardware avoided.",
        "Risk & Compliance",
    ),
}
FLOWS = [  # year, cost, benefit
    (0, 250000, 0),
    (1, 400000, 150000),
    (2, 80000, 600000),
    (3, 80000, 700000),
    (4, 80000, 700000),
]


def _act(
    ctx: DemoContext, who: str, project: Project, act: str, data: dict[str, Any] | None = None
) -> None:
    """Act `act` on the project's business case as `who`."""
    services.charter_act(caller=ctx.caller(who, project), act=act, data=data)


def financial_case(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """A builtin financial case in euros, discounted at 8% over five years."""
    return {
        "mode": "builtin",
        "builtin": {"currency": "EUR", "discountRatePct": 8, "horizonYears": 5, "lines": lines},
    }


def _fill(ctx: DemoContext, key: str, lead: str, *, complete: bool = True) -> None:
    project = ctx.projects[key]
    problem, outcome, ret, theme = THESES[key]
    data: dict[str, Any] = {
        "businessProblem": problem,
        "outcome": outcome,
        "returnExpected": ret,
        "theme": theme,
        "scopeInBounds": "The capabilities listed in the board paper." if complete else "",
        "scopeBoundaries": "No change to the data warehouse or to payroll." if complete else "",
        "designPrinciples": ["Buy before build", "One source of truth"] if complete else [],
        "decisionAuthority": ctx.account("sofia"),
        "projectManager": ctx.account(lead),
    }
    if complete:
        data.update(
            {
                "customerRep": ctx.account("victor"),
                "supplierRep": {"displayName": "Nadia Brooks", "email": "nadia@vendor.example"},
                "adoptionAffected": "Operations staff and team leaders who use the process daily.",
                "adoptionKpi": "80% of transactions through the new process within 3 months.",
                "adoptionOwner": ctx.account("edward" if lead == "lena" else "priya"),
                "changeSaturation": "Modest",
                "steeringCommittee": [
                    {"accountId": ctx.account("sofia"), "role": "Chair"},
                    {"accountId": ctx.account(lead), "role": "Project Lead"},
                    {"accountId": ctx.account("priya"), "role": "PMO"},
                ],
                "financialCase": financial_case(
                    [{"year": y, "cost": c, "benefit": b} for y, c, b in FLOWS]
                ),
            }
        )
    services.charter_update(caller=ctx.caller(lead, project), data=data)


# The tolerances the sponsor set when approving (a project not named here has none).
TOLERANCES = {"BRIDGE": {"toleranceDays": 10, "toleranceCostPercent": 5}}


def _approve(ctx: DemoContext, key: str, lead: str) -> None:
    project = ctx.projects[key]
    _act(ctx, lead, project, "submit")
    _act(
        ctx,
        "sofia",
        project,
        "approve",
        data={
            "approvalComment": "Approved as presented.",
            "approvalRationale": "The return justifies the investment and adoption is owned.",
            **TOLERANCES.get(key, {}),
        },
    )


def _each(rows: Iterable[Any], disposition: str, note: str = "") -> dict[str, Any]:
    """The same close-out disposition (and note) for each of `rows`, by id."""
    return {str(row.pk): {"disposition": disposition, "note": note} for row in rows}


def _close_out(
    ctx: DemoContext, key: str, lead: str, *, submit: bool = True, bau_owner: str = "victor"
) -> None:
    project = ctx.projects[key]
    lead_caller = ctx.caller(lead, project)
    services.charter_act(caller=lead_caller, act="closeout-start")
    rows = pending_register_rows(project)
    services.closeout_update(
        caller=ctx.caller(lead, project),
        data={
            "asBuiltOutcome": "Delivered the chartered scope; one integration deferred.",
            "asBuiltReturn": "Return in line with the case; benefits start a quarter late.",
            "asBuiltEndDate": timezone.localdate().isoformat(),
            "scopeDispositions": _each(rows["workPackages"], "DeliveredAsChartered"),
            "rioDispositions": _each(rows["risks"], "TransferredToBau", "Owned by operations."),
            "pendingDispositions": {
                "decisions": _each(rows["decisions"], "DeferredToBau"),
                "changes": _each(rows["changes"], "Withdrawn", "Not needed."),
            },
            "lessons": {
                "worked": "A weekly demo kept the users close.",
                "differently": "Start the data migration rehearsals earlier.",
                "nextSponsor": "Name the adoption owner before approval, not after.",
            },
            "bauHandover": {"ownerAccountId": ctx.account(bau_owner)},
        },
    )
    if submit:
        _act(ctx, lead, project, "closeout-submit")


def _closed(ctx: DemoContext, key: str, lead: str) -> None:
    _approve(ctx, key, lead)
    _close_out(ctx, key, lead)
    _act(ctx, "sofia", ctx.projects[key], "close")


def _in_realisation(ctx: DemoContext, key: str, lead: str, *, acknowledge: bool = True) -> None:
    _closed(ctx, key, lead)
    project = ctx.projects[key]
    if acknowledge:
        _act(ctx, "victor", project, "handover-acknowledge")
    _act(ctx, lead, project, "realisation-start")
    _act(
        ctx,
        lead,
        project,
        "realisation-review",
        data={
            "note": "Usage climbing week on week; savings not yet visible.",
            "confidence": "Modest",
            "benefitRealisedToDate": 90000,
        },
    )


def _minutes(ctx: DemoContext, key: str, lead: str) -> None:
    project = ctx.projects[key]
    services.minutes_record(
        caller=ctx.caller(lead, project),
        data={
            "title": f"{key} steering committee #1",
            "url": f"https://wiki.example.test/{key.lower()}/steerco-1",
            "heldOn": (timezone.localdate() - dt.timedelta(days=3)).isoformat(),
            "attendees": [ctx.account("sofia"), ctx.account(lead), ctx.account("priya")],
        },
    )


def seed(ctx: DemoContext) -> None:
    for key, state in PLAN.items():
        project = ctx.projects[key]
        if BusinessCase.objects.filter(project=project).exists():
            continue
        lead = "lena" if project.lead_account_id == ctx.account("lena") else "marco"
        SEEDERS[state](ctx, key, lead)


def _exploring(ctx: DemoContext, key: str, lead: str) -> None:
    _fill(ctx, key, lead, complete=False)


def _draft(ctx: DemoContext, key: str, lead: str) -> None:
    project = ctx.projects[key]
    _fill(ctx, key, lead)
    _act(ctx, lead, project, "draft")
    _act(ctx, lead, project, "submit")
    _act(
        ctx,
        "sofia",
        project,
        "return",
        data={
            "returnNotes": [
                {
                    "section": "returnExpected",
                    "severity": "Blocker",
                    "ask": "Show the benefit per engineer as a figure, with its source.",
                },
                {
                    "section": "adoption",
                    "severity": "Significant",
                    "ask": "How will night-shift engineers be trained?",
                },
                {"section": "general", "severity": "Minor", "ask": "Link the supplier's proposal."},
            ]
        },
    )
    case = services.current_case(project)
    services.return_note_address(
        caller=ctx.caller(lead, project),
        note_id=case.return_notes[2]["id"],
        data={"addressed": True},
    )


def _submitted(ctx: DemoContext, key: str, lead: str) -> None:
    _fill(ctx, key, lead)
    _act(ctx, lead, ctx.projects[key], "submit")
    # Demo history: submitted a week ago, so the sponsor's Waiting for me shows its age.
    BusinessCase.objects.filter(project=ctx.projects[key]).update(
        submitted_at=timezone.now() - dt.timedelta(days=6)
    )


def _approved(ctx: DemoContext, key: str, lead: str) -> None:
    """Approved, then amended once (version 2), with a change awaiting the sponsor."""
    project = ctx.projects[key]
    _fill(ctx, key, lead)
    _approve(ctx, key, lead)
    _minutes(ctx, key, lead)
    _act(
        ctx,
        lead,
        project,
        "reopen",
        data={
            "summary": "Add the disaster-recovery site to the scope",
            "reason": "The auditors require a tested second region before the exit.",
        },
    )
    case = services.current_case(project)
    # The enabling change carries its cost, and the amendment folds it into a package's budget:
    # version 2's plan includes it, so the approved budget does not add it a second time.
    change_update(
        caller=ctx.caller(lead, project),
        change_id=case.amendment_enabled_by_change_id,
        data={"dimensions": ["Scope", "Budget"], "impactBudget": str(DR_SITE_COST)},
    )
    change_adjudicate(
        caller=ctx.caller("sofia", project),
        change_id=case.amendment_enabled_by_change_id,
        outcome="Approved",
        decision_comment="Agreed: funded from contingency.",
    )
    build = WorkPackage.objects.filter(project=project).order_by("sort_order", "name")[2]
    assert build.budget is not None  # every seeded package has a budget
    work_package_update(
        caller=ctx.caller(lead, project),
        wp_id=build.pk,
        data={
            "budget": str(build.budget + DR_SITE_COST),
            "budgetForecast": str((build.budget_forecast or build.budget) + DR_SITE_COST),
        },
    )
    services.charter_update(
        caller=ctx.caller(lead, project),
        data={"scopeInBounds": "All production workloads, and a tested disaster-recovery region."},
    )
    _approve(ctx, key, lead)
    # Re-planned after approval: the package's planned end moves three weeks; the register
    # measures it against its baseline end and shows the new plan beside it.
    replanned = WorkPackage.objects.filter(project=project, status="Not Started").order_by(
        "planned_start_date", "name"
    )[0]
    assert replanned.planned_end_date is not None  # every seeded package is planned
    moved = replanned.planned_end_date + dt.timedelta(days=REPLAN_DAYS)
    work_package_update(
        caller=ctx.caller(lead, project),
        wp_id=replanned.pk,
        data={"plannedEndDate": moved.isoformat(), "forecastEndDate": moved.isoformat()},
    )
    change_create(
        caller=ctx.caller(lead, project),
        data={
            "summary": "Extend hypercare by four weeks",
            "reason": "Two workloads move late.",
            "impactScheduleDays": 28,
            "impactBudget": "45000",
        },
    )


def _closing(ctx: DemoContext, key: str, lead: str) -> None:
    _fill(ctx, key, lead)
    _approve(ctx, key, lead)
    _minutes(ctx, key, lead)
    _close_out(ctx, key, lead)


def _closed_state(ctx: DemoContext, key: str, lead: str) -> None:
    _fill(ctx, key, lead)
    _closed(ctx, key, lead)


def _realising(ctx: DemoContext, key: str, lead: str) -> None:
    _fill(ctx, key, lead)
    _in_realisation(ctx, key, lead)
    project = ctx.projects[key]
    _act(
        ctx,
        "sofia",
        project,
        "kpi-resolve",
        data={"resolvedValue": "64%", "met": False, "notes": "Measured on the March sample."},
    )
    # Demo history: realisation began 130 days ago and the last review was 100 days ago, so
    # the status page and the portfolio show a benefit review that is overdue.
    now = timezone.now()
    started, reviewed = now - dt.timedelta(days=130), now - dt.timedelta(days=100)
    case = BusinessCase.objects.get(project=project)
    reviews = [{**review, "at": reviewed.isoformat()} for review in case.realisation_reviews]
    BusinessCase.objects.filter(pk=case.pk).update(
        realisation_started_at=started,
        last_realisation_review_at=reviewed,
        realisation_reviews=reviews,
    )


def _decided(ctx: DemoContext, key: str, lead: str, verdict: dict[str, Any]) -> None:
    """Closed, in realisation, then the sponsor's `verdict`."""
    _fill(ctx, key, lead)
    _in_realisation(ctx, key, lead)
    _act(ctx, "sofia", ctx.projects[key], "verdict", verdict)


def _realised(ctx: DemoContext, key: str, lead: str) -> None:
    _decided(
        ctx,
        key,
        lead,
        {"verdict": "Realised", "returnRealised": "Four FTE redeployed; 0.9m a year."},
    )


def _not_realised(ctx: DemoContext, key: str, lead: str) -> None:
    _decided(
        ctx,
        key,
        lead,
        {
            "verdict": "NotRealised",
            "returnRealised": "Ticket volume fell 12%, not 50%.",
            "realisationLessons": "Nobody owned adoption after go-live; the portal was never "
            "promoted to staff.",
        },
    )


def _maintenance(ctx: DemoContext, key: str, lead: str) -> None:
    _realised(ctx, key, lead)
    _act(ctx, lead, ctx.projects[key], "maintenance-start")


def _running(ctx: DemoContext, key: str, lead: str) -> None:
    """Approved, its first steering committee held: the project runs."""
    _fill(ctx, key, lead)
    _approve(ctx, key, lead)
    _minutes(ctx, key, lead)


def _archived(ctx: DemoContext, key: str, lead: str) -> None:
    if key in STOPPED_AT_GATE:
        _running(ctx, key, lead)  # the sponsor stops it at its gate (gates/demo.py)
        return
    _fill(ctx, key, lead)
    _approve(ctx, key, lead)
    _act(ctx, "sofia", ctx.projects[key], "kill", data={"reason": "Stopped by the sponsor."})


SEEDERS = {
    "Exploring": _exploring,
    "Draft": _draft,
    "Submitted": _submitted,
    "Approved": _approved,
    "ClosingSubmitted": _closing,
    "Closed": _closed_state,
    "InRealisation": _realising,
    "Realised": _realised,
    "NotRealised": _not_realised,
    "InMaintenance": _maintenance,
    "Archived": _archived,
    "Running": _running,
}
