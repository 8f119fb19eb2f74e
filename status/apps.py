from django.apps import AppConfig


class StatusConfig(AppConfig):
    name = "status"
    label = "status"
    verbose_name = "Project status"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from governance import signals
        from governance.audit_text import register_titles
        from status.models import StatusReport

        register_titles(
            "statusReport",
            lambda ids: {
                str(pk): title
                for pk, title in StatusReport.objects.filter(pk__in=ids).values_list("pk", "title")
            },
        )
        from status import receivers

        signals.charter_approved.connect(
            receivers.on_charter_approved, dispatch_uid="status.charter_approved"
        )
        signals.initiation_completed.connect(
            receivers.on_initiation_completed, dispatch_uid="status.initiation_completed"
        )
        signals.realisation_review_requested.connect(
            receivers.on_realisation_review_requested,
            dispatch_uid="status.realisation_review_requested",
        )
