from django.apps import AppConfig


class SiteConfig(AppConfig):
    """The site above the apps: settings, URLs, the API's mounting and the demo command. It
    holds no model and no rule; it is an installed app only for its management command."""

    name = "config"
    verbose_name = "Site"
