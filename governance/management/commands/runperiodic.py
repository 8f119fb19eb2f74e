"""Run the scheduled jobs that are due (governance.periodic). Call it every few minutes from
cron, a systemd timer or a Kubernetes CronJob; each job runs once per its period, and two
runs at once do not both run a job."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from governance import periodic


class Command(BaseCommand):
    help = "Run each scheduled job that is due (stale-status reminders, weekly digests, ...)."

    def handle(self, *args: Any, **options: Any) -> None:
        outcomes = periodic.run_due()
        for outcome in outcomes:
            line = f"{outcome.name}: {outcome.state}"
            if outcome.detail is not None:
                line += f" ({outcome.detail})"
            self.stdout.write(line)
        failed = [outcome.name for outcome in outcomes if outcome.state == "failed"]
        if failed:
            raise CommandError(f"Failed: {', '.join(failed)}; see the log. Tried again next run.")
