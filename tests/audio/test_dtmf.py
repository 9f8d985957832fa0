"""Keypad presses heard in band: each key once, at the frame after its tones, whatever the
press's length and where it falls on the 20 ms grid; speech and single tones press nothing."""

from __future__ import annotations

import numpy as np
import pytest

from lab.audio import impairments as imp
from lab.audio.dtmf import KeypadListener
from lab.audio.frames import FRAME_SAMPLES, SAMPLE_RATE, split_frames
from lab.audio.vad import Endpointer, SpeechEnd, VadConfig
from lab.runs.phone_line import impair_line
from lab.scenarios.line import PhoneLine
from tests.audio.speechlike import pcm, speechlike


def heard(audio: np.ndarray) -> list[tuple[int, str]]:
    """(frame index, key) for each press reported, over audio and a silent frame after it."""
    tail = -audio.size % FRAME_SAMPLES + FRAME_SAMPLES
    samples = np.concatenate([audio, np.zeros(tail)]).astype("<i2")
    listener = KeypadListener()
    frames = samples.reshape(-1, FRAME_SAMPLES)
    return [(i, key) for i, f in enumerate(frames) if (key := listener.hear(f.tobytes()))]


@pytest.mark.parametrize(("tone_ms", "gap_ms"), [(40, 40), (100, 100), (70, 50), (1000, 40)])
@pytest.mark.parametrize("offset", [0, 37, 113, 301])
def test_every_key_is_heard_once_after_its_tones(tone_ms: int, gap_ms: int, offset: int) -> None:
    keys = imp.KEYPAD_KEYS + "1155"  # repeated keys too: the gap parts them
    audio = np.concatenate([np.zeros(offset, np.int16), imp.keypad(keys, tone_ms, gap_ms)])
    presses = heard(audio)
    assert "".join(key for _, key in presses) == keys
    for press, (frame, _) in enumerate(presses):
        ends = offset + (press * (tone_ms + gap_ms) + tone_ms) * SAMPLE_RATE // 1000
        # Reported at the first frame the tones no longer fill: within a frame of their end.
        assert abs(frame * FRAME_SAMPLES - ends) < FRAME_SAMPLES


def test_presses_are_heard_through_the_phone_band() -> None:
    audio = imp.telephone_band(imp.keypad("*0#", 60, 60))
    assert "".join(key for _, key in heard(audio)) == "*0#"


def test_speech_and_single_tones_press_nothing() -> None:
    t = np.arange(SAMPLE_RATE * 3) / SAMPLE_RATE
    f0 = 110 + 40 * np.sin(2 * np.pi * 0.7 * t)  # a voice's pitch, gliding
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    vowel = sum(0.6**h * np.sin(h * phase) for h in range(1, 25))
    assert heard(vowel / np.abs(vowel).max() * 12000) == []
    assert heard(speechlike(5.0, seed=3, level=8000)) == []
    for hz in (697.0, 1336.0, 1000.0):
        assert heard(np.sin(2 * np.pi * hz * t) * 8000) == []


def test_presses_stay_in_the_turn_the_labs_endpointer_hands_a_phone_bot() -> None:
    # A voice run sends a phone bot the caller's segment as the lab's VAD cut it (webrtcvad,
    # the default): the tones start it, so the presses reach the bot's wire with the words.
    phone = PhoneLine.model_validate(
        {"seed": 1, "impairments": [{"kind": "keypad", "digits": "42"}]}
    )
    words = pcm(speechlike(1.5, seed=2))
    line = impair_line(phone, 0, words, lead_ms=300, tail_ms=900)
    endpointer = Endpointer(VadConfig(engine="webrtcvad", speech_clock=False))
    events = [event for frame in split_frames(line.pcm) for event in endpointer.push(frame)]
    [turn] = [event for event in events if isinstance(event, SpeechEnd)]
    segment = np.frombuffer(turn.pcm, dtype=np.int16)
    assert "".join(key for _, key in heard(segment)) == "42"
