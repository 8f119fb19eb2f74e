"""The demo gives every RAG colour on the status pages and the portfolio, and published reports
with a trend; BRIDGE shows a package re-planned after approval and the figures of a project
after an amendment, the same on every surface; running it twice changes nothing."""

from decimal import Decimal

from django.core.management import call_command
from django.test import Client

from charter.demo import DR_SITE_COST, REPLAN_DAYS
from charter.models import BusinessCase
from governance.models import AuditEntry, User
from registers.derive import BASIS_BASELINE
from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from status.models import ProjectStatus, StatusReport

MODELS = [
    ProjectStatus,
    StatusReport,
    WorkPackage,
    Risk,
    ChangeRequest,
    Decision,
    BusinessCase,
    AuditEntry,
]


def test_the_demo_shows_every_colour_and_a_trend_and_is_idempotent(demo):
    counts = {model: model.objects.count() for model in MODELS}
    call_command("seed_demo", stdout=None)
    assert {model: model.objects.count() for model in MODELS} == counts

    client = Client()
    client.force_login(User.objects.get(username="priya"))
    rows = client.get("/api/v1/portfolio").json()["items"]
    assert len(rows) == 24  # fourteen projects, and ten proposals of the investment demo
    colours = {"Red", "Amber", "Green", "Blue", "None"}
    assert {row["overallRag"] for row in rows} == colours
    effective = {value for row in rows for value in row["effective"].values()}
    assert effective == colours
    derived = {value for row in rows for value in row["derived"].values()}
    assert derived == colours
    assert any(row["stale"] for row in rows)
    assert any(row["realisationReviewOverdue"] for row in rows)
    assert any(row["derived"] != row["effective"] for row in rows)

    published = StatusReport.objects.filter(state="Published")
    assert published.count() >= 5
    apollo = [r.snapshot["status"]["overallRag"] for r in published.filter(project__key="APOLLO")]
    assert len(set(apollo)) > 1  # a trend, not a flat line
    lessons = client.get("/api/v1/portfolio/lessons").json()
    assert {lesson["kind"] for lesson in lessons} == {
        "worked",
        "differently",
        "nextSponsor",
        "realisation",
    }


def test_the_demo_shows_a_replanned_package_and_an_amended_project_that_agree(demo):
    client = Client()
    client.force_login(User.objects.get(username="priya"))
    case = BusinessCase.objects.get(project__key="BRIDGE")
    assert case.version == 2
    enabling = ChangeRequest.objects.get(pk=case.amendment_enabled_by_change_id)
    assert enabling.application_record["kind"] == "charter"
    assert enabling.impact_budget == DR_SITE_COST

    # A package re-planned after approval: measured against its baseline end.
    packages = client.get("/api/v1/projects/BRIDGE/work-packages").json()["items"]
    replanned = [
        p for p in packages if p["baselineEndDate"] and p["plannedEndDate"] != p["baselineEndDate"]
    ]
    assert len(replanned) == 1
    package = replanned[0]
    assert package["scheduleVarianceDays"] == REPLAN_DAYS
    assert package["scheduleVarianceBasis"] == BASIS_BASELINE
    html = client.get("/projects/BRIDGE/registers/work-packages/").content.decode()
    assert "re-planned" in html and f"+{REPLAN_DAYS}\u00a0d" in html

    # After the amendment: the approved budget is version 2's baseline (the enabling change
    # folded in once) plus the budget change approved before it, which both approvals carried;
    # the status API, the portfolio and the change register agree.
    baseline = sum(
        (Decimal(str(p["budgetBaseline"])) for p in packages if p["budgetBaseline"] is not None),
        Decimal(0),
    )
    total = Decimal(str(case.plan_baseline["totalBudget"]))
    assert baseline == total
    carried = case.plan_baseline["carriedChanges"]
    assert [c["impactBudget"] for c in carried if c["impactBudget"]] == [15_000]
    assert [c["impactScheduleDays"] for c in carried if c["impactScheduleDays"]] == [14]
    approved = total + 15_000
    status = client.get("/api/v1/projects/BRIDGE/status").json()
    assert Decimal(str(status["figures"]["approvedBudget"])) == approved
    row = next(
        r for r in client.get("/api/v1/portfolio").json()["items"] if r["projectKey"] == "BRIDGE"
    )
    assert Decimal(str(row["approvedBudget"])) == approved
    assert row["costOverrunPct"] == status["figures"]["costOverrunPct"]
    assert row["derived"] == status["derived"]
    assert row["derived"]["costRag"] == "Red"
    changes = client.get("/projects/BRIDGE/registers/changes/").content.decode()
    assert "add EUR\u00a015,000 to the budget" in changes
