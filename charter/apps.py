from django.apps import AppConfig


class CharterConfig(AppConfig):
    name = "charter"
    verbose_name = "Business case"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from charter import tasks  # noqa: F401  (registers the outbox handlers)
