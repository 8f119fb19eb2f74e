"""Maps domain errors that escape an HTML view to a page a person can act on. The API maps
them itself (governance.api); this middleware leaves /api/ alone."""

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import render

from governance.errors import DomainError, NotFound, Unauthenticated


class DomainErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, DomainError) or request.path.startswith("/api/"):
            return None
        if isinstance(exception, Unauthenticated):
            return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        template = "partials/error.html" if getattr(request, "htmx", False) else "error.html"
        message = exception.message
        if isinstance(exception, NotFound):
            message = "There is nothing here, or you do not have access to it."
        return render(
            request,
            template,
            {"error": exception, "message": message, "fields": exception.fields},
            status=exception.status,
        )
