"""One figure on every surface: each scenario of the issue "Facts that agree everywhere" is built
through the real acts, and the same figure is read from the register page, the timeline, the
status page, the portfolio (page, API and export), the JSON API, the register export and the
assistant's actions.

1. A package re-planned after approval is measured against its baseline, not its live plan.
2. After an amendment, the approved budget is the version-2 plan plus the roll-up variations
   its approval carried and those decided since; the enabling change and AwaitingApplication
   changes are not added.
3. A cost sentence never contradicts its colour: it prints the overrun with enough places.
"""

import csv
import datetime as dt
import io
import json
from decimal import Decimal

import pytest
from django.utils import timezone

from charter.services.lifecycle import charter_approve, charter_reopen, charter_submit
from governance.permissions import caller_for
from governance.tracker.local import scripting
from registers.derive import BASIS_BASELINE, BASIS_NO_BASELINE, BASIS_PLANNED
from status import derive
from tests.agent.conftest import EVERYONE
from tests.charter.conftest import complete_inputs
from tests.conftest import set_governance_group
from tests.factories import ChangeRequestFactory, WorkPackageFactory

END = dt.date(2026, 12, 31)
REPLANNED = dt.date(2027, 3, 31)
TH = {
    "costGreenMaxPct": 5,
    "costAmberMaxPct": 10,
    "scheduleGreenMaxDays": 0,
    "scheduleAmberMaxDays": 14,
    "scopeRedAfterDays": 30,
    "riskAmberMinScore": 8,
    "riskRedMinScore": 15,
}


def act(cast, user, name, data=None):
    cast.project.refresh_from_db()
    acts = {"approve": charter_approve, "reopen": charter_reopen, "submit": charter_submit}
    return acts[name](caller=caller_for(user, cast.project), data=data or {})


def submitted(cast):
    from charter.models import BusinessCase
    from charter.services import sync_mirror

    case, _ = BusinessCase.objects.update_or_create(
        project=cast.project, defaults={**complete_inputs(cast), "approval_status": "Submitted"}
    )
    sync_mirror(cast.project, case)
    cast.project.refresh_from_db()


def agent(client, bearer, user, name, arguments):
    response = client.post(
        f"/api/v1/agent/actions/{name}",
        data=json.dumps({"arguments": arguments}),
        content_type="application/json",
        **bearer(user),
    )
    assert response.status_code == 200, response.content
    return response.json()["result"]


@pytest.fixture(autouse=True)
def governance_group(cast):
    """The cast in the governance group: the portfolio and the assistant open to them."""
    scripting.ensure_group(EVERYONE, members=["lead", "editor", "viewer", "sponsor", "pmo"])
    set_governance_group(EVERYONE)


def portfolio_row(client_for, cast):
    rows = client_for(cast.pmo).get("/api/v1/portfolio").json()["items"]
    return next(r for r in rows if r["projectKey"] == "ALPHA")


def portfolio_csv(client_for, cast) -> dict:
    response = client_for(cast.pmo).get("/portfolio/export/?format=csv")
    header, *body = list(csv.reader(io.StringIO(response.getvalue().decode("utf-8-sig"))))
    return next(dict(zip(header, r, strict=True)) for r in body if r[0] == "ALPHA")


# --- 1. schedule against the approved plan --------------------------------------------------


@pytest.fixture
def replanned(cast):
    """Approved at planned end 2026-12-31; then re-planned to end 2027-03-31 with that
    forecast; and a package added after approval."""
    build = WorkPackageFactory(
        project=cast.project,
        name="Build",
        budget=Decimal(1000),
        planned_start_date=dt.date(2026, 1, 1),
        planned_end_date=END,
    )
    submitted(cast)
    act(cast, cast.sponsor, "approve")
    build.refresh_from_db()
    build.planned_end_date = build.forecast_end_date = REPLANNED
    build.save()
    added = WorkPackageFactory(
        project=cast.project,
        name="Training",
        budget=Decimal(0),
        planned_start_date=dt.date(2026, 6, 1),
        planned_end_date=dt.date(2026, 9, 30),
        forecast_end_date=dt.date(2026, 10, 10),
    )
    return build, added


