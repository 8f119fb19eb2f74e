"""The tracker seam: what the service asks of the issue tracker (Jira in production, the
built-in local tracker on a laptop). Pick the backend with TRACKER_BACKEND."""

from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from governance.seams import backend_path
from governance.tracker.base import (
    Tracker,
    TrackerError,
    TrackerIssue,
    TrackerProject,
    TrackerUser,
)

BACKENDS = {
    "local": "governance.tracker.local.backend.LocalTracker",
    "jira": "governance.tracker.jira.JiraTracker",
}

__all__ = [
    "Tracker",
    "TrackerError",
    "TrackerIssue",
    "TrackerProject",
    "TrackerUser",
    "get_tracker",
    "work_package_field_note",
]


@cache
def _load(name: str) -> Tracker:
    backend: Tracker = import_string(
        backend_path("TRACKER_BACKEND", name, BACKENDS, TrackerError)
    )()
    return backend


def get_tracker() -> Tracker:
    return _load(settings.TRACKER_BACKEND)


def work_package_field_note(project_key: str) -> str:
    """Why the tracker cannot hold the 'Work Package' field in this project ("" when it can):
    Jira's team-managed projects have no global custom fields."""
    unwritable = getattr(get_tracker(), "field_unwritable", None)
    return unwritable(project_key) if unwritable else ""
