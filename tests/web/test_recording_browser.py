"""The replay plays a voice run's recording the reader picked from disk, once its SHA-256
matches the log's recording.closed, and the playhead moves over the transcript and the gate."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from django.utils import timezone

from lab.audio.recording import wav_header
from lab.evaluation.evaluator import EVALUATOR_VERSION
from lab.events import store
from lab.events.chain import EventChain
from lab.events.recording_events import AgentSpanRef, CallerPieceRef, RecordingClosed
from lab.events.types import (
    AgentUtterance,
    CallerUtterance,
    Channel,
    Mode,
    RunEnded,
    RunStarted,
    SpeechEnded,
    SpeechStarted,
)
from lab.policy.gate import GATE_VERSION
from lab.reports.export import report_bytes
from lab.reports.services import report_for_run
from lab.runs.services import run_start
from lab.scenarios.catalog import contract_get
from lab.scripted.dialogue import AGENT_VERSION

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def stereo_wav(seconds: int) -> bytes:
    left = np.zeros(16000 * seconds, dtype="<i2")
    left[16000:32000] = (3000 * np.sin(np.arange(16000) / 8)).astype("<i2")
    right = np.roll(left, 32000)
    data = np.stack([left, right], axis=1).tobytes()
    return wav_header(len(data)) + data


@pytest.fixture
def recorded_report(tmp_path) -> tuple[Path, Path]:
    """A voice run's report naming its recording by digest, and the WAV, written before the
    browser starts (its event loop forbids the ORM)."""
    run = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.VOICE)
    contract = contract_get("correction")
    started = RunStarted(
        run_id=str(run.id),
        scenario_id=contract.id,
        scenario_version=contract.version,
        contract_hash=contract.contract_hash,
        mode=Mode.GUARDED,
        channel=Channel.VOICE,
        evaluator_version=EVALUATOR_VERSION,
        gate_version=GATE_VERSION,
        agent_version=AGENT_VERSION,
    )
    payloads = [
        started,
        AgentUtterance(text="Hello, how can I help?", purpose="greeting", duration_ms=1000),
        SpeechStarted(stream_ms=1000),
        SpeechEnded(stream_ms=2000, segment_ms=1000),
        CallerUtterance(text="Book me Thursday afternoon.", source="asr"),
        AgentUtterance(text="Thursday at 2 PM?", purpose="readback", duration_ms=1000),
    ]
    wav = stereo_wav(len(payloads) + 2)
    closed = RecordingClosed(
        digest=hashlib.sha256(wav).hexdigest(),
        bytes=len(wav),
        duration_ms=(len(payloads) + 2) * 1000,
        channels=2,
        sample_rate=16000,
        truncated=False,
        caller_pieces=[CallerPieceRef(stream_ms=0, at_ms=0)],
        agent_spans=[
            AgentSpanRef(utterance_event_id="ev-00002", start_ms=0, end_ms=0, played_ms=None)
        ],
    )
    payloads += [closed, RunEnded(reason_kind="completed", reason="the caller hung up")]
    log, now = EventChain(), timezone.now()
    for index, payload in enumerate(payloads):
        # One event a second on the run clock, so the playhead passes them one by one.
        store.event_append(run=run, event=log.append(payload, at=now + timedelta(seconds=index)))
    store.run_mark_ended(run=run)
    (report := tmp_path / "voice-report.json").write_bytes(report_bytes(report_for_run(run)))
    (recording := tmp_path / "run.wav").write_bytes(wav)
    (tmp_path / "other.wav").write_bytes(stereo_wav(2))
    return report, recording


def test_the_replay_plays_a_matching_recording_and_the_playhead_moves(
    recorded_report, browser_page, lab_server
):
    report, recording = recorded_report
    page = browser_page
    page.goto(lab_server + "/reports/import/")
    page.locator("#report-file").set_input_files(report)
    page.get_by_role("button", name="Check the report").click()
    page.locator("#replay-link").click()
    page.locator("#recording-file").wait_for()
    # A file that is not this run's recording is refused, never played.
    page.locator("#recording-file").set_input_files(recording.parent / "other.wav")
    page.locator("#recording-check", has_text="Not this run's recording").wait_for()
    assert page.evaluate("() => document.getElementById('recording').src") == ""
    page.locator("#recording-file").set_input_files(recording)
    page.locator("#recording-check", has_text="Matches").wait_for()
    assert page.locator("#transcript .turn.played").count() == 0
    # Muted, so the browser's autoplay rule lets a script start it.
    page.evaluate(
        "() => { const a = document.getElementById('recording'); a.muted = true; a.play(); }"
    )
    page.wait_for_function("() => Number(document.getElementById('playhead').dataset.ms) > 2500")
    played = page.locator("#event-log li.played").count()
    assert 2 <= played < page.locator("#event-log li").count()
    assert page.locator("#event-log li.at-playhead").count() == 1
    # Rows ahead of the playhead stay unmarked; the transcript follows as their time passes.
    page.wait_for_function(
        "() => document.querySelectorAll('#transcript .turn.played').length >= 2"
    )
    page.wait_for_function(
        f"() => document.querySelectorAll('#event-log li.played').length > {played}"
    )
