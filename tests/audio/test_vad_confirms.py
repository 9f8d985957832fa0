"""VadConfig.silero_confirms: Silero overrules webrtcvad's speech in noise (issue 28)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

import numpy as np
import pytest

from lab.audio.frames import FRAME_BYTES, AudioFrame, split_frames
from lab.audio.vad import (
    Endpointer,
    SpeechEnd,
    SpeechStart,
    VadConfig,
    VadEvent,
    VadState,
    Verdicts,
)
from tests.audio.test_silero import pink
from tests.audio.test_vad import pcm16

# 3 frames to start, 5 to end, 3 of Silero's silence before its veto; patterns stay readable.
CONFIRMS = VadConfig(
    start_ms=60,
    end_silence_ms=100,
    pre_roll_ms=40,
    max_segment_ms=500,
    silero_confirms=True,
    silero_quiet_ms=60,
)
# Given verdicts need no Silero beside webrtcvad.
ALONE = dataclasses.replace(CONFIRMS, silero_confirms=False, speech_clock=False)


def frame(index: int) -> AudioFrame:
    return AudioFrame(pcm=bytes([index % 256]) * FRAME_BYTES, index=index)


def verdicts(webrtc: str, silero: str) -> list[Verdicts]:
    """One Verdicts per column: '#' speech, '.' not (webrtcvad's row, then Silero's)."""
    assert len(webrtc) == len(silero)
    return [Verdicts(w == "#", s == "#") for w, s in zip(webrtc, silero, strict=True)]


def feed(endpointer: Endpointer, heard: Sequence[bool | Verdicts]) -> list[tuple[int, VadEvent]]:
    return [(i, e) for i, v in enumerate(heard) for e in endpointer.push_voiced(frame(i), v)]


def silences(endpointer: Endpointer, heard: list[Verdicts]) -> list[int]:
    """trailing_silence_ms after each frame."""
    out = []
    for index, one in enumerate(heard):
        endpointer.push_voiced(frame(index), one)
        out.append(endpointer.trailing_silence_ms)
    return out


# webrtcvad hears the words and then the noise after them as speech; Silero only the words.
WORDS_THEN_NOISE = verdicts("#" * 20, "#" * 6 + "." * 14)


def test_webrtcvad_alone_runs_on_through_noise_that_silero_hears_as_no_speech() -> None:
    endpointer = Endpointer(ALONE)

    assert [type(e) for _, e in feed(endpointer, WORDS_THEN_NOISE)] == [SpeechStart]
    assert endpointer.state is VadState.SPEAKING


def test_silero_s_silence_past_quiet_ms_starts_the_pause_at_its_last_speech() -> None:
    seen = silences(Endpointer(CONFIRMS), WORDS_THEN_NOISE[:10])

    # Silero last heard speech in frame 5; its veto comes at 3 frames of its silence, and the
    # pause counted then is those 3 frames, not a fresh one.
    assert seen == [0] * 8 + [60, 80]


def test_the_segment_ends_end_silence_ms_after_silero_s_last_speech() -> None:
    endpointer = Endpointer(CONFIRMS)

    events = feed(endpointer, WORDS_THEN_NOISE)

    assert [(i, type(e)) for i, e in events] == [(2, SpeechStart), (10, SpeechEnd)]
    end = events[1][1]
    assert isinstance(end, SpeechEnd) and end.stream_ms == 6 * 20
    # The noise after the end starts nothing: Silero hears no speech in it.
    assert endpointer.state is VadState.QUIET


def test_silero_s_pauses_shorter_than_quiet_ms_leave_webrtcvad_s_segment_alone() -> None:
    heard = verdicts("##########....", "###..###..####")

    assert silences(Endpointer(CONFIRMS), heard) == silences(Endpointer(ALONE), heard)
    assert silences(Endpointer(CONFIRMS), heard)[-4:] == [20, 40, 60, 80]


def test_webrtcvad_s_own_pause_counts_as_it_always_did() -> None:
    heard = verdicts("######....##", "############")

    assert silences(Endpointer(CONFIRMS), heard) == [0] * 6 + [20, 40, 60, 80, 0, 0]


def test_webrtcvad_starts_a_segment_alone_as_before_until_silero_overrules_it() -> None:
    tones = verdicts("#" * 3 + "." * 7, "." * 10)  # a sound only webrtcvad calls speech

    assert feed(Endpointer(CONFIRMS), tones) == feed(Endpointer(ALONE), tones)


def test_once_overruled_webrtcvad_starts_nothing_without_silero_until_it_hears_a_pause() -> None:
    heard = (
        WORDS_THEN_NOISE + verdicts("#" * 8, "." * 5 + "###") + verdicts("." * 5 + "###", "." * 8)
    )
    events = feed(Endpointer(CONFIRMS), heard)

    # The noise after the end starts nothing; words Silero hears do, in it; after webrtcvad's own
    # 5-frame pause (end_silence_ms) its speech starts a segment alone again.
    starts = [i for i, e in events if isinstance(e, SpeechStart)]
    assert starts == [2, 27, 35]


def test_without_silero_s_verdict_webrtcvad_decides_alone() -> None:
    heard = [Verdicts(True, None)] * 20

    assert [type(e) for _, e in feed(Endpointer(CONFIRMS), heard)] == [SpeechStart]


def test_under_silero_the_engine_s_verdict_is_silero_s() -> None:
    endpointer = Endpointer(VadConfig(engine="silero", start_ms=20, end_silence_ms=100))

    events = feed(endpointer, verdicts("." * 4 + "#" * 6, "##" + "." * 8))

    assert [(i, type(e)) for i, e in events] == [(0, SpeechStart), (6, SpeechEnd)]


def test_the_voiced_flag_listeners_read_is_the_rule_s_verdict() -> None:
    endpointer = Endpointer(CONFIRMS)
    flags = []
    for index, one in enumerate(WORDS_THEN_NOISE[:10]):
        endpointer.push_voiced(frame(index), one)
        flags.append(endpointer.voiced)

    assert flags == [True] * 8 + [False] * 2


def test_a_quiet_ms_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match="silero_quiet_ms"):
        VadConfig(silero_quiet_ms=0)


def every_pattern(length: int) -> list[list[Verdicts]]:
    pairs = [Verdicts(w, s) for w in (False, True) for s in (False, True)]
    return [list(p) for p in itertools.product(pairs, repeat=length)]


def test_every_short_pattern_keeps_the_rule_s_promises() -> None:
    for heard in every_pattern(8):
        webrtc = [v.webrtcvad for v in heard]
        # Off, the rule changes nothing; on, Silero hearing speech throughout changes nothing.
        assert feed(Endpointer(ALONE), heard) == feed(Endpointer(ALONE), webrtc)
        agreeing = [Verdicts(v.webrtcvad, True) for v in heard]
        assert feed(Endpointer(CONFIRMS), agreeing) == feed(Endpointer(ALONE), webrtc)
        endpointer = Endpointer(CONFIRMS)
        silero_heard, first = -1, 0
        for index, one in enumerate(heard):
            inside = endpointer.state in (VadState.SPEAKING, VadState.STOPPING)
            silero_heard = index if one.silero else silero_heard
            for event in endpointer.push_voiced(frame(index), one):
                if isinstance(event, SpeechStart):
                    first = event.stream_ms // 20
            quiet = index - silero_heard
            overruled = inside and one.webrtcvad and silero_heard >= first and quiet >= 3
            if overruled and endpointer.state is not VadState.QUIET:
                # webrtcvad's speech past Silero's quiet_ms after its speech is a pause that long.
                assert endpointer.state is VadState.STOPPING, heard
                assert endpointer.trailing_silence_ms >= quiet * 20, heard
            if inside and silero_heard < first:
                # A segment Silero heard no speech in is webrtcvad's alone (a phone line's).
                assert endpointer.voiced == one.webrtcvad, heard


def test_silero_overrules_only_a_segment_it_has_heard_speech_in() -> None:
    # Over a phone line (8 kHz, band-limited, lossy) Silero hears next to no speech in words.
    phone = verdicts("#" * 30, "." * 30)

    assert feed(Endpointer(CONFIRMS), phone) == feed(Endpointer(ALONE), phone)


def test_pink_noise_returning_after_digital_silence_is_speech_to_webrtcvad() -> None:
    # As the scripted caller's noisy lines reach the lab: noise, digital silence, noise again.
    noise = pink(1.0, -40.0, seed=5)
    audio = pcm16(np.concatenate([noise, np.zeros(16_000 * 6 // 5), pink(2.0, -40.0, seed=6)]))
    endpointer = Endpointer()

    events = [e for f in split_frames(audio) for e in endpointer.push(f)]

    # webrtcvad starts a segment in the returning noise and holds it past the stream's end.
    assert [type(e) for e in events] == [SpeechStart]
    assert events[0].stream_ms >= 2200


@pytest.mark.models
def test_a_noisy_line_said_again_in_the_same_call_raises_its_candidate_after_its_words() -> None:
    from benchmarks.corpus import clip

    line = clip("Actually, make that Thursday afternoon.", "noisy")
    # As lab/runs/voice.py says a line: 300 ms of digital silence, the clip (its 1 s of noise
    # after the words included), 900 ms more; the next line follows in the same stream.
    said = bytes(32 * 300) + line.pcm + bytes(32 * 900)
    end_ms = len(said) // 32 + 300 + line.end_ms

    def candidate_after(config: VadConfig) -> tuple[float, int]:
        endpointer, raised, starts = Endpointer(config), None, 0
        for f in split_frames(said + said):
            starts += sum(isinstance(e, SpeechStart) for e in endpointer.push(f))
            at = f.stream_ms + 20
            if raised is None and at > end_ms and endpointer.trailing_silence_ms >= 200:
                raised = at - end_ms
        assert raised is not None
        return raised, starts

    alone, _ = candidate_after(VadConfig())
    confirmed, starts = candidate_after(VadConfig(silero_confirms=True))
    assert alone > 1000  # the second line's noise held webrtcvad's segment open
    assert confirmed < 500 and starts == 2
