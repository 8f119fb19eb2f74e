from django.apps import AppConfig


class AgentConfig(AppConfig):
    name = "agent"
    verbose_name = "Assistant"

    def ready(self) -> None:
        """The actions register themselves in the catalogue (`agent.catalogue.action`) as
        their module loads."""
        from agent import actions, investment_actions  # noqa: F401
