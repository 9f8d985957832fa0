"""manage.py seeddemo: the demo tenant, its agent and its login (run by `make run`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from lab.accounts.services import DEMO_USER, demo_seed

# Where the demo owner's password is kept between calls (mode 0600, beside the signing key).
DEMO_LOGIN_FILE = "demo-login"


class Command(BaseCommand):
    help = (
        "Create (or keep) tenant demo with agent demo-agent and owner demo; the owner keeps "
        "the last call's password (kept in LAB_STATE_DIR) unless --new-password."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--new-password",
            action="store_true",
            help="give demo a new password (signs out every browser signed in as demo)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        login = demo_seed(
            saved=settings.LAB_STATE_DIR / DEMO_LOGIN_FILE, renew=options["new_password"]
        )
        self.stdout.write(
            f"Demo login: http://127.0.0.1:8000/accounts/login/ "
            f"user {DEMO_USER}, password {login.password}"
        )
        if login.kept:
            self.stdout.write(
                "(kept from the last start, so signed-in browsers stay signed in; "
                "`make run NEW_DEMO_PASSWORD=1` or `seeddemo --new-password` for a new one)"
            )
