"""The run WebSocket: text frames carry JSON control messages, binary frames carry audio.

A thin shell: it checks who is asking, drives the run's live session (lab/web/live.py) or
watches it through the run's channel-layer group, and renders what the log adds.
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from lab.accounts.revocation import session_group
from lab.events import store
from lab.events.models import Run
from lab.events.types import Event
from lab.runs.ownership import OWNER_SESSION_KEY, RunAccess, share_group
from lab.runs.session import RunClosed
from lab.runs.voice import AudioRejected
from lab.scenarios.catalog import UnknownScenario, contract_get
from lab.scenarios.contracts import Contract
from lab.web import limits
from lab.web.access import NOT_FOUND, run_for_scope
from lab.web.live import (
    REGISTRY,
    LiveRegistry,
    LiveRun,
    Role,
    run_group,
    sync_fragment,
)
from lab.web.messages import (
    BadMessage,
    EndMessage,
    PlayedMessage,
    PlayMessage,
    SayMessage,
    parse_client_message,
)
from lab.web.panel import agent_state_fragment, notice_fragment
from lab.web.run_end import run_end_fragment
from lab.web.signout import owner_group

# Too much rejected input, audio or text (lab/web/limits.py). RFC 6455's 1008 says the same,
# but daphne (autobahn) sends only 1000 and 3000-4999: it refused 1008 and the client saw 1011.
CLOSE_POLICY = 4008
CLOSE_REVOKED = 4403  # the owner's session signed out, or the share link was replaced
CLOSE_NOT_FOUND = 4404  # no such run, or not this viewer's
CLOSE_ENDED = 4410
CLOSE_TOO_FAST = 4429  # audio faster than real time


def _load_events(run: Run) -> list[Event]:
    return store.run_events(run)


def _run_ended(run_id: str) -> bool:
    return Run.objects.filter(pk=run_id, status=Run.Status.ENDED).exists()


class RunConsumer(AsyncWebsocketConsumer):
    """One socket of a run page: the owner's drives (one at a time), every other watches."""

    def __init__(self, *args: Any, registry: LiveRegistry = REGISTRY, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.registry = registry
        self.live: LiveRun | None = None
        self.access: RunAccess | None = None
        self.budget = limits.InputBudget()
        self.tasks: set[asyncio.Task[Any]] = set()
        # The last event this page has: a broadcast of it or of anything older is skipped.
        self.seen = 0
        # Once the server closes the socket, frames still in flight are ignored.
        self.closing = False
        # The groups of what the owner's right rests on (its session, its owner token).
        self.rights: list[str] = []
        # Caller frames paced on arrival, waiting for the run's voice path (one at a time).
        self.frames: asyncio.Queue[bytes] = asyncio.Queue()
        self._feeder: asyncio.Task[None] | None = None

    # -- connecting -------------------------------------------------------------------------

    async def connect(self) -> None:
        await self.accept()
        access = await database_sync_to_async(run_for_scope)(self.scope)
        if access is None:
            await self._close_with(NOT_FOUND, CLOSE_NOT_FOUND)
            return
        try:
            self.contract: Contract = contract_get(access.run.scenario_id)
        except UnknownScenario as error:
            await self._close_with(str(error), CLOSE_NOT_FOUND)
            return
        self.access = access
        self.run_id = str(access.run.id)
        if access.may_drive:
            await self._follow_rights()
        elif access.run.share_hash:
            self.rights.append(share_group(access.run.share_hash))
            await self.channel_layer.group_add(self.rights[-1], self.channel_name)
        # Join before reading the log: nothing stored after the read can be missed.
        await self.channel_layer.group_add(run_group(self.run_id), self.channel_name)
        if access.run.status == Run.Status.ENDED:
            events = await database_sync_to_async(_load_events)(access.run)
            await self._show(events, Role.SHARED)
            await self._close(CLOSE_ENDED)
            return
        if access.may_drive and await self._take_over(access):
            return
        await self._watch(access)

    async def _follow_rights(self) -> None:
        """Hear when the session this owner's socket came with signs out (it then closes)."""
        session = self.scope.get("session")
        if session is None:
            return
        if session.session_key:
            self.rights.append(session_group(session.session_key))
        token = await database_sync_to_async(session.get)(OWNER_SESSION_KEY)
        if token:
            self.rights.append(owner_group(token))
        for group in self.rights:
            await self.channel_layer.group_add(group, self.channel_name)

    async def access_revoked(self, message: dict[str, Any]) -> None:
        """The owner signed out, or the share link was replaced: this window stops."""
        if self.closing:
            return
        why = (
            "You signed out: this window no longer follows the run."
            if self.access is not None and self.access.may_drive
            else "This share link was replaced: ask the run's owner for the new one."
        )
        await self._close_with(why, CLOSE_REVOKED)

    async def _take_over(self, access: RunAccess) -> bool:
        """Drive the run from this socket if no other does; False leaves it watching."""
        live = await self.registry.drive(run=access.run, contract=self.contract, driver=self)
        if live is None:
            return False
        self.live = live
        await self._show(live.session.events, Role.DRIVER)
        # A window (re)attached mid-sentence learns at once that the agent is speaking.
        await self.deliver(agent_state_fragment(speaking=live.speaking()))
        await live.start()
        return True

    async def _watch(self, access: RunAccess) -> None:
        """Show the stored log and follow the group; an owner's window waits to drive."""
        events = await database_sync_to_async(_load_events)(access.run)
        await self._show(events, Role.WATCHER if access.may_drive else Role.SHARED)
        if access.may_drive:
            self._spawn(self._wait_to_drive(access))

    async def _wait_to_drive(self, access: RunAccess) -> None:
        """An owner's extra window watches, and drives once the driving window is gone:
        at once on this process, after the lease lapses on another."""
        while self.live is None:
            await self.registry.vacancy(self.run_id)
            if await database_sync_to_async(_run_ended)(self.run_id):
                return
            if await self._take_over(access):
                return

    async def _show(self, events: list[Event], role: Role) -> None:
        self.seen = events[-1].seq if events else 0
        await self.send(text_data=sync_fragment(self.contract, events, role))

    async def _close_with(self, message: str, code: int) -> None:
        await self.send(text_data=notice_fragment(message))
        await self._close(code)

    async def disconnect(self, code: int) -> None:
        for task in self.tasks:
            task.cancel()
        for group in self.rights:
            await self.channel_layer.group_discard(group, self.channel_name)
        if self.access is not None:
            await self.channel_layer.group_discard(run_group(self.run_id), self.channel_name)
        if self.live is not None:
            live, self.live = self.live, None
            await live.detach(self)

    # -- what live.py calls -----------------------------------------------------------------

    async def deliver(self, html: str, *, seq: int | None = None, final: bool = False) -> None:
        if seq is not None:
            if seq <= self.seen:
                return
            self.seen = seq
        await self.send(text_data=html)
        if final and self.access is not None:
            await self.send(text_data=await database_sync_to_async(self._end_fragment)())

    def _end_fragment(self) -> str:
        """What a reload of this window would show of the ended run (its recording, referee)."""
        assert self.access is not None
        run = Run.objects.get(pk=self.run_id)
        share = str(self.scope.get("url_route", {}).get("kwargs", {}).get("share", ""))
        owner = self.access.may_drive
        return run_end_fragment(run=run, events=store.run_events(run), owner=owner, share=share)

    async def send_audio(self, data: bytes) -> None:
        await self.send(bytes_data=data)

    async def lost(self, reason: str) -> None:
        """Another connection drives the run now: this one keeps watching it."""
        self.live = None
        await self.send(text_data=notice_fragment(f"This window lost the run: {reason}."))
        if self.access is not None:
            await self._watch(self.access)

    async def run_fragments(self, message: dict[str, Any]) -> None:
        """A group broadcast: the panel fragments of one new event (or a speaking state)."""
        if self.live is not None and message["holder"] == self.live.holder:
            return  # the driving socket had it directly
        await self.deliver(message["html"], seq=message["seq"], final=message.get("final", False))

    # -- input ------------------------------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.access is None or self.closing:
            return
        if self.live is None:
            await self._refuse("watching", "this window is watching; another window drives")
            return
        if bytes_data is not None:
            await self._audio(self.live, bytes_data)
            return
        if not self.budget.message(asyncio.get_running_loop().time()):
            await self._refuse("rate_limited", "too many messages; slow down")
            return
        try:
            message = parse_client_message(
                text_data or "", max_bytes=settings.LAB_MAX_TEXT_MESSAGE_BYTES
            )
        except BadMessage as bad:
            await self._refuse(bad.kind, bad.reason)
            return
        live = self.live
        # While a voice run's models load, a typed line waits: the log starts at run.started.
        await live.ready.wait()
        if self.live is not live or self.closing:
            return
        match message:
            case SayMessage(text=text):
                live.spawn(live.session.caller_types(text))
            case PlayMessage():
                if live.session.ended or live.busy("script"):
                    await self._refuse("script_busy", "the scripted caller is already playing")
                else:
                    live.spawn(live.session.play_script(), name="script")
            case EndMessage():
                await live.guard(
                    live.session.end(reason_kind="completed", reason="the caller hung up")
                )
            case PlayedMessage() as played:
                if live.voice is None:
                    await self._refuse("audio_unexpected", "playback reports belong to voice runs")
                    return
                try:
                    await live.voice.played(
                        utterance_event_id=played.utterance_event_id,
                        played_ms=played.played_ms,
                        total_ms=played.total_ms,
                    )
                except AudioRejected as rejected:
                    await self._refuse(rejected.kind, rejected.reason)

    async def _audio(self, live: LiveRun, data: bytes) -> None:
        """A caller frame, paced as it arrives (not when the voice path gets to it: a server
        loading its models, or behind on a busy core, would see a flood as real time)."""
        if live.typed:
            await self._refuse("audio_unexpected", "this run takes typed input, not audio")
            return
        if live.pacer.too_fast(live.session.now()):
            reason = "audio is arriving faster than real time"
            await self._refuse("too_fast", reason, closing=True)
            await self._close(CLOSE_TOO_FAST)
            return
        self.frames.put_nowait(data)
        if self._feeder is None:
            self._feeder = self._spawn(self._feed())

    async def _feed(self) -> None:
        """The queued frames into the driven run's voice path, in order, once it is ready."""
        while True:
            data = await self.frames.get()
            live = self.live
            if live is None or self.closing:
                continue
            await live.ready.wait()
            if live.voice is None:
                continue
            try:
                await live.voice.push_mic(data)
            except AudioRejected as rejected:
                await self._refuse(rejected.kind, rejected.reason)
            except RunClosed:
                continue

    async def _refuse(self, kind: str, reason: str, *, closing: bool = False) -> None:
        """Answer bad input; past the first few, only one in REPORT_EVERY is reported."""
        verdict = self.budget.reject()
        if verdict.report or verdict.close or closing:
            if verdict.count > 1:
                reason = f"{reason} ({verdict.count} rejected so far)"
            await self.send(text_data=notice_fragment(f"Not accepted: {reason}"))
            if self.live is not None:
                # Only the driver writes; a watcher's refusals are told, never recorded.
                await self.live.reject(kind, reason)
        if verdict.close:
            await self._close(CLOSE_POLICY)

    async def _close(self, code: int) -> None:
        self.closing = True
        await self.close(code=code)

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task
