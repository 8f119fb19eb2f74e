"""axe with the WCAG 2.2 AA rule set finds nothing on any page of the demo, read as the people
who see it (lead, sponsor, PMO, site admin, viewer), including every form the app can open
behind a click: the inline editors and add rows, the record-decision row, the status editor,
every disclosure opened (a business case's act dialogs and seat editors, the queue's reject
reason and ask-the-lead, the exception's decision and report, close-out and realisation
forms), the import preview and each of the assistant's forms. One browser page per person."""

import pytest
from playwright.sync_api import expect

from registers.models import ChangeRequest, Decision, Risk, WorkPackage
from status.models import StatusReport
from tests.browser.axe import assert_accessible

pytestmark = pytest.mark.browser

REGISTERS = ["work-packages", "risks", "decisions", "changes"]


def demo_sign_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    assert_accessible(page, "the sign-in page")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("governance-demo")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/")


def check_pages(page, live_server, paths):
    for path in paths:
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200, path
        assert_accessible(page, path)


def check_opened(page, live_server, paths):
    """Each page with every disclosure in it opened: the forms behind a click (a business
    case's act dialogs, seat editors, the queue's reject reason and ask-the-lead, the
    exception's decision) are checked with the page, in the same browser page."""
    for path in paths:
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200, path
        page.evaluate("document.querySelectorAll('main details').forEach(d => d.open = true)")
        assert_accessible(page, f"{path} (every form opened)")


def check_assistant_forms(page, live_server):
    """The assistant's page and every action form it offers the person (forms mode)."""
    page.goto(f"{live_server.url}/assistant/")
    assert_accessible(page, "the assistant")
    hrefs = page.eval_on_selector_all(
        ".agent-action-list a", "links => links.map(a => a.getAttribute('href'))"
    )
    assert hrefs, "the assistant offers its actions as forms"
    for href in hrefs:
        response = page.goto(f"{live_server.url}{href}")
        assert response.status == 200, href
        assert_accessible(page, f"the assistant's form {href}")


