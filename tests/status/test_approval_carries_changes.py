"""Approval carries what was approved before it: approving (or re-approving) a business case
freezes the plan together with every Approved budget and schedule change standing on top of
it, so the approved budget and the approved end date read the same just before and just after
approval, on the status page, its JSON API and the assistant's status action. The approval
panel shows the sponsor the plan being frozen, the changes carried and the financial case's
total cost beside the plan's budget; the approval's audit entry names the changes carried."""

import datetime as dt
import json
from decimal import Decimal

import pytest
from django.utils import timezone

from charter.models import BusinessCase
from charter.selectors import approval_preview
from charter.services import charter_approve, charter_reopen, charter_submit
from governance.models import AuditEntry, User
from governance.tracker.local import scripting
from registers.models import ChangeRequest
from tests.agent.conftest import EVERYONE
from tests.conftest import set_governance_group
from tests.factories import ChangeRequestFactory, WorkPackageFactory

END = dt.date(2026, 9, 30)


@pytest.fixture
def governance_group(cast):
    scripting.ensure_group(EVERYONE, members=["lead", "editor", "viewer", "sponsor", "pmo"])
    set_governance_group(EVERYONE)


@pytest.fixture
def plan(cast):
    WorkPackageFactory(
        project=cast.project,
        name="Design",
        budget=Decimal(400),
        planned_start_date=dt.date(2026, 1, 1),
        planned_end_date=dt.date(2026, 4, 30),
    )
    WorkPackageFactory(
        project=cast.project,
        name="Build",
        budget=Decimal(600),
        planned_start_date=dt.date(2026, 5, 1),
        planned_end_date=END,
    )


def approved_change(cast, summary, *, budget=None, days=None):
    dims = (["Budget"] if budget else []) + (["Schedule"] if days else [])
    return ChangeRequestFactory(
        project=cast.project,
        summary=summary,
        status="Approved",
        dimensions=dims,
        impact_budget=None if budget is None else Decimal(budget),
        impact_schedule_days=days,
        decided_at=timezone.now() - dt.timedelta(days=1),
    )


def figures(cast, client, bearer, client_for):
    """The approved budget and end date on the status API, the status page and the
    assistant's project_status."""
    api = client.get("/api/v1/projects/ALPHA/status", **bearer(cast.viewer)).json()
    drivers = api["drivers"]
    cost = drivers["costRag"]["figures"]
    schedule = drivers["scheduleRag"]
    target = dt.date.fromisoformat(schedule["figures"]["baselineEndDate"]) + dt.timedelta(
        days=schedule["figures"]["approvedVariationDays"]
    )
    page = client_for(cast.viewer).get("/projects/ALPHA/status/").content.decode()
    action = client_for(cast.viewer).post(
        "/api/v1/agent/actions/project_status",
        data=json.dumps({"arguments": {"projectKey": "ALPHA"}}),
        content_type="application/json",
    )
    assert action.status_code == 200, action.content
    state = action.json()["result"]
    return {
        "approvedBudget": cost["approvedBudget"],
        "target": target,
        "agentBudget": state["dimensions"]["cost"]["figures"]["approvedBudget"],
        "agentDays": state["dimensions"]["schedule"]["figures"]["approvedVariationDays"],
        "page": page,
    }


def test_the_approved_budget_and_end_date_read_the_same_before_and_after_approval(
    cast, arrange, as_, plan, client, bearer, client_for, governance_group
):
    more = approved_change(cast, "More testing", budget=150)
    later = approved_change(cast, "Later go-live", days=14)
    arrange("Submitted")
    before = figures(cast, client, bearer, client_for)
    assert before["approvedBudget"] == 1150
    assert before["target"] == END + dt.timedelta(days=14)
    assert "plus EUR\u00a0150 of approved changes" in before["page"]
    assert "plus 14 days of approved changes" in before["page"]

    # The approval panel's figures are the status page's, not a second sum of their own.
    preview = approval_preview(cast.project, BusinessCase.objects.get(project=cast.project))
    assert preview.approved_budget == before["approvedBudget"]
    assert preview.approved_end == before["target"]

    charter_approve(caller=as_(cast.sponsor), data={})
    after = figures(cast, client, bearer, client_for)
    assert after["approvedBudget"] == before["approvedBudget"] == 1150
    assert after["target"] == before["target"]
    assert after["agentBudget"] == before["agentBudget"] == 1150
    assert after["agentDays"] == before["agentDays"] == 14
    assert "approved budget of EUR\u00a01,150 (EUR\u00a01,000 plus EUR\u00a0150" in after["page"]
    assert "plus 14 days of approved changes" in after["page"]

    case = BusinessCase.objects.get(project=cast.project)
    carried = {c["id"]: c for c in case.plan_baseline["carriedChanges"]}
    assert set(carried) == {str(more.pk), str(later.pk)}
    assert carried[str(more.pk)]["impactBudget"] == 150
    assert carried[str(later.pk)]["impactScheduleDays"] == 14
    entry = AuditEntry.objects.get(kind="charter.approved")
    assert [c["id"] for c in entry.changes["carriedChanges"]["after"]] == [
        c["id"] for c in case.plan_baseline["carriedChanges"]
    ]
    # The approved version keeps the same record.
    assert case.approved_versions.get().plan_baseline["carriedChanges"] == list(carried.values())
    # The project's audit log reads the approval with the changes it carried.
    audit = client_for(cast.lead).get("/projects/ALPHA/audit/")
    assert audit.status_code == 200
    text = audit.content.decode()
    assert "More testing" in text and "Later go-live" in text


