"""Maps domain errors that escape an HTML view to a page a person can act on. The API maps
domain errors itself (governance.api); here it only gets the one error body for what never
reaches an endpoint: an unknown API path (404) or a method a path does not answer (405).
Before any view runs, it refuses control characters (NUL and the other C0 controls but tab
and line breaks) in the path (404), the query parameters and form fields (422, named)."""

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from governance import cleaning
from governance.atlassian.http import SignInRequired
from governance.errors import (
    BadRequest,
    DomainError,
    NotFound,
    Unauthenticated,
    Unavailable,
    ValidationFailed,
)
from governance.tracker import TrackerError


class DomainErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            request.path.startswith("/api/")
            and response.status_code in (404, 405)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return self._api_error(response)
        return response

    @staticmethod
    def _api_error(response):
        if response.status_code == 404:
            error = NotFound()
        else:
            allowed = response.get("Allow", "")
            error = BadRequest(f"This path does not answer that method. It answers: {allowed}.")
        api_response = HttpResponse(
            json.dumps(error.body()), status=response.status_code, content_type="application/json"
        )
        if response.has_header("Allow"):
            api_response["Allow"] = response["Allow"]
        return api_response

    def process_view(self, request, view, args, kwargs):
        error = _control_characters(request)
        if error is None:
            return None
        if request.path.startswith("/api/"):
            return HttpResponse(
                json.dumps(error.body()), status=error.status, content_type="application/json"
            )
        response = self._page(request, error)
        if getattr(request, "htmx", False) and isinstance(error, ValidationFailed):
            # An in-place form keeps what was typed; the refusal is flashed, naming the field.
            names = ", ".join(error.fields)
            response["HX-Reswap"] = "none"
            response["HX-Trigger"] = json.dumps(
                {"flash": {"message": f"{names}: {cleaning.CONTROL_MESSAGE}", "kind": "error"}}
            )
        return response

    def process_exception(self, request, exception):
        if request.path.startswith("/api/"):
            return None
        if isinstance(exception, SignInRequired):
            # A revoked or expired Atlassian grant: back through sign-in, plainly.
            logout(request)
            messages.info(request, str(exception) or "Sign in with Atlassian again.")
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        if isinstance(exception, TrackerError):
            # Fail closed: no traceback, no open door.
            exception = Unavailable()
        if not isinstance(exception, DomainError):
            return None
        return self._page(request, exception)

    @staticmethod
    def _page(request, exception):
        if isinstance(exception, Unauthenticated):
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        template = "partials/error.html" if getattr(request, "htmx", False) else "error.html"
        message = exception.message
        if isinstance(exception, NotFound):
            message = "There is nothing here, or you do not have access to it."
        response = render(
            request,
            template,
            {"error": exception, "message": message, "fields": exception.fields},
            status=exception.status,
        )
        patch_vary_headers(response, ("HX-Request",))
        return response


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _control_characters(request) -> DomainError | None:
    """NotFound for a path holding a control character; ValidationFailed naming each query
    parameter or form field that holds one; else None."""
    if cleaning.CONTROL_CHARACTERS.search(request.path):
        return NotFound()
    fields: dict[str, list[str]] = {}
    sources = [request.GET]
    if request.method == "POST" and request.content_type in FORM_TYPES:
        sources.append(request.POST)
    for source in sources:
        for name, values in source.lists():
            if cleaning.CONTROL_CHARACTERS.search(name) or any(
                cleaning.CONTROL_CHARACTERS.search(value) for value in values
            ):
                fields[name] = [cleaning.CONTROL_MESSAGE]
    return ValidationFailed(fields) if fields else None
