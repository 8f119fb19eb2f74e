"""The steering pack: a status report's page is the pack a board reads (RAG with reasons, key
messages once, finance, earned value, top risks, next milestones, late packages, decisions,
changes since the last report), and its PDF is that page printed on at most two A4 pages."""

import re

import pytest
from django.utils.dateparse import parse_datetime

from governance import pdf
from governance.models import Project, User
from governance.permissions import caller_for
from status import pack, services
from status.models import ProjectStatus, StatusReport

SECTIONS = [
    "RAG and the reasons",
    "Key messages",
    "Finance",
    "Earned value",
    "Top five risks",
    "Next milestones",
    "Late packages",
    "Decisions required",
    "Changes since the last report",
]


def page_text(page) -> str:
    """The words laid out on one WeasyPrint page."""
    found: list[str] = []

    def walk(box) -> None:
        text = getattr(box, "text", None)
        if isinstance(text, str):
            found.append(text)
        for child in getattr(box, "children", None) or []:
            walk(child)

    walk(page._page_box)
    return re.sub(r"\s+", " ", " ".join(found))


def latest_reports():
    seen, latest = set(), []
    for report in StatusReport.objects.filter(state="Published").select_related("project"):
        if report.project.key not in seen:
            seen.add(report.project.key)
            latest.append(report)
    return latest


@pytest.fixture
def priya(demo):
    return User.objects.get(username="priya")


def test_every_demo_pack_prints_on_at_most_two_pages_with_every_section(priya, client_for):
    client = client_for(priya)
    reports = latest_reports()
    assert len(reports) >= 5
    for report in reports:
        url = f"/projects/{report.project.key}/status/reports/{report.pk}/"
        html = client.get(url).content.decode()
        for section in SECTIONS:
            assert f">{section}</h3>" in html, (report.project.key, section)
        document = pdf.document(html, pack.STYLESHEET)
        assert 1 <= len(document.pages) <= 2, (report.project.key, len(document.pages))
        text = " ".join(page_text(page) for page in document.pages)
        for section in SECTIONS:
            assert section in text, (report.project.key, section)
        assert "Forecast: estimate at completion (EAC)" in text
        # The site around the pack is not printed.
        assert "Sign out" not in text and "Download the steering pack" not in text
        response = client.get(url + "?format=pdf")
        assert response.status_code == 200 and response.content.startswith(b"%PDF-")


def test_the_earned_value_and_finance_of_a_published_pack(priya, client_for):
    """BRIDGE has earned value: the pack shows it beside the finance table, the estimate at
    completion and the cost-performance estimate each under its own name, and says how they
    differ."""
    report = next(r for r in latest_reports() if r.project.key == "BRIDGE")
    html = client_for(priya).get(f"/projects/BRIDGE/status/reports/{report.pk}/").content.decode()
    assert "Cost-performance estimate (BAC / CPI)" in html
    assert "Cost performance index" in html and "Schedule performance index" in html
    assert 'class="estimates-compared"' in html
    assert "Actual cost recorded" in html
    assert report.snapshot["pack"]["actualCostRecorded"] is not None
    # One figure, one function: the overview's "Actual cost recorded" is the live pack's.
    from status import derive, selectors

    view = selectors.views_for([report.project])[report.project.pk]
    live = derive.actual_cost_recorded(view.facts)
    overview = client_for(priya).get("/projects/BRIDGE/").content.decode()
    assert live is not None and f"{live:,.0f}" in overview


def test_publishing_freezes_the_pack_with_what_changed_since_the_last_report(demo):
    project = Project.objects.get(key="BRIDGE")
    lead = User.objects.get(account_id=project.lead_account_id)
    caller = caller_for(lead, project)
    before = pack.previous_report(project)
    assert before is not None
    draft = services.status_report_create(caller=caller, data={"title": "Board pack"})
    published = services.status_report_publish(caller=caller, report_id=draft.pk)
    frozen = published.snapshot["pack"]
    assert frozen["previousReportTitle"] == before.title
    assert parse_datetime(frozen["changesSince"]) == before.published_at
    assert len(frozen["topRisks"]) <= pack.TOP
    for risk in frozen["topRisks"]:
        assert {"title", "inherentScore", "residualScore"} <= set(risk)
    assert isinstance(frozen["ragMoves"], list)


def test_the_key_messages_show_once(demo, client_for):
    """Three texts may hold key messages (the report's, the commentary's and the status's
    steering key message): the pack shows one, the report's first, else the one a new draft
    starts from (the commentary's, else the steering key message)."""
    project = Project.objects.get(key="BRIDGE")
    lead = User.objects.get(account_id=project.lead_account_id)
    status = ProjectStatus.objects.get(project=project)
    ProjectStatus.objects.filter(pk=status.pk).update(
        pm_key_message="Steering says hold the line.",
        structured_commentary={**(status.structured_commentary or {}), "keyMessages": "Go live."},
    )
    caller = caller_for(lead, project)
    StatusReport.objects.filter(project=project, state="Draft").delete()
    draft = services.status_report_create(caller=caller, data={"title": "Draft pack"})
    client = client_for(lead)
    url = f"/projects/BRIDGE/status/reports/{draft.pk}/"

    def shown() -> str:
        html = client.get(url).content.decode()
        assert html.count(">Key messages</h3>") == 1
        return html

    html = shown()
    assert "Go live." in html and "Steering says hold the line." not in html
    draft = services.status_report_update(
        caller=caller,
        report_id=draft.pk,
        data={"keyMessages": "Our own words."},
        expected_revision=draft.revision,
    )
    html = shown()
    assert "Our own words." in html
    assert "Go live." not in html and "Steering says hold the line." not in html
    services.status_report_update(
        caller=caller, report_id=draft.pk, data={"keyMessages": ""}, expected_revision=None
    )
    ProjectStatus.objects.filter(pk=status.pk).update(structured_commentary=None)
    html = shown()
    assert "Steering says hold the line." in html
    assert "From the status&#x27;s steering key message" in html


def test_a_report_published_before_the_pack_says_what_it_lacks(cast, client_for):
    report = StatusReport.objects.create(
        project=cast.project,
        title="Old",
        state="Published",
        snapshot={"status": {}},
        created_by_account_id=cast.lead.account_id,
    )
    html = client_for(cast.viewer).get(f"/projects/ALPHA/status/reports/{report.pk}/")
    text = html.content.decode()
    assert "published before the pack kept its risks" in text
    document = pdf.document(text, pack.STYLESHEET)
    assert len(document.pages) == 1


def test_the_status_form_asks_for_the_key_messages_once(cast, client_for):
    """A lead writes key messages in one field; an earlier steering key message is shown
    (and can be cleared) only where one was written, never lost."""
    client = client_for(cast.lead)
    html = client.get("/projects/ALPHA/status/edit/").content.decode()
    assert html.count('name="keyMessages"') == 1
    assert 'name="pmKeyMessage"' not in html
    ProjectStatus.objects.update_or_create(
        project=cast.project, defaults={"pm_key_message": "Hosting decided at the March board."}
    )
    html = client.get("/projects/ALPHA/status/edit/").content.decode()
    assert 'name="pmKeyMessage"' in html and "Hosting decided at the March board." in html
    assert "An earlier steering key message" in html
