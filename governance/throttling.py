"""Throttling of guessed credentials. Sign-in (the login page and the admin's) is throttled
by django-axes, per account and per address (settings `AXES_*`, from `SIGNIN_*` in the
environment); invalid bearer tokens are counted here, per address, in the shared cache
(`API_TOKEN_FAILURE_LIMIT` within `API_TOKEN_FAILURE_WINDOW_SECONDS`): past the limit every
bearer request from that address answers 429 with Retry-After until the window ends."""

import math
import time

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.http import HttpRequest
from django.shortcuts import render

from governance.errors import TooManyRequests


def client_ip(request: HttpRequest) -> str | None:
    """The address the request came from (the socket's peer; a reverse proxy in front of the
    app should pass the client's address on as REMOTE_ADDR), or None when there is none."""
    return request.META.get("REMOTE_ADDR") or None


def signin_lockout_minutes() -> int:
    return max(1, math.ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60))


def signin_locked(request, original_response=None, credentials=None):
    """django-axes' answer once an account or an address is locked out: the sign-in page
    again, saying so, with 429 and Retry-After. The password is not checked at all."""
    minutes = signin_lockout_minutes()
    response = render(
        request,
        "registration/login.html",  # also for the admin's sign-in: the same words
        {
            "form": AuthenticationForm(request, data=None),
            "locked_out": True,
            "lockout_minutes": minutes,
            "next": request.POST.get("next", "") if request.method == "POST" else "",
        },
        status=429,
    )
    response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return response


def _keys(request: HttpRequest) -> tuple[str, str]:
    address = client_ip(request) or "unknown"
    return f"throttle:bearer:{address}:count", f"throttle:bearer:{address}:until"


def check_bearer(request: HttpRequest) -> None:
    """Refuse (429) any bearer request from an address past the invalid-token limit."""
    count_key, until_key = _keys(request)
    if (cache.get(count_key) or 0) < settings.API_TOKEN_FAILURE_LIMIT:
        return
    until = cache.get(until_key) or time.time() + settings.API_TOKEN_FAILURE_WINDOW_SECONDS
    retry_after = max(1, math.ceil(until - time.time()))
    raise TooManyRequests(
        f"Too many invalid API tokens from your address. Try again in {retry_after} seconds.",
        retry_after=retry_after,
    )


def bearer_failed(request: HttpRequest) -> None:
    """Count one invalid token from the request's address (a fixed window)."""
    count_key, until_key = _keys(request)
    window = settings.API_TOKEN_FAILURE_WINDOW_SECONDS
    cache.add(until_key, time.time() + window, window)
    if not cache.add(count_key, 1, window):
        try:
            cache.incr(count_key)
        except ValueError:  # expired between add and incr
            cache.add(count_key, 1, window)
