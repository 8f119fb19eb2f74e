"""Throttling of guessed credentials, at every door that takes one.

- Bearer tokens (the API and /mcp): `bearer_user` is the one check. A valid token always
  passes; an invalid one is counted per client address in the shared cache
  (`API_TOKEN_FAILURE_LIMIT` within `API_TOKEN_FAILURE_WINDOW_SECONDS`), and past the limit an
  invalid token from that address answers 429 with Retry-After until the window ends. While
  the cache cannot be reached, the count is kept in the database (`FailureCount`) instead.
- Sign-in (the login page and the admin's): django-axes with `SigninHandler`, which locks an
  (account, address) pair after `SIGNIN_FAILURE_LIMIT` failures and an address after
  `SIGNIN_ADDRESS_FAILURE_LIMIT`, never an account from every address. Its counts are in the
  database, so a cache outage changes nothing there.

The Assistant's hourly allowance of questions counts with the same fixed window (`hit`).

Both doors key on `client_ip`: the socket's peer, or behind a TLS proxy (`BEHIND_TLS_PROXY`) the
address the trusted proxies report in X-Forwarded-For (`TRUSTED_PROXY_HOPS` of them)."""

import ipaddress
import math
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from governance import services
from governance.cache import STRICT_ERRORS, strict
from governance.errors import TooManyRequests
from governance.models import FailureCount, User


def _address(value: str) -> str | None:
    """An address as a proxy may write it: bare, `ip:port`, `[v6]` or `[v6]:port`."""
    value = value.strip()
    if value.startswith("["):
        value = value[1:].split("]", 1)[0]
    elif value.count(":") == 1:
        value = value.split(":", 1)[0]
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        return None


def client_ip(request: HttpRequest) -> str | None:
    """The client's address. Directly exposed, the socket's peer (REMOTE_ADDR). Behind TLS
    proxies (`BEHIND_TLS_PROXY`), the address the outermost trusted proxy saw: each of the
    `TRUSTED_PROXY_HOPS` proxies appends its peer to X-Forwarded-For, so the client is that
    many entries from the right; entries further left are the client's own say and are not
    believed. None when there is no usable address."""
    peer = request.META.get("REMOTE_ADDR") or None
    if not settings.BEHIND_TLS_PROXY:
        return peer
    hops = max(1, settings.TRUSTED_PROXY_HOPS)
    forwarded = [
        part.strip()
        for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
        if part.strip()
    ]
    if not forwarded:
        return peer
    reported = forwarded[-hops] if len(forwarded) >= hops else forwarded[0]
    return _address(reported) or peer


# --- The one counter: a fixed window in the shared cache ------------------------------------


def hit(key: str, window: int) -> tuple[int, float]:
    """Count one more under `key` in a fixed window of `window` seconds that starts with the
    first count: the count so far and when the window ends (epoch seconds). In the shared
    cache, strictly: raises one of `STRICT_ERRORS` while the cache cannot be reached, and the
    caller decides (keep the count elsewhere, or refuse)."""
    shared = strict(cache)
    until_key = f"{key}:until"
    shared.add(until_key, time.time() + window, window)
    if shared.add(f"{key}:count", 1, window):
        count = 1
    else:
        try:
            count = shared.incr(f"{key}:count")
        except ValueError:  # expired between add and incr
            shared.add(f"{key}:count", 1, window)
            count = 1
    return count, shared.get(until_key) or time.time() + window


def counted(key: str, window: int) -> tuple[int, float]:
    """Count one more under `key` (a fixed window of `window` seconds): in the shared cache,
    or in the database while the cache cannot be reached. The count so far and when the
    window ends (epoch seconds)."""
    try:
        return hit(key, window)
    except STRICT_ERRORS:
        _store_failure(f"{key}:count", window)
        count, until = _stored_count(f"{key}:count")
        return count, until or time.time() + window


# --- Bearer tokens: the API and /mcp ------------------------------------------------------


def _key(request: HttpRequest) -> str:
    return f"throttle:bearer:{client_ip(request) or 'unknown'}"


def _refuse_if_throttled(request: HttpRequest) -> None:
    key = _key(request)
    count_key = f"{key}:count"
    try:
        shared = strict(cache)
        count = shared.get(count_key) or 0
        until = shared.get(f"{key}:until") if count >= settings.API_TOKEN_FAILURE_LIMIT else None
    except STRICT_ERRORS:  # the cache is down: the count kept in the database meanwhile
        count, until = _stored_count(count_key)
    if count < settings.API_TOKEN_FAILURE_LIMIT:
        return
    until = until or time.time() + settings.API_TOKEN_FAILURE_WINDOW_SECONDS
    retry_after = max(1, math.ceil(until - time.time()))
    raise TooManyRequests(
        f"Too many invalid API tokens from your address. Try again in {retry_after} seconds.",
        retry_after=retry_after,
    )


def _count_failure(request: HttpRequest) -> None:
    """Count one invalid token from the request's address (a fixed window): in the shared
    cache, or in the database while the cache cannot be reached."""
    key = _key(request)
    window = settings.API_TOKEN_FAILURE_WINDOW_SECONDS
    try:
        hit(key, window)
    except STRICT_ERRORS:
        _store_failure(f"{key}:count", window)


def _stored_count(key: str) -> tuple[int, float | None]:
    """The database's count under `key` within its window, and when the window ends."""
    row = (
        FailureCount.objects.filter(key=key, until__gt=timezone.now())
        .values_list("count", "until")
        .first()
    )
    return (row[0], row[1].timestamp()) if row else (0, None)


