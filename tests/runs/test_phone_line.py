"""A scripted line over a contract's phone line: the same audio for a seed, and a record that
says truly what the line did."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from lab.audio.frames import FRAME_SAMPLES, SAMPLE_RATE
from lab.events.types import Event
from lab.runs.phone_line import impair_line
from lab.scenarios.line import PhoneLine
from lab.web.event_lines import summarize

LEAD_MS, TAIL_MS = 300, 900


def words(seconds: float = 1.5) -> bytes:
    """A speech-like stand-in: two tones, amplitude-modulated like syllables."""
    t = np.arange(round(SAMPLE_RATE * seconds)) / SAMPLE_RATE
    envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t)
    signal = envelope * (6000 * np.sin(2 * np.pi * 220 * t) + 2500 * np.sin(2 * np.pi * 1500 * t))
    return np.round(signal).astype("<i2").tobytes()


def line(*impairments: dict[str, Any], seed: int = 3) -> PhoneLine:
    return PhoneLine.model_validate({"seed": seed, "impairments": list(impairments)})


def over(phone: PhoneLine, number: int = 0, speech: bytes | None = None):
    return impair_line(phone, number, speech or words(), lead_ms=LEAD_MS, tail_ms=TAIL_MS)


LOSSY = line(
    {"kind": "telephone_band"},
    {"kind": "packet_loss", "rate": 0.1, "burst_frames": 2},
    {"kind": "jitter", "rate": 0.05, "max_late_ms": 100},
    {"kind": "noise", "snr_db": 15, "color": "white"},
)


def test_a_seed_gives_the_same_line_every_time_and_another_seed_another() -> None:
    first, again = over(LOSSY), over(LOSSY)
    assert first.pcm == again.pcm and first.delays_ms == again.delays_ms
    assert first.record == again.record
    other = over(line(*(i.model_dump() for i in LOSSY.impairments), seed=4))
    assert other.pcm != first.pcm
    # Each caller line draws its own losses.
    assert over(LOSSY, 1).pcm != first.pcm


def test_the_record_counts_what_the_line_did() -> None:
    impaired = over(LOSSY)
    record = impaired.record
    pcm = np.frombuffer(impaired.pcm, dtype=np.int16)
    assert pcm.size % FRAME_SAMPLES == 0 and record.frames == pcm.size // FRAME_SAMPLES
    expected_ms = LEAD_MS + 1500 + TAIL_MS
    assert record.frames == -(-expected_ms // 20)
    assert record.kinds == ["noise", "telephone_band", "packet_loss", "jitter"]
    # A lost frame is all zeros; the noise makes every kept frame not.
    silent = sum(1 for frame in pcm.reshape(-1, FRAME_SAMPLES) if not frame.any())
    assert silent == record.frames_lost > 0
    assert record.frames_late == sum(1 for delay in impaired.delays_ms if delay) > 0
    assert record.max_late_ms == max(impaired.delays_ms) <= 100
    assert record.snr_db == pytest.approx(15, abs=0.05)
    assert record.clipped_samples is None


def test_a_line_not_named_is_left_as_it_was_said() -> None:
    phone = line({"kind": "telephone_band", "lines": [1]})
    assert over(phone, 0).record.kinds == []
    plain = over(phone, 0)
    lead = bytes(SAMPLE_RATE * 2 * LEAD_MS // 1000)
    assert plain.pcm.startswith(lead + words())
    assert plain.delays_ms == [0] * plain.record.frames


def test_a_silence_and_keypad_presses_come_before_the_words() -> None:
    phone = line(
        {"kind": "silence", "ms": 2000},
        {"kind": "keypad", "digits": "42", "tone_ms": 100, "gap_ms": 100},
    )
    impaired = over(phone)
    # What was pressed is recorded with the line (a Twilio or Telnyx call also sends it as dtmf).
    assert impaired.record.keypad == "42"
    pcm = np.frombuffer(impaired.pcm, dtype=np.int16)
    two_s = SAMPLE_RATE * 2
    assert not pcm[:two_s].any()
    assert pcm[two_s : two_s + SAMPLE_RATE // 10].any()
    words_at = two_s + SAMPLE_RATE * 400 // 1000 + SAMPLE_RATE * LEAD_MS // 1000
    said = np.frombuffer(words(), dtype=np.int16)
    assert np.array_equal(pcm[words_at : words_at + said.size], said)


def test_clipping_is_counted_at_its_level() -> None:
    impaired = over(line({"kind": "clipping", "level": 0.2, "gain_db": 6}))
    pcm = np.frombuffer(impaired.pcm, dtype=np.int16).astype(int)
    ceiling = round(0.2 * 32767)
    assert np.abs(pcm).max() == ceiling
    assert impaired.record.clipped_samples == np.count_nonzero(np.abs(pcm) == ceiling) > 0


def test_the_panel_says_what_the_line_did_to_the_caller_line() -> None:
    record = over(LOSSY).record
    event = Event(
        id="ev-00006",
        seq=6,
        at=datetime(2026, 1, 1, tzinfo=UTC),
        payload=record,
        prev_hash="0" * 64,
        hash="1" * 64,
    )
    assert summarize(event) == (
        "caller line 0 over an impaired line (noise, telephone_band, packet_loss, jitter): "
        f"{record.frames_lost} of {record.frames} frames lost; {record.frames_late} late "
        f"(up to {record.max_late_ms} ms); SNR {record.snr_db:.1f} dB"
    )
