"""THE permission matrix: every URL pattern (HTML, HTMX and API) x every role x every method
it answers. A pattern or method without expected cells fails, so a new URL cannot land
without its row. Expectations live in tests/permission_matrix/<app>.py."""

import functools
import re
from types import SimpleNamespace

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from tests.conftest import PMO_GROUP, build_cast, fresh, set_governance_group
from tests.permission_matrix import DENY, HIDE, LOGIN, OK, ROLES, load

CELLS, RESOLVERS, SETUPS = load()
SKIP_NAMESPACES = {
    "admin"
}  # Django admin keeps its own staff gate (tests/governance/test_admin.py)
IGNORED_METHODS = {"HEAD", "OPTIONS", "TRACE"}


def _ninja_methods(callback) -> list[str]:
    for cell in getattr(callback, "__closure__", None) or ():
        path_view = cell.cell_contents
        if hasattr(path_view, "operations"):
            return sorted({m for op in path_view.operations for m in op.methods})
    return []


def _methods(callback) -> list[str]:
    if hasattr(callback, "http_methods"):
        return list(callback.http_methods)
    view_class = getattr(callback, "view_class", None)
    if view_class is not None:
        return [
            m.upper()
            for m in view_class.http_method_names
            if hasattr(view_class, m) and m.upper() not in IGNORED_METHODS
        ]
    methods = _ninja_methods(callback)
    if methods:
        return methods
    if isinstance(callback, functools.partial) and callback.func.__module__.startswith("ninja."):
        return ["GET"]  # the API's OpenAPI document and docs page
    raise AssertionError(
        f"{callback!r} declares no HTTP methods: decorate it with governance.http.page"
    )


def _walk(patterns, prefix="", namespace=None):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            if pattern.namespace in SKIP_NAMESPACES:
                continue
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern), pattern.namespace)
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern.callback


def _discover() -> dict[str, object]:
    found: dict[str, object] = {}
    for route, callback in _walk(get_resolver().url_patterns):
        if route.startswith("static/") or "(?P<path>" in route:
            continue
        for method in _methods(callback):
            found[f"{method} {route}"] = callback
    return found


DISCOVERED = _discover()
MISSING = sorted(set(DISCOVERED) - set(CELLS))
STALE = sorted(set(CELLS) - set(DISCOVERED))
CASES = sorted(DISCOVERED) + [f"STALE {key}" for key in STALE]


def _outcome(response) -> str:
    status = response.status_code
    if status == 401:
        return LOGIN
    if status == 302 and "/accounts/login/" in response.get("Location", ""):
        return LOGIN
    if status == 403:
        return DENY
    if status == 404:
        return HIDE
    if status == 405:
        return "method-not-allowed"
    return OK


def _url(route: str, world, user) -> str:
    def fill(match):
        name = match.group(1)
        if name not in RESOLVERS:
            raise AssertionError(f"No resolver for URL kwarg <{name}> in {route}")
        return str(RESOLVERS[name](world, user))

    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", fill, route)


def _request(client: Client, method: str, url: str, *, api: bool, htmx: bool):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    if method == "GET":
        return client.get(url, **headers)
    if api:
        return client.generic(method, url, data="{}", content_type="application/json", **headers)
    return client.generic(
        method, url, data="", content_type="application/x-www-form-urlencoded", **headers
    )


def test_every_pattern_has_cells_for_every_role():
    assert not MISSING, (
        "URL patterns without expected cells in tests/permission_matrix:\n" + "\n".join(MISSING)
    )
    incomplete = [key for key, cells in CELLS.items() if set(cells) != set(ROLES)]
    assert not incomplete, f"Cells missing roles: {incomplete}"


def world_for(cast) -> SimpleNamespace:
    """The cast and one of each record the matrix's paths name (tests/permission_matrix)."""
    world = SimpleNamespace(cast=cast, project=cast.project)
    for setup in SETUPS:
        setup(world)
    return world


@pytest.fixture(scope="module")
def built_world(module_db):
    return world_for(build_cast())


@pytest.fixture
def world(db, built_world):
    return fresh(built_world)


@pytest.mark.parametrize("case", CASES)
def test_permission_matrix(case, world):
    check(case, world)


def check(case, world):
    """Every role (and, for a page, with and without HTMX) through one pattern and method,
    each request in a transaction of its own that is rolled back after it."""
    assert not case.startswith("STALE"), (
        f"Expected cells for a URL that no longer exists: {case[6:]}"
    )
    assert case in CELLS, (
        f"No expected cells for {case}: add them to tests/permission_matrix/<app>.py"
    )
    method, route = case.split(" ", 1)
    cast = world.cast
    api = route.startswith("api/")
    failures = []
    for role in ROLES:
        user = cast.user(role)
        for htmx in (False,) if api else (False, True):
            with transaction.atomic():
                if role == "pmo":
                    set_governance_group(PMO_GROUP)
                client = Client()
                if user is not None:
                    client.force_login(user)
                url = _url(route, world, user)
                response = _request(client, method, url, api=api, htmx=htmx)
                got, expected = _outcome(response), CELLS[case][role]
                if got != expected:
                    failures.append(
                        f"{role}{' (htmx)' if htmx else ''}: expected {expected}, got {got} "
                        f"({response.status_code}) for {method} {url}"
                    )
                transaction.set_rollback(True)
    assert not failures, "\n".join(failures)
