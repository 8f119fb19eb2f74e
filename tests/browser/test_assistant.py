"""In a real browser, with a scripted language model: a PMO analyst asks for the red projects
and follows a link; a Project Lead confirms a proposed risk and finds it in the register."""

import pytest
from playwright.sync_api import expect
from pydantic_ai.messages import (
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import FunctionModel

from agent import assistant
from governance.tracker.local import scripting
from registers.models import Risk
from tests.conftest import set_governance_group
from tests.factories import ProjectStatusFactory

pytestmark = pytest.mark.browser


def _scripted(messages, info):
    prompt = [p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart)][-1]
    returned = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if returned:
        return ModelResponse(parts=[TextPart("Here is what I found; the links open each page.")])
    if "red" in prompt.lower():
        return ModelResponse(parts=[ToolCallPart("find_projects", {"rag": "Red"})])
    return ModelResponse(
        parts=[
            ToolCallPart(
                "add_risk",
                {
                    "projectKey": "ALPHA",
                    "title": "Supplier insolvency",
                    "likelihood": 3,
                    "impact": 4,
                },
            )
        ]
    )


@pytest.fixture
def scripted_model(settings, monkeypatch):
    settings.AGENT_MODEL = "test:scripted"
    monkeypatch.setattr(assistant, "get_model", lambda: FunctionModel(_scripted))


def test_pmo_asks_for_red_projects_and_lead_confirms_a_risk(
    cast, live_server, watched_page, sign_in, scripted_model
):
    scripting.ensure_group("gov", members=["pmo", "lead"])
    set_governance_group("gov")
    ProjectStatusFactory(project=cast.project, overall_rag="Red", overall_reason="Supplier late")
    page = watched_page

    sign_in(page, "pmo")
    page.get_by_role("link", name="Assistant").click()
    page.get_by_label("Your request").fill("Which projects are red and why?")
    page.get_by_role("button", name="Ask").click()
    expect(page.get_by_text("Here is what I found")).to_be_visible()
    link = page.locator("#conversation").get_by_role("link", name="Alpha programme")
    expect(link).to_be_visible()
    page.screenshot(path="/tmp/agent/browser-priya.png", full_page=True)
    link.click()
    page.wait_for_url(f"{live_server.url}/projects/ALPHA/")

    page.context.clear_cookies()
    sign_in(page, "lead")
    page.goto(f"{live_server.url}/assistant/")
    page.get_by_label("Your request").fill(
        "Log a risk on ALPHA: supplier insolvency, likelihood 3, impact 4"
    )
    page.get_by_role("button", name="Ask").click()
    card = page.get_by_role("article", name="Proposed change: Add a risk")
    expect(card).to_contain_text("Supplier insolvency")
    expect(card).to_contain_text("Awaiting your confirmation")
    assert not Risk.objects.filter(title="Supplier insolvency").exists()
    page.screenshot(path="/tmp/agent/browser-lena-proposal.png", full_page=True)
    card.get_by_role("button", name="Confirm").click()
    expect(card.get_by_text("Done", exact=True)).to_be_visible()
    page.goto(f"{live_server.url}/projects/ALPHA/registers/risks/")
    expect(page.get_by_role("link", name="Supplier insolvency", exact=True)).to_be_visible()
    assert Risk.objects.get(title="Supplier insolvency").likelihood == 3


LONG_WORD = "https://wiki.example.com/" + "a" * 400
LONG_ANSWER = f"The red projects are listed below. {LONG_WORD} " + "Figures and reasons " * 60


def _long(messages, info):
    returned = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if returned:
        return ModelResponse(parts=[TextPart(LONG_ANSWER)])
    return ModelResponse(parts=[ToolCallPart("find_projects", {"rag": "Red"})])


@pytest.mark.parametrize("width", [1280, 390])
def test_a_long_answer_wraps_inside_the_page(
    width, cast, live_server, watched_page, sign_in, settings, monkeypatch
):
    settings.AGENT_MODEL = "test:scripted"
    monkeypatch.setattr(assistant, "get_model", lambda: FunctionModel(_long))
    scripting.ensure_group("gov", members=["pmo"])
    set_governance_group("gov")
    ProjectStatusFactory(project=cast.project, overall_rag="Red", overall_reason="x" * 120)
    page = watched_page
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, "pmo")
    page.goto(f"{live_server.url}/assistant/")
    page.get_by_label("Your request").fill("Which projects are red?")
    page.get_by_role("button", name="Ask").click()
    expect(page.get_by_text("The red projects are listed below.")).to_be_visible()
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"the answer widens the page to {scroll}px at {width}px"
