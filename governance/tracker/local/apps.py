from django.apps import AppConfig


class LocalTrackerConfig(AppConfig):
    name = "governance.tracker.local"
    label = "local_tracker"
    verbose_name = "Local tracker"
    default_auto_field = "django.db.models.BigAutoField"
