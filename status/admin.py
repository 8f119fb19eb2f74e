"""Django admin for project status, status reports, exceptions and the stored health:
read-only. Status is written through the status services; a published report is an immutable
snapshot; an exception moves only through status.exceptions; a health row is derived
(status.health)."""

from django.contrib import admin

from governance.admin import ReadOnlyAdmin
from status.models import ProjectException, ProjectHealth, ProjectStatus, StatusReport


@admin.register(ProjectStatus)
class ProjectStatusAdmin(ReadOnlyAdmin):
    list_display = (
        "project",
        "overall_rag",
        "phase",
        "reporting_cadence",
        "last_updated_at",
        "last_updated_by_account_id",
    )
    list_filter = ("overall_rag", "reporting_cadence", "br_cadence")
    search_fields = ("project__key", "project__name", "phase", "overall_reason")
    list_select_related = ("project",)


@admin.register(StatusReport)
class StatusReportAdmin(ReadOnlyAdmin):
    list_display = ("title", "project", "state", "published_at", "published_by_account_id")
    list_filter = ("state",)
    search_fields = ("title", "project__key", "key_messages")
    list_select_related = ("project",)
    date_hierarchy = "published_at"


@admin.register(ProjectHealth)
class ProjectHealthAdmin(ReadOnlyAdmin):
    list_display = (
        "project",
        "cost_rag",
        "schedule_rag",
        "scope_rag",
        "risk_rag",
        "stale",
        "as_of",
        "valid_until",
    )
    list_filter = ("cost_rag", "schedule_rag", "scope_rag", "risk_rag", "stale", "as_of")
    search_fields = ("project__key", "project__name")
    list_select_related = ("project",)


@admin.register(ProjectException)
class ProjectExceptionAdmin(ReadOnlyAdmin):
    list_display = ("project", "state", "opened_at", "within", "decision", "decided_at")
    list_filter = ("state", "decision", "within")
    search_fields = ("project__key", "project__name", "cause", "recommendation")
    list_select_related = ("project",)