def test_a_replanned_package_reads_90_days_late_on_every_surface(
    cast, replanned, client_for, client, bearer
):
    build, _ = replanned
    lead = client_for(cast.lead)

    # JSON API: the package's variance is against its baseline, the re-plan beside it.
    listed = lead.get("/api/v1/projects/ALPHA/work-packages").json()["items"]
    packages = {p["name"]: p for p in listed}
    api = packages["Build"]
    assert api["scheduleVarianceDays"] == 90
    assert api["scheduleVarianceBasis"] == BASIS_BASELINE
    assert api["baselineEndDate"] == "2026-12-31"
    assert api["plannedEndDate"] == "2027-03-31"
    detail = lead.get(f"/api/v1/projects/ALPHA/work-packages/{build.pk}").json()
    assert detail["scheduleVarianceDays"] == 90
    # A package added after approval has no baseline, and says so.
    assert packages["Training"]["scheduleVarianceBasis"] == BASIS_NO_BASELINE
    assert packages["Training"]["baselineEndDate"] is None
    assert packages["Training"]["scheduleVarianceDays"] == 10

    # The register page: +90 d, re-planned; the added package has no baseline.
    html = lead.get("/projects/ALPHA/registers/work-packages/").content.decode()
    assert "+90\u00a0d" in html and "re-planned" in html and "no baseline" in html
    detail_html = lead.get(f"/projects/ALPHA/registers/work-packages/{build.pk}/").content
    assert "+90\u00a0d against the baseline end" in detail_html.decode()

    # The timeline (register and status page): the slip column shows +90 d, against the
    # approved plan, and the added package has no baseline bar.
    status_html = lead.get("/projects/ALPHA/status/").content.decode()
    for page in (html, status_html):
        assert "Build (re-planned)" in page and "Training (no baseline)" in page
        assert "+90 d" in page

    # The register export carries the same figure.
    export = lead.get("/projects/ALPHA/registers/work-packages/export/?format=csv&shape=api")
    header, *body = list(csv.reader(io.StringIO(export.getvalue().decode("utf-8-sig"))))
    row = next(
        dict(zip(header, r, strict=True)) for r in body if r[header.index("name")] == "Build"
    )
    assert row["scheduleVarianceDays"] == "90"
    assert row["scheduleVarianceBasis"] == BASIS_BASELINE

    # The project's slip: 90 days, Red, on the status page, the status API, the portfolio.
    status = lead.get("/api/v1/projects/ALPHA/status").json()
    assert status["figures"]["scheduleSlipDays"] == 90
    assert status["derived"]["scheduleRag"] == "Red"
    assert "90 days later than the end of the approved plan" in status_html
    row = portfolio_row(client_for, cast)
    assert row["scheduleSlipDays"] == 90 and row["derived"]["scheduleRag"] == "Red"
    assert portfolio_csv(client_for, cast)["Schedule slip (days)"] == "90"

    # The assistant's actions read the same figures.
    listed = agent(
        client,
        bearer,
        cast.lead,
        "list_register",
        {"projectKey": "ALPHA", "register": "work-packages"},
    )
    items = {i["name"]: i for i in listed["items"]}
    assert items["Build"]["scheduleVarianceDays"] == 90
    assert items["Build"]["scheduleVarianceBasis"] == BASIS_BASELINE
    assert items["Training"]["scheduleVarianceBasis"] == BASIS_NO_BASELINE
    state = agent(client, bearer, cast.lead, "project_status", {"projectKey": "ALPHA"})
    assert state["dimensions"]["schedule"]["figures"]["slipDays"] == 90
    assert state["dimensions"]["schedule"]["derived"] == "Red"
    found = agent(client, bearer, cast.pmo, "find_projects", {"q": "ALPHA"})
    assert found["items"][0]["scheduleSlipDays"] == 90


def test_before_approval_a_package_is_measured_against_its_planned_end(cast, client_for):
    WorkPackageFactory(
        project=cast.project,
        name="Build",
        planned_start_date=dt.date(2026, 1, 1),
        planned_end_date=END,
        forecast_end_date=REPLANNED,
    )
    body = client_for(cast.lead).get("/api/v1/projects/ALPHA/work-packages").json()["items"][0]
    assert body["scheduleVarianceDays"] == 90
    assert body["scheduleVarianceBasis"] == BASIS_PLANNED
    assert body["baselineEndDate"] is None


# --- 2. cost after an amendment --------------------------------------------------------------


