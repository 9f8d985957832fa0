"""Writes and reads of the stored event log (the Django edge of lab.events)."""

from __future__ import annotations

from django.db import transaction

from lab.events.models import Run, StoredEvent
from lab.events.types import EVENT_LIST, Event


def event_append(*, run: Run, event: Event) -> StoredEvent:
    """Store one already-chained event; the unique (run, seq) constraint keeps the log gapless."""
    with transaction.atomic():
        return StoredEvent.objects.create(
            run=run,
            seq=event.seq,
            event_id=event.id,
            type=event.type,
            at=event.at,
            payload=event.payload.model_dump(mode="json"),
            prev_hash=event.prev_hash,
            hash=event.hash,
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
    Run.objects.filter(pk=run.pk).update(status=Run.Status.ENDED)
