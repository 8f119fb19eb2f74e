"""Tolerances and exceptions: the sponsor's tolerances at approval, the project going into
exception when a forecast crosses one (once: one record, one notification per person, one
audit row), going back within recorded, the lead's report, the sponsor's decision (accept the
exception plan through the change path, or kill), the permission matrix, the API and the
periodic check."""

import datetime as dt
import json
from decimal import Decimal

import pytest
from django.utils import timezone

from charter.services import charter_approve
from governance.errors import Conflict, Forbidden, NotFound, ValidationFailed
from governance.models import AuditEntry, Notification, Project
from registers.models import ChangeRequest
from registers.services import work_package_update
from status import exceptions, selectors
from status.models import ProjectException
from tests.factories import WorkPackageFactory

END = dt.date(2026, 6, 30)


@pytest.fixture
def wp(cast):
    return WorkPackageFactory(
        project=cast.project,
        name="Build",
        budget=Decimal("1000"),
        planned_start_date=dt.date(2026, 1, 1),
        planned_end_date=END,
    )


@pytest.fixture
def approved(cast, arrange, as_, wp):
    """Approve with tolerances: 10 days, 10 % of cost."""

    def make(**tolerances):
        arrange("Submitted")
        body = {"toleranceDays": 10, "toleranceCostPercent": 10, **tolerances}
        return charter_approve(caller=as_(cast.sponsor), data=body)

    return make


def slip(cast, as_, wp, days: int):
    wp.refresh_from_db()
    work_package_update(
        caller=as_(cast.lead),
        wp_id=wp.pk,
        data={"forecastEndDate": (END + dt.timedelta(days=days)).isoformat()},
    )


def forecast(cast, as_, wp, amount):
    work_package_update(caller=as_(cast.lead), wp_id=wp.pk, data={"budgetForecast": amount})


REPORT = {
    "cause": "The supplier delivered the platform late.",
    "consequences": "Go-live moves by a month.",
    "options": ["Accept the delay", "Add a second team"],
    "recommendation": "Accept the delay and the extra cost.",
    "planScheduleDays": 30,
    "planBudget": 200,
}


# --- tolerances at approval -----------------------------------------------------------------


def test_approval_stores_the_tolerances_and_answers_them(cast, approved):
    case = approved(toleranceCostAmount="150.50")
    assert case.tolerance_days == 10
    assert case.tolerance_cost_percent == Decimal("10")
    assert case.tolerance_cost_amount == Decimal("150.50")
    assert case.tolerance_benefit_percent is None
    entry = AuditEntry.objects.filter(kind="charter.approved").get()
    assert entry.changes["toleranceDays"] == {"before": None, "after": 10}


@pytest.mark.parametrize(
    "body",
    [
        {"toleranceDays": -1},
        {"toleranceDays": 2**63},
        {"toleranceDays": "NaN"},
        {"toleranceCostPercent": "Infinity"},
        {"toleranceCostPercent": "1e400"},
        {"toleranceCostPercent": 1001},
        {"toleranceCostAmount": -5},
        {"toleranceCostAmount": "\x00"},
    ],
)
def test_hostile_tolerances_are_refused_with_a_message(cast, arrange, as_, body):
    arrange("Submitted")
    with pytest.raises(ValidationFailed) as refused:
        charter_approve(caller=as_(cast.sponsor), data=body)
    (field,) = body
    assert refused.value.fields[field][0]


# --- going into exception, once --------------------------------------------------------------


def test_no_tolerances_behaves_as_today(cast, arrange, as_, wp, django_assert_num_queries):
    arrange("Submitted")
    charter_approve(caller=as_(cast.sponsor), data={})
    slip(cast, as_, wp, 90)
    assert not ProjectException.objects.exists()
    view = selectors.view_for(cast.project)
    state = exceptions.exception_state(view)
    assert state.crossed == () and not state.has_tolerances
    with django_assert_num_queries(0):
        exceptions.track([view])


def test_within_tolerance_is_not_an_exception(cast, approved, as_, wp):
    approved()
    slip(cast, as_, wp, 10)  # on the line: within
    forecast(cast, as_, wp, "1100")  # exactly 10 %: within
    assert not ProjectException.objects.exists()


