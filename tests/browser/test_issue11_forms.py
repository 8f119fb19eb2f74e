"""Everyday paths a Project Lead takes through the register forms, in a real browser: one
row added to each register through its Add form, numbers the page cannot read refused next
to the field."""

import os
import re

import pytest
from playwright.sync_api import expect

from registers.models import ChangeRequest, Decision, Risk, WorkPackage

pytestmark = pytest.mark.browser
SHOTS = os.environ.get("SCREENSHOT_DIR", "/tmp/uxa")


def shot(page, name):
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=f"{SHOTS}/{name}.png", full_page=True)


def add(page, live_server, register, noun, anchor):
    page.goto(f"{live_server.url}/projects/ALPHA/registers/{register}/")
    page.get_by_role("link", name=f"Add {noun}", exact=True).click()
    editor = page.locator(f"#{anchor}-new")
    expect(editor).to_be_visible()
    for field in editor.locator("input[type=text], textarea").all():
        expect(field).to_have_value("")
    return editor


def test_lead_adds_one_row_to_each_register(cast, live_server, watched_page, sign_in):
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, "lead")

    editor = add(page, live_server, "work-packages", "work package", "wp")
    editor.get_by_label("Name").fill("Build the portal")
    editor.get_by_label("Budget", exact=True).fill("12000")
    shot(page, "add-work-package")
    editor.get_by_role("button", name="Save").click()
    expect(page.locator("#wp-rows")).to_contain_text("Build the portal")

    editor = add(page, live_server, "risks", "risk", "risk")
    editor.get_by_label("Title").type("Vendor API rate limits")
    editor.get_by_role("button", name="Save").click()
    expect(page.locator("#risk-rows")).to_contain_text("Vendor API rate limits")

    editor = add(page, live_server, "decisions", "decision", "decision")
    editor.get_by_label(re.compile(r"^Decision\b")).fill("Use the managed queue")
    editor.get_by_role("button", name="Save").click()
    expect(page.locator("#decision-rows")).to_contain_text("Use the managed queue")

    editor = add(page, live_server, "changes", "change request", "change")
    editor.get_by_label("Summary").fill("Extend pilot")
    editor.get_by_role("button", name="Save").click()
    expect(page.locator("#change-rows")).to_contain_text("Extend pilot")
    shot(page, "added-change")

    assert list(WorkPackage.objects.values_list("name", "budget")) == [("Build the portal", 12000)]
    assert list(Risk.objects.values_list("title", flat=True)) == ["Vendor API rate limits"]
    assert list(Decision.objects.values_list("decision", flat=True)) == ["Use the managed queue"]
    assert list(ChangeRequest.objects.values_list("summary", flat=True)) == ["Extend pilot"]
    assert not re.search("None", page.locator("#change-rows").inner_text())


def expected_refusal(page, status: int) -> None:
    page.problems[:] = [p for p in page.problems if f"status of {status}" not in p]


def test_unreadable_budget_and_override_without_reason_are_refused_next_to_the_field(
    cast, live_server, watched_page, sign_in
):
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in(page, "lead")
    editor = add(page, live_server, "work-packages", "work package", "wp")
    editor.get_by_label("Name").fill("Build the portal")
    budget = editor.get_by_label("Budget", exact=True)
    budget.fill("12k")
    editor.get_by_role("button", name="Save").click()
    budget = page.locator("#wp-new").get_by_label("Budget", exact=True)
    expect(budget).to_have_attribute("aria-invalid", "true")
    expect(budget).to_have_value("12k")
    expect(page.locator("#f-new-budget-error")).to_contain_text("Write a number")
    shot(page, "budget-refused")
    expected_refusal(page, 422)
    assert not WorkPackage.objects.exists()

    page.goto(f"{live_server.url}/projects/ALPHA/status/")
    page.get_by_role("link", name="Update status").click()
    page.get_by_label("Cost override").select_option("Red")
    page.get_by_role("button", name="Save status").click()
    reason = page.get_by_label("Cost commentary")
    expect(reason).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#e-costRagOverrideReason")).to_contain_text("why the cost RAG")
    expected_refusal(page, 422)
    reason.fill("Vendor invoice arrives early")
    page.get_by_role("button", name="Save status").click()
    expect(page.get_by_text("Status saved.")).to_be_visible()
    shot(page, "status-override-saved")
