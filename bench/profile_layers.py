"""Where one request's CPU time goes, layer by layer: every middleware, the session and the
user, the access gate, the page's context, the table, rendering, SQL and the shared cache.

    DATABASE_URL=postgres://... CACHE_URL=redis://... DEBUG=false SECRET_KEY=... \\
        python bench/profile_layers.py CONFIG [RUNS]

CONFIG is the load run's configuration (`python bench/bench_load.py setup CONFIG` writes it,
with its sessions, into the database DATABASE_URL names); run this with the same SECRET_KEY
and settings. Each request goes through Django's WSGI handler in this process, as a gunicorn
worker serves it (X-Forwarded-Proto https, Accept-Encoding gzip). Reported per layer: the
median over RUNS requests (default 21) of its own CPU time (`time.process_time`, what it
spends outside the layers it calls), in ms; "request (all layers)" is the whole request. The
machine may be busy: CPU time is what a request costs a worker whatever else runs.

Pages profiled: /healthz, the register page as the lead and as a viewer (its table taken from
the cache as it is in a steady state), and `bench.ceiling:stored_page`.
"""

import io
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from functools import wraps
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

_clock = time.process_time


class Sections:
    """A stack of named sections; each records its own time (children's subtracted)."""

    def __init__(self) -> None:
        self.stack: list[list] = []
        self.own: dict[str, float] = defaultdict(float)
        self.count: dict[str, int] = defaultdict(int)

    def reset(self) -> None:
        self.stack.clear()
        self.own = defaultdict(float)
        self.count = defaultdict(int)

    def enter(self, name: str) -> None:
        self.stack.append([name, _clock(), 0.0])

    def leave(self) -> None:
        name, start, children = self.stack.pop()
        elapsed = _clock() - start
        self.own[name] += elapsed - children
        self.count[name] += 1
        if self.stack:
            self.stack[-1][2] += elapsed

    def wrap(self, name: str, func):
        @wraps(func)
        def timed(*args, **kwargs):
            self.enter(name)
            try:
                return func(*args, **kwargs)
            finally:
                self.leave()

        return timed


SECTIONS = Sections()


def _instrument(handler) -> None:
    """Time every middleware (its own part), every process_view hook and the view."""
    chain = handler._middleware_chain
    holder, attr = handler, "_middleware_chain"
    while True:
        inner = getattr(chain, "__wrapped__", chain)
        name = type(inner).__name__ if hasattr(inner, "get_response") else "view"
        setattr(holder, attr, SECTIONS.wrap(f"mw {name}", chain))
        if not hasattr(inner, "get_response"):
            break
        holder, attr, chain = inner, "get_response", inner.get_response
    handler._view_middleware = [
        SECTIONS.wrap(f"process_view {type(m.__self__).__name__}", m)
        for m in handler._view_middleware
    ]


def _patch() -> None:
    from django.contrib import auth
    from django.contrib.sessions.backends import cached_db
    from django.db import connection
    from django.template import loader

    from governance import cache as soft_cache
    from governance import context_processors, permissions
    from governance.http import render_htmx  # noqa: F401
    from registers.views import base

    auth.get_user = SECTIONS.wrap("user", auth.get_user)
    cached_db.SessionStore.load = SECTIONS.wrap("session", cached_db.SessionStore.load)
    for name in ("project_for", "editable_project_for"):
        setattr(permissions, name, SECTIONS.wrap("gate", getattr(permissions, name)))
    base.RegisterPages.page_context = SECTIONS.wrap("context", base.RegisterPages.page_context)
    base.render_htmx = SECTIONS.wrap("template", base.render_htmx)
    loader.render_to_string = SECTIONS.wrap("template", loader.render_to_string)
    context_processors.shell = SECTIONS.wrap("context processor shell", context_processors.shell)
    for method in ("get", "set", "get_many", "set_many", "delete", "incr", "add"):
        cls = soft_cache.SoftRedisCache
        if method in vars(cls) or hasattr(cls, method):
            setattr(cls, method, SECTIONS.wrap("cache", getattr(cls, method)))

    def sql(execute, sql, params, many, context):
        SECTIONS.enter("sql")
        try:
            return execute(sql, params, many, context)
        finally:
            SECTIONS.leave()

    connection.execute_wrappers.append(sql)


def _environ(url: str, cookie: str) -> dict:
    path, _, query = url.partition("?")
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_X_FORWARDED_PROTO": "https",
        "HTTP_ACCEPT_ENCODING": "gzip, deflate",
        "HTTP_ACCEPT": "*/*",
        "HTTP_USER_AGENT": "python-requests/2.32",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if cookie:
        environ["HTTP_COOKIE"] = cookie
    return environ


def _request(application, url: str, cookie: str) -> tuple[str, int]:
    status: list[str] = []

    def start_response(line, headers, exc_info=None):
        status.append(line)

    SECTIONS.enter("wsgi handler")
    result = application(_environ(url, cookie), start_response)
    size = sum(len(chunk) for chunk in result)
    if hasattr(result, "close"):
        result.close()
    SECTIONS.leave()
    return status[0], size


def profile(application, url: str, cookie: str, runs: int) -> dict[str, tuple[float, int]]:
    for _ in range(3):  # warm: the process's caches, the shared cache's table
        line, _ = _request(application, url, cookie)
        if not line.startswith("200"):
            raise SystemExit(f"{url}: {line}")
    samples: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = {}
    sizes = []
    for _ in range(runs):
        SECTIONS.reset()
        start = _clock()
        _, size = _request(application, url, cookie)
        samples["request (all layers)"].append((_clock() - start) * 1000)
        counts["request (all layers)"] = 1
        sizes.append(size)
        for name, seconds in SECTIONS.own.items():
            samples[name].append(seconds * 1000)
            counts[name] = SECTIONS.count[name]
    return {
        name: (statistics.median(values + [0.0] * (runs - len(values))), counts[name])
        for name, values in samples.items()
    } | {"bytes sent": (statistics.median(sizes), 0)}


def main() -> None:
    config = json.loads(Path(sys.argv[1]).read_text())
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 21
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    from config.wsgi import application

    application.load_middleware()  # a fresh chain, then timed
    _instrument(application)
    _patch()
    cookie_name = config["sessionCookie"]
    register = config["requests"]["register page (100 rows)"]
    pages = {
        "healthz": ("/healthz", ""),
        "register (lead)": (register["url"], f"{cookie_name}={register['session']}"),
    }
    if "viewer" in config:
        pages["register (viewer)"] = (register["url"], f"{cookie_name}={config['viewer']}")
    results = {}
    for name, (url, cookie) in pages.items():
        if only and name not in only:
            continue
        results[name] = profile(application, url, cookie, runs)
    if not only or "stored page" in only:
        from bench import ceiling

        ceiling._patch(gate=True)
        from registers.views import base

        base.RegisterPages.render_page = SECTIONS.wrap(
            "stored page", base.RegisterPages.render_page
        )
        results["stored page"] = profile(
            application, register["url"], f"{cookie_name}={register['session']}", runs
        )
    names = sorted(
        {n for r in results.values() for n in r}, key=lambda n: (n != "request (all layers)", n)
    )
    width = max(len(n) for n in names)
    print(f"{'layer (ms CPU, median)':<{width}}  " + "  ".join(f"{p:>18}" for p in results))
    for name in names:
        cells = []
        for result in results.values():
            value, count = result.get(name, (0.0, 0))
            if name == "bytes sent":
                cells.append(f"{value:>18,.0f}")
            else:
                cells.append(f"{value:>12.2f} (x{count:>3})" if value or count else f"{'-':>18}")
        print(f"{name:<{width}}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
