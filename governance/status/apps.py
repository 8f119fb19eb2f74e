from django.apps import AppConfig


class StatusConfig(AppConfig):
    name = "governance.status"
    label = "status"
    verbose_name = "Project status"
    default_auto_field = "django.db.models.BigAutoField"
