from django.apps import AppConfig


class RegistersConfig(AppConfig):
    name = "registers"
    verbose_name = "Registers"
    default_auto_field = "django.db.models.BigAutoField"