def _store_failure(key: str, window: int) -> None:
    now = timezone.now()
    with transaction.atomic():
        row, _ = FailureCount.objects.select_for_update().get_or_create(
            key=key, defaults={"count": 0, "until": now + timedelta(seconds=window)}
        )
        if row.until <= now:
            row.count, row.until = 0, now + timedelta(seconds=window)
        row.count += 1
        row.save(update_fields=["count", "until"])
        FailureCount.objects.filter(until__lt=now - timedelta(days=1)).delete()


def bearer_user(request: HttpRequest, token: str) -> User | None:
    """The one bearer-token check of every door (the API, /mcp): the token's owner, or None
    for an invalid token, which is counted against the client's address. A valid token is
    never throttled; an invalid one from an address past the limit raises TooManyRequests
    (429, Retry-After) and is not counted again."""
    user = services.user_for_token(token.strip()) if token and token.strip() else None
    if user is not None:
        return user
    _refuse_if_throttled(request)
    _count_failure(request)
    return None


# --- Sign-in (django-axes) ----------------------------------------------------------------

PAIR, ADDRESS = 0, 1  # the order of AXES_LOCKOUT_PARAMETERS
Credentials = dict[str, Any] | None
Attempts = QuerySet[Any]  # django-axes' AccessAttempt rows (the package has no type hints)


class SigninHandler(AxesDatabaseHandler):  # type: ignore[misc]  # django-axes has no py.typed
    """django-axes' database handler with a limit per lockout parameter: an (account,
    address) pair is locked at AXES_FAILURE_LIMIT failures, an address (every account from
    it) at SIGNIN_ADDRESS_FAILURE_LIMIT. A success clears its own pair only, so a person
    who signs in between guesses does not clear the address's count."""

    def get_failures(self, request: HttpRequest, credentials: Credentials = None) -> int:
        lock = signin_lock(request, credentials, handler=self)
        if lock is not None:
            limit: int = settings.AXES_FAILURE_LIMIT
            return max(lock.failures, limit)
        attempts: list[Attempts] = self.get_user_attempts(request, credentials)
        return _failures(attempts[PAIR])

    def reset_user_attempts(self, request: HttpRequest, credentials: Credentials = None) -> int:
        attempts: list[Attempts] = self.filter_user_attempts(request, credentials)
        count, _ = attempts[PAIR].delete()
        return count


def _failures(attempts: Attempts) -> int:
    return sum(attempts.values_list("failures_since_start", flat=True))


@dataclass(frozen=True)
class SigninLock:
    whole_address: bool  # True: every account from the address; False: this account from it
    failures: int
    until: datetime


def _lock_until(attempts: Attempts, limit: int) -> datetime | None:
    """When the failures counted within the lock-out time fall below `limit` again: the
    time the newest attempts that still reach the limit age out. None when not locked."""
    total = 0
    for failures, at in attempts.order_by("-attempt_time").values_list(
        "failures_since_start", "attempt_time"
    ):
        total += failures
        if total >= limit:
            until: datetime = at + settings.AXES_COOLOFF_TIME
            return until
    return None


def signin_lock(
    request: HttpRequest, credentials: Credentials = None, *, handler: SigninHandler | None = None
) -> SigninLock | None:
    """The lock that holds for this sign-in (address first, then the pair), or None."""
    handler = handler or SigninHandler()
    # What django-axes' middleware sets on a request before its handler reads it.
    if not hasattr(request, "axes_attempt_time"):
        request.axes_attempt_time = timezone.now()  # type: ignore[attr-defined]
    if not hasattr(request, "axes_ip_address"):
        request.axes_ip_address = client_ip(request)  # type: ignore[attr-defined]
    if not hasattr(request, "axes_user_agent"):
        user_agent = request.META.get("HTTP_USER_AGENT", "<unknown>")[:255]
        request.axes_user_agent = user_agent  # type: ignore[attr-defined]
    attempts: list[Attempts] = handler.get_user_attempts(request, credentials)
    address_until = _lock_until(attempts[ADDRESS], settings.SIGNIN_ADDRESS_FAILURE_LIMIT)
    if address_until is not None:
        return SigninLock(True, _failures(attempts[ADDRESS]), address_until)
    if get_client_username(request, credentials) is None:
        return None
    pair_until = _lock_until(attempts[PAIR], settings.AXES_FAILURE_LIMIT)
    if pair_until is not None:
        return SigninLock(False, _failures(attempts[PAIR]), pair_until)
    return None


def signin_locked(
    request: HttpRequest, original_response: object = None, credentials: Credentials = None
) -> HttpResponse:
    """django-axes' answer once a pair or an address is locked out: the sign-in page again,
    saying which and until when, with 429 and Retry-After. The password is not checked."""
    lock = signin_lock(request, credentials)
    until = lock.until if lock else timezone.now() + settings.AXES_COOLOFF_TIME
    seconds = max(1, math.ceil((until - timezone.now()).total_seconds()))
    response = render(
        request,
        "registration/login.html",  # also for the admin's sign-in: the same words
        {
            "form": AuthenticationForm(request, data=None),
            "locked_out": True,
            "locked_address": bool(lock and lock.whole_address),
            "lockout_until": until,
            "lockout_minutes": max(1, math.ceil(seconds / 60)),
            "next": request.POST.get("next", "") if request.method == "POST" else "",
        },
        status=429,
    )
    response["Retry-After"] = str(seconds)
    return response
