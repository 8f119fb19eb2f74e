from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = "Governance"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_out

        from governance.auth_views import forget_grant_on_sign_out

        user_logged_out.connect(forget_grant_on_sign_out, dispatch_uid="forget-atlassian-grant")
        from django.db.models.signals import post_delete, post_save

        from governance.auth_backends import forget_user
        from governance.models import User

        post_save.connect(forget_user, sender=User, dispatch_uid="forget-cached-user")
        post_delete.connect(forget_user, sender=User, dispatch_uid="forget-cached-user-deleted")
        from governance import summaries

        summaries.connect()
        # Each registers something: the checks, an outbox handler, a periodic job.
        from governance import (  # noqa: F401
            checks,
            notifications,
            oauth,
            submissions,
            webhooks,
        )
