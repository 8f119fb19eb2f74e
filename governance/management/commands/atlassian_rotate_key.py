"""Re-encrypt every stored Atlassian token with the first key of ATLASSIAN_TOKEN_KEY."""

from typing import Any

from django.core.management.base import BaseCommand

from governance.atlassian import grants


class Command(BaseCommand):
    help = "Re-encrypt stored Atlassian tokens with the first ATLASSIAN_TOKEN_KEY key."

    def handle(self, *args: Any, **options: Any) -> None:
        count = grants.rotate_key()
        self.stdout.write(f"Re-encrypted the tokens of {count} grant(s) with the first key.")
