"""manage.py rebuild_audit_days: recount the rollup's per-day counters from the audit rows."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from lab.audit.daily import rebuild


class Command(BaseCommand):
    help = "Recount the per-day audit counters (lab.audit.daily) from the audit rows."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(f"{rebuild():,} counter rows rebuilt from the audit rows")
