"""Mark read the notifications whose act is already done (status.resolved): for data made
before the services resolved notifications as they acted. Safe to run as often as you like."""

from typing import Any

from django.core.management.base import BaseCommand

from status import resolved


class Command(BaseCommand):
    help = "Resolve the notifications whose act is done (cases, changes and exceptions decided)."

    def handle(self, *args: Any, **options: Any) -> None:
        count = resolved.resolve_done()
        self.stdout.write(f"Resolved {count} notification(s) whose act was already done.")
