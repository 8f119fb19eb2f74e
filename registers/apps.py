from django.apps import AppConfig


class RegistersConfig(AppConfig):
    name = "registers"
    verbose_name = "Registers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from registers import tasks  # noqa: F401  (registers the outbox handlers)
