from django.contrib import admin

from portfolio.models import PortfolioColumns


@admin.register(PortfolioColumns)
class PortfolioColumnsAdmin(admin.ModelAdmin[PortfolioColumns]):
    list_display = ["user", "updated_at"]
    readonly_fields = ["updated_at"]
