from typing import Any

from django.apps import AppConfig


class RegistersConfig(AppConfig):
    name = "registers"
    verbose_name = "Registers"

    def ready(self) -> None:
        from governance.audit_text import register_app_words, register_titles, titles_from
        from governance.signals import project_changed, tracker_issue_gone
        from registers import (
            tasks,  # noqa: F401  (registers the outbox handlers)
            vocabulary,
        )
        from registers.models import ChangeRequest, Decision, Risk, SteeringMinutes, WorkPackage
        from registers.revision import bump_registers_revision

        project_changed.connect(bump_registers_revision, dispatch_uid="registers-revision")
        from registers.services.work_packages import mark_issue_link_broken

        def issue_gone(
            sender: object, issue_key: str, reason: str, project_key: str = "", **kwargs: Any
        ) -> None:
            mark_issue_link_broken(issue_key=issue_key, reason=reason, project_key=project_key)

        tracker_issue_gone.connect(
            issue_gone, dispatch_uid="registers-issue-link-broken", weak=False
        )

        register_titles("workPackage", titles_from(WorkPackage, "name"))
        register_titles("risk", titles_from(Risk, "title"))
        register_titles("decision", titles_from(Decision, "decision"))
        register_titles("changeRequest", titles_from(ChangeRequest, "summary"))
        register_titles("steeringMinutes", titles_from(SteeringMinutes, "title"))
        register_app_words(vocabulary)
