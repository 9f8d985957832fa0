"""A real voice run (piper's caller, Whisper, the scripted agent) leaves both sides recorded:
every caller frame where vad.*'s stream_ms maps to, every agent utterance where it played,
and a digest that verifyreport checks a downloaded copy against."""

from __future__ import annotations

import io

import numpy as np
import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command

from lab.audio.frames import SAMPLE_RATE
from lab.audio.recording import caller_ms_at
from lab.events import store
from lab.events.recording_events import RecordingClosed
from lab.events.types import AgentUtterance, Channel, Mode
from lab.grading.grounding import strip_markers
from lab.reports.export import report_bytes
from lab.reports.services import report_for_run
from lab.runs.recording_files import recording_path
from lab.runs.services import run_start
from lab.runs.voice import VoiceLink
from lab.speech import service, tts
from lab.web.management.headless import play_headless

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.models]
FRAME = SAMPLE_RATE // 50
PER_MS = SAMPLE_RATE // 1000


def offset_of(channel: np.ndarray, samples: np.ndarray, around: int) -> int | None:
    """Where `samples` lie in the channel, exactly, within one 20 ms frame of `around`."""
    for offset in range(-FRAME, FRAME + 1):
        at = around + offset
        if at >= 0 and np.array_equal(channel[at : at + len(samples)], samples):
            return offset
    return None


async def test_a_voice_run_records_the_caller_left_and_the_agent_right_where_the_log_says(
    monkeypatch, tmp_path
):
    frames: list[bytes] = []
    spoken: dict[str, bytes] = {}
    push, synthesize = VoiceLink.push_audio, service.synthesize

    async def pushed(link: VoiceLink, data: bytes) -> None:
        before = link.caller.frames
        await push(link, data)
        if link.caller.frames > before:
            frames.append(data)

    async def synthesized(text: str) -> bytes:
        spoken[text] = pcm = await synthesize(text)
        return pcm

    monkeypatch.setattr(VoiceLink, "push_audio", pushed)
    monkeypatch.setattr(service, "synthesize", synthesized)
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.VOICE
    )
    await play_headless(run)
    events = await database_sync_to_async(store.run_events)(run)
    closed = next(e.payload for e in events if isinstance(e.payload, RecordingClosed))
    raw = recording_path(str(run.id)).read_bytes()
    audio = np.frombuffer(raw[44:], "<i2").reshape(-1, 2)
    left, right = audio[:, 0], audio[:, 1]
    pieces = [(p.stream_ms, p.at_ms) for p in closed.caller_pieces]

    starts = [e.payload for e in events if e.type == "vad.speech_started"]
    assert starts
    for start in starts:
        # The first voiced frame the VAD names is in the left channel where the log puts it.
        frame = np.frombuffer(frames[start.stream_ms // 20], "<i2")
        at_ms = caller_ms_at(pieces, start.stream_ms)
        assert at_ms is not None and frame.any()
        assert offset_of(left, frame, at_ms * PER_MS) is not None, start
    utterances = {e.id: e.payload for e in events if isinstance(e.payload, AgentUtterance)}
    assert {s.utterance_event_id for s in closed.agent_spans} == set(utterances)
    for span in closed.agent_spans:
        text = strip_markers(utterances[span.utterance_event_id].text)
        first = np.frombuffer(spoken[tts.chunks(text)[0]], "<i2")
        heard = (span.end_ms - span.start_ms) * PER_MS - FRAME
        if span.played_ms is not None:
            heard = min(heard, span.played_ms * PER_MS - FRAME)
        if heard <= FRAME:
            continue  # cut before it was heard
        sample = first[: min(len(first), heard)]
        assert offset_of(right, sample, span.start_ms * PER_MS) is not None, span
    assert not closed.truncated and closed.bytes == len(raw)

    # The report names the recording by digest; verifyreport checks a download against it.
    report = tmp_path / "report.json"
    report.write_bytes(report_bytes(await database_sync_to_async(report_for_run)(run)))
    assert b"RIFF" not in report.read_bytes()
    wav = tmp_path / "run.wav"
    wav.write_bytes(raw)
    out = io.StringIO()
    await database_sync_to_async(call_command)(
        "verifyreport", str(report), "--recording", str(wav), stdout=out
    )
    assert "matches recording.closed" in out.getvalue()
    # One bit of the last sample flipped: writing a fixed value changed nothing where the
    # agent's audio happened to end on that value.
    wav.write_bytes(raw[:-1] + bytes([raw[-1] ^ 0x01]))
    out = io.StringIO()
    with pytest.raises(SystemExit):
        await database_sync_to_async(call_command)(
            "verifyreport", str(report), "--recording", str(wav), stdout=out
        )
    assert "DOES NOT MATCH" in out.getvalue()
