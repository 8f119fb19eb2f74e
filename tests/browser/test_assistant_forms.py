"""In a real browser, without a language model, as Lena the Project Lead on the demo: she opens
"Add a risk" on the Assistant page, picks the project and an owner from its people, previews
the change (nothing written), goes back to edit it with her values kept, confirms it and sees
the new risk; on a desktop and on a phone, where nothing scrolls sideways."""

import pytest
from playwright.sync_api import expect

from governance.models import AuditEntry
from registers.models import Risk
from tests.browser.axe import assert_accessible

pytestmark = pytest.mark.browser


def _no_sideways(page, width):
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the assistant is {scroll}px wide at {width}px"


@pytest.mark.parametrize("width", [1280, 390])
def test_lena_previews_edits_and_confirms_a_risk_in_forms_mode(
    width, demo, live_server, watched_page, sign_in, settings
):
    settings.AGENT_MODEL = ""
    page = watched_page
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, "lena", "governance-demo")
    page.goto(f"{live_server.url}/assistant/")
    expect(page.get_by_text("written only when you confirm it")).to_be_visible()
    page.get_by_role("link", name="Add a risk").click()
    # The form arrives by an HTMX swap; htmx binds the project picker's refresh when it
    # processes the new content. Choosing the project before that (a busy machine) would
    # send nothing, so wait until the picker is bound and the swap has settled.
    page.wait_for_function(
        """() => {
            const picker = document.querySelector("#action-add_risk select[hx-get]");
            return !!picker && picker["htmx-internal-data"] !== undefined
                && !document.querySelector(".htmx-request, .htmx-settling, .htmx-swapping");
        }"""
    )
    form = page.locator("#action-add_risk")
    owner = form.get_by_role("combobox", name="Owner", exact=True)
    expect(owner).to_contain_text("Choose the project first")
    # Choosing the project fills the owner picker with its people, by name.
    form.get_by_role("combobox", name="Project", exact=True).select_option("APOLLO")
    expect(owner).to_contain_text("Lena Lindqvist", timeout=20_000)
    form.get_by_role("textbox", name="Title", exact=True).fill("Supplier insolvency")
    owner.select_option(label="Lena Lindqvist")
    form.get_by_role("spinbutton", name="Likelihood", exact=True).fill("3")
    form.get_by_role("spinbutton", name="Impact", exact=True).fill("4")
    before = AuditEntry.objects.count()
    form.get_by_role("button", name="Preview the change").click()

    card = page.get_by_role("article", name="Proposed change: Add a risk")
    expect(card).to_contain_text("Awaiting your confirmation")
    expect(card).to_contain_text("Supplier insolvency")
    expect(card).to_contain_text("Lena Lindqvist")
    assert not Risk.objects.filter(title__startswith="Supplier insolvency").exists()
    assert AuditEntry.objects.count() == before
    _no_sideways(page, width)
    assert_accessible(page, f"the assistant's preview at {width}px")
    page.screenshot(path=f"/tmp/agent/forms-preview-{width}.png", full_page=True)

    # Edit: back to the form with everything she typed.
    card.get_by_role("button", name="Edit").click()
    title = form.get_by_role("textbox", name="Title", exact=True)
    expect(title).to_have_value("Supplier insolvency")
    expect(form.get_by_role("combobox", name="Project", exact=True)).to_have_value("APOLLO")
    expect(form.get_by_role("spinbutton", name="Impact", exact=True)).to_have_value("4")
    title.fill("Supplier insolvency in Q3")
    form.get_by_role("button", name="Preview the change").click()
    expect(card).to_contain_text("Supplier insolvency in Q3")
    card.get_by_role("button", name="Confirm").click()

    expect(form.get_by_text("Done.", exact=True)).to_be_visible()
    risk = Risk.objects.get(title="Supplier insolvency in Q3")
    assert (risk.likelihood, risk.impact, risk.project.key) == (3, 4, "APOLLO")
    assert AuditEntry.objects.filter(kind="risk.created", target_id=str(risk.pk)).count() == 1
    _no_sideways(page, width)
    page.screenshot(path=f"/tmp/agent/forms-done-{width}.png", full_page=True)
    expect(form).to_contain_text("Supplier insolvency in Q3")
    form.get_by_role("link", name="Open the page").click()
    page.wait_for_url(f"{live_server.url}/projects/APOLLO/registers/risks/{risk.pk}/")
    assert page.problems == []


@pytest.mark.parametrize("width", [1280, 390])
def test_past_the_choices_lena_types_the_project_s_key(
    width, demo, live_server, watched_page, sign_in, settings, monkeypatch
):
    """A person who views more projects than a choice lists types the key (here, past one);
    leaving the field offers that project's people, by keyboard alone."""
    from agent import views

    settings.AGENT_MODEL = ""
    monkeypatch.setattr(views, "PROJECT_CHOICES", 1)
    page = watched_page
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, "lena", "governance-demo")
    page.goto(f"{live_server.url}/assistant/actions/add_risk/")
    form = page.locator("#action-add_risk")
    project = form.get_by_role("textbox", name="Project", exact=True)
    expect(form).to_contain_text("Type the project's key")
    owner = form.get_by_role("combobox", name="Owner", exact=True)
    expect(owner).to_contain_text("Choose the project first")
    project.fill("apollo")
    project.press("Tab")
    expect(owner).to_contain_text("Lena Lindqvist", timeout=20_000)
    expect(project).to_have_value("apollo")
    _no_sideways(page, width)
    assert_accessible(page, f"an action's form with a typed project at {width}px")
    page.screenshot(path=f"/tmp/agent/forms-typed-{width}.png", full_page=True)
    assert page.problems == []
