"""The API's mounting: the kernel's API (governance/api.py: auth, the error mapping, the kernel
endpoints) with each app's `api.router`, in layer order. The site's URLs serve it."""

from config.layers import APPS
from config.modules import optional_module
from governance.api import api

API_APPS = [app for app in APPS if app != "governance"]

for _app in API_APPS:
    _module = optional_module(_app, "api")
    if _module is not None and hasattr(_module, "router"):
        api.add_router("", _module.router)

__all__ = ["API_APPS", "api"]
