"""The status page (HTML + HTMX): cards with drivers the same as the API, the edit form with
errors and conflicts, the checklist, reports and past reports as they were, query counts."""

import datetime as dt
import json
import uuid
from decimal import Decimal

import pytest
from django.core.cache import cache
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from governance import permissions, signals
from status import services
from status.models import ProjectStatus, StatusReport
from tests.factories import (
    ChangeRequestFactory,
    DecisionFactory,
    RiskFactory,
    WorkPackageFactory,
)
from tests.html import inline_problems

PAGE = "/projects/ALPHA/status/"
EDIT = "/projects/ALPHA/status/edit/"


def lead_caller(cast):
    return permissions.caller_for(cast.lead, cast.project)


def test_the_page_shows_each_dimension_with_the_drivers_the_api_sends(cast, client_for):
    WorkPackageFactory(
        project=cast.project, name="Build", budget=Decimal(1000), budget_forecast=Decimal(1200)
    )
    RiskFactory(project=cast.project, title="Vendor exit", impact=4, likelihood=4)
    client = client_for(cast.viewer)
    html = client.get(PAGE).content.decode()
    api = client.get("/api/v1/projects/ALPHA/status").json()
    for key in ("costRag", "scheduleRag", "scopeRag", "riskRag"):
        assert api["drivers"][key]["summary"] in html
        for driver in api["drivers"][key]["drivers"]:
            assert driver["text"] in html
    assert "The forecast (EAC) EUR\u00a01,200 is 20% over the budget (not yet approved)" in html
    assert "Vendor exit: inherent score 16 (no residual assessed)." in html
    assert "Update status" not in html
    assert "Start a report" not in html
    assert "Dismiss" not in html


def test_editors_get_the_controls(cast, client_for):
    html = client_for(cast.editor).get(PAGE).content.decode()
    for control in ("Update status", "Start a report", "Dismiss"):
        assert control in html
    # Initiation is acknowledged as complete only once it has started (the case approved).
    assert "Acknowledge initiation" not in html and "or when you acknowledge it" not in html
    signals.charter_approved.send(sender=None, project=cast.project, at=timezone.now())
    html = client_for(cast.editor).get(PAGE).content.decode()
    assert "Acknowledge initiation" in html and "or when you acknowledge it" in html


def test_saving_the_form_updates_the_status(cast, client_for):
    client = client_for(cast.lead)
    form = client.get(EDIT).content.decode()
    assert 'name="overallRag"' in form and 'name="revision" value="1"' in form
    response = client.post(
        EDIT,
        {
            "revision": "1",
            "overallRag": "Amber",
            "overallReason": "x" * 150,
            "costRagOverride": "",
            "scheduleRagOverride": "Red",
            "keyMessages": "On track",
            "keyRisks": "",
            "decisionsRequired": "",
            "revisedForecast": "",
        },
    )
    assert response.status_code == 302
    status = ProjectStatus.objects.get()
    assert status.overall_rag == "Amber"
    assert status.overall_reason == "x" * 120
    assert status.schedule_rag_override == "Red"
    assert status.cost_rag_override is None
    assert status.structured_commentary["keyMessages"] == "On track"
    assert "projectMetrics" not in form  # the API's, not the page's


def test_the_page_keeps_the_project_metrics_the_api_stored(cast, client_for):
    services.status_update(caller=lead_caller(cast), data={"projectMetrics": {"velocity": 12}})
    client = client_for(cast.lead)
    answer = client.post(
        EDIT, {"revision": "2", "overallRag": "Green", "projectMetrics": "{not json"}
    )
    assert answer.status_code == 302
    assert ProjectStatus.objects.get().project_metrics == {"velocity": 12}


