"""The approval loop in a real browser, with two people: the Project Lead submits, the
sponsor returns with a note, the lead marks it addressed and resubmits, the sponsor approves."""

import pytest
from playwright.sync_api import expect

from charter.models import BusinessCase
from charter.services import sync_mirror
from tests.charter.conftest import complete_inputs

pytestmark = pytest.mark.browser


def sign_out(page):
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/accounts/login/")


def open_case(page, live_server):
    page.goto(f"{live_server.url}/projects/ALPHA/charter/")
    expect(page.get_by_role("heading", name="Lifecycle")).to_be_visible()


def test_submit_return_address_resubmit_approve(cast, live_server, watched_page, sign_in):
    case = BusinessCase.objects.create(
        project=cast.project,
        approval_status="Draft",
        business_problem="Claims take 12 days to settle.",
        **complete_inputs(cast),
    )
    sync_mirror(cast.project, case)
    page = watched_page
    bar = page.locator("#lifecycle")

    # The lead submits.
    sign_in(page, "lead")
    open_case(page, live_server)
    expect(page.get_by_text("Everything the submission gate needs is in place.")).to_be_visible()
    bar.get_by_role("button", name="Submit for approval").click()
    expect(page.get_by_text("Submitted for approval. The sponsor has been told.")).to_be_visible()
    expect(bar.get_by_role("button", name="Submit for approval")).to_have_count(0)
    sign_out(page)

    # The sponsor returns it with a note.
    sign_in(page, "sponsor")
    open_case(page, live_server)
    expect(bar.locator("summary", has_text="Edit")).to_have_count(0)
    returning = bar.locator(
        "details.act", has=page.locator("summary", has_text="Return with notes")
    )
    returning.locator("summary").click()
    returning.get_by_label("Section").first.select_option("returnExpected")
    returning.get_by_label("Severity").first.select_option("Blocker")
    returning.get_by_label("What is asked").first.fill("Give the return as a figure.")
    returning.get_by_role("button", name="Return with notes").click()
    expect(page.get_by_text("Returned to the project with your notes.")).to_be_visible()
    sign_out(page)

    # The lead addresses the note and resubmits.
    sign_in(page, "lead")
    open_case(page, live_server)
    notes = page.locator("#return-notes")
    expect(notes.get_by_text("Give the return as a figure.", exact=True)).to_be_visible()
    expect(notes.get_by_text("1 open")).to_be_visible()
    notes.get_by_role("button", name="Mark addressed").click()
    expect(notes.get_by_text("0 open")).to_be_visible()
    expect(notes.get_by_role("button", name="Mark open")).to_be_visible()
    bar.get_by_role("button", name="Submit for approval").click()
    expect(page.get_by_text("Submitted for approval. The sponsor has been told.")).to_be_visible()
    sign_out(page)

    # The sponsor approves.
    sign_in(page, "sponsor")
    page.get_by_role("link", name="Waiting for me").click()
    page.get_by_role("link", name="Approve or return the business case").click()
    approving = bar.locator("details.act", has=page.locator("summary", has_text="Approve"))
    approving.locator("summary").click()
    approving.get_by_label("Comment").fill("Clear return; go.")
    approving.get_by_role("button", name="Approve version 1").click()
    expect(page.get_by_text("Approved. The plan baseline is frozen.")).to_be_visible()
    expect(bar.locator(".badge.state")).to_have_text("Approved")
    history = page.locator("#section-history")
    expect(history.get_by_role("cell", name="Clear return; go.")).to_be_visible()
    expect(history.locator("td .person", has_text="Sam Sponsor")).to_be_visible()

    case.refresh_from_db()
    assert case.approval_status == "Approved"
    assert case.approved_by_account_id == cast.sponsor.account_id
    assert case.return_notes[0]["addressed"] is True


def test_sections_save_in_place_and_the_checklist_follows(cast, live_server, watched_page, sign_in):
    case = BusinessCase.objects.create(
        project=cast.project,
        approval_status="Draft",
        decision_authority={"accountId": cast.sponsor.account_id, "displayName": "S"},
    )
    sync_mirror(cast.project, case)
    page = watched_page
    sign_in(page, "lead")
    open_case(page, live_server)
    adoption = page.locator("#section-adoption")
    checklist = page.locator("#adoption-checklist")
    expect(checklist.locator("li.todo", has_text="Who or what is affected")).to_be_visible()

    # Typing updates the checklist before anything is saved.
    adoption.get_by_label("Who or what is affected").fill("Claims handlers")
    expect(checklist.locator("li.ok", has_text="Who or what is affected")).to_be_visible()
    adoption.get_by_label("Adoption KPI").fill("90% of claims through the new flow")
    adoption.get_by_label("Change saturation").select_option("Low")
    expect(checklist.locator("li.ok", has_text="Change saturation")).to_be_visible()

    # Two sections saved one after the other: the second is not taken for a stale write.
    thesis = page.locator("#section-thesis")
    thesis.get_by_label("Business problem").fill("Claims take 12 days.")
    thesis.get_by_role("button", name="Save thesis").click()
    expect(page.locator("#section-thesis").get_by_text("Saved.")).to_be_visible()
    adoption.get_by_role("button", name="Save adoption").click()
    expect(page.locator("#section-adoption").get_by_text("Saved.")).to_be_visible()

    # The adoption owner from the people picker.
    owner = page.locator("#seat-adoptionOwner")
    owner.locator("summary").click()
    owner.get_by_label("Find a person").fill("Eddie")
    owner.get_by_role("button", name="Search").click()
    owner.get_by_role("button", name="Choose Eddie Editor").click()
    expect(page.locator("#seat-adoptionOwner .seat-holder")).to_contain_text("Eddie Editor")
    expect(
        page.locator("#adoption-checklist").get_by_text(
            "Everything the submission gate needs is in place."
        )
    ).to_be_visible()

    # An act's form opens on its first field and Escape closes it again.
    archive = page.locator(
        "#lifecycle details.act", has=page.locator("summary", has_text="Archive")
    )
    archive.locator("summary").click()
    expect(archive.get_by_label("Reason (required)")).to_be_focused()
    page.keyboard.press("Escape")
    expect(archive).not_to_have_attribute("open", "")
    expect(archive.locator("summary")).to_be_focused()

    page.locator("#lifecycle").get_by_role("button", name="Submit for approval").click()
    expect(page.get_by_text("Submitted for approval. The sponsor has been told.")).to_be_visible()
    case.refresh_from_db()
    assert case.business_problem == "Claims take 12 days."
    assert case.adoption_owner["accountId"] == cast.editor.account_id
    assert case.approval_status == "Submitted"
