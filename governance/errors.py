"""Domain errors. Services raise them; `governance.api` maps them once to the API's error body
and status code, `governance.middleware` to HTML responses, views to form errors."""

import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.db import transaction
from django.db.models import Model
from django.db.utils import InterfaceError, OperationalError

from governance.scoped import holding


class DomainError(Exception):
    code = "bad_request"
    status = 400
    default_message = "The request could not be processed."

    def __init__(
        self, message: str | None = None, *, fields: Mapping[str, Iterable[str]] | None = None
    ) -> None:
        self.message = message or self.default_message
        self.fields: dict[str, list[str]] = {k: list(v) for k, v in (fields or {}).items()}
        super().__init__(self.message)

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.fields:
            error["fields"] = self.fields
        return {"error": error}

    def by_field(self) -> dict[str, list[str]]:
        """The messages by field, as a page shows them under its fields: the message alone,
        under "", when the refusal names no field."""
        return dict(self.fields) or {"": [self.message]}

    def headers(self) -> dict[str, str]:
        """Response headers the answer carries besides the body (every door sets them)."""
        return {}


class BadRequest(DomainError):
    code, status = "bad_request", 400
    default_message = "The request body must be a JSON object."


class PayloadTooLarge(DomainError):
    code, status = "too_large", 413
    default_message = "The request body is larger than the server takes."


class UnsupportedMediaType(DomainError):
    code, status = "unsupported_media_type", 415
    default_message = (
        "This endpoint takes a JSON body: send Content-Type: application/json "
        "(a form or multipart upload is not read here)."
    )


class Unauthenticated(DomainError):
    code, status = "unauthenticated", 401
    default_message = "Sign in or send a valid API token (Authorization: Bearer <token>)."


class Forbidden(DomainError):
    code, status = "forbidden", 403
    default_message = "You may view this, but you may not do this."


class NotFound(DomainError):
    code, status = "not_found", 404
    default_message = "Not found."


class Moved(DomainError):
    """A project's key changed in the tracker: a URL naming a key it had before answers with
    a redirect to the same URL under the current key (docs/api.md, "Project keys")."""

    code, status = "moved", 301
    default_message = "This project's key changed."

    def __init__(self, old_key: str, new_key: str) -> None:
        self.old_key, self.new_key = old_key, new_key
        super().__init__(f"Project {old_key} is now {new_key}.")

    def location(self, full_path: str) -> str:
        path, sep, query = full_path.partition("?")
        path = re.sub(
            rf"(/projects/){re.escape(self.old_key)}(?=/|$)", rf"\g<1>{self.new_key}", path, count=1
        )
        return path + sep + query

    def status_for(self, method: str) -> int:
        """301 for a read; 308 for a write, so that the client sends it again as it was."""
        return 301 if method in ("GET", "HEAD") else 308

    def body(self) -> dict[str, Any]:
        body = super().body()
        body["error"]["key"] = self.new_key
        return body


class Conflict(DomainError):
    code, status = "conflict", 409
    default_message = "This is not allowed in the current state."


class Frozen(DomainError):
    code, status = "frozen", 409
    default_message = (
        "The registers are frozen: the business case is in close-out or later, or archived."
    )


class Stale(DomainError):
    """The write was based on an older version than the stored one."""

    code, status = "stale", 412
    default_message = "Someone else changed this since you loaded it. Reload and try again."

    def __init__(
        self, message: str | None = None, *, current: Model | None = None, **kwargs: Any
    ) -> None:
        self.current = current
        super().__init__(message, **kwargs)


class ValidationFailed(DomainError):
    code, status = "validation", 422
    default_message = "Some fields are not valid."

    def __init__(
        self, fields: Mapping[str, Iterable[str]], message: str | None = None, **extra: Any
    ) -> None:
        self.extra = extra
        super().__init__(message, fields=fields)

    def body(self) -> dict[str, Any]:
        body = super().body()
        body["error"].update(self.extra)
        return body


class Internal(DomainError):
    """Something unexpected failed; the body carries the request id the log names."""

    code, status = "internal", 500
    default_message = (
        "Something went wrong on our side. Nothing you sent was at fault; quote the request id "
        "if you report it."
    )

    def __init__(self, request_id: str, message: str | None = None) -> None:
        self.request_id = request_id
        super().__init__(message)

    def body(self) -> dict[str, Any]:
        body = super().body()
        body["error"]["requestId"] = self.request_id
        return body


class TooManyRequests(DomainError):
    code, status = "throttled", 429
    default_message = "Too many attempts. Wait and try again."

    def __init__(self, message: str | None = None, *, retry_after: int = 60, **kwargs: Any) -> None:
        self.retry_after = retry_after
        super().__init__(message, **kwargs)

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


class GateBlocked(DomainError):
    """A hard content gate of the spec refused the act; `fields` names each missing input."""

    code, status = "gate", 422
    default_message = "Required inputs are missing."


class Unavailable(DomainError):
    """The tracker (or wiki) cannot answer and nothing cached can: fail closed."""

    code, status = "unavailable", 503
    default_message = (
        "Jira is not answering, so access cannot be checked. Nothing was changed; "
        "try again in a minute."
    )
    busy_message = (
        "Jira is busy and asked the app to wait before asking again. Nothing was changed; "
        "try again in a minute."
    )

    @classmethod
    def from_tracker(cls, error: Exception) -> "Unavailable":
        """The tracker's error as the one answer people get: busy (a rate limit) or down."""
        return cls(cls.busy_message if getattr(error, "retry_after", None) else None)


class DatabaseUnavailable(Unavailable):
    """The database cannot be reached: nothing was stored; try again in a few seconds."""

    retry_after = 5
    default_message = (
        "The service is briefly unavailable; nothing you sent was stored. "
        "Try again in a few seconds."
    )

    stored_message = (
        "Your change was stored, but the database stopped answering before the answer was "
        "complete. Reload to see it; do not send it again."
    )

    def __init__(self, message: str | None = None, *, stored: bool = False, **kwargs: Any) -> None:
        self.stored = stored
        super().__init__(self.stored_message if stored and not message else message, **kwargs)

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}

    def body(self) -> dict[str, Any]:
        body = super().body()
        body["error"]["stored"] = self.stored
        return body


def database_unavailable(error: BaseException | None) -> DatabaseUnavailable | None:
    """The answer for a database that cannot be reached (a refused or dropped connection, a
    server shutting down): DatabaseUnavailable for such an error, else None. A failed
    statement rolls its transaction back, so nothing of the request was stored, unless a
    write of the request had committed before: then the answer says it was stored."""
    if isinstance(error, OperationalError | InterfaceError):
        return DatabaseUnavailable(stored=stored_this_request())
    return None


# Whether a write of this request has committed (set by `RequestIdMiddleware` around the
# request, noted by `governance.audit.record`): an answer that fails after that must not say
# that nothing was stored (`database_unavailable`).
_STORED: ContextVar[list[bool] | None] = ContextVar("audit_stored", default=None)


@contextmanager
def noting_stored_writes() -> Iterator[None]:
    with holding(_STORED, []):
        yield


def stored_this_request() -> bool:
    """True once an audited write of the current request has committed."""
    return bool(_STORED.get())


def note_stored_on_commit() -> None:
    stored = _STORED.get()
    if stored is not None and not stored:
        transaction.on_commit(lambda: stored.append(True))