def test_htmx_save_returns_the_panel(cast, client_for):
    response = client_for(cast.lead).post(
        EDIT, {"overallRag": "Green", "revision": "1"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="status-panel"' in html and "Status saved." in html
    assert "<html" not in html
    assert "HX-Request" in response["Vary"]


def test_form_errors_answer_422_and_save_nothing(cast, client_for):
    response = client_for(cast.lead).post(
        EDIT,
        {"overallRag": "Amber", "revisedForecast": "1,5,0", "phase": "p" * 300},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert 'id="f-revisedForecast"' in html and 'aria-invalid="true"' in html
    assert not ProjectStatus.objects.exists()
    response = client_for(cast.lead).post(EDIT, {"phase": "p" * 300}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert "At most 200 characters" in response.content.decode()


def test_a_stale_form_shows_both_versions(cast, client_for):
    services.status_update(caller=lead_caller(cast), data={"overallRag": "Red"})
    response = client_for(cast.editor).post(
        EDIT,
        {"overallRag": "Green", "phase": "Initiation", "revision": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert "Someone else saved this status" in html
    assert '<th scope="row">Overall RAG</th><td>Green</td><td>Red</td>' in html
    assert 'name="revision" value="2"' in html
    assert ProjectStatus.objects.get().overall_rag == "Red"


def test_viewers_cannot_open_or_post_the_form(cast, client_for):
    assert client_for(cast.viewer).get(EDIT).status_code == 403
    assert client_for(cast.viewer).post(EDIT, {"overallRag": "Red"}).status_code == 403
    assert not ProjectStatus.objects.exists()


def test_checklist_dismissal_over_htmx(cast, client_for):
    response = client_for(cast.lead).post(
        "/projects/ALPHA/status/initiation/",
        {"action": "dismiss", "item": "risksIdentified"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="initiation"')
    assert "Restore<span" in html
    assert "risksIdentified" in ProjectStatus.objects.get().initiation_dismissals


def test_checklist_act_moves_the_open_status_form_along(cast, client_for):
    """The status form open on the same page carries the revision; a checklist act announces
    the revision it moved to, so the user's own next save is not refused as stale."""
    client = client_for(cast.lead)
    client.post(EDIT, {"overallRag": "Green", "revision": "1"})
    form = client.get(EDIT).content.decode()
    assert 'name="revision" value="2" data-revision-of="status"' in form
    response = client.post(
        "/projects/ALPHA/status/initiation/",
        {"action": "dismiss", "item": "risksIdentified"},
        HTTP_HX_REQUEST="true",
    )
    assert json.loads(response["HX-Trigger"]) == {
        "revised": {"resource": "status", "from": 2, "to": 3}
    }
    again = client.post(
        "/projects/ALPHA/status/initiation/",
        {"action": "dismiss", "item": "risksIdentified"},
        HTTP_HX_REQUEST="true",
    )
    assert "HX-Trigger" not in again  # nothing moved, nothing to announce
    saved = client.post(EDIT, {"overallRag": "Amber", "revision": "3"})
    assert saved.status_code in (200, 302)
    assert ProjectStatus.objects.get().overall_rag == "Amber"


def test_drafting_and_publishing_from_the_page(cast, client_for):
    client = client_for(cast.lead)
    response = client.post("/projects/ALPHA/status/reports/", {"title": ""}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    report = StatusReport.objects.get()
    assert report.title.startswith("Status report ")
    assert "Publish report" in response.content.decode()
    response = client.post(
        f"/projects/ALPHA/status/reports/{report.pk}/",
        {"title": "March", "keyMessages": "Fine", "revision": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    response = client.post(
        f"/projects/ALPHA/status/reports/{report.pk}/publish/",
        {"revision": "2"},
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert "“March” published." in html
    assert "RAG trend" in html
    assert StatusReport.objects.get().state == "Published"


def test_a_past_report_opens_as_it_was(cast, client_for):
    package = WorkPackageFactory(
        project=cast.project, name="Build", budget=Decimal(1000), budget_forecast=Decimal(1000)
    )
    caller = lead_caller(cast)
    services.status_update(caller=caller, data={"overallReason": "All calm"})
    report = services.status_report_create(caller=caller, data={"title": "March"})
    services.status_report_publish(caller=caller, report_id=report.pk)
    package.budget_forecast = Decimal(3000)
    package.save()
    services.status_update(caller=caller, data={"overallReason": "Storm"})
    html = client_for(cast.viewer).get(f"/projects/ALPHA/status/reports/{report.pk}/").content
    html = html.decode()
    assert "All calm" in html and "Storm" not in html
    assert "The forecast (EAC) EUR\u00a01,000 matches the budget (not yet approved)" in html
    live = client_for(cast.viewer).get(PAGE).content.decode()
    assert "The forecast (EAC) EUR\u00a03,000" in live


def test_reports_of_another_project_are_hidden(cast, client_for):
    assert (
        client_for(cast.lead).get(f"/projects/ALPHA/status/reports/{uuid.uuid4()}/").status_code
        == 404
    )


def _populate(project, count):
    # The project's stored health derived once, when the last row is in, instead of after each
    # row (`deferred_project_changes`, as an import does): the project has no tolerances, so no
    # derivation on the way could open an exception, and the same row is stored.
    with transaction.atomic(), signals.deferred_project_changes():
        _add_rows(project, count)


def _add_rows(project, count):
    for n in range(count):
        package = WorkPackageFactory(project=project, budget_forecast=Decimal(1100))
        risk = RiskFactory(
            project=project, impact=(n % 5) + 1, likelihood=3, materialised=n % 7 == 0
        )
        DecisionFactory(project=project, treated_risk_id=str(risk.pk) if n % 2 else None)
        ChangeRequestFactory(
            project=project,
            status="Proposed",
            dimensions=["Scope"],
            target_work_package_id=package.pk,
        )


def _publish(cast, count):
    caller = lead_caller(cast)
    for n in range(count):
        report = services.status_report_create(caller=caller, data={"title": f"R{n}"})
        services.status_report_publish(
            caller=caller, report_id=report.pk, now=timezone.now() - dt.timedelta(days=count - n)
        )


def _count(client, url):
    cache.clear()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def test_the_status_page_runs_a_constant_number_of_queries(cast, client_for):
    client = client_for(cast.lead)
    _populate(cast.project, 1)
    _publish(cast, 1)
    small = _count(client, PAGE)
    small_api = _count(client, "/api/v1/projects/ALPHA/status")
    small_reports = _count(client, "/api/v1/projects/ALPHA/status/reports")
    _populate(cast.project, 199)
    _publish(cast, 19)
    assert _count(client, PAGE) == small
    assert _count(client, "/api/v1/projects/ALPHA/status") == small_api
    assert _count(client, "/api/v1/projects/ALPHA/status/reports") == small_reports


@pytest.mark.parametrize("path", ["", "edit/", "report"])
def test_status_pages_have_no_inline_script_style_or_handlers(cast, client_for, path):
    if path == "report":
        caller = lead_caller(cast)
        report = services.status_report_create(caller=caller, data={})
        services.status_report_publish(caller=caller, report_id=report.pk)
        path = f"reports/{report.pk}/"
    response = client_for(cast.lead).get(PAGE + path)
    assert response.status_code == 200
    assert inline_problems(response.content.decode()) == []
