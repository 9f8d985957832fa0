"""A voice run whose speech workers never answer says so on its log; nothing is silently lost."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer

from lab.audio.frames import FRAME_BYTES, FRAME_SAMPLES
from lab.events.types import Channel, Mode
from lab.runs import turn_taking
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.runs.voice import VoiceLink
from lab.scenarios.catalog import contract_get
from lab.speech import service
from lab.speech.protocol import SPEECH_CHANNELS
from lab.speech.service import Workers

pytestmark = pytest.mark.django_db(transaction=True)

QUIET = bytes(FRAME_BYTES)
LOUD = np.full(FRAME_SAMPLES, 3000, dtype="<i2").tobytes()


class LoudIsSpeech:
    """webrtcvad's stand-in: a frame is speech when it has any signal."""

    def is_speech(self, pcm: bytes, rate: int) -> bool:
        return any(pcm)


async def test_speech_no_worker_answers_is_reported_on_the_run(monkeypatch, settings):
    settings.LAB_VAD_ENGINE = "webrtcvad"  # its stand-in below is webrtcvad's
    settings.LAB_VAD_SILERO_CONFIRMS = False  # and Silero hears no speech in its flat frames
    layer = InMemoryChannelLayer()  # nobody takes speech requests: every worker is gone
    workers = Workers(layer, in_flight=2, timeout_s=0.1)
    monkeypatch.setattr(service, "backend", lambda: workers)

    async def no_turn_model(pcm: bytes) -> None:
        return None

    monkeypatch.setattr(turn_taking, "turn_probability", no_turn_model)
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.VOICE
    )
    session = RunSession(run=run, contract=contract_get("correction"))

    async def send(data: bytes) -> None:
        return None

    link = VoiceLink(session, send)
    link.caller.endpointer._vad = LoudIsSpeech()
    await session.start()
    try:
        for frame in [QUIET] * 10 + [LOUD] * 30 + [QUIET] * 40:
            await link.push_audio(frame)
        async with asyncio.timeout(60):
            rejected = await session.wait_for_event(
                0,
                lambda e: e.type == "input.rejected" and e.payload.reason_kind == "asr_unavailable",
            )
            # The greeting could not be voiced either, and the run says so too.
            await session.wait_for_event(
                0,
                lambda e: e.type == "input.rejected" and e.payload.reason_kind == "tts_unavailable",
            )
    finally:
        await session.end(reason_kind="completed", reason="test over")
        await link.aclose()
    assert "asked twice" in rejected.payload.reason
    assert "asr.transcribed" not in {e.type for e in session.events}
    asked = []
    for channel in SPEECH_CHANNELS.values():
        while channel in layer.channels:
            asked.append(await layer.receive(channel))
    recognitions = [m for m in asked if m["type"] == "asr.request"]
    assert sorted(m["attempt"] for m in recognitions) == [1, 2]


async def test_early_recognition_the_caller_speaks_over_gives_back_its_worker_slot(
    monkeypatch, settings
):
    settings.LAB_TURN_CANDIDATE_MS = 0  # silence alone ends turns: recognition starts early
    settings.LAB_VAD_ENGINE = "webrtcvad"  # its stand-in below is webrtcvad's
    settings.LAB_VAD_SILERO_CONFIRMS = False  # and Silero hears no speech in its flat frames
    settings.LAB_ASR_EARLY_MS = 200
    layer = InMemoryChannelLayer()
    workers = Workers(layer, in_flight=1, timeout_s=120)
    monkeypatch.setattr(service, "backend", lambda: workers)
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.VOICE
    )
    session = RunSession(run=run, contract=contract_get("correction"))

    async def send(data: bytes) -> None:
        return None

    link = VoiceLink(session, send)
    link.caller.endpointer._vad = LoudIsSpeech()
    try:
        for frame in [QUIET] * 10 + [LOUD] * 30 + [QUIET] * 12:
            await link.push_audio(frame)
        early = await layer.receive(SPEECH_CHANNELS["asr"])  # sent after 200 ms of silence
        assert early["type"] == "asr.request"
        await link.push_audio(LOUD)  # the caller goes on: that recognition is stale
        slot = workers._inbox().slots["asr"]
        async with asyncio.timeout(30):
            await slot.acquire()  # the one slot is free again, not held for the stale request
        slot.release()
    finally:
        # Ending drains the writes the frames handed over; left in flight, one can still hold
        # the database when the test's tables are emptied.
        await session.end(reason_kind="completed", reason="test over")
        await link.aclose()
