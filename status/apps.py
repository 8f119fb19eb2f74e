from django.apps import AppConfig


class StatusConfig(AppConfig):
    name = "status"
    verbose_name = "Project status"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from charter.models import BusinessCase
        from governance import signals
        from governance.audit_text import register_titles, titles_from
        from governance.models import Project, SiteSettings
        from registers.models import ChangeRequest, Decision, Risk, WorkPackage
        from status.models import StatusReport

        register_titles("statusReport", titles_from(StatusReport, "title"))
        from status import exceptions, receivers
        from status.models import ProjectStatus

        signals.charter_approved.connect(
            receivers.on_charter_approved, dispatch_uid="status.charter_approved"
        )
        signals.charter_ended.connect(
            receivers.on_charter_ended, dispatch_uid="status.charter_ended"
        )
        signals.answer_waiting_with(
            "status",
            key="exceptions",
            items=exceptions.awaiting,
            projects=exceptions.with_undecided,
        )
        from registers.services.changes import answer_decided_elsewhere_with
        from status.exceptions import plan_changes

        answer_decided_elsewhere_with(plan_changes)
        signals.initiation_completed.connect(
            receivers.on_initiation_completed, dispatch_uid="status.initiation_completed"
        )
        # The facts a project's stored health is derived from.
        for model in (WorkPackage, Risk, Decision, ChangeRequest, BusinessCase, ProjectStatus):
            name = model._meta.label_lower
            post_save.connect(
                receivers.on_fact_saved, sender=model, dispatch_uid=f"status.health.{name}.save"
            )
            post_delete.connect(
                receivers.on_fact_deleted, sender=model, dispatch_uid=f"status.health.{name}.del"
            )
        post_save.connect(
            receivers.on_project_saved, sender=Project, dispatch_uid="status.health.project"
        )
        post_save.connect(
            receivers.on_site_settings_saved, sender=SiteSettings, dispatch_uid="status.health.site"
        )
        signals.project_changed.connect(
            receivers.on_project_changed, dispatch_uid="status.health.project_changed"
        )
        # The summaries stored per reader read the health rows (`governance.summaries`): a
        # row saved one by one raises their revision, as `health` writing them does.
        from governance import summaries
        from status.models import ProjectHealth

        summaries.watch(ProjectHealth, deletes=False)  # deletes: ProjectHealthQuerySet
        from charter.reviews import answer_next_review_with
        from status.selectors import next_review

        answer_next_review_with(next_review)
        from governance.audit_text import register_app_words
        from status import vocabulary

        register_app_words(vocabulary)
