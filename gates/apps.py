from django.apps import AppConfig


class GatesConfig(AppConfig):
    name = "gates"
    verbose_name = "Stage gates"

    def ready(self) -> None:
        from gates import pack, receivers, selectors
        from governance import signals

        signals.steering_pack.connect(pack.on_steering_pack, dispatch_uid="gates.pack")
        signals.charter_approved.connect(
            receivers.on_charter_approved, dispatch_uid="gates.charter_approved"
        )
        signals.answer_waiting_with(
            "gates",
            key="gateReviews",
            items=selectors.awaiting,
            projects=selectors.with_gate_review,
        )
        from gates import vocabulary
        from gates.models import GateReview, Stage
        from governance.audit_text import register_app_words, register_titles, titles_from

        register_app_words(vocabulary)
        register_titles("stage", titles_from(Stage, "name"))
        register_titles(
            "gateReview",
            lambda ids: {
                str(pk): f"{name} gate"
                for pk, name in GateReview.objects.filter(pk__in=ids).values_list(
                    "pk", "stage__name"
                )
            },
        )
