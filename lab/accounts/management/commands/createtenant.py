"""manage.py createtenant SLUG [--name NAME]."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.accounts.services import tenant_ensure


class Command(BaseCommand):
    help = "Create a tenant (an existing one is left as it is)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("slug", help="letters, digits, '-' or '_' (at most 64)")
        parser.add_argument("--name", default="", help="a display name")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            tenant, created = tenant_ensure(options["slug"], options["name"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        state = "created" if created else "already exists; left as it is"
        self.stdout.write(f"tenant {tenant.slug} {state}")
