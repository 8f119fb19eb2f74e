"""python manage.py mcp --user NAME: the action catalogue as MCP tools over stdio, as NAME,
for desktop clients (Claude Desktop, VS Code, Cursor...). Both gates apply to every call."""

from typing import Any

import anyio
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp.server.stdio import stdio_server

from agent import catalogue
from agent.mcp_server import build_server
from governance.models import User


class Command(BaseCommand):
    help = "Serve the assistant's actions as MCP tools over stdio, as the given user."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, help="username the tools run as")
        parser.add_argument(
            "--base-url",
            default="",
            help="site address for the links in results (default: the SITE_URL setting)",
        )

    def handle(self, *args: Any, user: User, base_url: str, **options: Any) -> None:
        person = User.objects.filter(username=user, is_active=True).first()
        if person is None:
            raise CommandError(f"No active user called {user!r}.")
        server = build_server(
            lambda: catalogue.request_for(person), base_url=base_url or settings.SITE_URL
        )

        async def serve() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve)
