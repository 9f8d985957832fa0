"""A run's log writer: the one way to append an event (chain → persist → notify listeners)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from channels.db import database_sync_to_async

from lab.events import store
from lab.events.chain import EventChain, chain_event
from lab.events.models import Run
from lab.events.types import Event, EventPayload

Listener = Callable[[Event], Awaitable[None]]
# A payload made only once every event before it is stored: one that names an earlier event
# whose write may not be over when it is handed over.
PayloadLater = Callable[[], EventPayload]


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
        event = await asyncio.shield(self.reserve(payload))
        await self.announce(event)
        return event

    def reserve(self, payload: EventPayload | PayloadLater) -> asyncio.Task[Event]:
        """Take the event's place in the log now; it is chained and stored by the task returned.

        Store tasks reach the (first-come) lock in the order they were made, so the event gets
        the seq and id it would have had if its caller had waited for the write here.
        """
        return asyncio.ensure_future(self._store(payload))

    async def announce(self, event: Event) -> None:
        for listener in self.listeners:
            await listener(event)

    async def _store(self, payload: EventPayload | PayloadLater) -> Event:
        async with self._lock:
            if self.ended:
                raise RunClosed("the run has ended")
            event = chain_event(
                seq=len(self.chain.events) + 1,
                at=datetime.now(UTC),
                payload=payload() if callable(payload) else payload,
                prev_hash=self.chain.last_hash,
            )
            # Only a stored event joins the in-memory chain, so a failed write cannot fork it.
            await database_sync_to_async(store.event_append)(
                run=self.run, event=event, holder=self.holder
            )
            self.chain.events.append(event)
            return event


class OrderedWriter:
    """Writes handed over by a path that must not wait on the database (the caller's frames).

    Each event takes its place in the log as it is handed over; one task at a time then awaits
    the writes in that order and announces each (listeners, then `after`).
    """

    def __init__(self, log: RunLog, after: Listener) -> None:
        self.log = log
        self.after = after
        self._handed: deque[tuple[asyncio.Task[Event], asyncio.Future[Event]]] = deque()
        self._task: asyncio.Task[None] | None = None
        self._failure: Exception | None = None

    def hand(self, payload: EventPayload | PayloadLater) -> asyncio.Future[Event]:
        """The event once stored and announced; its seq is taken now."""
        return self.follow(self.log.reserve(payload))

    def follow(self, stored: asyncio.Task[Event]) -> asyncio.Future[Event]:
        """Announce, in its turn, an event whose place RunLog.reserve gave: once announced."""
        written: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._handed.append((stored, written))
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._write())
        return written

    def raise_failure(self) -> None:
        """Raise, once, what a handed write failed with (RunClosed, AppendRefused): the path
        that handed it meets it as it would have had it waited, one call later."""
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure

    async def drain(self) -> None:
        """Return once every event handed over so far is stored and announced."""
        # A listener that ends the run would otherwise wait here on its own writer.
        while (task := self._task) is not None and task is not asyncio.current_task():
            if task.done():
                return
            await asyncio.shield(task)

    async def _write(self) -> None:
        while self._handed:
            stored, written = self._handed[0]
            try:
                event = await asyncio.shield(stored)
                await self.log.announce(event)
                await self.after(event)
            except Exception as error:
                self._failure = self._failure or error
                written.set_exception(error)
                # Retrieved here: nothing may ever await it; raise_failure reports it instead.
                written.exception()
            else:
                written.set_result(event)
            finally:
                self._handed.popleft()
