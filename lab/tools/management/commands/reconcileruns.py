"""Start-up sweep: record what the sandbox holds for every commit an active run left open, and
the grades of utterances it left ungraded; end as abandoned the unfinished trials of picker
groups whose player is gone."""

from __future__ import annotations

import asyncio
from typing import Any

from django.core.management.base import BaseCommand

from lab.runs.reconciliation import reconcile_active_runs
from lab.runs.trial_players import trials_abandon


class Command(BaseCommand):
    help = (
        "Reconcile commit attempts that active runs started without a recorded outcome, and "
        "grade the utterances they recorded without a grade (run before serving, after a crash)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        count = asyncio.run(reconcile_active_runs())
        self.stdout.write(f"reconciled {count} open commit attempt(s)")
        abandoned = trials_abandon()
        self.stdout.write(f"abandoned {abandoned} trial run(s) whose player is gone")
