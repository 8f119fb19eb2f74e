"""The benefit forecast (management by exception, the benefit tolerance): the approved benefit
frozen into the plan baseline at approval, the financial case's total benefit now, the
shortfall in percent (one function, `status.derive.derive_benefit`), its comparison with the
benefit tolerance (`status.exceptions.exception_state`), an exception opened on it, and the
same shortfall on every surface."""

import datetime as dt
import json
from decimal import Decimal

import pytest

from charter import finance
from charter.models import BusinessCase
from charter.services import charter_approve
from governance.models import Project
from status import derive, exceptions, selectors
from status.models import ProjectException, ProjectStatus
from status.specs import CROSSING_SCHEMA
from tests.factories import WorkPackageFactory

pytestmark = pytest.mark.django_db  # amounts are written in the site's currency


def builtin(*benefits) -> dict:
    lines = [{"year": year, "cost": 0, "benefit": b} for year, b in enumerate(benefits)]
    return {"mode": "builtin", "builtin": {**finance.empty_builtin(), "lines": lines}}


def attached(total) -> dict:
    return {"mode": "attached", "attached": {**finance.empty_attached(), "totalBenefit": total}}


NONE = {"mode": "none", "builtin": builtin(500)["builtin"], "attached": attached(9)["attached"]}


# --- the one reader of a financial case's total benefit ---------------------------------------


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (builtin(400000, 600000, 400000), Decimal("1400000")),
        (builtin(100.25, 0.5), Decimal("100.75")),
        (attached(1200000), Decimal("1200000")),
        (attached(None), None),
        (NONE, None),
        ({"mode": "spreadsheet"}, None),  # an invalid mode reads as none
        (builtin(), None),  # no lines: no figure
        (None, None),
        ({}, None),
    ],
)
def test_the_total_benefit_a_financial_case_states(stored, expected):
    assert finance.total_benefit(stored) == expected
    if stored and finance.mode(stored.get("mode")) == "builtin":
        # The same figure the builtin model's computed metrics show.
        computed = finance.present(stored)["builtin"]["computed"]["totalBenefit"]
        assert (None if computed is None else Decimal(str(computed))) == expected


# --- the figure -------------------------------------------------------------------------------


def facts(financial_case, *, approved=None, recorded=True, baseline=True, tolerance=None):
    project = Project(key="BEN", name="Benefit")
    case = BusinessCase(
        project=project, financial_case=financial_case, tolerance_benefit_percent=tolerance
    )
    return derive.ProjectFacts(
        project=project,
        status=ProjectStatus(project=project),
        case=case,
        has_plan_baseline=baseline,
        plan_baseline_version=1 if baseline else None,
        plan_baseline_benefit_recorded=recorded and baseline,
        plan_baseline_benefit=None if approved is None else Decimal(str(approved)),
    )


@pytest.mark.parametrize(
    ("arranged", "approved", "forecast", "shortfall", "words"),
    [
        (
            facts(builtin(400000, 400000, 400000), approved=1400000),
            Decimal("1400000"),
            Decimal("1200000"),
            Decimal("14.3"),
            "Forecast benefit EUR\u00a01,200,000 is 14.3% under the approved EUR\u00a01,400,000.",
        ),
        (
            facts(attached(1225000), approved=1400000),
            Decimal("1400000"),
            Decimal("1225000"),
            Decimal("12.5"),
            "Forecast benefit EUR\u00a01,225,000 is 12.5% under the approved EUR\u00a01,400,000.",
        ),
        (
            facts(attached(1500000), approved=1200000),
            Decimal("1200000"),
            Decimal("1500000"),
            Decimal("-25.0"),
            "Forecast benefit EUR\u00a01,500,000 is 25% over the approved EUR\u00a01,200,000.",
        ),
        (
            facts(attached(1000), approved=1000),
            Decimal("1000"),
            Decimal("1000"),
            Decimal("0.0"),
            "Forecast benefit EUR\u00a01,000 matches the approved EUR\u00a01,000.",
        ),
        (
            facts(NONE, approved=1000),
            Decimal("1000"),
            None,
            None,
            "The financial case states no total benefit now: nothing to compare with the "
            "approved EUR\u00a01,000.",
        ),
        (
            facts(attached(800), approved=None),
            None,
            Decimal("800"),
            None,
            "Forecast benefit EUR\u00a0800 is not compared: the financial case stated no total "
            "benefit at approval.",
        ),
        (
            facts(attached(800), recorded=False),
            None,
            Decimal("800"),
            None,
            "Forecast benefit EUR\u00a0800 is not compared: the approved benefit was not "
            "recorded at approval.",
        ),
        (
            facts(attached(800), approved=0),
            Decimal("0"),
            Decimal("800"),
            None,
            "Forecast benefit EUR\u00a0800 is not compared: the approved benefit is EUR\u00a00.",
        ),
        (
            facts(attached(800), baseline=False),
            None,
            Decimal("800"),
            None,
            "Forecast benefit EUR\u00a0800: no approved plan baseline records an approved "
            "benefit to compare it with.",
        ),
        (facts(NONE, baseline=False), None, None, None, ""),
    ],
)
def test_the_benefit_figure(arranged, approved, forecast, shortfall, words):
    body = derive.derive_benefit(arranged)
    assert body["approvedBenefit"] == approved
    assert body["forecastBenefit"] == forecast
    assert body["benefitShortfallPct"] == shortfall
    if shortfall is not None:
        assert str(body["benefitShortfallPct"]) == str(shortfall)  # its places too
    assert body["summary"] == words


