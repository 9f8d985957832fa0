"""A voice run's recording through the real voice path (recognition and synthesis stood in for):
the caller left and the agent right where the log says, the digest the file's, the cap kept."""

from __future__ import annotations

import asyncio
import hashlib
import wave

import numpy as np
import pytest

from lab.audio.frames import FRAME_SAMPLES
from lab.audio.recording import caller_ms_at
from lab.events.recording_events import RecordingClosed
from lab.runs.recorder import CHUNK_S, HOLD_S
from lab.runs.recording_files import recording_path
from lab.speech import service
from lab.web.playback import event_clock
from tests.runs.stand_in_speech import stand_in_voice_run
from tests.runs.test_voice_turns import LOUD, QUIET, Voice

pytestmark = pytest.mark.django_db(transaction=True)

AGENT_LEVEL = 1234
AGENT_PCM = np.full(FRAME_SAMPLES * 10, AGENT_LEVEL, dtype="<i2").tobytes()


@pytest.fixture
async def call(monkeypatch):
    session = await stand_in_voice_run(monkeypatch, agent_pcm=AGENT_PCM)
    made = Voice(session, {30: "Book me Thursday afternoon."})
    monkeypatch.setattr(service, "recognize", made.recognize)
    await session.start()
    yield made
    await made.link.aclose()


async def in_real_time(call: Voice, frame: bytes, count: int) -> None:
    """Frames as a client sends them: one every 20 ms of the loop's clock (late ones in a burst)."""
    loop = asyncio.get_running_loop()
    for _ in range(count):
        due = call.sent_until = max(call.sent_until, loop.time() - 0.2) + 0.02
        await call.link.push_audio(frame)
        await asyncio.sleep(max(0.0, due - loop.time()))


async def speak_and_end(call: Voice) -> RecordingClosed:
    await call.session.wait_idle()  # the greeting has played: the caller speaks after it
    call.sent_until = asyncio.get_running_loop().time()
    await in_real_time(call, QUIET, 10)
    await in_real_time(call, LOUD, 30)
    await in_real_time(call, QUIET, 40)
    await call.until(0, "caller.utterance")
    await call.session.wait_idle()
    await call.session.end(reason_kind="completed", reason="test over")
    closed = next(e.payload for e in call.session.events if e.type == "recording.closed")
    assert isinstance(closed, RecordingClosed)
    return closed


def channels_of(path) -> np.ndarray:
    with wave.open(str(path)) as wav:
        assert (wav.getnchannels(), wav.getframerate(), wav.getsampwidth()) == (2, 16000, 2)
        return np.frombuffer(wav.readframes(wav.getnframes()), "<i2").reshape(-1, 2)


async def test_the_caller_is_left_and_the_agent_right_where_the_events_say(call):
    closed = await speak_and_end(call)
    events = call.session.events
    path = recording_path(str(call.session.run.id))
    audio = channels_of(path)
    left, right = audio[:, 0], audio[:, 1]
    # The caller's speech (LOUD is 3000 in every sample) sits where vad.speech_started's
    # stream_ms maps to on the run clock, within one 20 ms frame, and nowhere else.
    started = next(e for e in events if e.type == "vad.speech_started")
    pieces = [(p.stream_ms, p.at_ms) for p in closed.caller_pieces]
    at_ms = caller_ms_at(pieces, started.payload.stream_ms)
    assert at_ms is not None
    voiced = np.flatnonzero(left)
    assert abs(voiced[0] / 16 - at_ms) <= 20
    assert len(voiced) == 30 * FRAME_SAMPLES and (left[voiced] == 3000).all()
    # Audio precedes the event that records it, by no more than the VAD's decision.
    clock = event_clock(events)
    assert at_ms <= clock[started.id] <= at_ms + 1000
    # Every agent utterance's audio is on the right, from its span's start, and only there.
    assert not (right[voiced] == 3000).any()
    spoken = [e for e in events if e.type == "agent.utterance"]
    assert {s.utterance_event_id for s in closed.agent_spans} == {e.id for e in spoken}
    for span in closed.agent_spans:
        onset = span.start_ms * 16
        assert (right[onset + 16 : onset + 16 + 9 * FRAME_SAMPLES] == AGENT_LEVEL).all()
        # Its first audio left before its span was over (queued behind the last utterance, or
        # as it began): how late within the span is the loop's load (170 ms at load 22), not
        # the recording's, which places the audio at the span's start either way.
        sent = next(
            e
            for e in events
            if e.type == "agent.audio_started"
            and e.payload.utterance_event_id == span.utterance_event_id
        )
        assert clock[sent.id] < span.end_ms
    assert set(np.unique(right)) == {0, AGENT_LEVEL}
    # The digest is the file's, as downloaded; the log names it, never embeds it.
    data = path.read_bytes()
    assert closed.digest == hashlib.sha256(data).hexdigest()
    assert closed.bytes == len(data) and closed.channels == 2 and not closed.truncated
    assert closed.duration_ms == len(audio) // 16
    assert events[-1].type == "run.ended" and events[-2].id == next(
        e.id for e in events if e.type == "recording.closed"
    )


async def test_the_cap_stops_the_recording_and_the_log_says_it_was_truncated(call, settings):
    settings.LAB_RECORDING_MAX_BYTES = 44 + 4 * 16000  # one second of stereo
    call.link.recorder.mix.max_data_bytes = 4 * 16000
    closed = await speak_and_end(call)
    data = recording_path(str(call.session.run.id)).read_bytes()
    assert closed.truncated and len(data) == 44 + 4 * 16000 == closed.bytes
    assert closed.digest == hashlib.sha256(data).hexdigest()
    assert closed.duration_ms == 1000


async def test_a_crash_mid_call_leaves_a_valid_wav_of_all_but_the_held_back_tail(call):
    await call.session.wait_idle()
    call.sent_until = asyncio.get_running_loop().time()
    await in_real_time(call, LOUD, 150)  # three seconds of caller audio, never sealed
    await asyncio.sleep(0.05)  # the writer's thread has had its turn
    path = recording_path(str(call.session.run.id))
    left = channels_of(path)[:, 0]
    # Everything older than the hold (2 s) and one 0.5 s chunk is on disk already.
    assert np.count_nonzero(left == 3000) >= (3.0 - HOLD_S - CHUNK_S) * 16000
    assert not any(e.type == "recording.closed" for e in call.session.events)