def test_crossing_opens_once_notifies_once_and_audits(cast, approved, as_, wp):
    approved()
    slip(cast, as_, wp, 11)
    record = ProjectException.objects.get()
    assert record.state == "Open"
    assert record.crossed == [
        {
            "tolerance": "time",
            "figure": 11,
            "limit": 10,
            "summary": "11 days late, beyond the time tolerance of 10 days.",
        }
    ]
    # Further saves beyond tolerance: still one record, no second notification.
    slip(cast, as_, wp, 20)
    forecast(cast, as_, wp, "2000")
    assert ProjectException.objects.count() == 1
    notes = Notification.objects.filter(kind="project_exception")
    assert sorted(n.recipient_account_id for n in notes) == sorted(
        [cast.lead.account_id, cast.sponsor.account_id]
    )
    assert AuditEntry.objects.filter(kind="exception.opened").count() == 1
    answer = exceptions.project_exception(cast.project)
    assert answer["inException"] is True
    assert {c["tolerance"] for c in answer["crossed"]} == {"time", "costPercent"}


def test_cost_amount_tolerance(cast, approved, as_, wp):
    approved(toleranceCostPercent=None, toleranceCostAmount=50)
    forecast(cast, as_, wp, "1050")
    assert not ProjectException.objects.exists()
    forecast(cast, as_, wp, "1050.01")
    record = ProjectException.objects.get()
    assert record.crossed[0]["tolerance"] == "costAmount"
    assert record.crossed[0]["figure"] == 50.01


def test_back_within_is_recorded_and_closes_nothing(cast, approved, as_, wp):
    approved()
    slip(cast, as_, wp, 30)
    slip(cast, as_, wp, 5)
    record = ProjectException.objects.get()
    assert record.state == "Open" and record.within is True
    assert [e["kind"] for e in record.events] == ["opened", "within"]
    assert exceptions.project_exception(cast.project)["inException"] is True
    slip(cast, as_, wp, 40)
    record.refresh_from_db()
    assert record.within is False
    assert [e["kind"] for e in record.events] == ["opened", "within", "beyond"]
    assert AuditEntry.objects.filter(kind="exception.within").count() == 1


def test_the_periodic_check_catches_a_crossing_made_by_time(cast, approved, as_, wp):
    approved()
    slip(cast, as_, wp, 5)
    assert not ProjectException.objects.exists()
    # No write: a day later than the stored figures knew (here: the tolerance tightened
    # directly in the database, as the date moving on would).
    cast.project.business_case.__class__.objects.filter(project=cast.project).update(
        tolerance_days=2
    )
    later = timezone.now() + dt.timedelta(days=1)
    assert exceptions.check_all(later) == 1
    assert exceptions.check_all(later) == 1
    assert ProjectException.objects.count() == 1
    assert Notification.objects.filter(kind="project_exception").count() == 2


# --- report and decision ----------------------------------------------------------------------


@pytest.fixture
def in_exception(cast, approved, as_, wp):
    approved()
    slip(cast, as_, wp, 30)
    return ProjectException.objects.get()


def test_the_lead_reports_and_the_plan_becomes_a_change_to_the_sponsor(cast, as_, in_exception):
    record = exceptions.exception_report(caller=as_(cast.lead), data=REPORT)
    assert record.state == "Reported"
    assert record.options == ["Accept the delay", "Add a second team"]
    change = record.change_request
    assert change.status == "Proposed"
    assert change.impact_schedule_days == 30 and change.impact_budget == Decimal("200")
    assert change.approver_account_id == cast.sponsor.account_id
    # Rewritten: the earlier plan's change is withdrawn, a new one raised.
    again = exceptions.exception_report(
        caller=as_(cast.lead), data={**REPORT, "planScheduleDays": 40}
    )
    change.refresh_from_db()
    assert change.status == "Withdrawn"
    assert again.change_request.impact_schedule_days == 40


