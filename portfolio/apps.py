from django.apps import AppConfig


class PortfolioConfig(AppConfig):
    name = "portfolio"
    verbose_name = "Portfolio"
    default_auto_field = "django.db.models.BigAutoField"
