from typing import Any

from django.contrib import admin

from governance.tracker.local.models import (
    LocalAccount,
    LocalBrowseGrant,
    LocalGroup,
    LocalIssue,
    LocalProject,
)


@admin.register(LocalAccount)
class LocalAccountAdmin(admin.ModelAdmin[LocalAccount]):
    list_display = ("name", "display_name", "account_id", "email", "is_site_admin", "active")
    list_filter = ("is_site_admin", "active")
    search_fields = ("name", "display_name", "account_id", "email")


class BrowseGrantInline(admin.TabularInline[LocalBrowseGrant, Any]):
    model = LocalBrowseGrant
    extra = 0
    autocomplete_fields = ("account",)


@admin.register(LocalProject)
class LocalProjectAdmin(admin.ModelAdmin[LocalProject]):
    list_display = ("key", "name", "lead")
    search_fields = ("key", "name")
    list_select_related = ("lead",)
    autocomplete_fields = ("lead",)
    inlines = [BrowseGrantInline]


@admin.register(LocalGroup)
class LocalGroupAdmin(admin.ModelAdmin[LocalGroup]):
    list_display = ("name",)
    search_fields = ("name",)
    filter_horizontal = ("members",)


@admin.register(LocalIssue)
class LocalIssueAdmin(admin.ModelAdmin[LocalIssue]):
    list_display = ("key", "summary", "issue_type", "status", "work_package", "project")
    list_filter = ("issue_type", "status", "project")
    search_fields = ("key", "summary", "work_package")
    list_select_related = ("project",)


@admin.register(LocalBrowseGrant)
class LocalBrowseGrantAdmin(admin.ModelAdmin[LocalBrowseGrant]):
    list_display = ("project", "account")
    list_filter = ("project",)
    search_fields = ("project__key", "account__name")
    list_select_related = ("project", "account")
