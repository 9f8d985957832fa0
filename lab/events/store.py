"""Writes and reads of the stored event log (the Django edge of lab.events)."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from lab.events.chain import GENESIS_HASH
from lab.events.models import Run, StoredEvent
from lab.events.types import EVENT_LIST, Event


class AppendRefused(Exception):
    """The writer may not append this event: it lost the driver lease, or the log moved on."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def event_append(*, run: Run, event: Event, holder: str | None = None) -> StoredEvent:
    """Store one chained event, fenced: only the lease holder writes, and only the next link.

    A writer without a holder token may write only while no live lease is held. The insert
    comes first so the transaction holds the write lock before it reads (SQLite would refuse
    to upgrade a read lock held by two writers); the unique (run, seq) constraint settles races.
    """
    try:
        with transaction.atomic():
            stored = StoredEvent.objects.create(
                run=run,
                seq=event.seq,
                event_id=event.id,
                type=event.type,
                at=event.at,
                payload=event.payload.model_dump(mode="json"),
                prev_hash=event.prev_hash,
                hash=event.hash,
            )
            _check_writer(run, holder)
            _check_link(run, event)
            return stored
    except IntegrityError:
        raise AppendRefused(
            "chain_conflict", f"another writer already stored event {event.seq} of this run"
        ) from None


def _check_writer(run: Run, holder: str | None) -> None:
    lease = Run.objects.select_for_update().filter(pk=run.pk)
    if holder is not None:
        allowed = lease.filter(driver_token=holder)
    else:
        allowed = lease.filter(Q(driver_token="") | Q(driver_expires_at__lt=timezone.now()))
    if not list(allowed.values_list("pk", flat=True)):
        raise AppendRefused("lease_lost", "another connection now drives this run")


def _check_link(run: Run, event: Event) -> None:
    previous: str | None
    if event.seq == 1:
        previous = GENESIS_HASH
    else:
        previous = (
            StoredEvent.objects.filter(run=run, seq=event.seq - 1)
            .values_list("hash", flat=True)
            .first()
        )
    if previous != event.prev_hash:
        raise AppendRefused(
            "chain_conflict",
            f"event {event.seq} does not continue the stored log (it links to another event)",
        )


def run_events(run: Run) -> list[Event]:
    rows = StoredEvent.objects.filter(run=run).order_by("seq")
    return EVENT_LIST.validate_python(
        [
            {
                "id": row.event_id,
                "seq": row.seq,
                "at": row.at,
                "payload": row.payload,
                "prev_hash": row.prev_hash,
                "hash": row.hash,
            }
            for row in rows
        ]
    )


def run_mark_ended(*, run: Run) -> None:
    """Mark the run ended and free its lease: nobody drives an ended run."""
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.ENDED, driver_token="", driver_expires_at=None
    )
