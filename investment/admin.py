"""Investment decisions in Django admin: read-only. They change only through their audited
services (`investment.services`)."""

from django.contrib import admin

from governance.admin import ReadOnlyAdmin
from investment.models import (
    Criterion,
    ModelVersion,
    PortfolioDecision,
    Prioritised,
    Scenario,
    Score,
    StoredTotal,
)


@admin.register(ModelVersion)
class ModelVersionAdmin(ReadOnlyAdmin):
    list_display = ("number", "created_at", "created_by_account_id", "why")


@admin.register(Criterion)
class CriterionAdmin(ReadOnlyAdmin):
    list_display = ("version", "key", "name", "weight", "source")
    list_filter = ("source",)


@admin.register(Score)
class ScoreAdmin(ReadOnlyAdmin):
    list_display = ("project", "criterion", "value", "created_at", "superseded_by")
    search_fields = ("project__key", "reason")
    list_select_related = ("project", "criterion")


@admin.register(Scenario)
class ScenarioAdmin(ReadOnlyAdmin):
    list_display = ("name", "revision", "updated_at", "updated_by_account_id")
    search_fields = ("name",)


@admin.register(PortfolioDecision)
class PortfolioDecisionAdmin(ReadOnlyAdmin):
    list_display = ("decision", "made_on", "made_by_account_id", "scenario_name")


@admin.register(Prioritised)
class PrioritisedAdmin(ReadOnlyAdmin):
    list_display = ("business_case", "scenario_name", "at")


@admin.register(StoredTotal)
class StoredTotalAdmin(ReadOnlyAdmin):
    """A proposal's total as the portfolio's rank column reads it (investment.totals), with
    what it was derived at: derived by a page, read here only."""

    list_display = ("project", "total", "revision", "model_number", "last_score_id", "deployed")
    list_select_related = ("project",)
    search_fields = ("project__key",)
    ordering = ("project__key",)
