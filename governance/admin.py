"""Django admin for site administrators. Governance records are read-only here: every write goes
through its service (validated, audited, permission-checked), so the admin cannot be used to
nominate editors, name a sponsor, unfreeze registers or change settings around the audit log.
Editor nominations are made by the Project Lead, settings in Portfolio settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.db.models import Model, QuerySet
    from django.http import HttpRequest


from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.utils import timezone

from governance.models import (
    ApiToken,
    AtlassianGrant,
    AuditEntry,
    EditorNomination,
    FailureCount,
    FormSubmission,
    Notification,
    NotificationOptOut,
    OutboundTask,
    PeriodicJob,
    Project,
    SiteSettings,
    SpentAuthorizationCode,
    StoredSummary,
    SummaryRevision,
    TrackerEventReceipt,
    TrackerFieldState,
    TrackerWebhooks,
    User,
)


class _NoWrites:
    """No add, change or delete: the records change only through their audited services."""

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class ReadOnlyAdmin(_NoWrites, admin.ModelAdmin[Any]):
    """Lists, filters and detail pages; no add, change or delete."""


class ReadOnlyInline(_NoWrites, admin.TabularInline[Any, Any]):
    extra = 0


@admin.register(User)
class UserAdmin(BaseUserAdmin[User]):
    list_display = (
        "username",
        "account_id",
        "email",
        "is_staff",
        "is_superuser",
        "is_active",
        "last_login",
    )
    search_fields = ("username", "account_id", "email", "first_name", "last_name")
    fieldsets = (*(BaseUserAdmin.fieldsets or ()), ("Tracker", {"fields": ("account_id",)}))
    add_fieldsets = (*BaseUserAdmin.add_fieldsets, ("Tracker", {"fields": ("account_id",)}))

    def get_readonly_fields(
        self, request: HttpRequest, obj: User | None = None
    ) -> list[str] | tuple[str, ...]:
        # The accountId is the person's identity on every governance record: changing it would
        # hand one person another's roles.
        fields = super().get_readonly_fields(request, obj)
        return (*fields, "account_id") if obj is not None else fields


class EditorNominationInline(ReadOnlyInline):
    model = EditorNomination


@admin.register(Project)
class ProjectAdmin(ReadOnlyAdmin):
    list_display = (
        "key",
        "tracker_id",
        "name",
        "lead_account_id",
        "approval_status",
        "sponsor_account_id",
        "tracker_deleted_at",
        "created_at",
    )
    list_filter = ("approval_status",)
    search_fields = ("key", "tracker_id", "name", "lead_account_id", "sponsor_account_id")
    inlines = [EditorNominationInline]


@admin.register(EditorNomination)
class EditorNominationAdmin(ReadOnlyAdmin):
    list_display = ("project", "account_id", "nominated_by_account_id", "nominated_at")
    list_filter = ("project",)
    search_fields = ("project__key", "account_id")
    list_select_related = ("project",)


@admin.register(SiteSettings)
class SiteSettingsAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "governance_group", "br_cadence_default", "updated_at", "revision")


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    """The audit log is append-only."""

    list_display = ("at", "project_key", "kind", "target_type", "target_id", "actor_account_id")
    list_filter = ("kind", "target_type")
    search_fields = ("project_key", "kind", "target_id", "actor_account_id")
    date_hierarchy = "at"


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin[ApiToken]):
    list_display = ("name", "user", "prefix", "created_at", "last_used_at", "revoked_at")
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    readonly_fields = ("user", "name", "prefix", "digest", "created_at", "last_used_at")
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # tokens are created on the profile page, where the raw token is shown once

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"{count} token(s) revoked.")


@admin.register(PeriodicJob)
class PeriodicJobAdmin(ReadOnlyAdmin):
    """When each scheduled job (manage.py runperiodic) last ran, and its last failure."""

    list_display = ("name", "last_run_at", "last_finished_at", "last_failed_at", "last_error")


@admin.register(StoredSummary)
class StoredSummaryAdmin(ReadOnlyAdmin):
    """The summaries stored per reader (`governance.summaries`): derived, read again after any
    write of what they read."""

    list_display = ("user", "name", "revision", "valid_until")
    list_filter = ("name",)


@admin.register(SummaryRevision)
class SummaryRevisionAdmin(ReadOnlyAdmin):
    """The revision rows the stored summaries are keyed by (raised by every write they read)."""

    list_display = ("pk", "stamp")


@admin.register(FailureCount)
class FailureCountAdmin(ReadOnlyAdmin):
    """Invalid API tokens per address counted while the shared cache was down."""

    list_display = ("key", "count", "until")
    search_fields = ("key",)


@admin.register(OutboundTask)
class OutboundTaskAdmin(admin.ModelAdmin[OutboundTask]):
    list_display = (
        "name",
        "state",
        "attempts",
        "run_after",
        "created_at",
        "finished_at",
        "last_error",
    )
    list_filter = ("state", "name")
    search_fields = ("name", "last_error")
    readonly_fields = (
        "id",
        "name",
        "payload",
        "attempts",
        "created_at",
        "finished_at",
        "last_error",
    )
    actions = ["retry_now"]

    @admin.action(description="Retry now")
    def retry_now(self, request: HttpRequest, queryset: QuerySet[OutboundTask]) -> None:
        count = queryset.exclude(state=OutboundTask.State.DONE).update(
            state=OutboundTask.State.PENDING, run_after=timezone.now(), locked_until=None
        )
        self.message_user(request, f"{count} task(s) queued for the worker.")


@admin.register(AtlassianGrant)
class AtlassianGrantAdmin(ReadOnlyAdmin):
    """Who holds an Atlassian grant; the (encrypted) tokens are never shown. Deleting a grant
    signs the person out of Jira: their next page sends them through sign-in."""

    list_display = ("account_id", "user", "cloud_id", "expires_at", "updated_at")
    fields = ("account_id", "user", "cloud_id", "scopes", "expires_at", "updated_at")
    search_fields = ("account_id", "user__username")

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return True


@admin.register(TrackerFieldState)
class TrackerFieldStateAdmin(ReadOnlyAdmin):
    list_display = ("name", "field_id", "context_id", "updated_at")


@admin.register(TrackerWebhooks)
class TrackerWebhooksAdmin(ReadOnlyAdmin):
    list_display = ("webhook_ids", "account_id", "jql", "expires_at", "refreshed_at")


@admin.register(TrackerEventReceipt)
class TrackerEventReceiptAdmin(ReadOnlyAdmin):
    list_display = ("received_at", "event", "dedupe_key")
    list_filter = ("event",)
    search_fields = ("dedupe_key",)


@admin.register(FormSubmission)
class FormSubmissionAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "kind", "account_id", "target_id")
    list_filter = ("kind",)
    search_fields = ("target_id", "account_id")


@admin.register(SpentAuthorizationCode)
class SpentAuthorizationCodeAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "code_digest", "token_family")
    search_fields = ("code_digest",)


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    list_display = [
        "created_at",
        "kind",
        "recipient_account_id",
        "subject",
        "read_at",
        "emailed_at",
    ]
    list_filter = ["kind"]
    search_fields = ["recipient_account_id", "subject", "project_key"]


@admin.register(NotificationOptOut)
class NotificationOptOutAdmin(ReadOnlyAdmin):
    list_display = ["account_id", "kind"]
