"""The task worker: runs due outbound calls (tracker write-back, wiki) with retries."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from governance import outbox


class Command(BaseCommand):
    help = "Run queued outbound calls; retries failures with back-off. Ctrl-C to stop."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="Run what is due once and exit.")
        parser.add_argument(
            "--poll", type=float, default=2.0, help="Seconds between polls when idle."
        )

    def handle(self, *args: Any, once: bool, poll: float, **options: Any) -> None:
        self.stdout.write("outbox worker started" + (" (once)" if once else ""))
        outbox.work(poll_seconds=poll, once=once)
