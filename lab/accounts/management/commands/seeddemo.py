"""manage.py seeddemo: the demo tenant, its agent and a one-time login (run by `make run`)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from lab.accounts.services import DEMO_USER, demo_seed


class Command(BaseCommand):
    help = (
        "Create (or keep) tenant demo with agent demo-agent and owner demo, "
        "whose password is new on every call and printed once."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        password = demo_seed()
        self.stdout.write(
            f"Demo login: http://127.0.0.1:8000/accounts/login/ "
            f"user {DEMO_USER}, password {password}"
        )