@pytest.mark.parametrize(
    "body, field",
    [
        ({**REPORT, "options": []}, "options"),
        ({**REPORT, "options": ["ok", ""]}, "options[1]"),
        ({**REPORT, "cause": ""}, "cause"),
        ({**REPORT, "recommendation": "\ud800"}, "recommendation"),
        ({**REPORT, "planBudget": "NaN"}, "planBudget"),
        ({**REPORT, "planScheduleDays": 10**400}, "planScheduleDays"),
    ],
)
def test_a_bad_report_is_refused_and_nothing_changes(cast, as_, in_exception, body, field):
    with pytest.raises(ValidationFailed) as refused:
        exceptions.exception_report(caller=as_(cast.lead), data=body)
    assert field in refused.value.fields
    in_exception.refresh_from_db()
    assert in_exception.state == "Open" and in_exception.cause == ""


def test_accepting_the_plan_approves_its_change_and_the_project_comes_back(cast, as_, in_exception):
    exceptions.exception_report(caller=as_(cast.lead), data=REPORT)
    record = exceptions.exception_decide(
        caller=as_(cast.sponsor), data={"decision": "AcceptPlan", "comment": "Go on."}
    )
    assert record.state == "Decided" and record.decision == "AcceptPlan"
    change = ChangeRequest.objects.get(pk=record.change_request_id)
    assert change.status == "Approved"
    # The plan's 30 days are an approved variation: the slip is 0, within tolerance.
    view = selectors.view_for(cast.project)
    assert view.dimensions["schedule"].figures["slipDays"] == 0
    assert exceptions.project_exception(cast.project, view)["inException"] is False
    assert "within" in [e["kind"] for e in record.events]
    assert AuditEntry.objects.filter(kind="exception.decided").count() == 1


def test_killing_takes_the_kill_act(cast, as_, in_exception):
    exceptions.exception_report(caller=as_(cast.lead), data=REPORT)
    with pytest.raises(ValidationFailed):
        exceptions.exception_decide(caller=as_(cast.sponsor), data={"decision": "Kill"})
    record = exceptions.exception_decide(
        caller=as_(cast.sponsor), data={"decision": "Kill", "comment": "No longer viable."}
    )
    assert record.decision == "Kill"
    case = cast.project.business_case
    case.refresh_from_db()
    assert case.approval_status == "Archived" and case.terminal_disposition == "killed"
    assert ChangeRequest.objects.get(pk=record.change_request_id).status == "Withdrawn"


def test_decision_waits_for_the_report(cast, as_, in_exception):
    with pytest.raises(Conflict):
        exceptions.exception_decide(caller=as_(cast.sponsor), data={"decision": "AcceptPlan"})


def test_permissions(cast, as_, in_exception):
    for who in (cast.viewer, cast.sponsor, cast.editor):
        with pytest.raises(Forbidden):
            exceptions.exception_report(caller=as_(who), data=REPORT)
    exceptions.exception_report(caller=as_(cast.lead), data=REPORT)
    for who in (cast.viewer, cast.lead, cast.editor):
        with pytest.raises(Forbidden):
            exceptions.exception_decide(caller=as_(who), data={"decision": "AcceptPlan"})


def test_no_open_exception_is_not_found(cast, approved, as_):
    approved()
    with pytest.raises(NotFound):
        exceptions.exception_report(caller=as_(cast.lead), data=REPORT)


# --- API ----------------------------------------------------------------------------------------


def _put(client, headers, path, body):
    return client.put(path, data=json.dumps(body), content_type="application/json", **headers)


def _post(client, headers, path, body):
    return client.post(path, data=json.dumps(body), content_type="application/json", **headers)


