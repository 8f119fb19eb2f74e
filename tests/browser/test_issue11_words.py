"""The demo as people read it, in a real browser: consistent facts, words not codes, the
audit log as sentences with the stored entry behind a toggle, one date format and the
currency, drivers as sentences, each project's own risks, and Waiting for me by age."""

import os
import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser
SHOTS = os.environ.get("SCREENSHOT_DIR", "/tmp/uxa")
ISO_DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
CODES = re.compile(
    r"\b(ClosingSubmitted|InRealisation|NotRealised|InMaintenance|DeliveredAsChartered|"
    r"TransferredToBau|AwaitingApplication|[a-z_]+\.[a-z_]+ed)\b"
)


def sign_in_demo(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("governance-demo")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/")


def visible_text(page) -> str:
    return page.locator("main").inner_text()


def shot(page, name):
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=f"{SHOTS}/{name}.png", full_page=True)


def test_the_demo_reads_as_words_dates_and_sentences(demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in_demo(page, live_server, "lena")

    page.goto(f"{live_server.url}/projects/BRIDGE/status/")
    text = visible_text(page)
    shot(page, "bridge-status")
    assert not ISO_DATE.search(text), ISO_DATE.search(text)
    assert "days later than the end of the approved plan" in text  # schedule in a sentence
    assert "EUR" in text and "over the approved budget" in text
    assert "First steering committee scheduled" in text and "Not scheduled" not in text
    started = re.search(r"Started (\d+ \w+ \d{4})", text).group(1)
    completed = re.search(r"Completed (\d+ \w+ \d{4})", text).group(1)
    assert started and completed

    page.goto(f"{live_server.url}/projects/CEDAR/charter/closeout/")
    text = visible_text(page)
    assert "Close-out submitted" in text and not CODES.search(text), CODES.search(text)

    page.goto(f"{live_server.url}/projects/CEDAR/audit/")
    lines = page.locator(".audit-line")
    expect(lines.first).to_be_visible()
    text = visible_text(page)
    shot(page, "cedar-audit")
    assert "Lena Lindqvist submitted the close-out" in text
    assert not CODES.search(text), CODES.search(text)
    raw = lines.first.locator("details.audit-raw")
    expect(raw.locator("pre")).to_be_hidden()
    raw.locator("summary").click()
    expect(raw.locator("pre")).to_contain_text('"kind"')
    page.get_by_label("What happened").select_option(label="Submitted the close-out")
    expect(page.locator(".audit-line")).to_have_count(1)

    page.goto(f"{live_server.url}/projects/APOLLO/registers/risks/")
    apollo = visible_text(page)
    page.goto(f"{live_server.url}/projects/CEDAR/registers/risks/")
    cedar = visible_text(page)
    assert "The portal integrator delivers late" in apollo
    assert "The ERP implementer delivers late" in cedar and "portal integrator" not in cedar

    page.goto(f"{live_server.url}/projects/EMBER/charter/realisation/")
    text = visible_text(page)
    assert "Next review" in text and "Overdue" in text


def test_waiting_for_me_shows_age_oldest_first(demo, live_server, watched_page):
    page = watched_page
    page.set_viewport_size({"width": 1440, "height": 1000})
    sign_in_demo(page, live_server, "sofia")
    page.goto(f"{live_server.url}/waiting/")
    shot(page, "waiting-sofia")
    ages = page.locator("#changes-h + ul.queue .age").all_inner_texts()
    assert ages, "the demo has changes waiting for the sponsor"
    days = [0 if a == "today" else int(a.split()[0]) for a in ages]
    assert days == sorted(days, reverse=True)
