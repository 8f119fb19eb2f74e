"""The project's own system checks (`manage.py check --deploy`)."""

from collections.abc import Sequence
from typing import Any

from django.apps.config import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register

# Cache backends that keep their entries in each process (or keep none): every throttle and
# rate limit would count per worker, so N workers allow N times the limit.
PER_PROCESS_CACHES = {
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
}


@register(Tags.caches, deploy=True)
def shared_cache(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[CheckMessage]:
    """Production needs a cache every process shares (Redis: CACHE_URL=redis://...)."""
    if settings.DEBUG:
        return []
    backend = settings.CACHES.get("default", {}).get("BACKEND", "")
    if backend not in PER_PROCESS_CACHES:
        return []
    return [
        Warning(
            f"The cache ({backend.rsplit('.', 1)[-1]}) is kept in each process, so every "
            "throttle and rate limit (invalid API tokens, the Assistant's questions) counts "
            "per worker.",
            hint="Set CACHE_URL to a shared cache, e.g. CACHE_URL=redis://redis:6379/0.",
            id="governance.W001",
        )
    ]