@pytest.fixture
def amended(cast):
    """Version 1 approved at 1,666; a budget-only change of +200 approved after it (rolled up);
    an amendment enabled by a Scope+Budget change of +134 folded into the plan; version 2
    approved at 1,800 carrying the +200 (2,000 approved); a Scope+Budget change of +500
    approved and still AwaitingApplication. Forecast 2,112: +5.6% over 2,000, Amber."""
    design = WorkPackageFactory(project=cast.project, name="Design", budget=Decimal(1000))
    WorkPackageFactory(project=cast.project, name="Build", budget=Decimal(666))
    submitted(cast)
    act(cast, cast.sponsor, "approve")
    now = timezone.now()
    ChangeRequestFactory(
        project=cast.project,
        summary="More testing",
        status="Approved",
        dimensions=["Budget"],
        impact_budget=Decimal(200),
        decided_at=now,
    )
    enabling = ChangeRequestFactory(
        project=cast.project,
        summary="New market",
        status="Approved",
        dimensions=["Scope", "Budget"],
        impact_budget=Decimal(134),
        decided_at=now,
    )
    act(cast, cast.editor, "reopen", {"changeId": str(enabling.pk)})
    design.refresh_from_db()
    design.budget = Decimal(1134)
    design.save()
    act(cast, cast.editor, "submit")
    act(cast, cast.sponsor, "approve")
    ChangeRequestFactory(
        project=cast.project,
        summary="Second site",
        status="Approved",
        dimensions=["Scope", "Budget"],
        impact_budget=Decimal(500),
        decided_at=timezone.now(),
    )
    design.refresh_from_db()
    design.budget_forecast = Decimal(1446)
    design.save()
    return enabling


def test_after_an_amendment_the_approved_budget_is_the_v2_plan_on_every_surface(
    cast, amended, client_for, client, bearer
):
    lead = client_for(cast.lead)
    status = lead.get("/api/v1/projects/ALPHA/status").json()
    assert status["figures"]["approvedBudget"] == 2000
    assert Decimal(str(status["figures"]["costOverrunPct"])) == Decimal("5.6")
    html = lead.get("/projects/ALPHA/status/").content.decode()
    assert (
        "is 5.6% over the approved budget of EUR\u00a02,000 (EUR\u00a01,800 plus "
        "EUR\u00a0200 of approved changes), above the Green line at 5%." in html
    )
    row = portfolio_row(client_for, cast)
    assert row["approvedBudget"] == 2000
    assert Decimal(str(row["costOverrunPct"])) == Decimal("5.6")
    assert row["derived"]["costRag"] == "Amber"
    page = client_for(cast.pmo).get("/portfolio/").content.decode()
    assert "5.6 %" in page
    exported = portfolio_csv(client_for, cast)
    assert exported["Cost overrun %"] == "5.6" and exported["Cost RAG"] == "Amber"
    state = agent(client, bearer, cast.lead, "project_status", {"projectKey": "ALPHA"})
    cost = state["dimensions"]["cost"]
    assert cost["derived"] == "Amber" and cost["figures"]["approvedBudget"] == 2000
    found = agent(client, bearer, cast.pmo, "find_projects", {"q": "ALPHA"})
    assert found["items"][0]["approvedBudget"] == 2000
    # The change register's roll-up says the same: the carried +200 on top of the v2 plan.
    changes = lead.get("/projects/ALPHA/registers/changes/").content.decode()
    assert "add EUR\u00a0200 to the budget" in changes


def test_a_variation_decided_after_the_baseline_in_force_is_added(cast, amended, client_for):
    ChangeRequestFactory(
        project=cast.project,
        status="Approved",
        dimensions=["Budget"],
        impact_budget=Decimal(100),
        decided_at=timezone.now(),
    )
    status = client_for(cast.lead).get("/api/v1/projects/ALPHA/status").json()
    assert status["figures"]["approvedBudget"] == 2100
    assert portfolio_row(client_for, cast)["approvedBudget"] == 2100


# --- 3. a sentence never contradicts its colour -----------------------------------------------


