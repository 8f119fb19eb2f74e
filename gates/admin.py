"""The stage gates in Django admin: the site's default stage set is edited here; a project's
stages, criteria, plan revision and gate reviews are read-only (they change only through their
audited services, `gates.services`)."""

from django.contrib import admin

from gates.models import DefaultStage, GateReview, Stage, StageCriterion, StagePackage, StagePlan
from governance.admin import ReadOnlyAdmin


@admin.register(DefaultStage)
class DefaultStageAdmin(admin.ModelAdmin[DefaultStage]):
    list_display = ("position", "name")
    ordering = ("position",)


@admin.register(Stage)
class StageAdmin(ReadOnlyAdmin):
    list_display = ("project", "position", "name", "state", "planned_start", "planned_end")
    list_filter = ("state",)
    search_fields = ("project__key", "name")
    list_select_related = ("project",)


@admin.register(StagePlan)
class StagePlanAdmin(ReadOnlyAdmin):
    list_display = ("project", "revision")
    list_select_related = ("project",)


@admin.register(StagePackage)
class StagePackageAdmin(ReadOnlyAdmin):
    list_display = ("stage", "work_package")


@admin.register(StageCriterion)
class StageCriterionAdmin(ReadOnlyAdmin):
    list_display = ("stage", "key", "kind", "parameter", "dismissed_at")
    list_filter = ("kind",)


@admin.register(GateReview)
class GateReviewAdmin(ReadOnlyAdmin):
    list_display = ("stage", "state", "outcome", "requested_at", "decided_at")
    list_filter = ("state", "outcome")
