"""Demo registers: every demo project gets work packages linked to its Epics, risks and
opportunities, a decision log and change requests, written through the register services
(so they are validated and audited like any other write). Between them the projects show
every status, RAG, direction, treatment, decision state, change outcome and application
state. A project that already has register rows is left alone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from governance.models import Project, User
    from governance.permissions import Caller


import datetime as dt

from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from governance.demo import EPICS, PROJECTS, DemoContext
from governance.permissions import caller_for
from registers import sample_plan, services
from registers.models import ChangeRequest, Decision, Risk, WorkPackage

# Each project's shape, so the status pages and the portfolio show calm, typical and troubled
# projects: derived RAG comes from these registers. A calm project has no blocked work, its
# forecasts on plan, low residual risk and no scope change pending; an early one has not
# identified its risks yet; a troubled one is well over budget, its go-live slipped, a risk
# scores 16 and a scope request has waited six weeks. The others are typical.
CALM = {"FALCON", "GARNET"}
EARLY = {"GARNET"}
TROUBLED = {"BRIDGE"}
CALM_SKIPPED_CHANGES = {2, 6}  # the calm projects have no scope change waiting
# The delivered projects ran to their approved plan: no budget or schedule variation stands
# on top of it (approval carries such changes, so one would read as delivered under budget
# and two weeks inside an end nobody planned to).
DELIVERED_SKIPPED_CHANGES = {0, 1}
# The project whose delivery plan came from Microsoft Project: a plan of 200 tasks, written as
# Microsoft Project writes it (`registers.sample_plan`) and imported through the register
# import, as a person would: its eight phases are work packages beside the Epics' packages.
IMPORTED_PLAN = "FALCON"
IMPORTED_PLAN_TASKS = 200
# The projects the business-case demo takes past delivery (closing, closed, realising,
# realised or not, in maintenance): their plan ended before today and every package is
# complete, on its planned dates and budget, so earned value reads on plan (SPI 1) and the
# registers agree with the narrative of a delivered project.
DELIVERED = {"CEDAR", "DELTA", "EMBER", "IRIS", "JUNIPER", "KESTREL"}

# What each project is about, so its risks and change requests read as its own: the supplier
# it depends on, the system it replaces, the product it builds, the extra scope people ask
# for, the check it must pass, and where its success could be reused.
FLAVOUR = {
    "APOLLO": ("The portal integrator", "the order system", "the portal",
               "single sign-on to the portal", "Accessibility audit", "the partner portal"),
    "BRIDGE": ("The cloud migration partner", "the leased data centre", "the landing zone",
               "a disaster-recovery runbook per workload", "Penetration test",
               "the group's other data centres"),
    "CEDAR": ("The ERP implementer", "the old ledger", "the finance system",
              "a consolidation module for the subsidiaries", "Auditor walkthrough",
              "the subsidiaries' ledgers"),
    "DELTA": ("The robotics vendor", "the manual picking process", "the picking robots",
              "a second picking aisle", "Health and safety sign-off", "the northern warehouse"),
    "EMBER": ("The data platform supplier", "the returns spreadsheets", "the reporting pipeline",
              "the quarterly liquidity return", "Regulator dry run", "the statistical returns"),
    "FALCON": ("The app developer", "the paper job sheets", "the field app",
               "offline photo capture", "Device security review", "the installation teams"),
    "GARNET": ("The fit-out contractor", "the current head office", "the new office",
               "a second meeting floor", "Fire safety inspection", "the regional offices"),
    "HARBOUR": ("The booking platform vendor", "the e-mail bookings", "the booking platform",
                "haulier self-registration", "Port authority review", "the inland terminals"),
    "IRIS": ("The invoice-capture vendor", "manual invoice keying", "the capture service",
             "credit-note matching", "Internal audit review", "the expense claims"),
    "JUNIPER": ("The HR portal vendor", "the HR mailbox", "the HR portal",
                "payslip questions in the portal", "Works council consultation",
                "the IT service desk"),
    "KESTREL": ("The CRM integrator", "the legacy CRM", "the single CRM",
                "contact history from the old CRM", "Data protection impact assessment",
                "the partner channel"),
}  # fmt: skip


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _flavour(key: str) -> dict[str, str]:
    supplier, legacy, product, extra, check, reuse = FLAVOUR.get(key, FLAVOUR["APOLLO"])
    return {
        "Supplier": supplier,
        "supplier": supplier[:1].lower() + supplier[1:],
        "legacy": legacy,
        "product": product,
        "extra": extra,
        "check": check,
        "reuse": reuse,
    }


def _flavoured(flavour: dict[str, str], *texts: str) -> list[str]:
    """Each demo text told of its project (`_flavour`), as a sentence."""
    return [_sentence(text.format(**flavour)) for text in texts]


# name, status, progress, rag, start (weeks from the project start), weeks, budget, link
PACKAGES = [
    (EPICS[0], "Complete", 100, "Blue", 0, 6, 40_000, True),
    (EPICS[1], "Complete", 100, "Green", 4, 8, 65_000, True),
    (EPICS[2], "In Progress", 60, "Green", 10, 16, 180_000, True),
    (EPICS[3], "Blocked", 30, "Red", 12, 14, 120_000, True),
    (EPICS[4], "In Progress", 40, "Amber", 16, 10, 75_000, True),
    (EPICS[5], "Not Started", None, "None", 26, 8, 55_000, False),
    (EPICS[6], "Not Started", 0, "None", 30, 6, 30_000, True),
    (EPICS[7], "Not Started", None, "None", 36, 4, 25_000, False),
]
COMMENTARY = {
    "In Progress": "On track against the forecast; next milestone is the sprint review.",
    "Blocked": "Waiting for the supplier's API credentials; escalated at the last steerco.",
    "Complete": "Delivered and signed off.",
}
# (impact, likelihood) of the second to fourth risk, picked per project: the same band
# (medium, low, low) as in RISKS, so the projects' risk RAGs do not move.
SCORE_VARIANTS = {
    1: [(4, 3), (3, 3), (4, 2), (3, 4), (2, 5)],
    2: [(3, 2), (2, 2), (2, 3), (1, 5), (3, 1)],
    3: [(1, 3), (1, 2), (2, 1), (1, 4), (2, 2)],
}
# title, direction, status, materialised, impact, likelihood, residual, treatment,
# mitigation, description
RISKS = [
    ("{Supplier} delivers late", "Risk", "Open", True, 4, 4, (3, 3), "Mitigate",
     "Weekly checkpoint with {supplier}; a second supplier is on standby.",
     "{Supplier} has missed two of the last three drops."),
    ("Data quality in {legacy}", "Risk", "Open", False, 4, 3, (2, 3), "Avoid",
     "Cleanse the data before migration instead of after.",
     "Duplicate records in {legacy} could break the matching in {product}."),
    ("The one specialist in {legacy} leaves", "Risk", "Open", False, 3, 2, None, "Transfer",
     "Fixed-price contract with a replacement clause.",
     "Only one contractor knows how {legacy} works inside."),
    ("Minor UI inconsistencies at go-live", "Risk", "Open", False, 1, 3, None, "Accept",
     "Cost of fixing before go-live outweighs the impact; fix in the first release after.",
     "Some older screens will not match the new style guide on day one."),
    ("Regulator changes the reporting format", "Risk", "Closed", False, 5, 1, None, None,
     "Closed: the regulator confirmed the format for the next two years.",
     "A format change would force rework of the reporting module."),
    ("Reuse {product} for {reuse}", "Opportunity", "Open", False, 4, 3, None,
     "Pursue", "Present the business case to the owners of {reuse}.",
     "{reuse} could use {product} with little change."),
    ("Volume discount on licences", "Opportunity", "Open", False, 2, 4, None, "Enhance",
     "Bundle the licence order with the parent company's renewal.",
     "The vendor offers tiered pricing above 500 seats."),
    ("Shared test environment with another project", "Opportunity", "Open", False, 2, 2,
     None, "Share", "Agree a booking calendar with the other project.",
     "Another project needs the same test rig in the same quarter."),
    ("Early adopter publicity", "Opportunity", "Closed", False, 1, 2, None, "Ignore",
     "Not worth the communications effort this year.",
     "The vendor would feature us as a reference customer."),
]  # fmt: skip
# decision, weeks ago made (None: pending), maker, rationale
DECISIONS = [
    ("Adopt the vendor's cloud platform", 20, "sofia",
     "Lowest five-year cost and the only option meeting the security baseline."),
    ("Phase the roll-out by region", 14, "lead",
     "Limits the blast radius of a bad release; support can follow the wave."),
    ("Keep the legacy reports read-only for a year", 8, None,
     "Agreed in the corridor after the steering committee; maker not recorded."),
    ("Choose the training provider", None, None,
     "Two bids received; waiting for the second reference call."),
    ("Approve weekend cut-over", None, "sofia", "Needs the operations manager's agreement."),
]  # fmt: skip
# summary, reason, dimensions, budget, days, scope, outcome (None: Proposed), comment
CHANGES = [
    ("Extra test environment for {product}", "Peak-load tests need their own environment.",
     ["Budget"], 15_000, None, "", "Approved", "Approved from contingency."),
    ("Move go-live two weeks later", "The integration blocker pushes the last test cycle.",
     ["Schedule"], None, 14, "", "Approved",
     "Accepted: the integration blocker is outside our control."),
    ("Add {extra}", "The people who will use {product} asked for it.",
     ["Scope", "Budget"], 22_000, 10, "Add {extra}.",
     "Approved", "Approved; the business case will be amended."),
    ("Gold-plated dashboard redesign", "Marketing would like a fresh look.",
     ["Scope", "Quality"], 40_000, 21, "A full redesign of every dashboard.", "Rejected",
     "Rejected: no measurable benefit for the cost."),
    ("Drop the archive migration", "Archive data is rarely used and costly to move.",
     ["Scope"], -12_000, None, "Archive data stays in the legacy system.", "Withdrawn", ""),
    ("Second rehearsal of the move from {legacy}", "The first rehearsal rejected 3% of records.",
     ["Schedule", "Budget"], 8_000, 5, "", None, ""),
    ("{check} before go-live", "It is required before {product} goes live.",
     [], None, None, "{check} of {product}.", None, ""),
]  # fmt: skip


def _has_registers(project: Project) -> bool:
    return any(
        model.objects.filter(project=project).exists()
        for model in (WorkPackage, Risk, Decision, ChangeRequest)
    )


def seed(ctx: DemoContext) -> None:
    sofia = ctx.users["sofia"]
    for index, (key, project) in enumerate(ctx.projects.items()):
        project.refresh_from_db()
        if _has_registers(project) or project.registers_frozen:
            continue
        if not project.sponsor_account_id:
            # The business case's demo names the real decision authority later.
            project.sponsor_account_id = sofia.account_id
            project.save(update_fields=["sponsor_account_id"])
        lead = ctx.users[PROJECTS[key][1]]
        _seed_project(ctx, project, index, lead, sofia)


def _seed_project(ctx: DemoContext, project: Project, index: int, lead: User, sofia: User) -> None:
    caller = caller_for(lead, project, can_browse=True)
    sponsor = caller_for(sofia, project, can_browse=True)
    today = timezone.localdate()
    # Every project started long enough ago that its completed and running packages have
    # actual dates in the past; later projects are a little older.
    start = today - dt.timedelta(weeks=24 + index)
    if project.key in CALM:
        start = today - dt.timedelta(weeks=20)  # its running packages end ahead, on plan
    elif project.key in DELIVERED:
        plan_weeks = max(offset + weeks for *_, offset, weeks, _, _ in PACKAGES)
        start = today - dt.timedelta(weeks=plan_weeks + 2 + index)
    scale = 1 + index * 0.25
    owners = [ctx.account("edward"), lead.account_id, ctx.account("priya"), None]
    key = project.key
    flavour = _flavour(key)
    packages = []
    for n, (name, status, progress, rag, offset, weeks, budget, link) in enumerate(PACKAGES):
        planned_start = start + dt.timedelta(weeks=offset)
        planned_end = planned_start + dt.timedelta(weeks=weeks)
        slip = (n % 3) * 7 if status in ("In Progress", "Blocked") else 0
        overrun = 1.1 if rag == "Red" else 1.0
        if key in CALM:
            slip, overrun = 0, 1.0
            if status == "Blocked":
                status, rag = "In Progress", "Amber"
        elif key in TROUBLED:
            overrun = 2.0 if rag == "Red" else overrun
            slip = 45 if n == len(PACKAGES) - 1 else slip
        if key in DELIVERED:
            status, progress, slip, overrun = "Complete", 100, 0, 1.0
            rag = "Blue" if rag == "Blue" else "Green"
        elif status != "Complete" and planned_end < today:
            # Unfinished past its planned end: the forecast says how late (two weeks on).
            slip = max(slip, (today - planned_end).days + 14)
        if slip and rag == "Green":
            rag = "Amber"  # the lead's own colour agrees with a package forecast to be late
        amount = round(budget * scale, -3)
        data: dict[str, Any] = {
            "name": name,
            "type": "Epic",
            "ownerAccountId": owners[n % len(owners)],
            "status": status,
            "progress": progress,
            "rag": rag,
            "plannedStartDate": planned_start.isoformat(),
            "plannedEndDate": planned_end.isoformat(),
            "forecastStartDate": planned_start.isoformat(),
            "forecastEndDate": (planned_end + dt.timedelta(days=slip)).isoformat(),
            "budget": amount,
            "budgetForecast": round(amount * overrun, -2),
            "commentary": COMMENTARY.get(status, ""),
            "linkedIssueKeys": [f"{project.key}-{n + 1}"] if link else [],
        }
        if status != "Not Started":
            data["actualStartDate"] = planned_start.isoformat()
            data["budgetActual"] = round(amount * (progress or 0) / 100, -2)
        if status == "Complete":
            data["actualEndDate"] = min(planned_end, today).isoformat()
        if n == 2:
            months = [
                (planned_start + dt.timedelta(days=31 * m)).strftime("%Y-%m") for m in range(4)
            ]
            data["budgetPhasing"] = [
                {"period": month, "amount": round(amount / 4)} for month in months
            ]
        packages.append(services.work_package_create(caller=caller, data=data))

    if key == IMPORTED_PLAN:
        _import_plan(caller, project, start, today)

    risks = []
    for n, (title, direction, status, materialised, impact, likelihood, residual, treatment,
            mitigation, description) in enumerate([] if key in EARLY else RISKS):  # fmt: skip
        if n == 0 and key in CALM:
            materialised, residual = False, (2, 2)
        elif n == 0 and key in TROUBLED:
            residual = (4, 4)
        elif n in SCORE_VARIANTS:
            # Each project scores its own risks (within the same band, so its risk RAG holds).
            variants = SCORE_VARIANTS[n]
            impact, likelihood = variants[sum(map(ord, key)) % len(variants)]
        title, mitigation, description = _flavoured(flavour, title, mitigation, description)
        data = {
            "title": title,
            "direction": direction,
            "status": status,
            "materialised": materialised,
            "impact": impact,
            "likelihood": likelihood,
            "treatment": treatment,
            "mitigation": mitigation,
            "ownerAccountId": owners[n % 3],
            "description": description,
        }
        if residual:
            data["residualImpact"], data["residualLikelihood"] = residual
        risks.append(services.risk_create(caller=caller, data=data))
    if risks and risks[0].materialised:
        services.risk_record_decision(
            caller=caller,
            risk_id=risks[0].pk,
            data={
                "decision": f"Bring in the standby supplier alongside {flavour['supplier']}",
                "madeOn": (today - dt.timedelta(days=10)).isoformat(),
                "madeByAccountId": sofia.account_id,
            },
        )

    for decision, weeks_ago, maker, rationale in DECISIONS:
        data = {"decision": decision, "rationale": rationale}
        if weeks_ago is not None:
            data["madeOn"] = (today - dt.timedelta(weeks=weeks_ago)).isoformat()
        if maker:
            data["madeByAccountId"] = sofia.account_id if maker == "sofia" else lead.account_id
        made = services.decision_create(caller=caller, data=data)
        if weeks_ago == 14:
            services.decision_append_note(
                caller=caller,
                decision_id=made.pk,
                text_value="Region order confirmed: North first, then South and West.",
            )

    for n, (summary, reason, dimensions, budget_impact, days, scope, outcome, comment) in enumerate(
        CHANGES
    ):
        if key in CALM and n in CALM_SKIPPED_CHANGES:
            continue
        if key in DELIVERED and n in DELIVERED_SKIPPED_CHANGES:
            continue
        summary, reason, scope = _flavoured(flavour, summary, reason, scope)
        data = {
            "summary": summary,
            "reason": reason,
            "dimensions": dimensions,
            "impactBudget": budget_impact,
            "impactScheduleDays": days,
            "impactScope": scope,
        }
        if n == 5:
            data["targetWorkPackageId"] = str(packages[4].pk)
        change = services.change_create(caller=caller, data=data)
        # Demo history: the changes were raised over the last weeks, earlier ones first, so
        # Waiting for me shows real ages (none past the 30 days that turn scope Red).
        ChangeRequest.objects.filter(pk=change.pk).update(
            created_at=timezone.now() - dt.timedelta(days=1 + index + (len(CHANGES) - n) * 2)
        )
        if key in TROUBLED and outcome is None and scope:
            # Demo history: this scope request was raised six weeks ago and still waits.
            ChangeRequest.objects.filter(pk=change.pk).update(
                created_at=timezone.now() - dt.timedelta(weeks=6)
            )
        if outcome == "Withdrawn":
            services.change_adjudicate(caller=caller, change_id=change.pk, outcome=outcome)
        elif outcome:
            services.change_adjudicate(
                caller=sponsor, change_id=change.pk, outcome=outcome, decision_comment=comment
            )


def _import_plan(caller: Caller, project: Project, start: dt.date, today: dt.date) -> None:
    """The project's Microsoft Project plan, imported at outline level 1 (its phases) through
    the import service: preview, then the commit checked against it."""
    content = sample_plan.plan(
        IMPORTED_PLAN_TASKS,
        start=start,
        today=today,
        name=f"{project.name} delivery plan",
        cost_scale=10,
    )
    name = f"{project.key.lower()}-delivery-plan.xml"
    seen = services.import_preview(
        caller=caller, register="work-packages", upload=SimpleUploadedFile(name, content)
    )
    services.import_file(
        caller=caller,
        register="work-packages",
        upload=SimpleUploadedFile(name, content),
        expected_digest=seen.digest,
    )