def test_the_shortfall_prints_enough_places_never_to_contradict_the_tolerance():
    """10.0001 % under on a 10 % tolerance is not printed "10.0 %": it is beyond."""
    body = derive.derive_benefit(facts(attached(899999), approved=1000000, tolerance=10))
    assert body["benefitShortfallPct"] == Decimal("10.0001")
    at = derive.derive_benefit(facts(attached(900000), approved=1000000, tolerance=10))
    assert at["benefitShortfallPct"] == Decimal("10.0")
    # A shortfall too small for one place still reads as a shortfall, not as none.
    tiny = derive.derive_benefit(facts(attached(999999), approved=1000000))
    assert tiny["benefitShortfallPct"] == Decimal("0.0001")


# --- the crossing -----------------------------------------------------------------------------


def view_of(financial_case, approved, tolerance):
    arranged = facts(financial_case, approved=approved, tolerance=tolerance)
    arranged.project.approval_status = "Approved"
    return derive.derive(
        arranged,
        thresholds={
            "costGreenMaxPct": 5,
            "costAmberMaxPct": 10,
            "scheduleGreenMaxDays": 0,
            "scheduleAmberMaxDays": 14,
            "scopeRedAfterDays": 30,
            "riskAmberMinScore": 8,
            "riskRedMinScore": 15,
        },
        br_cadence_default="Quarterly",
    )


def test_exactly_on_the_tolerance_is_within():
    state = exceptions.exception_state(view_of(attached(900000), 1000000, 10))
    assert state.has_tolerances and state.crossed == ()


def test_just_over_the_tolerance_is_beyond():
    state = exceptions.exception_state(view_of(attached(899999), 1000000, 10))
    assert [c.as_dict() for c in state.crossed] == [
        {
            "tolerance": "benefitPercent",
            "figure": 10.0001,
            "limit": 10,
            "summary": "Forecast benefit EUR\u00a0899,999 is 10.0001% under the approved "
            "benefit EUR\u00a01,000,000, beyond the benefit tolerance of 10%.",
        }
    ]
    assert "benefitPercent" in CROSSING_SCHEMA["properties"]["tolerance"]["enum"]


def test_no_benefit_tolerance_compares_nothing():
    view = view_of(attached(100), 1000000, None)
    assert view.benefit["benefitShortfallPct"] == Decimal("100.0")
    assert exceptions.exception_state(view).crossed == ()


def test_no_approved_benefit_or_none_now_compares_nothing():
    assert exceptions.exception_state(view_of(attached(1), None, 10)).crossed == ()
    assert exceptions.exception_state(view_of(NONE, 1000000, 10)).crossed == ()
    assert exceptions.exception_state(view_of(attached(1), 0, 10)).crossed == ()


# --- through the real acts ------------------------------------------------------------------


@pytest.fixture
def wp(cast):
    return WorkPackageFactory(
        project=cast.project,
        name="Build",
        budget=Decimal("1000"),
        planned_start_date=dt.date(2026, 1, 1),
        planned_end_date=dt.date(2026, 6, 30),
    )


