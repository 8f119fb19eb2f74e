from django.contrib import admin

from gates.models import DefaultStage


@admin.register(DefaultStage)
class DefaultStageAdmin(admin.ModelAdmin[DefaultStage]):
    list_display = ("position", "name")
    ordering = ("position",)
