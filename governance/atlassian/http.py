"""One HTTP client per backend, over one `requests.Session`: connect/read timeouts, 503
retried with Retry-After and jittered back-off, a 429 never slept on (raised at once with its
Retry-After and limit headers, logged), one token refresh on 401, pagination
followed to the end (up to ATLASSIAN_MAX_PAGES), and every failure raised as the backend's
own error class with the operation named. Tokens never reach a log line or a message."""

import base64
import datetime as dt
import email.utils
import logging
import math
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import requests
from django.conf import settings

from governance.atlassian import grants, scopes
from governance.atlassian.errors import AtlassianUnavailable
from governance.tracker.base import TrackerError
from governance.wiki.base import WikiError

logger = logging.getLogger(__name__)

# The backend's own error, which a failed call raises.
CallError = TrackerError | WikiError

RETRY_STATUSES = frozenset({503})
# What Atlassian says about its rate limits, logged and kept with a 429's error.
LIMIT_HEADERS = (
    "Retry-After",
    "RateLimit-Reason",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "X-RateLimit-NearLimit",
    "X-Beta-RateLimit-Limit",
    "X-Beta-RateLimit-Remaining",
)
# A 429 without Retry-After: wait this long before asking again.
DEFAULT_RATE_WAIT = 60


def query_string(value: str) -> str:
    """`value` as a string in a JQL or CQL query: quoted, its backslashes and quotes escaped."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def retry_after_seconds(value: str | None) -> int | None:
    """Retry-After in whole seconds, from a number of seconds or an HTTP date; any length."""
    if not value:
        return None
    try:
        return max(0, math.ceil(float(value)))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0, math.ceil((when - dt.datetime.now(dt.UTC)).total_seconds()))


class Credentials:
    """How a request authenticates. `refresh()` returns True when a retry may succeed."""

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def refresh(self) -> bool:
        return False

    base_url: str = ""
    # Who the call is made as, in governance.atlassian.scopes' table: "user" or "app".
    caller: str = "user"


@dataclass
class ServiceCredentials(Credentials):
    """The app's own service account: HTTP Basic with e-mail and API token."""

    email: str
    api_token: str
    base_url: str = ""
    caller: str = "app"

    def headers(self) -> dict[str, str]:
        raw = f"{self.email}:{self.api_token}".encode()
        return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


@dataclass
class BearerCredentials(Credentials):
    """A bare access token (during sign-in, before the grant is stored)."""

    token: str
    base_url: str = ""

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


class UserCredentials(Credentials):
    """A signed-in person's OAuth access token, refreshed (and the rotated refresh token
    stored) once on a 401 or when it has expired."""

    def __init__(self, account_id: str, product: str) -> None:
        self.account_id = account_id
        self.product = product
        self._grants = grants
        self._token, cloud_id = grants.access_token(account_id)
        self.base_url = grants.api_base(product, cloud_id)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"}

    def refresh(self) -> bool:
        self._token, _ = self._grants.access_token(self.account_id, force_refresh=True)
        return True