def test_api_read_report_and_decide(cast, client, bearer, in_exception):
    from config.api import api
    from tests.governance.test_api_document import conforms

    document = json.loads(json.dumps(api.get_openapi_schema()))
    base = "/api/v1/projects/ALPHA"
    answer = conforms(
        document,
        client.get(f"{base}/exception", **bearer(cast.viewer)),
        "get",
        "/projects/{key}/exception",
    )
    assert answer["inException"] is True
    assert answer["tolerances"]["toleranceDays"] == 10
    assert answer["exception"]["state"] == "Open"
    assert answer["exception"]["ageDays"] == 0
    assert client.get(f"{base}/exception", **bearer(cast.outsider)).status_code == 404
    refused = _put(client, bearer(cast.viewer), f"{base}/exception/report", REPORT)
    assert refused.status_code == 403
    bad = _put(client, bearer(cast.lead), f"{base}/exception/report", {**REPORT, "options": 3})
    assert bad.status_code == 422
    done = _put(client, bearer(cast.lead), f"{base}/exception/report", REPORT)
    assert done.status_code == 200, done.content
    conforms(document, done, "put", "/projects/{key}/exception/report")
    assert done.json()["exception"]["report"]["recommendation"] == REPORT["recommendation"]
    assert (
        _post(
            client, bearer(cast.lead), f"{base}/exception/decision", {"decision": "AcceptPlan"}
        ).status_code
        == 403
    )
    decided = _post(
        client, bearer(cast.sponsor), f"{base}/exception/decision", {"decision": "AcceptPlan"}
    )
    assert decided.status_code == 200, decided.content
    assert decided.json()["inException"] is False
    conforms(document, decided, "post", "/projects/{key}/exception/decision")
    history = conforms(
        document,
        client.get(f"{base}/exceptions", **bearer(cast.viewer)),
        "get",
        "/projects/{key}/exceptions",
    )["items"]
    assert [h["decision"] for h in history] == ["AcceptPlan"]


# --- pages and portfolio ----------------------------------------------------------------------


def test_the_approval_form_prefills_the_site_defaults(cast, arrange, client_for):
    from governance.models import SiteSettings

    site = SiteSettings.load()
    site.tolerance_days_default = 15
    site.tolerance_cost_percent_default = Decimal("7.5")
    site.save()
    arrange("Submitted")
    page = client_for(cast.sponsor).get("/projects/ALPHA/charter/").content.decode()
    assert 'name="toleranceDays" inputmode="decimal" value="15"' in page
    assert 'name="toleranceCostPercent" inputmode="decimal" value="7.50"' in page
    assert 'name="toleranceCostAmount" inputmode="decimal" value=""' in page


def test_site_settings_answer_and_refuse_tolerance_defaults(cast, client, bearer):
    headers = bearer(cast.site_admin)
    sent = client.patch(
        "/api/v1/site-settings",
        data=json.dumps({"toleranceDaysDefault": 20, "toleranceCostPercentDefault": "NaN"}),
        content_type="application/json",
        **headers,
    )
    assert sent.status_code == 422
    assert "toleranceCostPercentDefault" in sent.json()["error"]["fields"]
    sent = client.patch(
        "/api/v1/site-settings",
        data=json.dumps({"toleranceDaysDefault": 20}),
        content_type="application/json",
        **headers,
    )
    assert sent.status_code == 200, sent.content
    assert sent.json()["toleranceDaysDefault"] == 20


def test_banner_exception_page_and_forms(cast, client_for, as_, in_exception):
    viewer_page = client_for(cast.viewer).get("/projects/ALPHA/status/").content.decode()
    assert "In exception since" in viewer_page
    assert "/projects/ALPHA/status/exception/" in viewer_page
    page = client_for(cast.viewer).get("/projects/ALPHA/status/exception/").content.decode()
    assert "30 days late, beyond the time tolerance of 10 days." in page
    assert "Write the exception report" not in page
    lead = client_for(cast.lead)
    assert (
        "Write the exception report"
        in lead.get("/projects/ALPHA/status/exception/").content.decode()
    )
    bad = lead.post("/projects/ALPHA/status/exception/report/", {"cause": "x", "options": ""})
    assert bad.status_code == 422
    assert "Give at least one option" in bad.content.decode()
    form = {**REPORT, "options": "Accept the delay\nAdd a second team"}
    assert lead.post("/projects/ALPHA/status/exception/report/", form).status_code == 302
    sponsor = client_for(cast.sponsor)
    shown = sponsor.get("/projects/ALPHA/status/exception/").content.decode()
    assert "Accept the exception plan" in shown and "Add a second team" in shown
    done = sponsor.post("/projects/ALPHA/status/exception/decision/", {"decision": "AcceptPlan"})
    assert done.status_code == 302
    after = sponsor.get("/projects/ALPHA/status/exception/").content.decode()
    assert "This project is not in exception." in after
    assert "Decided and settled exceptions" in after


