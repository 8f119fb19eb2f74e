"""Small helpers for HTML views: allowed methods (read by the permission-matrix test), HTMX
partial rendering with `Vary: HX-Request`, and the people map for templates."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_http_methods
from django_htmx.http import trigger_client_event
from django_htmx.middleware import HtmxDetails

from governance import cleaning

# What `form_revision` reads from a revision it cannot read: no record has it.
UNREADABLE_REVISION = -1


class HtmxHttpRequest(HttpRequest):
    """A request as the views see it: django-htmx's middleware sets `htmx` on every one."""

    htmx: HtmxDetails


def page(*methods: str, login: bool = True) -> Callable[..., Any]:
    """Declare an HTML view: the HTTP methods it answers (others get 405) and, by default,
    that it needs a signed-in user. The methods are kept on the view for the permission
    matrix test."""

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        wrapped = require_http_methods(list(methods))(view)
        if login:
            wrapped = login_required(wrapped)
        wrapped.__dict__["http_methods"] = tuple(methods)
        wrapped.__dict__["login_required"] = login
        return wraps(view)(wrapped)

    return decorate


def uncompressed(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a view's responses not to be compressed: it shows a long-lived secret (BREACH)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        response = view(request, *args, **kwargs)
        response.uncompressed = True
        return response

    return wrapped


def wants_partial(request: HttpRequest) -> bool:
    """Whether an answer is a fragment: an HTMX request that is not a history restore (the
    back button after hx-push-url, with htmx's cache off, needs the page)."""
    htmx = getattr(request, "htmx", False)
    return bool(htmx) and not getattr(htmx, "history_restore_request", False)


def render_htmx(
    request: HttpRequest,
    template: str,
    context: dict[str, Any],
    *,
    partial: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """The full page, or only `template#partial` for an HTMX request. Same markup either way."""
    name = f"{template}#{partial}" if partial and wants_partial(request) else template
    response = render(request, name, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def announce_revision(
    response: HttpResponse, *, resource: str, before: int | None, after: int
) -> HttpResponse:
    """Tell the page (HX-Trigger `revised` {resource, from, to}) that a write it made in place
    moved `resource` to a new revision, so its other forms, which carry the revision they were
    rendered with (`data-revision-of="<resource>"`), move along. app.js moves only inputs still
    at `from`: if someone else wrote in between, they stay stale and their save is refused."""
    if before is None or before == after:
        return response
    return trigger_client_event(
        response, "revised", {"resource": resource, "from": before, "to": after}
    )


def form_revision(post: QueryDict) -> int | None:
    """The revision an edit form was rendered at (its hidden `revision`), read the same way
    for every form: None when the form sends none (a create); UNREADABLE_REVISION when what
    it sends is not a whole number, a revision no record has, so the write is refused as stale
    (412, after the caller's 403 and the state's 409) and the form shows the stored version
    to save again, never applied unchecked."""
    raw = post.get("revision", "")
    if not raw:
        return None
    revision = cleaning.whole_number(raw)
    return UNREADABLE_REVISION if revision is None else revision
