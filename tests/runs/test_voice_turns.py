"""The voice path's turn decision, with recognition and the turn model stood in for."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from lab.audio.frames import FRAME_BYTES, FRAME_SAMPLES
from lab.events.types import Event
from lab.runs.session import RunSession
from lab.runs.voice import VoiceLink
from lab.speech import asr, service
from tests.runs.stand_in_speech import stand_in_voice_run

pytestmark = pytest.mark.django_db(transaction=True)

QUIET = bytes(FRAME_BYTES)
LOUD = np.full(FRAME_SAMPLES, 3000, dtype="<i2").tobytes()
FIRST = "I want to book Tuesday morning and"
WHOLE = "I want to book Tuesday morning and actually make that Thursday afternoon."
AGENT_STATE = {"caller.utterance", "caller.understood", "intent.revised", "gate.decision"}


class LoudIsSpeech:
    """webrtcvad's stand-in: a frame is speech when it has any signal."""

    def is_speech(self, pcm: bytes, rate: int) -> bool:
        return any(pcm)


class Voice:
    def __init__(self, session: RunSession, segments: dict[int, str]) -> None:
        self.session = session
        self.link = VoiceLink(session, self.send)
        self.link.caller.endpointer._vad = LoudIsSpeech()
        self.segments = segments
        self.release = asyncio.Event()
        self.release.set()

    async def send(self, data: bytes) -> None:
        return None

    async def recognize(self, pcm: bytes, *, prompt_free: bool = False) -> asr.Transcript:
        await self.release.wait()
        loud_frames = sum(
            1 for i in range(0, len(pcm), FRAME_BYTES) if any(pcm[i : i + FRAME_BYTES])
        )
        text = self.segments[loud_frames]
        return asr.Transcript(text=text, audio_ms=len(pcm) // 32, elapsed_ms=1)

    async def push(self, frame: bytes, count: int) -> None:
        for _ in range(count):
            await self.link.push_audio(frame)

    async def until(self, since: int, kind: str) -> Event:
        async with asyncio.timeout(60):
            return await self.session.wait_for_event(since, lambda e: e.type == kind)


@pytest.fixture
async def voice(monkeypatch, settings):
    settings.LAB_VAD_ENGINE = "webrtcvad"  # LoudIsSpeech stands in for webrtcvad

    session = await stand_in_voice_run(monkeypatch, agent_pcm=QUIET * 5)
    made = Voice(session, {30: FIRST, 50: WHOLE})
    monkeypatch.setattr(service, "recognize", made.recognize)
    await session.start()
    await made.push(QUIET, 10)
    yield made
    await session.end(reason_kind="completed", reason="test over")
    await made.link.aclose()


def types_after(events: list[Event], index: int) -> list[str]:
    return [e.type for e in events[index:]]


async def test_a_pause_whose_words_trail_off_waits_and_is_discarded_when_the_caller_goes_on(
    voice,
):
    events = voice.session.events
    await voice.push(LOUD, 30)
    await voice.push(QUIET, 12)
    waited = await voice.until(0, "turn.decided")
    assert not waited.payload.complete
    assert waited.payload.transcript_signal == "incomplete"
    assert waited.payload.model_probability == 0.3
    first_candidate = waited.payload.candidate_event_id
    await voice.push(LOUD, 20)
    discarded = await voice.until(0, "turn.speculation_discarded")
    assert discarded.payload.candidate_event_id == first_candidate
    # Nothing the caller said so far reached the agent, the gate or the log's transcripts.
    assert not AGENT_STATE & {e.type for e in events}
    assert "asr.transcribed" not in {e.type for e in events}
    await voice.push(QUIET, 15)
    said = await voice.until(0, "caller.utterance")
    assert said.payload.text == WHOLE
    decisions = [e.payload for e in events if e.type == "turn.decided"]
    assert [d.complete for d in decisions] == [False, True]
    assert decisions[1].transcript_signal == "complete"
    assert decisions[1].candidate_event_id != first_candidate
    assert [e.payload.text for e in events if e.type == "caller.utterance"] == [WHOLE]


async def test_a_speculation_overtaken_before_its_decision_records_no_decision(voice):
    events = voice.session.events
    voice.release.clear()  # recognition is still running when the caller resumes
    await voice.push(LOUD, 30)
    await voice.push(QUIET, 12)
    await voice.until(0, "turn.candidate")
    await voice.push(LOUD, 20)
    await voice.until(0, "turn.speculation_discarded")
    voice.release.set()
    await voice.push(QUIET, 15)
    await voice.until(0, "caller.utterance")
    candidates = [e.id for e in events if e.type == "turn.candidate"]
    decided = [e.payload.candidate_event_id for e in events if e.type == "turn.decided"]
    assert len(candidates) == 2 and decided == [candidates[1]]
    assert [e.payload.text for e in events if e.type == "caller.utterance"] == [WHOLE]


async def test_a_finished_request_is_answered_at_the_candidate_before_the_fallback(voice):
    voice.segments[30] = "Book me Thursday afternoon."
    events = voice.session.events
    await voice.push(LOUD, 30)
    await voice.push(QUIET, 12)
    said = await voice.until(0, "caller.utterance")
    assert said.payload.text == "Book me Thursday afternoon."
    decided = next(e.payload for e in events if e.type == "turn.decided")
    assert decided.complete and decided.silence_ms < 500
    ended = next(e.payload for e in events if e.type == "vad.speech_ended")
    assert ended.stream_ms == 40 * 20  # just after the last voiced frame
    # The silence goes on: no fallback decision follows for the turn already decided.
    await voice.push(QUIET, 30)
    await voice.until(0, "agent.audio_started")
    assert [e.type for e in events].count("turn.decided") == 1
