"""The voice path tells recognition whose decode it is: speculation, or a decided turn's."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from lab.audio.frames import FRAME_BYTES, FRAME_SAMPLES
from lab.events.types import Event
from lab.runs.session import RunSession
from lab.runs.voice import VoiceLink
from lab.speech import asr, service
from lab.speech.recognizer import ASKER, Asker
from tests.runs.stand_in_speech import stand_in_voice_run

pytestmark = pytest.mark.django_db(transaction=True)

QUIET = bytes(FRAME_BYTES)
LOUD = np.full(FRAME_SAMPLES, 3000, dtype="<i2").tobytes()
LINE = "I want to book Tuesday morning."


class LoudIsSpeech:
    """webrtcvad's stand-in: a frame is speech when it has any signal."""

    def is_speech(self, pcm: bytes, rate: int) -> bool:
        return any(pcm)


class Call:
    def __init__(self, session: RunSession) -> None:
        self.session = session
        self.link = VoiceLink(session, self.send)
        self.link.caller.endpointer._vad = LoudIsSpeech()
        self.asked: list[Asker | None] = []
        self.promoted: list[str] = []

    async def send(self, data: bytes) -> None:
        return None

    async def recognize(self, pcm: bytes, *, prompt_free: bool = False) -> asr.Transcript:
        self.asked.append(ASKER.get())
        return asr.Transcript(text=LINE, audio_ms=len(pcm) // 32, elapsed_ms=1)

    async def push(self, frame: bytes, count: int) -> None:
        for _ in range(count):
            await self.link.push_audio(frame)

    async def until(self, kind: str) -> Event:
        async with asyncio.timeout(60):
            return await self.session.wait_for_event(0, lambda e: e.type == kind)


@pytest.fixture
async def call(monkeypatch):
    session = await stand_in_voice_run(monkeypatch, agent_pcm=QUIET * 5)
    made = Call(session)
    monkeypatch.setattr(service, "recognize", made.recognize)
    monkeypatch.setattr(service, "promote", made.promoted.append)
    await session.start()
    await made.push(QUIET, 10)
    yield made
    await session.end(reason_kind="completed", reason="test over")
    await made.link.aclose()


async def test_recognition_begun_in_a_pause_is_speculative_and_promoted_when_the_turn_ends(call):
    await call.push(LOUD, 30)
    await call.push(QUIET, 30)
    said = await call.until("caller.utterance")
    assert said.payload.text == LINE
    assert call.asked == [Asker(call.link.stream, final=False)]  # the early decode, reused
    assert call.promoted == [call.link.stream]  # at vad.speech_ended, before its words were used


@pytest.fixture
def silence_only(settings):
    """No decode begun in the pause: the turn loop asks for the words after the turn ended."""
    settings.LAB_ASR_EARLY_MS = 0
    settings.LAB_TURN_CANDIDATE_MS = 0


async def test_recognition_asked_after_the_turn_ended_is_a_final(silence_only, call):
    assert not call.link.caller.candidates
    await call.push(LOUD, 30)
    await call.push(QUIET, 30)
    await call.until("caller.utterance")
    assert call.asked == [Asker(call.link.stream, final=True)]


async def test_two_calls_are_two_streams(call):
    other = VoiceLink(call.session, call.send)
    try:
        assert other.stream != call.link.stream
    finally:
        await other.aclose()