def test_every_page_of_a_lead_passes_wcag_22_aa(demo, live_server, watched_page):
    page = watched_page
    demo_sign_in(page, live_server, "lena")
    wp = WorkPackage.objects.filter(project__key="BRIDGE").first()
    risk = Risk.objects.filter(project__key="BRIDGE").first()
    decision = Decision.objects.filter(project__key="BRIDGE").first()
    change = ChangeRequest.objects.filter(project__key="BRIDGE").first()
    report = StatusReport.objects.filter(project__key="BRIDGE").first()
    base = "/projects/BRIDGE"
    check_pages(
        page,
        live_server,
        [
            "/",
            "/waiting/",
            "/profile/",
            f"{base}/",
            f"{base}/editors/",
            f"{base}/audit/",
            f"{base}/registers/",
            *(f"{base}/registers/{name}/" for name in REGISTERS),
            f"{base}/registers/work-packages/import/",
            f"{base}/registers/work-packages/{wp.pk}/",
            f"{base}/registers/risks/{risk.pk}/",
            f"{base}/registers/decisions/{decision.pk}/",
            f"{base}/registers/changes/{change.pk}/",
            f"{base}/charter/",
            f"{base}/charter/minutes/",
            f"{base}/status/",
            f"{base}/status/reports/{report.pk}/",
            f"{base}/status/exception/",
            f"{base}/stages/",
            "/projects/MOSAIC/stages/",
            "/projects/CEDAR/charter/closeout/",
            "/projects/DELTA/charter/closeout/",
            "/projects/FALCON/charter/",
            "/projects/GARNET/charter/",
            "/projects/JUNIPER/charter/realisation/",
        ],
    )
    # What appears only after a click: each register's add row and inline editor, the status
    # editor.
    for name in REGISTERS:
        page.goto(f"{live_server.url}{base}/registers/{name}/")
        page.locator("[data-add-row]").click()
        expect(page.locator("tr.editing").first).to_be_visible()
        assert_accessible(page, f"{name}: the add row")
        page.goto(f"{live_server.url}{base}/registers/{name}/")
        page.locator("tbody tr[id]").first.get_by_role("link", name="Edit").first.click()
        expect(page.locator("tr.editing").first).to_be_visible()
        assert_accessible(page, f"{name}: the inline editor")
    page.goto(f"{live_server.url}{base}/status/")
    page.get_by_role("link", name="Update status").click()
    expect(page.get_by_label("Overall RAG")).to_be_focused()
    assert_accessible(page, "the status editor")
    # The decision treating a materialised risk: its own page and the register row's form,
    # each field labelled by the decision register.
    materialised = Risk.objects.filter(project__key="BRIDGE", materialised=True).first()
    record = f"{base}/registers/risks/{materialised.pk}/record-decision/"
    check_pages(page, live_server, [record])
    expect(page.get_by_label("Decision", exact=False).first).to_be_visible()
    page.goto(f"{live_server.url}{base}/registers/risks/")
    page.locator(f"#risk-{materialised.pk}").get_by_role("link", name="Record decision").click()
    expect(page.locator("tr.editing").first).to_be_visible()
    for label in ("Made on", "Rationale"):
        expect(page.locator("tr.editing").get_by_label(label, exact=False).first).to_be_visible()
    assert_accessible(page, "risks: the record-decision row")
    # The forms behind a click on the lead's pages: act dialogs, seat editors, close-out and
    # realisation forms, the exception report.
    check_opened(
        page,
        live_server,
        [
            f"{base}/charter/",
            f"{base}/status/exception/",
            "/projects/FALCON/charter/",
            "/projects/GARNET/charter/",
            "/projects/CEDAR/charter/closeout/",
            "/projects/DELTA/charter/closeout/",
            "/projects/JUNIPER/charter/realisation/",
        ],
    )
    # The import preview: a file of one work package, previewed before anything is written.
    page.goto(f"{live_server.url}{base}/registers/work-packages/import/")
    page.locator("input[type=file]").set_input_files(
        {
            "name": "packages.csv",
            "mimeType": "text/csv",
            "buffer": b"name,budget\nWalk-through package,1000\n",
        }
    )
    page.get_by_role("button", name="Preview the import").click()
    expect(page.get_by_role("button", name="Preview another file")).to_be_visible()
    assert_accessible(page, "the import preview")


def test_every_page_of_the_other_roles_passes_wcag_22_aa(demo, live_server, watched_page):
    page = watched_page
    demo_sign_in(page, live_server, "sofia")
    check_pages(
        page,
        live_server,
        [
            "/",
            "/waiting/",
            "/projects/APOLLO/charter/",
            "/projects/BRIDGE/status/exception/",
            "/projects/BRIDGE/stages/",
        ],
    )
    check_opened(
        page,
        live_server,
        [
            "/waiting/",
            "/projects/APOLLO/charter/",
            "/projects/BRIDGE/status/exception/",
            "/projects/BRIDGE/stages/",
        ],
    )
    page.context.clear_cookies()
    demo_sign_in(page, live_server, "priya")
    check_pages(
        page,
        live_server,
        [
            "/portfolio/",
            "/portfolio/?group=theme",
            "/portfolio/lessons/",
            "/projects/EMBER/charter/realisation/",
            "/projects/IRIS/charter/realisation/",
            "/investment/",
            "/investment/proposals/VIOLET/",
            "/investment/proposals/GARNET/",
            "/investment/model/",
            "/investment/decisions/",
        ],
    )
    check_opened(page, live_server, ["/portfolio/", "/projects/EMBER/charter/realisation/"])
    check_assistant_forms(page, live_server)
    page.context.clear_cookies()
    demo_sign_in(page, live_server, "victor")
    check_pages(
        page,
        live_server,
        [
            "/projects/BRIDGE/registers/work-packages/",
            "/projects/BRIDGE/status/",
            "/projects/DELTA/charter/closeout/",
            "/projects/APOLLO/charter/",
        ],
    )
    page.context.clear_cookies()
    demo_sign_in(page, live_server, "ada")
    check_pages(page, live_server, ["/", "/portfolio/settings/", "/profile/"])
