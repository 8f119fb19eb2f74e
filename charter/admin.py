"""Django admin for business cases: read-only. Every business-case write is a lifecycle act
or an edit through the charter services (permission- and state-checked, audited)."""

from django.contrib import admin

from charter.models import ApprovedVersion, BusinessCase
from governance.admin import ReadOnlyAdmin


@admin.register(BusinessCase)
class BusinessCaseAdmin(ReadOnlyAdmin):
    list_display = (
        "project",
        "approval_status",
        "version",
        "theme",
        "submitted_at",
        "approved_at",
        "closed_at",
        "updated_at",
    )
    list_filter = ("approval_status", "theme", "terminal_disposition", "realisation_confidence")
    search_fields = ("project__key", "project__name", "theme", "business_problem", "outcome")
    list_select_related = ("project",)
    date_hierarchy = "approved_at"


@admin.register(ApprovedVersion)
class ApprovedVersionAdmin(ReadOnlyAdmin):
    list_display = ("business_case", "version", "approved_at", "approved_by_account_id")
    list_filter = ("version",)
    search_fields = ("business_case__project__key", "approved_by_account_id", "approval_comment")
    list_select_related = ("business_case__project",)