def test_portfolio_flag_age_and_filter(cast, client_for, in_exception):
    ProjectException.objects.filter(pk=in_exception.pk).update(
        opened_at=timezone.now() - dt.timedelta(days=3)
    )
    cast.project.__class__.objects.filter(pk=cast.project.pk).update(
        exception_opened_at=timezone.now() - dt.timedelta(days=3)
    )
    client = client_for(cast.site_admin)
    rows = client.get("/api/v1/portfolio").json()["items"]
    by_key = {row["projectKey"]: row for row in rows}
    assert by_key["ALPHA"]["inException"] is True
    assert by_key["ALPHA"]["exceptionAgeDays"] == 3
    assert all(row["inException"] is False for key, row in by_key.items() if key != "ALPHA")
    assert [
        r["projectKey"] for r in client.get("/api/v1/portfolio?exception=1").json()["items"]
    ] == ["ALPHA"]
    page = client.get("/portfolio/?exception=1").content.decode()
    assert "In exception</span> 3 days" in page


# --- agent --------------------------------------------------------------------------------------


def _agent(client, name, arguments):
    return client.post(
        f"/api/v1/agent/actions/{name}",
        data=json.dumps({"arguments": arguments}),
        content_type="application/json",
    )


def test_agent_reads_the_exception_and_the_lead_reports(cast, client_for, in_exception):
    from governance.tracker.local import scripting
    from tests.agent.conftest import EVERYONE, use_group

    scripting.ensure_group(EVERYONE, members=["lead", "viewer"])
    use_group(EVERYONE)
    viewer = client_for(cast.viewer)
    read = _agent(viewer, "project_exception", {"projectKey": "ALPHA"})
    assert read.status_code == 200, read.content
    body = read.json()
    body = body.get("result", body)
    assert body["inException"] is True
    assert body["crossed"][0]["tolerance"] == "time"
    status = _agent(viewer, "project_status", {"projectKey": "ALPHA"}).json()
    status = status.get("result", status)
    assert status["exception"]["inException"] is True
    assert (
        _agent(viewer, "write_exception_report", {"projectKey": "ALPHA", **REPORT}).status_code
        == 403
    )
    written = _agent(
        client_for(cast.lead), "write_exception_report", {"projectKey": "ALPHA", **REPORT}
    )
    assert written.status_code == 200, written.content
    in_exception.refresh_from_db()
    assert in_exception.state == "Reported"
    assert in_exception.recommendation == REPORT["recommendation"]


def test_the_demo_has_a_project_in_exception_reported_and_undecided(demo):
    record = ProjectException.objects.get()
    assert record.project.key == "BRIDGE"
    assert record.state == "Reported" and record.decision == ""
    assert exceptions.age_days(record.opened_at) == 9
    assert record.project.exception_opened_at == record.opened_at
    assert {c["tolerance"] for c in record.crossed} == {"time", "costPercent"}
    assert ChangeRequest.objects.get(pk=record.change_request_id).status == "Proposed"


def test_the_portfolio_export_carries_the_days_in_exception(cast, client_for, in_exception):
    import csv
    import io

    response = client_for(cast.site_admin).get("/portfolio/export/?format=csv")
    header, *body = list(csv.reader(io.StringIO(response.getvalue().decode("utf-8-sig"))))
    alpha = next(row for row in body if row[0] == "ALPHA")
    assert alpha[header.index("In exception (days open)")] == "0"


def test_tracking_reads_once_and_writes_only_what_moved(
    cast, approved, as_, wp, django_assert_num_queries
):
    approved()
    slip(cast, as_, wp, 30)
    view = selectors.view_for(cast.project)
    # Still beyond, already open: one read of the undecided exceptions, no write.
    with django_assert_num_queries(1):
        exceptions.track([view, view])


def test_a_second_writer_opening_the_same_exception_keeps_the_first(cast, as_, in_exception):
    """Two saves in parallel may both read no open exception and both open one: the unique
    constraint refuses the second, which must then keep the first (no error for the writer
    whose register save started it, no second notification or audit row)."""
    view = selectors.view_for(cast.project)
    state = exceptions.exception_state(view)
    assert state.beyond
    record = exceptions._open(cast.project, state, timezone.now())
    assert record.pk == in_exception.pk
    assert ProjectException.objects.count() == 1
    assert Notification.objects.filter(kind="project_exception").count() == 2
    assert AuditEntry.objects.filter(kind="exception.opened").count() == 1