@pytest.fixture
def approved(cast, arrange, as_, wp):
    """The business case approved with a builtin financial case of 1,400,000 of benefit and a
    10 % benefit tolerance."""
    arrange("Submitted", financial_case=builtin(400000, 500000, 500000))
    return charter_approve(caller=as_(cast.sponsor), data={"toleranceBenefitPercent": 10})


def revise(cast, financial_case):
    """The financial case revised (as an amendment does): a fact of the project's status, so
    the stored health is derived again and the exception tracked."""
    case = BusinessCase.objects.get(project=cast.project)
    case.financial_case = financial_case
    case.save()


def test_approval_freezes_the_total_benefit_into_the_plan_baseline(cast, approved):
    assert approved.plan_baseline["totalBenefit"] == 1400000
    assert approved.approved_versions.get().plan_baseline["totalBenefit"] == 1400000


@pytest.mark.parametrize(
    ("stored", "expected"), [(attached(750.5), 750.5), (NONE, None), (builtin(), None)]
)
def test_approval_freezes_the_attached_figure_or_null(cast, arrange, as_, wp, stored, expected):
    arrange("Submitted", financial_case=stored)
    case = charter_approve(caller=as_(cast.sponsor), data={})
    assert "totalBenefit" in case.plan_baseline
    assert case.plan_baseline["totalBenefit"] == expected


def test_a_baseline_approved_before_the_benefit_was_frozen_is_not_compared(cast, approved):
    case = BusinessCase.objects.get(project=cast.project)
    plan = dict(case.plan_baseline)
    del plan["totalBenefit"]
    BusinessCase.objects.filter(pk=case.pk).update(plan_baseline=plan)
    revise(cast, builtin(1))
    view = selectors.view_for(cast.project)
    assert view.benefit["approvedRecorded"] is False
    assert view.benefit["benefitShortfallPct"] is None
    assert "the approved benefit was not recorded at approval" in view.benefit["summary"]
    assert exceptions.exception_state(view).crossed == ()
    assert not ProjectException.objects.exists()


def test_a_benefit_shortfall_opens_the_exception(cast, approved):
    revise(cast, builtin(400000, 400000, 460000))  # 1,260,000: exactly 10 % under
    assert not ProjectException.objects.exists()
    revise(cast, builtin(400000, 400000, 459999))  # just over 10 % under
    record = ProjectException.objects.get()
    assert record.state == "Open"
    assert [c["tolerance"] for c in record.crossed] == ["benefitPercent"]
    assert record.crossed[0]["limit"] == 10
    assert record.crossed[0]["figure"] == 10.0001
    # The portfolio reads the same exception.
    cast.project.refresh_from_db()
    assert cast.project.exception_opened_at is not None


def test_the_shortfall_reads_the_same_on_every_surface(
    cast, approved, client, client_for, bearer, as_
):
    """One figure, one function: the status API's shortfall, the status page's sentence, the
    exception API's crossed figure and the assistant's project status are the same."""
    from governance.tracker.local import scripting
    from tests.agent.conftest import EVERYONE, use_group

    revise(cast, attached(1200000))  # 14.29 % under the approved 1,400,000
    auth = bearer(cast.viewer)
    status = client.get("/api/v1/projects/ALPHA/status", **auth).json()
    answer = client.get("/api/v1/projects/ALPHA/exception", **auth).json()
    shortfall = status["benefit"]["benefitShortfallPct"]
    assert shortfall == 14.3
    assert status["benefit"]["approvedBenefit"] == 1400000
    assert status["benefit"]["forecastBenefit"] == 1200000
    crossed = next(c for c in answer["crossed"] if c["tolerance"] == "benefitPercent")
    assert crossed["figure"] == shortfall
    page = client_for(cast.viewer).get("/projects/ALPHA/status/").content.decode()
    assert (
        "Forecast benefit EUR\u00a01,200,000 is 14.3% under the approved EUR\u00a01,400,000."
        in page
    )
    exception_page = (
        client_for(cast.viewer).get("/projects/ALPHA/status/exception/").content.decode()
    )
    assert "14.3% under the approved benefit" in exception_page
    scripting.ensure_group(EVERYONE, members=["viewer"])
    use_group(EVERYONE)
    read = client_for(cast.viewer).post(
        "/api/v1/agent/actions/project_status",
        data=json.dumps({"arguments": {"projectKey": "ALPHA"}}),
        content_type="application/json",
    )
    assert read.status_code == 200, read.content
    agent = read.json().get("result", read.json())
    assert agent["benefit"]["benefitShortfallPct"] == shortfall