class Client:
    def __init__(self, *, product: str, error_class: type[CallError]) -> None:
        self.product = product
        self.error_class = error_class
        self.session = requests.Session()
        self.session.headers.update({"Accept": "application/json"})
        self.sleep: Callable[[float], None] = time.sleep

    # ----------------------------------------------------------------------------------
    def request(
        self,
        operation: str,
        method: str,
        path: str,
        creds: Credentials,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        missing_ok: bool = False,
        base_url: str | None = None,
        idempotent: bool | None = None,
    ) -> Any:
        """JSON body of a 2xx answer (None when empty); None for 404 when `missing_ok`.
        A POST is not `idempotent` unless said (a search or a check is): one that timed out
        or met a 5xx may have worked, so it is never retried here; its error carries
        `uncertain = True` and `create()` looks for what it made before trying again."""
        if idempotent is None:
            idempotent = method != "POST"
        if not scopes.allows(operation, creds.caller):
            # The scopes people grant are derived from who makes which call: a call made
            # as someone its row does not name would need a scope nobody asked for.
            raise self.error_class(
                f"{self.product}: {operation} is not made as the {creds.caller} "
                "(governance.atlassian.scopes)."
            )
        url = (base_url or creds.base_url).rstrip("/") + path
        if not url.startswith(("http://", "https://")):
            raise self.error_class(
                f"{self.product} is not configured: no base URL for {operation} "
                "(set ATLASSIAN_SITE_URL)."
            )
        refreshed = False
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self.session.request(
                    method,
                    url,
                    params=params,
                    json=json,
                    headers=creds.headers(),
                    timeout=(settings.ATLASSIAN_CONNECT_TIMEOUT, settings.ATLASSIAN_READ_TIMEOUT),
                )
            except requests.RequestException as exc:
                if idempotent and attempt <= settings.ATLASSIAN_RETRIES:
                    self._wait(attempt, None)
                    continue
                error = self.error_class(
                    f"{self.product} is not answering ({operation}: {type(exc).__name__})."
                )
                error.uncertain = not idempotent
                raise error from None
            status = response.status_code
            if status == 429:
                # Never slept on, in a web request or the worker: the caller answers from
                # cache or says the tracker is busy; the outbox holds its task until then.
                raise self._rate_limited(operation, response)
            if status in RETRY_STATUSES and idempotent and attempt <= settings.ATLASSIAN_RETRIES:
                self._wait(attempt, response.headers.get("Retry-After"))
                continue
            if status == 401 and not refreshed and self._refresh(creds, operation):
                refreshed = True
                continue
            if status == 404 and missing_ok:
                return None
            if 200 <= status < 300:
                if not response.content:
                    return None
                try:
                    return response.json()
                except ValueError:
                    raise self.error_class(
                        f"{self.product} answered {operation} with something that is not JSON."
                    ) from None
            error = self.error_class(self._describe(operation, response))
            error.uncertain = not idempotent and status >= 500
            raise error

    def create(
        self,
        operation: str,
        path: str,
        creds: Credentials,
        *,
        json: Any,
        find: Callable[[], Any],
        **kwargs: Any,
    ) -> Any:
        """POST that creates something, never retried blindly: when the first try's outcome
        is unknown (timeout, 5xx), `find()` looks for what it made (None: not there) and only
        then is it sent once more."""
        try:
            return self.request(operation, "POST", path, creds, json=json, **kwargs)
        except self.error_class as exc:
            if not getattr(exc, "uncertain", False):
                raise
            found = find()
            if found is not None:
                logger.info("%s: the first try had worked; found what it made", operation)
                return found
            logger.info("%s: the first try made nothing; sending it once more", operation)
        return self.request(operation, "POST", path, creds, json=json, **kwargs)

    def _refresh(self, creds: Credentials, operation: str) -> bool:
        try:
            return creds.refresh()
        except AtlassianUnavailable:
            raise self.error_class(
                f"{self.product} sign-in could not be renewed ({operation}): "
                "the Atlassian authorization server is not answering."
            ) from None

    def _wait(self, attempt: int, retry_after: str | None) -> None:
        delay = None
        if retry_after:
            try:
                delay = float(retry_after)
            except ValueError:
                delay = None
        if delay is None:
            delay = 0.5 * 2 ** (attempt - 1)
        delay = min(delay, settings.ATLASSIAN_MAX_RETRY_WAIT)
        # Jitter so that many workers throttled at once do not come back at once.
        self.sleep(delay + random.uniform(0, max(delay, 0.1) * 0.25))

    def _rate_limited(self, operation: str, response: requests.Response) -> CallError:
        headers = {h: response.headers[h] for h in LIMIT_HEADERS if h in response.headers}
        wait = retry_after_seconds(response.headers.get("Retry-After"))
        logger.warning(
            "%s rate limit on %s: %s",
            self.product,
            operation,
            "; ".join(f"{k}: {v}" for k, v in headers.items()) or "no limit headers",
        )
        detail = "; ".join(f"{k} {v}" for k, v in headers.items())
        error = self.error_class(
            f"{self.product} is busy: rate limit ({operation}, HTTP 429"
            + (f"; {detail}" if detail else "")
            + ")."
        )
        error.retry_after = wait if wait is not None else DEFAULT_RATE_WAIT
        error.rate_limit = headers
        return error

    def _describe(self, operation: str, response: requests.Response) -> str:
        status = response.status_code
        detail = ""
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            messages = list(body.get("errorMessages") or [])
            errors = body.get("errors")
            if isinstance(errors, dict):
                messages += [f"{k}: {v}" for k, v in errors.items()]
            elif isinstance(errors, list):
                messages += [str(e.get("title") or e) for e in errors if e]
            if body.get("message"):
                messages.append(str(body["message"]))
            detail = "; ".join(str(m) for m in messages)[:300]
        what = {
            401: "refused the credentials",
            403: "refused the permission",
            404: "found nothing",
            429: "is rate limiting",
            503: "is not answering",
        }.get(status, "answered an error")
        text = f"{self.product} {what} ({operation}, HTTP {status})"
        return f"{text}: {detail}" if detail else text + "."

    # ----------------------------------------------------------------------------------
    def offset_pages(
        self,
        operation: str,
        path: str,
        creds: Credentials,
        *,
        params: Mapping[str, Any] | None = None,
        page_size: int = 100,
    ) -> Iterator[dict[str, Any]]:
        """startAt/maxResults pages of a `values` list, to `isLast` or the page ceiling."""
        start = 0
        for _ in range(settings.ATLASSIAN_MAX_PAGES):
            body = self.request(
                operation,
                "GET",
                path,
                creds,
                params={**(params or {}), "startAt": start, "maxResults": page_size},
            )
            values = (body or {}).get("values") or []
            yield from values
            start += len(values)
            if not values or body.get("isLast", True) or start >= body.get("total", 1 << 30):
                return
        self._stopped(operation)

    def _stopped(self, operation: str) -> None:
        from governance.atlassian.context import mark_incomplete

        logger.warning(
            "%s: listing stopped after %s pages (ATLASSIAN_MAX_PAGES); the rest is not read",
            operation,
            settings.ATLASSIAN_MAX_PAGES,
        )
        mark_incomplete(operation)

    def token_pages(
        self, operation: str, method: str, path: str, creds: Credentials, *, body: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        """nextPageToken pages of `issues` (Jira's /search/jql), to `isLast` or the ceiling."""
        token = None
        for _ in range(settings.ATLASSIAN_MAX_PAGES):
            payload = {**body, **({"nextPageToken": token} if token else {})}
            answer = (
                self.request(operation, method, path, creds, json=payload, idempotent=True) or {}
            )
            yield from answer.get("issues") or []
            token = answer.get("nextPageToken")
            if answer.get("isLast") or not token:
                return
        self._stopped(operation)
