"""Browser tests drive the machine's Chromium or Chrome through Playwright (no browser
download; `tools/chromium.py` finds it, CHROMIUM_PATH names one). Every page a test opens is
watched: a console error, an uncaught exception or a CSP violation fails it."""

import pytest

from tools import chromium

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    try:
        executable = chromium.find()
    except chromium.NotFound as exc:
        pytest.fail(str(exc), pytrace=False)
    if not executable:
        pytest.fail(chromium.what_to_install(), pytrace=False)
    return {
        **browser_type_launch_args,
        "executable_path": executable,
        "args": CHROMIUM_ARGS,
        "headless": True,
    }


@pytest.fixture
def watched_page(page):
    """The Playwright page, with a list of every console error and page error it produced."""
    problems: list[str] = []
    page.on(
        "console",
        lambda msg: (
            problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None
        ),
    )
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.problems = problems
    page.set_default_timeout(10_000)
    yield page
    assert problems == [], "\n".join(problems)


@pytest.fixture
def sign_in(live_server):
    def do(page, username: str, password: str = "test-pass-1"):
        page.goto(f"{live_server.url}/accounts/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(f"{live_server.url}/")

    return do
