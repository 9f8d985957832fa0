"""manage.py createtoken USERNAME [--name NAME]: the raw token alone on stdout, once."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from lab.accounts.access import issue_token


class Command(BaseCommand):
    help = "Create an API token for a user and print it once (only its digest is kept)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="what the token is for (at most 100)")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"there is no user {options['username']!r}")
        if not user.is_active:
            raise CommandError(f"user {user.username!r} is inactive")
        if len(options["name"]) > 100:
            raise CommandError("a token name has at most 100 characters")
        # Only the token on stdout, so `TOKEN=$(manage.py createtoken alice)` works.
        self.stdout.write(issue_token(user, name=options["name"]))
