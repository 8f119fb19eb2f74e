"""One-time clean-space setup: create the wiki space pages are made in (WIKI_SPACE_KEY) when
it is missing. Safe to run again."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from governance.wiki import WikiError, get_wiki


class Command(BaseCommand):
    help = "Create the Confluence space WIKI_SPACE_KEY if it is missing (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", default="Governance", help="Name of a new space.")

    def handle(self, *args: Any, name: str, **options: Any) -> None:
        key = settings.WIKI_SPACE_KEY
        wiki = get_wiki()
        if not hasattr(wiki, "ensure_space"):
            self.stdout.write(f"WIKI_BACKEND={settings.WIKI_BACKEND}: nothing to set up.")
            return
        try:
            space_id, created = wiki.ensure_space(key, name)
        except WikiError as exc:
            raise CommandError(f"Could not set up the space {key}: {exc}") from None
        if created:
            self.stdout.write(self.style.SUCCESS(f"Created space {key} ({name}), id {space_id}."))
        else:
            self.stdout.write(f"Space {key} already exists (id {space_id}); nothing to do.")
