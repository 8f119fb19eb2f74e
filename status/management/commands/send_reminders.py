"""Notifications on a schedule: stale statuses and the Waiting-for-me digest, at once. In
production `manage.py runperiodic` runs the same jobs on their schedule (status/periodic.py);
this command runs both now. Safe to run as often as you like: nobody is told of one event
twice."""

from typing import Any

from django.core.management.base import BaseCommand

from status import reminders


class Command(BaseCommand):
    help = "Send the stale-status reminders and this week's Waiting-for-me digests now."

    def handle(self, *args: Any, **options: Any) -> None:
        stale = reminders.stale_status_reminders()
        digests = reminders.weekly_digests()
        self.stdout.write(f"Sent {stale} stale-status reminder(s) and {digests} digest(s).")
