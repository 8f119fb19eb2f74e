"""Load the demo portfolio. Safe to run again: nothing is duplicated."""

from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from config.modules import optional_module
from governance import demo

# Layer order: each app's demo builds on the ones before it.
DEMO_APPS = ["registers", "charter", "status", "portfolio"]


class Command(BaseCommand):
    help = "Load idempotent demo data: the cast, projects, registers, business cases, status."

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic():
            ctx = demo.seed()
            for app in DEMO_APPS:
                module = optional_module(app, "demo")
                if module is not None:
                    module.seed(ctx)
        self.stdout.write(
            f"Demo data ready: {len(ctx.users)} people, {len(ctx.projects)} projects. "
            f"Sign in with any of {', '.join(demo.CAST)} and the password {demo.DEMO_PASSWORD!r}."
        )
