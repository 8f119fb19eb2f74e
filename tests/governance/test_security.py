"""CSP, security headers, `check --deploy` under production-like settings, and the start-up
refusal without SECRET_KEY or ALLOWED_HOSTS."""

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from governance import checks
from tests.html import inline_problems

ROOT = Path(__file__).resolve().parents[2]


def _csp(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


def test_pages_and_api_carry_a_strict_csp_and_nosniff(cast, client_for):
    for response in (
        client_for(cast.lead).get("/"),
        client_for(None).get("/accounts/login/"),
        client_for(cast.lead).get("/projects/ALPHA/"),
        Client().get("/api/v1/projects"),
    ):
        header = response["Content-Security-Policy"]
        assert "unsafe-inline" not in header and "unsafe-eval" not in header
        csp = _csp(response)
        assert csp["script-src"] == ["'self'"]
        assert csp["style-src"] == ["'self'"]
        assert csp["object-src"] == ["'none'"]
        assert csp["frame-ancestors"] == ["'none'"]
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/profile/",
        "/projects/ALPHA/",
        "/projects/ALPHA/editors/",
        "/projects/ALPHA/audit/",
        "/accounts/login/",
    ],
)
def test_pages_have_no_inline_script_style_or_handlers(cast, client_for, url):
    user = None if "login" in url else cast.lead
    response = client_for(user).get(url)
    assert response.status_code == 200
    assert inline_problems(response.content.decode()) == []


def _manage(*args, **env_overrides):
    skip = ("DATABASE_URL", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE", "DEBUG")
    env = {k: v for k, v in os.environ.items() if k not in skip}
    env.update(env_overrides)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


SHARED_CACHE = "redis://127.0.0.1:6379/8"


def _check_deploy(**env):
    return _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(64),
        ALLOWED_HOSTS="governance.example.com",
        BEHIND_TLS_PROXY="true",
        **env,
    )


def test_check_deploy_is_clean_with_production_settings():
    result = _check_deploy(CACHE_URL=SHARED_CACHE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_requires_a_shared_cache():
    result = _check_deploy(CACHE_URL="locmemcache://governance")
    assert result.returncode != 0
    assert "governance.W001" in result.stderr
    assert "counts per worker" in result.stderr and "CACHE_URL" in result.stderr


@pytest.mark.parametrize(
    ("debug", "backend", "warned"),
    [
        (False, "django.core.cache.backends.locmem.LocMemCache", True),
        (False, "django.core.cache.backends.dummy.DummyCache", True),
        (False, "django.core.cache.backends.redis.RedisCache", False),
        (True, "django.core.cache.backends.locmem.LocMemCache", False),
    ],
)
def test_a_per_process_cache_is_flagged_in_production_only(settings, debug, backend, warned):
    settings.DEBUG = debug
    settings.CACHES = {"default": {"BACKEND": backend, "LOCATION": SHARED_CACHE}}
    assert [m.id for m in checks.shared_cache(None)] == (["governance.W001"] if warned else [])


@pytest.mark.parametrize(
    ("env", "missing"),
    [
        ({"ALLOWED_HOSTS": "governance.example.com"}, "SECRET_KEY"),
        ({"SECRET_KEY": "x" * 60}, "ALLOWED_HOSTS"),
    ],
)
def test_debug_false_refuses_to_start_without_secret_or_hosts(env, missing):
    result = _manage("check", DEBUG="false", **env)
    assert result.returncode != 0
    assert re.search(rf"DEBUG=false needs .*{missing}", result.stderr)


def test_the_page_scanner_finds_what_the_csp_forbids():
    assert inline_problems('<script src="/static/js/app.js"></script><a href="/x">x</a>') == []
    html = (
        "<script>alert(1)</script><style>p{}</style><p style='color:red'></p>"
        "<button onclick='x()'></button><div hx-on:click='x()'></div>"
        '<a href="javascript:alert(1)">x</a>'
    )
    assert len(inline_problems(html)) == 6
