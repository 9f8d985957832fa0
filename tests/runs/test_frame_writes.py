"""The caller's frames never wait on the run log: a write held up on the database leaves VAD,
barge-in and the turn decision running on the next frames, and the log keeps its order and ids."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest
from channels.db import database_sync_to_async

from lab.audio.frames import FRAME_BYTES, FRAME_SAMPLES
from lab.events import store
from lab.events.types import Event, event_id_for
from lab.runs.log import RunClosed
from lab.runs.session import RunSession
from lab.runs.voice import VoiceLink
from lab.speech import asr, service
from tests.runs.stand_in_speech import stand_in_voice_run
from tests.runs.test_voice_turns import LoudIsSpeech

pytestmark = pytest.mark.django_db(transaction=True)

QUIET = bytes(FRAME_BYTES)
LOUD = np.full(FRAME_SAMPLES, 3000, dtype="<i2").tobytes()
FRAME_PATH = {"vad.speech_started", "turn.candidate", "turn.decided", "vad.speech_ended"}
# Only a test that is broken waits this long for a held write (the hold is released below).
HOLD_LIMIT_S = 60


class HeldWrites:
    """store.event_append that keeps writes of one event type waiting until released."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.release = threading.Event()
        self.waiting = threading.Event()
        self.append = store.event_append

    def __call__(self, **kwargs: Any) -> Any:
        if kwargs["event"].type == self.kind and not self.release.is_set():
            self.waiting.set()
            self.release.wait(HOLD_LIMIT_S)
        return self.append(**kwargs)


class Caller:
    def __init__(self, session: RunSession) -> None:
        self.session = session
        self.link = VoiceLink(session, self.send)
        self.link.caller.endpointer._vad = LoudIsSpeech()

    async def send(self, data: bytes) -> None:
        return None

    async def recognize(self, pcm: bytes, *, prompt_free: bool = False) -> asr.Transcript:
        return asr.Transcript(
            text="Book me Thursday afternoon.", audio_ms=len(pcm) // 32, elapsed_ms=1
        )

    async def push(self, frame: bytes, count: int) -> None:
        # Under today's frame path a held write never lets this return: fail, do not hang.
        async with asyncio.timeout(HOLD_LIMIT_S / 2):
            for _ in range(count):
                await self.link.push_audio(frame)

    async def held(self, held: HeldWrites) -> None:
        """Return once the held write is waiting on the database."""
        assert await asyncio.to_thread(held.waiting.wait, HOLD_LIMIT_S)

    async def until(self, kind: str) -> Event:
        async with asyncio.timeout(HOLD_LIMIT_S):
            return await self.session.wait_for_event(0, lambda e: e.type == kind)


@pytest.fixture
async def caller(monkeypatch, settings) -> AsyncIterator[Caller]:
    settings.LAB_VAD_ENGINE = "webrtcvad"  # LoudIsSpeech stands in for webrtcvad
    session = await stand_in_voice_run(monkeypatch, agent_pcm=QUIET * 5)
    made = Caller(session)
    monkeypatch.setattr(service, "recognize", made.recognize)
    await session.start()
    await made.push(QUIET, 10)
    yield made
    await session.end(reason_kind="completed", reason="test over")
    await made.link.aclose()


def hold(monkeypatch: pytest.MonkeyPatch, kind: str) -> HeldWrites:
    held = HeldWrites(kind)
    monkeypatch.setattr(store, "event_append", held)
    return held


async def stored(session: RunSession) -> list[Event]:
    return await database_sync_to_async(store.run_events)(session.run)


async def test_a_held_speech_start_write_leaves_vad_and_barge_in_running(caller, monkeypatch):
    session, barge = caller.session, caller.link.barge
    held = hold(monkeypatch, "vad.speech_started")
    try:
        # Over the agent's greeting: long enough to be an interruption, not an acknowledgement.
        await caller.push(LOUD, 10)
        await caller.held(held)
        await caller.push(LOUD, 40)
        assert "vad.speech_started" not in {e.type for e in session.events}
        # Every frame after the start was heard, counted over the agent and judged.
        [overlap] = barge.overlaps
        assert overlap.voiced_ms > barge.bound_ms and barge.tasks
        await asyncio.sleep(0)  # the interruption begins: it names the start, once written
        assert overlap.interrupted and "agent.interrupted" not in {e.type for e in session.events}
        assert caller.link.caller.frames == 60
    finally:
        held.release.set()
    interrupted = await caller.until("agent.interrupted")
    started = next(e for e in session.events if e.type == "vad.speech_started")
    assert interrupted.payload.cause_event_id == started.id
    assert started.seq < interrupted.seq
    log = await stored(session)
    assert [(e.id, e.type) for e in log] == [(e.id, e.type) for e in session.events]
    assert [e.id for e in log] == [event_id_for(n) for n in range(1, len(log) + 1)]


async def test_a_turn_ends_in_order_while_its_writes_are_held(caller, monkeypatch):
    session = caller.session
    held = hold(monkeypatch, "vad.speech_started")
    try:
        await caller.push(LOUD, 30)
        await caller.held(held)
        # The turn's end and its decision are handed over behind the held start.
        await caller.push(QUIET, 30)
        assert "vad.speech_ended" not in {e.type for e in session.events}
    finally:
        held.release.set()
    said = await caller.until("caller.utterance")
    kinds = [e.type for e in session.events]
    voice = [k for k in kinds if k in FRAME_PATH | {"asr.transcribed"}]
    assert voice[:2] == ["vad.speech_started", "turn.candidate"]
    assert voice.index("vad.speech_ended") > voice.index("turn.decided")
    assert voice.index("asr.transcribed") > voice.index("vad.speech_ended")
    ended = next(e for e in session.events if e.type == "vad.speech_ended")
    assert said.seq > ended.seq
    latency = await caller.until("turn.latency")
    assert latency.payload.caller_event_id == ended.id


async def test_the_run_ends_after_every_event_the_frames_handed_over(caller, monkeypatch):
    session = caller.session
    held = hold(monkeypatch, "vad.speech_started")
    await caller.push(LOUD, 30)
    ending = asyncio.ensure_future(session.end(reason_kind="completed", reason="hung up"))
    await caller.held(held)
    held.release.set()
    await ending
    kinds = [e.type for e in await stored(session)]
    assert kinds[-1] == "run.ended"
    assert "vad.speech_started" in kinds


async def test_a_write_refused_after_the_run_ended_reaches_the_next_frame(caller):
    session = caller.session
    await session.end(reason_kind="completed", reason="hung up")
    # Speech starts; its write is refused off the frame path and reported once, to whichever
    # frame meets it (frames are judged off the loop, so which one is not fixed).
    raised = 0
    async with asyncio.timeout(HOLD_LIMIT_S):
        for _ in range(8):
            try:
                await caller.link.push_audio(LOUD)
            except RunClosed:
                raised += 1
            await session.writer.drain()
    assert raised == 1
    assert session.events[-1].type == "run.ended"
