"""Site-wide business-case pages (not scoped to one project)."""

from django.urls import path

from charter.views import waiting

urlpatterns = [
    path("waiting/", waiting.waiting, name="waiting-for-me"),
    path(
        "waiting/changes/<str:key>/<uuid:change_id>/decide/",
        waiting.change_decide,
        name="waiting-change-decide",
    ),
]