def test_re_approval_carries_them_again_and_the_figures_stay(
    cast, arrange, as_, plan, client, bearer, client_for, governance_group
):
    arrange("Submitted")
    charter_approve(caller=as_(cast.sponsor), data={})
    approved_change(cast, "More testing", budget=150)
    approved_change(cast, "Later go-live", days=14)
    enabling = ChangeRequestFactory(
        project=cast.project,
        summary="New market",
        status="Approved",
        dimensions=["Scope"],
        impact_scope="A second market.",
        decided_at=timezone.now(),
    )
    charter_reopen(caller=as_(cast.editor), data={"changeId": str(enabling.pk)})
    charter_submit(caller=as_(cast.editor), data={})
    before = figures(cast, client, bearer, client_for)
    assert before["approvedBudget"] == 1150
    charter_approve(caller=as_(cast.sponsor), data={})
    after = figures(cast, client, bearer, client_for)
    assert (after["approvedBudget"], after["target"]) == (1150, before["target"])
    assert after["target"] == END + dt.timedelta(days=14)
    second = AuditEntry.objects.filter(kind="charter.approved").order_by("-at").first()
    assert sorted(c["summary"] for c in second.changes["carriedChanges"]["after"]) == [
        "Later go-live",
        "More testing",
    ]
    # The enabling change is applied by the amendment, not carried.
    enabling.refresh_from_db()
    assert enabling.application_record["kind"] == "charter"


def test_the_approval_panel_shows_the_plan_the_changes_and_the_cost_against_the_budget(
    cast, arrange, plan, client_for
):
    approved_change(cast, "More testing", budget=150)
    approved_change(cast, "Later go-live", days=14)
    ChangeRequestFactory(
        project=cast.project, summary="Still proposed", status="Proposed", impact_budget=99
    )
    arrange(
        "Submitted",
        financial_case={
            "mode": "attached",
            "attached": {"label": "Board paper", "totalCost": 1300, "totalBenefit": 5000},
        },
    )
    page = client_for(cast.sponsor).get("/projects/ALPHA/charter/").content.decode()
    assert "The plan you freeze" in page
    assert "Design" in page and "Build" in page
    assert "Plan budget EUR\u00a01,000; the plan ends on" in page
    assert "“More testing”: EUR\u00a0+150" in page
    assert "“Later go-live”: +14 days" in page
    assert "Still proposed" not in page.split("The plan you freeze")[1].split("</section>")[0]
    assert (
        "Approved budget after approval: EUR\u00a01,150 (EUR\u00a01,000 plus EUR\u00a0150 of "
        "approved changes)." in page
    )
    assert "plus 14 days of approved changes)." in page
    assert (
        "The financial case&#x27;s total cost EUR\u00a01,300 is EUR\u00a0300 more than the "
        "plan&#x27;s budget EUR\u00a01,000." in page
    )
    # Only whoever may approve sees the panel.
    viewer = client_for(cast.viewer).get("/projects/ALPHA/charter/").content.decode()
    assert "The plan you freeze" not in viewer


@pytest.mark.parametrize(
    ("cost", "words"),
    [
        (None, "The financial case states no total cost to set beside the plan's budget"),
        ("1000", "The financial case's total cost EUR\u00a01,000 matches the plan's budget"),
        ("800", "The financial case's total cost EUR\u00a0800 is EUR\u00a0200 less than"),
    ],
)
def test_the_cost_reconciliation_says_more_less_matches_or_none(db, cost, words):
    from charter.selectors import cost_reconciliation

    found = cost_reconciliation(None if cost is None else Decimal(cost), Decimal(1000))
    assert found.startswith(words)


def test_apollo_keeps_its_15000_and_14_days_when_sofia_approves(demo):
    """The demo's story: APOLLO is submitted with an approved +15,000 (an extra test
    environment) and +14 days (a later go-live) on top of its plan; Sofia approves it on the
    page and both are still in the approved figures."""
    from django.test import Client

    sofia = Client()
    sofia.force_login(User.objects.get(username="sofia"))
    carried = ChangeRequest.objects.filter(
        project__key="APOLLO", status="Approved", dimensions__in=[["Budget"], ["Schedule"]]
    )
    status = sofia.get("/api/v1/projects/APOLLO/status").json()
    before = status["drivers"]["costRag"]["figures"], status["drivers"]["scheduleRag"]["figures"]
    assert before[0]["approvedVariations"] == 15_000
    assert before[1]["approvedVariationDays"] == 14
    panel = sofia.get("/projects/APOLLO/charter/").content.decode()
    assert "The plan you freeze" in panel
    for change in carried:
        assert f"“{change.summary}”" in panel
    assert "The financial case&#x27;s total cost EUR\u00a0890,000" in panel
    case = BusinessCase.objects.get(project__key="APOLLO")
    done = sofia.post(
        "/projects/APOLLO/charter/acts/approve/",
        {"page": "case", "revision": case.revision, "approvalComment": "Go."},
    )
    assert done.status_code == 302, done.content
    case.refresh_from_db()
    assert case.approval_status == "Approved"
    status = sofia.get("/api/v1/projects/APOLLO/status").json()
    after = status["drivers"]["costRag"]["figures"], status["drivers"]["scheduleRag"]["figures"]
    assert after[0]["approvedBudget"] == before[0]["approvedBudget"]
    assert after[0]["approvedVariations"] == 15_000
    assert after[1]["approvedVariationDays"] == 14
    assert after[1]["baselineEndDate"] == before[1]["baselineEndDate"]
    assert {c["summary"] for c in case.plan_baseline["carriedChanges"]} == {
        c.summary for c in carried
    }
