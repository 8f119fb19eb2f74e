"""The API's mounting: the kernel's API (governance/api.py: auth, the error mapping, the kernel
endpoints) with each app's `api.router`, in layer order. The site's URLs serve it."""

from importlib import import_module

from governance.api import api

API_APPS = ["registers", "charter", "status", "portfolio", "agent"]

for _app in API_APPS:
    try:
        _module = import_module(f"{_app}.api")
    except ModuleNotFoundError as exc:
        if exc.name != f"{_app}.api":
            raise
        continue
    if hasattr(_module, "router"):
        api.add_router("", _module.router)

__all__ = ["API_APPS", "api"]
