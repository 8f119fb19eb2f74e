from django.apps import AppConfig
from django.db.models.signals import post_save


class LocalTrackerConfig(AppConfig):
    name = "governance.tracker.local"
    label = "local_tracker"
    verbose_name = "Local tracker"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from governance.tracker.local.backend import mirror_on_sign_in, mirror_saved_project
        from governance.tracker.local.models import LocalProject

        post_save.connect(
            mirror_saved_project, sender=LocalProject, dispatch_uid="mirror-local-project"
        )
        user_logged_in.connect(mirror_on_sign_in, dispatch_uid="mirror-local-sign-in")
