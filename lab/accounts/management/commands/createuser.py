"""manage.py createuser USERNAME --tenant SLUG --role ROLE [--password-stdin]."""

from __future__ import annotations

import sys
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from lab.accounts.roles import Role
from lab.accounts.services import member_ensure


class Command(BaseCommand):
    help = (
        "Create a user (or take an existing one) as a member of a tenant in a role; "
        "a new user without --password-stdin gets a generated password, printed once."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--tenant", required=True, help="the tenant's slug")
        parser.add_argument("--role", required=True, help=", ".join(r.value for r in Role))
        parser.add_argument(
            "--password-stdin", action="store_true", help="read the password from stdin"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        password = None
        if options["password_stdin"]:
            password = sys.stdin.readline().rstrip("\r\n")
        try:
            setup = member_ensure(
                options["username"],
                tenant_slug=options["tenant"],
                role=options["role"],
                password=password,
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        state = "created" if setup.user_created else "updated"
        member = setup.membership
        self.stdout.write(
            f"user {setup.user.username} {state}: {member.role} of {options['tenant']}"
        )
        if setup.user_created and not options["password_stdin"]:
            self.stdout.write(f"password (shown once): {setup.password}")
