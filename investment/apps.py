from django.apps import AppConfig


class InvestmentConfig(AppConfig):
    name = "investment"
    verbose_name = "Investment decisions"
    default_auto_field = "django.db.models.BigAutoField"
