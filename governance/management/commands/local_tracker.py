"""Script the built-in tracker: users, projects, issues, groups, API tokens. Idempotent.
The accountId (user) or the token (token) is printed alone on the last line."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from governance.models import User
from governance.services import token_create
from governance.tracker.local import scripting


class Command(BaseCommand):
    help = "Create or update local tracker users, projects, issues and groups; mint API tokens."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="what", required=True)
        user = sub.add_parser("user", help="Create or update a user; prints the accountId.")
        user.add_argument("name")
        user.add_argument("--display-name")
        user.add_argument("--admin", action="store_true", help="Tracker site administrator.")
        user.add_argument("--password")
        user.add_argument("--email")
        project = sub.add_parser(
            "project", help="Create or update a project (the lead may always browse)."
        )
        project.add_argument("key")
        project.add_argument("--name", required=True)
        project.add_argument("--lead", required=True)
        project.add_argument(
            "--browser", action="append", default=[], help="May browse (repeatable)."
        )
        issue = sub.add_parser("issue", help="Create or update an issue.")
        issue.add_argument("key")
        issue.add_argument("--summary", required=True)
        issue.add_argument("--type", default="Epic")
        group = sub.add_parser("group", help="Create a group and add members.")
        group.add_argument("name")
        group.add_argument("--member", action="append", required=True)
        token = sub.add_parser("token", help="Mint a new API token for a user; prints it.")
        token.add_argument("name")

    def handle(self, *args: Any, what: str, **options: Any) -> None:
        if settings.TRACKER_BACKEND != "local":
            raise CommandError(
                "local_tracker works only with TRACKER_BACKEND=local "
                f"(now {settings.TRACKER_BACKEND})."
            )
        try:
            getattr(self, f"do_{what}")(**options)
        except scripting.ScriptError as exc:
            raise CommandError(str(exc)) from exc

    def do_user(
        self,
        *,
        name: str,
        display_name: str | None,
        admin: bool,
        password: str | None,
        email: str | None,
        **_: Any,
    ) -> None:
        user = scripting.ensure_user(
            name, display_name=display_name, admin=admin, password=password, email=email
        )
        self.stdout.write(user.account_id)

    def do_project(self, *, key: str, name: str, lead: str, browser: list[str], **_: Any) -> None:
        project = scripting.ensure_project(key, name=name, lead=lead, browsers=browser)
        self.stdout.write(project.key)

    def do_issue(self, *, key: str, summary: str, type: str, **_: Any) -> None:
        issue = scripting.ensure_issue(key, summary=summary, issue_type=type)
        self.stdout.write(issue.key)

    def do_group(self, *, name: str, member: list[str], **_: Any) -> None:
        group = scripting.ensure_group(name, members=member)
        self.stdout.write(group.name)

    def do_token(self, *, name: str, **_: Any) -> None:
        user = User.objects.filter(username=name).first()
        if user is None:
            raise CommandError(f"No user {name!r}; create it with `local_tracker user {name}`.")
        _token, raw = token_create(user=user, name=f"local_tracker {timezone.now():%Y-%m-%d %H:%M}")
        self.stdout.write(raw)
