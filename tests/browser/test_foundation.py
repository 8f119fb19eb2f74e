"""A Project Lead signs in, opens a project and nominates an editor, in a real browser."""

import pytest
from playwright.sync_api import expect

from governance.models import EditorNomination

pytestmark = pytest.mark.browser


def test_lead_signs_in_opens_a_project_and_nominates_an_editor(
    cast, live_server, watched_page, sign_in
):
    page = watched_page
    sign_in(page, "lead")
    expect(page.get_by_role("heading", name="My projects")).to_be_visible()
    page.get_by_role("link", name="Alpha programme").click()
    expect(page.get_by_role("heading", name="Alpha programme")).to_be_visible()
    tabs = page.get_by_role("navigation", name="Project sections")
    for label in ("Overview", "Registers", "Business case", "Status", "Audit"):
        expect(tabs.get_by_role("link", name=label)).to_be_visible()

    page.get_by_role("link", name="Manage editors").click()
    page.get_by_label("Find a person by name or e-mail").fill("Vera")
    page.get_by_label("Find a person by name or e-mail").press("Enter")
    nominate = page.get_by_role("button", name="Nominate Vera Viewer")
    expect(nominate).to_be_visible()
    nominate.click()
    expect(
        page.get_by_role("status").filter(has_text="Vera Viewer added as an editor.")
    ).to_be_visible()
    expect(page.get_by_role("button", name="Remove Vera Viewer")).to_be_visible()
    assert EditorNomination.objects.filter(
        project=cast.project, account_id=cast.viewer.account_id
    ).exists()

    # The audit tab shows the nomination.
    page.get_by_role("link", name="Audit").click()
    expect(
        page.locator(".audit-sentence", has_text="Lena Lead changed who may edit the project")
    ).to_be_visible()


def test_viewer_sees_no_editor_controls(cast, live_server, watched_page, sign_in):
    page = watched_page
    sign_in(page, "viewer")
    page.get_by_role("link", name="Alpha programme").click()
    expect(page.get_by_role("heading", name="Alpha programme")).to_be_visible()
    expect(page.get_by_role("link", name="Manage editors")).to_have_count(0)
    response = page.goto(f"{live_server.url}/projects/ALPHA/editors/")
    assert response.status == 403
    page.problems.clear()  # the browser logs the 403 document load itself as a console error


def test_api_docs_render_under_the_csp(db, live_server, watched_page):
    page = watched_page
    # The document is built on its first request (1.2 MB, about 2.3 s on a quiet 2-core
    # machine) and Swagger UI then lays all of it out; under a loaded run both together
    # have passed the default five seconds, so the wait is for the document, then the page.
    with page.expect_response("**/api/v1/openapi.json", timeout=60_000) as document:
        page.goto(f"{live_server.url}/api/v1/docs")
    assert document.value.status == 200
    expect(page.get_by_text("/api/v1/projects/{key}/editors")).to_be_visible(timeout=30_000)