@pytest.mark.parametrize(
    ("forecast", "rag", "words"),
    [
        ("1049.99", "Green", "4.999% over the budget (not yet approved) of EUR\u00a01,000, "
         "within the Green line at 5%."),
        ("1050.00", "Green", "5% over the budget (not yet approved) of EUR\u00a01,000, "
         "exactly on the Green line at 5%."),
        ("1050.01", "Amber", "5.001% over the budget (not yet approved) of EUR\u00a01,000, "
         "above the Green line at 5%."),
        ("1099.99", "Amber", "9.999% over the budget (not yet approved) of EUR\u00a01,000, "
         "above the Green line at 5%."),
        ("1100.00", "Amber", "10% over the budget (not yet approved) of EUR\u00a01,000, "
         "above the Green line at 5%, exactly on the Amber line at 10%."),
        ("1100.01", "Red", "10.001% over the budget (not yet approved) of EUR\u00a01,000, "
         "above the Amber line at 10%."),
        ("900", "Green", "10% under the budget (not yet approved) of EUR\u00a01,000."),
    ],
)  # fmt: skip
def test_the_cost_sentence_agrees_with_its_colour_at_every_line(
    cast, client_for, forecast, rag, words
):
    WorkPackageFactory(
        project=cast.project, budget=Decimal(1000), budget_forecast=Decimal(forecast)
    )
    lead = client_for(cast.lead)
    status = lead.get("/api/v1/projects/ALPHA/status").json()
    cost = status["drivers"]["costRag"]
    view = derive_view(cast)
    assert view.dimensions["cost"].rag == rag
    assert view.dimensions["cost"].summary.endswith(words)
    shown = words.split("%")[0]
    assert derive.formatting.percent_figure(abs(view.figures["costOverrunPct"])) == shown
    assert cost["rag"] == rag and cost["summary"].endswith(words)
    assert abs(Decimal(str(status["figures"]["costOverrunPct"]))) == Decimal(shown)
    assert words in lead.get("/projects/ALPHA/status/").content.decode()


def derive_view(cast):
    from status.selectors import view_for

    return view_for(cast.project)


@pytest.mark.parametrize(
    ("eac", "approved", "rag", "shown"),
    [
        ("104.999", "100", "Green", "4.999"),
        ("105", "100", "Green", "5.0"),
        ("105.0001", "100", "Amber", "5.0001"),
        ("110", "100", "Amber", "10.0"),
        ("110.00001", "100", "Red", "10.00001"),
        ("1000", "3", "Red", "33233.3"),
    ],
)
def test_judge_overrun_rounds_only_as_far_as_the_lines_allow(eac, approved, rag, shown):
    judged = derive.judge_overrun(Decimal(eac), Decimal(approved), TH)
    assert judged.rag == rag
    assert judged.shown == Decimal(shown)
    assert f"{judged.shown}" == shown


@pytest.mark.parametrize(
    ("slip", "rag"), [(-1, "Green"), (0, "Green"), (1, "Amber"), (14, "Amber"), (15, "Red")]
)
def test_the_schedule_sentence_agrees_with_its_colour_at_every_line(cast, slip, rag):
    WorkPackageFactory(
        project=cast.project, planned_end_date=END, forecast_end_date=END + dt.timedelta(slip)
    )
    schedule = derive_view(cast).dimensions["schedule"]
    assert schedule.rag == rag and schedule.figures["slipDays"] == slip
    if slip > 0:
        assert f"is {slip} day{'s' if slip != 1 else ''} later than" in schedule.summary
    elif slip < 0:
        assert "1 day earlier than" in schedule.summary
    else:
        assert "is on the end of" in schedule.summary


@pytest.mark.parametrize(
    ("impact", "likelihood", "rag", "words"),
    [
        (1, 7, "Green", "the highest residual score is 7 "),
        (2, 4, "Amber", "1 scores from 8 to below 15."),
        (3, 3, "Amber", "1 scores from 8 to below 15."),
        (2, 7, "Amber", "1 scores from 8 to below 15."),
        (3, 5, "Red", "1 scores 15 or more."),
        (4, 4, "Red", "1 scores 15 or more."),
    ],
)
def test_the_risk_sentence_agrees_with_its_colour_at_every_line(
    cast, impact, likelihood, rag, words
):
    from tests.factories import RiskFactory

    RiskFactory(project=cast.project, impact=impact, likelihood=likelihood)
    risk = derive_view(cast).dimensions["risk"]
    assert risk.rag == rag and words in risk.summary
