"""A run's log writer: the one way to append an event (chain → persist → notify listeners)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from channels.db import database_sync_to_async

from lab.events import store
from lab.events.chain import EventChain, chain_event
from lab.events.models import Run
from lab.events.types import Event, EventPayload

Listener = Callable[[Event], Awaitable[None]]


class RunClosed(Exception):
    """The run has ended; nothing more can be recorded in it."""


class RunLog:
    """The in-memory chain of one run, kept equal to the stored log."""

    def __init__(self, run: Run, events: list[Event] | None = None) -> None:
        self.run = run
        self.chain = EventChain(events)
        self.listeners: list[Listener] = []
        # The driver lease this writer holds (lab/runs/lease.py); the store fences on it.
        self.holder: str | None = None
        self._lock = asyncio.Lock()

    @property
    def events(self) -> list[Event]:
        return self.chain.events

    @property
    def ended(self) -> bool:
        return any(event.type == "run.ended" for event in self.chain.events[-1:])

    async def append(self, payload: EventPayload) -> Event:
        """Chain, persist and announce one event; raises RunClosed once the run has ended."""
        # A cancelled caller must not leave a stored event out of the in-memory chain.
        event = await asyncio.shield(asyncio.ensure_future(self._store(payload)))
        for listener in self.listeners:
            await listener(event)
        return event

    async def _store(self, payload: EventPayload) -> Event:
        async with self._lock:
            if self.ended:
                raise RunClosed("the run has ended")
            event = chain_event(
                seq=len(self.chain.events) + 1,
                at=datetime.now(UTC),
                payload=payload,
                prev_hash=self.chain.last_hash,
            )
            # Only a stored event joins the in-memory chain, so a failed write cannot fork it.
            await database_sync_to_async(store.event_append)(
                run=self.run, event=event, holder=self.holder
            )
            self.chain.events.append(event)
            return event
