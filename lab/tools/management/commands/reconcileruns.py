"""Start-up sweep: record what the sandbox holds for every commit an active run left open."""

from __future__ import annotations

import asyncio
from typing import Any

from django.core.management.base import BaseCommand

from lab.runs.reconciliation import reconcile_active_runs


class Command(BaseCommand):
    help = (
        "Reconcile commit attempts that active runs started without a recorded outcome "
        "(run before serving, after a crash)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        count = asyncio.run(reconcile_active_runs())
        self.stdout.write(f"reconciled {count} open commit attempt(s)")
