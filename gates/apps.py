from django.apps import AppConfig


class GatesConfig(AppConfig):
    name = "gates"
    label = "gates"
    verbose_name = "Stage gates"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from gates import pack, receivers
        from governance import signals

        signals.steering_pack.connect(pack.on_steering_pack, dispatch_uid="gates.pack")
        signals.charter_approved.connect(
            receivers.on_charter_approved, dispatch_uid="gates.charter_approved"
        )
        signals.waiting_items.connect(receivers.on_waiting_items, dispatch_uid="gates.waiting")
