"""Runs this process drives: each live session with its lease, the socket driving it (if
any), and the broadcast that keeps every watching page, on any process, up to date.

The registry only caches sessions whose lease this process holds: the lease in the database
(lab/runs/lease.py) decides who drives, and the stored log is what a new driver rebuilds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from enum import StrEnum
from typing import Any, Protocol

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.template.loader import render_to_string

from lab.events import store
from lab.events.models import Run
from lab.events.store import AppendRefused
from lab.events.types import Channel, Event
from lab.runs.lease import lease_holder_new, lease_release, lease_renew, lease_take
from lab.runs.pacing import AudioPacer
from lab.runs.session import RunClosed, RunSession
from lab.runs.voice import VoiceLink
from lab.scenarios.contracts import Contract
from lab.speech import service
from lab.web.panel import (
    TEMPLATE,
    agent_state_fragment,
    event_fragments,
    notice_fragment,
    panel_context,
)

logger = logging.getLogger(__name__)

# A lease lapses this long after its last renewal (renewed three times as often while a
# socket drives); another process may then rebuild the run from its log. It stays below the
# default LAB_RECONNECT_GRACE_S, so a reload that lands on another process resumes the run.
LEASE_TTL_S = 10.0
# How often a waiting window of the owner looks for a lapsed lease held elsewhere.
TAKEOVER_POLL_S = LEASE_TTL_S / 3
TOOK_OVER = "another connection took this run over"


class Role(StrEnum):
    DRIVER = "driver"
    WATCHER = "watcher"
    SHARED = "shared"


def run_group(run_id: str) -> str:
    """The channel-layer group of every socket showing the run, on any process."""
    return f"run.{run_id}"


def sync_fragment(contract: Contract, events: list[Event], role: Role) -> str:
    """The whole panel, swapped in at once: a (re)connected page then matches the log."""
    return render_to_string(
        f"{TEMPLATE}#panel_sync", {**panel_context(contract, events), "role": role.value}
    )


def ended_fragment() -> str:
    """The one ended state every window shows: the controls say so, the speaking line goes."""
    return render_to_string(f"{TEMPLATE}#controls_oob", {"ended": True}) + render_to_string(
        f"{TEMPLATE}#agent_state_oob", {"ended": True}
    )


class Driver(Protocol):
    """The socket driving a live run."""

    async def deliver(self, html: str, *, seq: int | None = None, final: bool = False) -> None: ...
    async def send_audio(self, data: bytes) -> None: ...
    async def lost(self, reason: str) -> None: ...


class LiveRegistry:
    """This process's live runs by id."""

    def __init__(self) -> None:
        self.runs: dict[str, LiveRun] = {}

    async def vacancy(self, run_id: str) -> None:
        """Return once the run may be free to drive from here: its session here was let go
        (at once), or a lease held elsewhere may have lapsed (polled)."""
        here = self.runs.get(run_id)
        waiting = here.vacated.wait() if here is not None else asyncio.sleep(TAKEOVER_POLL_S)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(waiting, TAKEOVER_POLL_S)

    async def drive(self, *, run: Run, contract: Contract, driver: Driver) -> LiveRun | None:
        """Attach the driver to the run's session here, or rebuild one from the log if the
        lease is free; None while another socket or process drives the run."""
        run_id = str(run.id)
        if (live := self.runs.get(run_id)) is not None:
            return live if await live.attach(driver) else None
        holder = lease_holder_new()
        took = await database_sync_to_async(lease_take)(
            run_id=run_id, holder=holder, ttl_s=LEASE_TTL_S
        )
        if not took:
            return None
        events = await database_sync_to_async(store.run_events)(run)
        if events and events[-1].type == "run.ended":
            # The log ended but the process that ended it died before marking the run.
            await database_sync_to_async(store.run_mark_ended)(run=run)
            return None
        live = LiveRun(registry=self, run=run, contract=contract, events=events, holder=holder)
        self.runs[run_id] = live
        await live.attach(driver)
        return live


