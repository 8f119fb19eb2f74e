"""`make run` as a newcomer meets it: the demo's e-mails go to files (not the console), links
in e-mails follow the port served when SITE_URL is unset, and it says where to sign in."""

import re
import subprocess
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent


def _run_recipe(port: str) -> str:
    return subprocess.run(
        ["make", "-n", "--no-print-directory", "run", f"PORT={port}", "STAMP=Makefile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_make_run_serves_links_on_its_own_port_and_says_where_to_sign_in():
    recipe = _run_recipe("8123")
    assert re.search(
        r"SITE_URL=\$\{SITE_URL:-http://127\.0\.0\.1:8123\} \S+ manage\.py seed_demo", recipe
    )
    assert "runserver 127.0.0.1:8123" in recipe
    assert "Open http://127.0.0.1:8123/ and sign in as lena" in recipe
    assert "password governance-demo" in recipe


def test_the_default_mail_backend_writes_files_not_the_console():
    # The test runner swaps in locmem; the configured default is read from the settings module.
    text = (ROOT / "config" / "settings.py").read_text()
    assert 'env.email_url("EMAIL_URL", default="filemail://")' in text
    assert "mail" in settings.BASE_DIR.joinpath("mail").name
