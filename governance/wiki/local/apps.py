from django.apps import AppConfig


class LocalWikiConfig(AppConfig):
    name = "governance.wiki.local"
    label = "local_wiki"
    verbose_name = "Local wiki"