class LiveRun:
    """One session this process drives: it outlives a dropped socket for the grace period."""

    def __init__(
        self,
        *,
        registry: LiveRegistry,
        run: Run,
        contract: Contract,
        events: list[Event],
        holder: str,
    ) -> None:
        self.registry = registry
        self.run_id = str(run.id)
        self.holder = holder
        self.session = RunSession(run=run, contract=contract, events=events)
        self.session.log.holder = holder
        self.session.listeners.append(self._publish_event)
        self.session.speaker.on_change.append(self._speech_changed)
        self.typed = run.channel == Channel.TYPED
        self.voice: VoiceLink | None = None
        self.driver: Driver | None = None
        self.tasks: set[asyncio.Task[Any]] = set()
        # Set while no socket drives, so a waiting window of the owner can take over at once.
        self.vacated = asyncio.Event()
        self.disposed = False
        self._started = False
        # The caller's audio clock, read as each frame arrives (lab/runs/pacing.py).
        self.pacer = AudioPacer()
        # Set once run.started is in the log (a voice run's models loaded first), or the start
        # gave up: input refused before then is recorded right after run.started.
        self.ready = asyncio.Event()
        self._refused_early: list[tuple[str, str]] = []
        self._starting: asyncio.Task[None] | None = None
        self._ending: asyncio.Task[None] | None = None
        self._keeper: asyncio.Task[None] | None = None
        self._grace: asyncio.Task[None] | None = None
        # What the pages were last told of the agent's speech, and the task that tells them
        # once the timeline runs out.
        self._speaking_shown: bool | None = None
        self._announcer: asyncio.Task[None] | None = None

    # -- who drives -------------------------------------------------------------------------

    async def attach(self, driver: Driver) -> bool:
        if self.driver is not None or self.disposed:
            return False
        self.driver = driver
        self.vacated.clear()
        if self._grace is not None:
            # Back within the grace period: the lease lapsed meanwhile unless it is still ours.
            self._cancel(self._grace)
            self._grace = None
            took = await database_sync_to_async(lease_take)(
                run_id=self.run_id, holder=self.holder, ttl_s=LEASE_TTL_S
            )
            if not took:
                self.driver = None
                await self._lose(TOOK_OVER)
                return False
        self._keeper = asyncio.ensure_future(self._keep())
        return True

    async def detach(self, driver: Driver) -> None:
        """The driving socket went away: end at once, or wait the grace period for it."""
        if self.driver is not driver:
            return
        self.driver = None
        self.vacated.set()
        self._cancel(self._keeper)
        grace = settings.LAB_RECONNECT_GRACE_S
        if self.session.ended or grace <= 0:
            # Shielded: a socket torn down meanwhile must not leave the run half ended.
            self._ending = self._ending or asyncio.ensure_future(self._expire())
            await asyncio.shield(self._ending)
        else:
            self._grace = asyncio.ensure_future(self._expire_after(grace))

    async def start(self) -> None:
        """Start the run: a typed one at once; a voice one in the background, so the socket
        reads (and paces) the caller's frames as they arrive while the models load."""
        if self._started:
            return
        self._started = True
        if self.typed:
            await self._begin()
        else:
            self._starting = asyncio.ensure_future(self._begin_voice())

    async def _begin_voice(self) -> None:
        try:
            await self._begin()
        except Exception as error:
            # No socket handler awaits this start: say what broke, where it can be seen.
            logger.exception("run %s could not start", self.run_id)
            await self.notify(f"The call could not start: {error}")

    async def _begin(self) -> None:
        """Prepare the channel, then record run.started (a rebuilt run resumes instead)."""
        try:
            if not self.typed:
                await self.notify("Loading the speech models…", tone="info")
                await service.warm()
                self.voice = VoiceLink(self.session, self._send_audio)
                # Ready needs no words: the greeting follows at once (an empty notice hides).
                await self.notify("", tone="info")
            await self.guard(self.session.start())
            for kind, reason in self._refused_early:
                await self.reject(kind, reason, started=True)
        finally:
            self._refused_early.clear()
            self.ready.set()

    async def reject(self, kind: str, reason: str, *, started: bool = False) -> None:
        """Record refused input; before run.started it waits for it (the log starts there)."""
        if not (started or self.ready.is_set()):
            self._refused_early.append((kind, reason))
            return
        await self.guard(self.session.reject_input(reason_kind=kind, reason=reason))

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(LEASE_TTL_S / 3)
            renewed = await database_sync_to_async(lease_renew)(
                run_id=self.run_id, holder=self.holder, ttl_s=LEASE_TTL_S
            )
            if not renewed:
                await self._lose(TOOK_OVER)
                return

    async def _expire_after(self, grace_s: float) -> None:
        await asyncio.sleep(grace_s)
        await self._expire()

    async def _expire(self) -> None:
        """Nobody came back in time: the caller left (once the run has started, with what it
        refused meanwhile)."""
        if self._starting is not None:
            await asyncio.wait([self._starting])
        self._cancel_tasks()
        await self.guard(
            self.session.end(reason_kind="caller_left", reason="the caller left the call")
        )
        await self.dispose()

    async def _lose(self, reason: str) -> None:
        """Another session drives the run now: stop here, writing nothing more."""
        driver, self.driver = self.driver, None
        await self.dispose()
        if driver is not None:
            await driver.lost(reason)

    async def dispose(self) -> None:
        """Let the run go: stop its work here (waiting for it to stop) and free its lease."""
        if self.disposed:
            return
        self.disposed = True
        running = (self._keeper, self._grace, self._starting, *self.tasks)
        stopping = [self._cancel(task) for task in running]
        if not self.session.ended:
            # The run goes on elsewhere: its quiet timer and tool watchers stop here.
            self.session.close()
        if self.voice is not None:
            await self.voice.aclose()
        if self.registry.runs.get(self.run_id) is self:
            del self.registry.runs[self.run_id]
        self.vacated.set()
        if not self.session.ended:
            await database_sync_to_async(lease_release)(run_id=self.run_id, holder=self.holder)
        await asyncio.gather(*(task for task in stopping if task), return_exceptions=True)

    def _cancel(self, task: asyncio.Task[Any] | None) -> asyncio.Task[Any] | None:
        """Cancel a task unless it is the one asking; returns the task to wait for."""
        if task is None or task is asyncio.current_task():
            return None
        task.cancel()
        return task

    def _cancel_tasks(self) -> None:
        for task in list(self.tasks):
            self._cancel(task)

    # -- work -------------------------------------------------------------------------------

    async def guard(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run session work; a refused append means this process lost the run."""
        try:
            await work
        except RunClosed:
            await self.notify("This run has ended.", tone="info")
        except AppendRefused as refused:
            await self._lose(refused.reason)

    def spawn(
        self, work: Coroutine[Any, Any, Any], *, name: str | None = None
    ) -> asyncio.Task[None]:
        """Session work that outlives the socket that asked for it (until the run is let go)."""
        task = asyncio.ensure_future(self.guard(work))
        if name:
            task.set_name(name)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        # A task cancelled before it ran never awaited its work: close it quietly.
        task.add_done_callback(lambda _: work.close())
        return task

    def busy(self, name: str) -> bool:
        return any(task.get_name() == name for task in self.tasks)

    # -- what the pages see -----------------------------------------------------------------

    async def notify(self, message: str, *, tone: str = "error") -> None:
        if self.driver is not None:
            await self.driver.deliver(notice_fragment(message, tone=tone))

    async def publish(self, html: str, *, seq: int | None = None, final: bool = False) -> None:
        """To the driving socket directly, and to every watcher through the run's group.

        final: the run ended, and each window adds what a reload would show it."""
        if self.driver is not None:
            await self.driver.deliver(html, seq=seq, final=final)
        message = {"type": "run.fragments", "html": html, "seq": seq, "holder": self.holder}
        await get_channel_layer().group_send(run_group(self.run_id), {**message, "final": final})

    async def _publish_event(self, event: Event) -> None:
        html = event_fragments(self.session.contract, self.session.events, event)
        final = event.type == "run.ended"
        if final:
            self._cancel(self._keeper)
            html += ended_fragment()
        await self.publish(html, seq=event.seq, final=final)

    def speaking(self) -> bool:
        """Whether the timeline holds agent speech now: a caller line now interrupts it."""
        now = self.session.now()
        return self.session.timeline.busy_until(now) > now

    async def _speech_changed(self) -> None:
        """The timeline changed: say so, and say "listening" only once its speech runs out."""
        if self.session.ended:
            return
        speaking = self.speaking()
        if speaking and (self._announcer is None or self._announcer.done()):
            self._announcer = self.spawn(self._announce_listening(), name="listening")
        await self._show_speaking(speaking)

    async def _show_speaking(self, speaking: bool) -> None:
        if speaking == self._speaking_shown:
            return
        self._speaking_shown = speaking
        await self.publish(agent_state_fragment(speaking=speaking))

    async def _announce_listening(self) -> None:
        """Tell the caller when the agent's speech has run out (on the timeline, retimed to the
        audio on voice runs), however often it was extended meanwhile."""
        session = self.session
        while not session.ended:
            remaining = session.timeline.busy_until(session.now()) - session.now()
            if remaining > 0:
                await asyncio.sleep(remaining)
                continue
            await self._show_speaking(False)
            if not self.speaking():
                return

    async def _send_audio(self, data: bytes) -> None:
        if self.driver is not None:
            await self.driver.send_audio(data)


REGISTRY = LiveRegistry()