def test_tracking_does_not_write_over_a_report_saved_meanwhile(
    cast, as_, wp, in_exception, monkeypatch
):
    """`track` reads the undecided exceptions, then writes what moved: a report saved between
    the read and the write (another request) keeps its event and its fields."""
    slip(cast, as_, wp, 5)  # back within
    ProjectException.objects.filter(pk=in_exception.pk).update(within=False)
    view = selectors.view_for(cast.project)
    real_state = exceptions.exception_state

    def state_after_a_report(v):
        monkeypatch.setattr(exceptions, "exception_state", real_state)
        exceptions.exception_report(caller=as_(cast.lead), data=REPORT)
        return real_state(v)

    monkeypatch.setattr(exceptions, "exception_state", state_after_a_report)
    exceptions.track([view])
    record = ProjectException.objects.get()
    assert record.state == "Reported" and record.cause == REPORT["cause"]
    assert record.within is True
    # The report's change request moved the figures once more (noted then, inside the
    # report); the stale read's write is not made over it.
    assert [e["kind"] for e in record.events] == ["opened", "within", "within", "reported"]


def test_the_document_declares_the_exception_record_as_it_is_answered(cast, as_, in_exception):
    """The record's schema names every key `to_dict` answers as required, its states and
    decisions as enums, its moments as date-times and its crossings as the state's are."""
    from config.api import api

    schemas = json.loads(json.dumps(api.get_openapi_schema()))["components"]["schemas"]
    record, state = schemas["ProjectException"], schemas["ProjectExceptionView"]
    properties = record["properties"]
    assert sorted(record["required"]) == sorted(exceptions.to_dict(in_exception))
    assert properties["state"]["enum"] == ["Open", "Reported", "Decided", "Settled"]
    assert properties["settledByAct"]["enum"] == ["kill", "archive", "close", None]
    assert properties["settledAt"]["format"] == "date-time"
    assert properties["decision"]["enum"] == ["AcceptPlan", "Kill", None]
    assert properties["decidedAt"]["format"] == "date-time"
    assert properties["crossed"]["items"] == state["properties"]["crossed"]["items"]


def test_the_days_late_and_the_days_open_read_the_same_on_every_surface(
    cast, client, client_for, bearer, as_, in_exception
):
    """One figure, one function: the time tolerance's figure is the status page's slip (the
    status API, its driver and the exception API), and the days open of the exception are
    the same on the exception API, the exception page, the portfolio page and its export."""
    import csv
    import io

    exceptions.exception_report(caller=as_(cast.lead), data=REPORT)
    ProjectException.objects.update(opened_at=timezone.now() - dt.timedelta(days=4))
    Project.objects.filter(pk=cast.project.pk).update(
        exception_opened_at=timezone.now() - dt.timedelta(days=4)
    )
    auth = bearer(cast.viewer)
    status = client.get("/api/v1/projects/ALPHA/status", **auth).json()
    answer = client.get("/api/v1/projects/ALPHA/exception", **auth).json()
    time = next(c for c in answer["crossed"] if c["tolerance"] == "time")
    slip = status["figures"]["scheduleSlipDays"]
    assert slip == 30
    assert time["figure"] == slip == status["drivers"]["scheduleRag"]["figures"]["slipDays"]
    assert answer["exception"]["ageDays"] == 4
    page = client_for(cast.viewer).get("/projects/ALPHA/status/exception/").content.decode()
    assert f"{slip} days late" in page and "(4 days ago)" in page
    portfolio = client_for(cast.site_admin).get("/portfolio/?exception=1").content.decode()
    assert "In exception</span> 4 days" in portfolio
    export = client_for(cast.site_admin).get("/portfolio/export/?format=csv")
    header, *body = list(csv.reader(io.StringIO(export.getvalue().decode("utf-8-sig"))))
    alpha = next(row for row in body if row[0] == "ALPHA")
    assert alpha[header.index("In exception (days open)")] == "4"
