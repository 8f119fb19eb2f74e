"""The shared cache fails soft. The cache holds nothing that is not also in the database, so
when Redis cannot be reached a read misses, a write is skipped and the request is answered from
the database: slower, never unavailable.

`SoftRedisCache` is Django's RedisCache with the connection errors swallowed (logged at most
once a minute per process). After a failure the cache is not asked again for
`RETRY_SECONDS`, so a request during an outage does not wait on one refused connection per
cache call. The few callers that must know whether the cache counted (the throttles and rate
limits) use `strict(cache)`, which raises `UNAVAILABLE` errors, and decide for themselves."""

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ReadOnlyError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger("governance.cache")

# What "the cache cannot be reached" raises (a refused or dropped connection, a timeout, a
# replica that will not take writes).
UNAVAILABLE = (RedisConnectionError, RedisTimeoutError, ReadOnlyError, OSError)
LOG_EVERY_SECONDS = 60.0
RETRY_SECONDS = 1.0


_T = TypeVar("_T")
Version = int | None


class CacheDown(Exception):
    """The cache did not answer (raised by `strict` views while the cache is held down)."""


class SoftRedisCache(RedisCache):
    """Django's RedisCache whose every call answers a miss (or does nothing) when Redis
    cannot be reached."""

    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._down_until = 0.0
        self._logged_at = -LOG_EVERY_SECONDS
        self._lock = threading.Lock()

    # --- the state ------------------------------------------------------------------------

    def is_down(self) -> bool:
        """True while a recent call failed (for RETRY_SECONDS after it)."""
        return time.monotonic() < self._down_until

    def _failed(self, error: Exception) -> None:
        now = time.monotonic()
        with self._lock:
            self._down_until = now + RETRY_SECONDS
            log = now - self._logged_at >= LOG_EVERY_SECONDS
            if log:
                self._logged_at = now
        if log:
            logger.warning(
                "The cache cannot be reached (%s: %s); answering from the database. "
                "Logged once a minute while it lasts.",
                type(error).__name__,
                error,
            )

    def _soft(self, name: str, default: _T, *args: Any, **kwargs: Any) -> _T:
        """RedisCache's `name` called with the arguments; `default` (of the type it answers)
        while the cache cannot be reached."""
        if self.is_down():
            return default
        try:
            answer: _T = getattr(super(), name)(*args, **kwargs)
            return answer
        except UNAVAILABLE as error:
            self._failed(error)
            return default

    def _strict(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.is_down():
            raise CacheDown("The cache did not answer a moment ago.")
        try:
            return getattr(super(), name)(*args, **kwargs)
        except UNAVAILABLE as error:
            self._failed(error)
            raise

    # --- the cache's calls, soft ------------------------------------------------------------

    def add(
        self, key: Any, value: Any, timeout: float | None = DEFAULT_TIMEOUT, version: Version = None
    ) -> bool:
        return self._soft("add", False, key, value, timeout, version)

    def get(self, key: Any, default: Any = None, version: Version = None) -> Any:
        return self._soft("get", default, key, default, version)

    def set(
        self, key: Any, value: Any, timeout: float | None = DEFAULT_TIMEOUT, version: Version = None
    ) -> None:
        return self._soft("set", None, key, value, timeout, version)

    def touch(
        self, key: Any, timeout: float | None = DEFAULT_TIMEOUT, version: Version = None
    ) -> bool:
        return self._soft("touch", False, key, timeout, version)

    def delete(self, key: Any, version: Version = None) -> bool:
        return self._soft("delete", False, key, version)

    def get_many(self, keys: Iterable[Any], version: Version = None) -> dict[Any, Any]:
        return self._soft("get_many", {}, keys, version)

    def has_key(self, key: Any, version: Version = None) -> bool:
        return self._soft("has_key", False, key, version)

    def incr(self, key: Any, delta: int = 1, version: Version = None) -> int:
        # No count can be read: as for a key that does not exist (callers handle ValueError).
        if self.is_down():
            raise ValueError(f"Key '{key}' not found (the cache cannot be reached).")
        try:
            return super().incr(key, delta, version)
        except UNAVAILABLE as error:
            self._failed(error)
            raise ValueError(f"Key '{key}' not found (the cache cannot be reached).") from None

    def set_many(
        self, data: dict[Any, Any], timeout: float | None = DEFAULT_TIMEOUT, version: Version = None
    ) -> list[Any]:
        return self._soft("set_many", list(data), data, timeout, version)

    def delete_many(self, keys: Iterable[Any], version: Version = None) -> None:
        return self._soft("delete_many", None, keys, version)

    # Django's RedisCache.clear answers whether Redis flushed; django-stubs declares None.
    def clear(self) -> bool:  # type: ignore[override]
        return self._soft("clear", False)


class _Strict:
    """The same backend, its calls raising when the cache cannot be reached."""

    def __init__(self, backend: SoftRedisCache) -> None:
        self._backend = backend

    def __getattr__(self, name: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return self._backend._strict(name, *args, **kwargs)

        return call


def strict(backend: BaseCache) -> BaseCache | _Strict:
    """`backend` with its calls raising `UNAVAILABLE` (or CacheDown) instead of answering a
    miss; any other backend as it is."""
    target = _resolve(backend)
    return _Strict(target) if isinstance(target, SoftRedisCache) else target


def _resolve(backend: BaseCache) -> BaseCache:
    """The backend behind django.core.cache.cache (a proxy to caches['default'])."""
    from django.core.cache import cache, caches

    return caches["default"] if backend is cache else backend


def cache_status(backend: BaseCache | None = None) -> str:
    """The cache for /readyz: "ok" when it answers a round trip now, else "down"."""
    from django.core.cache import caches

    backend = caches["default"] if backend is None else backend
    try:
        ops = strict(backend)
        ops.set("readyz:probe", 1, 5)
        ops.get("readyz:probe")
    except (*UNAVAILABLE, CacheDown):
        return "down"
    return "ok"


STRICT_ERRORS = (*UNAVAILABLE, CacheDown)
