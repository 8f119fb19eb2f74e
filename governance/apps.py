from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = "Governance"
    default_auto_field = "django.db.models.BigAutoField"
