"""The voice path's heavy work runs off the event loop: Silero, webrtcvad and the turn model."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from lab.audio.frames import FRAME_BYTES, FRAME_SAMPLES
from lab.audio.silero import SileroStream
from lab.runs.voice import VoiceLink
from lab.speech import asr, service, smart_turn
from tests.runs.stand_in_speech import stand_in_voice_run

QUIET = bytes(FRAME_BYTES)
LOUD = np.full(FRAME_SAMPLES, 3000, dtype="<i2").tobytes()


class Threads:
    """The threads a patched function ran on."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    def note(self) -> None:
        self.seen.add(threading.get_ident())


@pytest.mark.django_db(transaction=True)
async def test_every_frame_is_classified_off_the_event_loop(monkeypatch, settings):
    settings.LAB_VAD_ENGINE = "webrtcvad"
    silero, webrtc = Threads(), Threads()
    push = SileroStream.push

    def silero_push(self: SileroStream, pcm: bytes) -> bool:
        silero.note()
        return push(self, pcm)

    class LoudIsSpeech:
        def is_speech(self, pcm: bytes, rate: int) -> bool:
            webrtc.note()
            return any(pcm)

    async def recognize(pcm: bytes, *, prompt_free: bool = False) -> asr.Transcript:
        return asr.Transcript(text="Book me Thursday afternoon.", audio_ms=600, elapsed_ms=1)

    monkeypatch.setattr(SileroStream, "push", silero_push)
    monkeypatch.setattr(service, "recognize", recognize)
    session = await stand_in_voice_run(monkeypatch, agent_pcm=QUIET * 5)

    async def send(data: bytes) -> None:
        return None

    link = VoiceLink(session, send)
    link.caller.endpointer._vad = LoudIsSpeech()
    await session.start()
    for frame in [QUIET] * 10 + [LOUD] * 30 + [QUIET] * 30:
        await link.push_audio(frame)
    async with asyncio.timeout(60):
        await session.wait_for_event(0, lambda e: e.type == "caller.utterance")
    await session.end(reason_kind="completed", reason="test over")
    await link.aclose()
    loop_thread = threading.get_ident()
    assert silero.seen and loop_thread not in silero.seen
    assert webrtc.seen and loop_thread not in webrtc.seen


async def test_the_turn_model_runs_off_the_event_loop(monkeypatch):
    threads = Threads()

    def probability(pcm: bytes) -> float:
        threads.note()
        return 0.9

    monkeypatch.setattr(smart_turn, "probability", probability)
    assert await service.InProcess().turn_probability(QUIET) == 0.9
    assert threads.seen and threading.get_ident() not in threads.seen
