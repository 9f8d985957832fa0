"""Opening cases: one FlagCase per flagged audit record, however often the record is seen."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from django.db import transaction

from lab.audit.models import AuditRecord
from lab.operator.live import push_cards
from lab.operator.models import FlagCase
from lab.operator.queue import PAGE_SIZE


def open_cases(records: Iterable[AuditRecord]) -> list[FlagCase]:
    """Open a case for each flagged record that has none; the new cases, oldest record first.

    Each new card goes to the tenant's live queue once the surrounding transaction commits.
    """
    flagged = {r.id: r for r in records if r.flagged}
    if not flagged:
        return []
    existing = set(FlagCase.objects.filter(record__in=flagged).values_list("record_id", flat=True))
    # A concurrent writer may open one of these first; the unique record keeps it single.
    FlagCase.objects.bulk_create(
        [
            FlagCase(record_id=record_id, tenant=record.tenant, agent=record.agent)
            for record_id, record in sorted(flagged.items())
            if record_id not in existing
        ],
        ignore_conflicts=True,
    )
    opened = list(FlagCase.objects.filter(record__in=set(flagged) - existing).order_by("record_id"))
    if opened:
        transaction.on_commit(partial(_push_new, [c.id for c in opened]), robust=True)
    return opened


def _push_new(case_ids: list[int]) -> None:
    # A big import would bury the page; its newest page goes live, the rest is there on reload.
    push_cards(case_ids[-PAGE_SIZE:], mode="new")
