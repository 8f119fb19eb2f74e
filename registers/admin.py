"""Django admin for the registers: read-only views for site administrators. Every register
write goes through the register services (validated, audited, freeze-checked), so the admin
offers no add, change or delete."""

from django.contrib import admin

from governance.admin import ReadOnlyAdmin as KernelReadOnlyAdmin
from registers.models import (
    ChangeRequest,
    Decision,
    RegisterSummary,
    Risk,
    SteeringMinutes,
    WorkPackage,
)


class ReadOnlyAdmin(KernelReadOnlyAdmin):
    list_select_related = ("project",)
    show_full_result_count = False


@admin.register(WorkPackage)
class WorkPackageAdmin(ReadOnlyAdmin):
    list_display = (
        "name",
        "project",
        "status",
        "rag",
        "progress",
        "owner_account_id",
        "planned_start_date",
        "planned_end_date",
        "forecast_end_date",
        "budget",
        "budget_forecast",
        "budget_actual",
        "sort_order",
        "updated_at",
    )
    list_filter = ("status", "rag", "project")
    search_fields = ("name", "type", "project__key", "owner_account_id", "commentary")
    ordering = ("project__key", "sort_order", "planned_start_date", "name")


@admin.register(Risk)
class RiskAdmin(ReadOnlyAdmin):
    list_display = (
        "title",
        "project",
        "direction",
        "status",
        "materialised",
        "impact",
        "likelihood",
        "residual_impact",
        "residual_likelihood",
        "treatment",
        "owner_account_id",
        "imported",
        "updated_at",
    )
    list_filter = ("direction", "status", "materialised", "treatment", "imported", "project")
    search_fields = ("title", "description", "mitigation", "project__key", "owner_account_id")
    ordering = ("project__key", "-created_at")


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = (
        "decision",
        "project",
        "made_on",
        "made_by_account_id",
        "recorded_by",
        "treated_risk_id",
        "imported",
        "created_at",
    )
    list_filter = (("made_on", admin.EmptyFieldListFilter), "imported", "project")
    search_fields = ("decision", "decision_notes", "rationale", "project__key")
    ordering = ("project__key", "-created_at")
    date_hierarchy = "created_at"


@admin.register(ChangeRequest)
class ChangeRequestAdmin(ReadOnlyAdmin):
    list_display = (
        "summary",
        "project",
        "status",
        "impact_budget",
        "impact_schedule_days",
        "proposer_account_id",
        "approver_account_id",
        "decided_at",
        "imported",
        "created_at",
    )
    list_filter = ("status", "imported", "project")
    search_fields = ("summary", "reason", "impact_scope", "project__key")
    ordering = ("project__key", "-created_at")


@admin.register(SteeringMinutes)
class SteeringMinutesAdmin(ReadOnlyAdmin):
    list_display = ("title", "project", "held_on", "page_id", "created_at")
    list_filter = ("project",)
    search_fields = ("title", "url", "project__key")
    ordering = ("project__key", "-held_on")


@admin.register(RegisterSummary)
class RegisterSummaryAdmin(ReadOnlyAdmin):
    """What the register pages read of all a project's rows, at a registers revision
    (registers.summary): written by each change, read here only."""

    list_display = ("project", "revision")
    search_fields = ("project__key",)
    ordering = ("project__key",)
