"""manage.py revoketoken PREFIX."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.accounts.access import revoke_token


class Command(BaseCommand):
    help = "Revoke the one live API token whose prefix (as token lists show it) starts so."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("prefix")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            token = revoke_token(options["prefix"])
        except LookupError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"revoked token {token.prefix} of {token.user.username}")
