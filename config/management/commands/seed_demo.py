"""Load the demo portfolio. Safe to run again: nothing is duplicated."""

import contextlib
from typing import Any

from django.core.management.base import BaseCommand
from django.db import transaction

from config.modules import optional_module
from governance import demo, signals

# Layer order: each app's demo builds on the ones before it. The stage plans are made before
# the business cases are approved (approval starts their first stage); the gate reviews and
# the sponsor's decisions come once every project runs and reports (`seed_gates`).
DEMO_APPS = ["registers", "gates", "charter", "status", "portfolio", "investment"]
LATE = {"gates": "seed_gates"}
# The apps whose seeding cannot move an exception: each of their writes would derive the
# project's stored health again (about 470 derivations for the registers alone). The registers
# and the stage plans come before any business case, so no project has tolerances yet; the
# investment demo writes facts only of the proposals it adds, whose cases are not baselined, so
# none of them runs delivery (its scores and scenarios are no project's facts). A derivation
# then opens or moves no exception, and none of their seeding reads the stored health: deriving
# each project once when the app's seeding ends writes the same rows as the last of those
# derivations would have.
NO_EXCEPTION_MOVES = {"registers", "gates", "investment"}


class Command(BaseCommand):
    help = "Load idempotent demo data: the cast, projects, registers, business cases, status."

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic():
            ctx = demo.seed()
            for app in DEMO_APPS:
                module = optional_module(app, "demo")
                if module is None:
                    continue
                with (
                    signals.deferred_project_changes()
                    if app in NO_EXCEPTION_MOVES
                    else contextlib.nullcontext()
                ):
                    module.seed(ctx)
            for app, name in LATE.items():
                module = optional_module(app, "demo")
                if module is not None:
                    getattr(module, name)(ctx)
        self.stdout.write(
            f"Demo data ready: {len(ctx.users)} people, {len(ctx.projects)} projects. "
            f"Sign in with any of {', '.join(demo.CAST)} and the password {demo.DEMO_PASSWORD!r}."
        )
