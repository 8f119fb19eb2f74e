import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from governance.runtime import tune_gc

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
get_resolver().url_patterns  # noqa: B018  (the URL configuration, loaded before the freeze)
tune_gc()  # once the app is loaded: see governance/runtime.py
