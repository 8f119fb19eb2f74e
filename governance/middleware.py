"""Maps domain errors that escape an HTML view to a page a person can act on. The API maps
domain errors itself (governance.api); here it only gets the one error body for what never
reaches an endpoint: an unknown API path (404) or a method a path does not answer (405)."""

import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from governance.atlassian.http import SignInRequired
from governance.errors import BadRequest, DomainError, NotFound, Unauthenticated, Unavailable
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
