from django.apps import AppConfig


class CharterConfig(AppConfig):
    name = "charter"
    verbose_name = "Business case"

    def ready(self) -> None:
        from charter import (
            tasks,  # noqa: F401  (registers the outbox handlers)
            vocabulary,
        )
        from charter.derive import CLOSED_OR_LATER
        from charter.services.themes import on_theme_renamed
        from governance import signals
        from governance.audit_text import register_app_words
        from governance.models import freeze_registers_in

        register_app_words(vocabulary)
        signals.theme_renamed.connect(on_theme_renamed, dispatch_uid="charter.theme_renamed")
        # Registers are frozen from ClosingSubmitted onward and when Archived
        # (docs/product.md section 2).
        freeze_registers_in(CLOSED_OR_LATER | {"ClosingSubmitted", "Archived"})
