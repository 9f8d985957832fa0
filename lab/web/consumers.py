"""The run WebSocket: text frames carry JSON control messages, binary frames carry audio.

A thin shell: it parses input, hands it to the run's session and renders what the log adds.
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Event
from lab.runs.session import RunClosed, RunSession
from lab.runs.voice import ASR_EXECUTOR, TTS_EXECUTOR, AudioRejected, VoiceLink
from lab.scenarios.catalog import UnknownScenario, contract_get
from lab.speech import asr, tts
from lab.web.messages import (
    BadMessage,
    EndMessage,
    PlayedMessage,
    PlayMessage,
    SayMessage,
    parse_client_message,
)
from lab.web.panel import agent_state_fragment, event_fragments, notice_fragment

# Runs with a live session in this process: a second tab may watch the log, not drive it.
LIVE_RUNS: set[str] = set()

CLOSE_NOT_FOUND = 4404
CLOSE_BUSY = 4409
CLOSE_ENDED = 4410
CLOSE_TOO_FAST = 4429
CLOSE_BAD_AUDIO = 1003
# Bad frames are recorded once per this many, so a broken client cannot flood the log.
BAD_FRAME_REPORT_EVERY = 50
BAD_FRAME_LIMIT = 200


def _load(run_id: str) -> tuple[Run, list[Event]] | None:
    run = Run.objects.filter(pk=run_id).first()
    return (run, store.run_events(run)) if run else None


class RunConsumer(AsyncWebsocketConsumer):
    session: RunSession | None = None
    voice: VoiceLink | None = None
    bad_frames = 0

    async def connect(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()
        self.run_id = str(self.scope["url_route"]["kwargs"]["run_id"])
        await self.accept()
        loaded = await database_sync_to_async(_load)(self.run_id)
        if loaded is None:
            await self.send(text_data=notice_fragment("There is no run with this id."))
            await self.close(code=CLOSE_NOT_FOUND)
            return
        run, events = loaded
        try:
            contract = contract_get(run.scenario_id)
        except UnknownScenario as error:
            await self.send(text_data=notice_fragment(str(error)))
            await self.close(code=CLOSE_NOT_FOUND)
            return
        if run.status == Run.Status.ENDED:
            await self.send(text_data=notice_fragment("This run has ended.", tone="info"))
            await self.close(code=CLOSE_ENDED)
            return
        if self.run_id in LIVE_RUNS:
            await self.send(
                text_data=notice_fragment("This run is already open in another window.")
            )
            await self.close(code=CLOSE_BUSY)
            return
        LIVE_RUNS.add(self.run_id)
        self.session = RunSession(run=run, contract=contract, events=events)
        self.session.listeners.append(self.on_event)
        if run.channel == Channel.VOICE:
            await self.send(text_data=notice_fragment("Loading the speech models…", tone="info"))
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(ASR_EXECUTOR, asr.load_model)
            await loop.run_in_executor(TTS_EXECUTOR, tts.load_voice)
            self.voice = VoiceLink(self.session, self.send_audio)
            await self.send(text_data=notice_fragment("Speech models ready.", tone="info"))
        await self.session.start()

    async def disconnect(self, code: int) -> None:
        for task in self.tasks:
            task.cancel()
        if self.voice is not None:
            self.voice.close()
        if self.session is None:
            return
        LIVE_RUNS.discard(self.run_id)
        await self.session.end(reason_kind="caller_left", reason="the caller left the call")

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.session is None:
            return
        if bytes_data is not None:
            await self._audio(bytes_data)
            return
        try:
            message = parse_client_message(
                text_data or "", max_bytes=settings.LAB_MAX_TEXT_MESSAGE_BYTES
            )
        except BadMessage as bad:
            await self._refuse(bad.kind, bad.reason)
            return
        match message:
            case SayMessage(text=text):
                self._spawn(self.session.caller_says(text, source="typed"))
            case PlayMessage():
                if self.session.events[-1].type == "run.ended" or any(
                    task.get_name() == "script" for task in self.tasks
                ):
                    await self._refuse("script_busy", "the scripted caller is already playing")
                else:
                    self._spawn(self.session.play_script(), name="script")
            case EndMessage():
                await self.session.end(reason_kind="completed", reason="the caller hung up")
            case PlayedMessage() as played:
                if self.voice is None:
                    await self._refuse("audio_unexpected", "playback reports belong to voice runs")
                    return
                try:
                    await self.voice.played(
                        utterance_event_id=played.utterance_event_id,
                        played_ms=played.played_ms,
                        total_ms=played.total_ms,
                    )
                except AudioRejected as rejected:
                    await self._refuse(rejected.kind, rejected.reason)

    async def _audio(self, data: bytes) -> None:
        try:
            if self.voice is None:
                raise AudioRejected("audio_unexpected", "this run takes typed input, not audio")
            await self.voice.push_mic(data)
        except AudioRejected as rejected:
            if rejected.close:
                await self._refuse(rejected.kind, rejected.reason)
                await self.close(code=CLOSE_TOO_FAST)
                return
            await self._bad_frame(rejected)
        except RunClosed:
            return

    async def _bad_frame(self, rejected: AudioRejected) -> None:
        self.bad_frames += 1
        if self.bad_frames % BAD_FRAME_REPORT_EVERY == 1:
            await self._refuse(
                rejected.kind, f"{rejected.reason} ({self.bad_frames} bad frame(s) so far)"
            )
        if self.bad_frames >= BAD_FRAME_LIMIT:
            await self.close(code=CLOSE_BAD_AUDIO)

    async def send_audio(self, data: bytes) -> None:
        await self.send(bytes_data=data)

    async def on_event(self, event: Event) -> None:
        if self.session is None:
            return
        html = event_fragments(self.session.contract, self.session.events, event)
        if self.voice is None and event.type in ("agent.utterance", "agent.interrupted"):
            speaking = event.type == "agent.utterance"
            html += agent_state_fragment(speaking=speaking)
            if speaking and not any(task.get_name() == "listening" for task in self.tasks):
                self._spawn(self._announce_listening(), name="listening")
        await self.send(text_data=html)

    async def _announce_listening(self) -> None:
        """Tell a typed caller when the agent's speech has run out."""
        session = self.session
        while session is not None and not session.ended:
            remaining = session.timeline.busy_until(session.now()) - session.now()
            if remaining <= 0:
                await self.send(text_data=agent_state_fragment(speaking=False))
                return
            await asyncio.sleep(remaining)

    async def _refuse(self, kind: str, reason: str) -> None:
        await self.send(text_data=notice_fragment(f"Not accepted: {reason}"))
        if self.session is not None:
            try:
                await self.session.reject_input(reason_kind=kind, reason=reason)
            except RunClosed:
                return

    def _spawn(self, work: Any, *, name: str | None = None) -> None:
        task = asyncio.ensure_future(self._guard(work))
        if name:
            task.set_name(name)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _guard(self, work: Any) -> None:
        try:
            await work
        except RunClosed:
            await self.send(text_data=notice_fragment("This run has ended.", tone="info"))
