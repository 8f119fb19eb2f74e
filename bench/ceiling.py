"""Measuring instruments for the load run, never served to users: the register page's
ceilings on this machine.

    BENCH_LOAD_WSGI=bench.ceiling:stored_page python bench/bench_load.py
    BENCH_LOAD_WSGI=bench.ceiling:stored_page_without_gate python bench/bench_load.py

`stored_page` answers the register page with the bytes it rendered the first time (per
worker, per URL), compressed once as the register page's stored body is
(`governance.deflate`): no row is loaded, no template rendered, no cache key computed. The
session, the user and the access gate (`permissions.project_for`) still run on every
request, as they must. It is the most any caching of the register page could give.

`stored_page_without_gate` also answers the access gate from the first request's answer:
what is left is Django, the session and the user. It shows what the gate itself costs.

The other endpoints are served as production serves them.
"""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()  # gunicorn imports this module first

from django.http import HttpResponse  # noqa: E402

from governance import deflate, permissions  # noqa: E402
from registers.views import base  # noqa: E402

_render_page = base.RegisterPages.render_page
_project_for = permissions.project_for
_pages: dict[str, deflate.Stored] = {}
_gates: dict[tuple, tuple] = {}


def _stored_render_page(reg, request, project, caller, **kwargs):
    key = request.get_full_path()
    if key not in _pages:
        _pages[key] = deflate.Stored(_render_page(reg, request, project, caller, **kwargs).content)
    response = HttpResponse(_pages[key].raw)
    response.deflate_parts = (response.content, [_pages[key]])
    return response


def _stored_project_for(request, key):
    memo = (request.user.pk, key)
    if memo not in _gates:
        _gates[memo] = _project_for(request, key)
    return _gates[memo]


def _patch(*, gate: bool) -> None:
    base.RegisterPages.render_page = _stored_render_page
    if not gate:
        permissions.project_for = _stored_project_for


def _stored(*, gate: bool):
    from config.wsgi import application  # as a worker loads it (and tunes its collector)

    _patch(gate=gate)
    return application


def stored_page(environ, start_response):
    return _stored(gate=True)(environ, start_response)


def stored_page_without_gate(environ, start_response):
    return _stored(gate=False)(environ, start_response)
