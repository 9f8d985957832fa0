from __future__ import annotations

import numpy as np
import pytest

from lab.audio.frames import FRAME_BYTES, SAMPLE_RATE, AudioFrame, split_frames
from lab.audio.vad import Endpointer, SpeechEnd, SpeechStart, VadConfig, VadEvent, VadState

# Small numbers keep the boolean patterns readable: 3 frames to start, 5 to end,
# 2 of pre-roll, 25 at most per segment.
SHORT = VadConfig(start_ms=60, end_silence_ms=100, pre_roll_ms=40, max_segment_ms=500)


def frame(index: int) -> AudioFrame:
    # Each frame's bytes name its index, so a segment's audio shows which frames it holds.
    return AudioFrame(pcm=bytes([index % 256]) * FRAME_BYTES, index=index)


def feed(endpointer: Endpointer, pattern: str, first_index: int = 0) -> list[tuple[int, VadEvent]]:
    """Push one frame per character ('#' voiced, '.' not); return (frame index, event) pairs."""
    events = []
    for offset, mark in enumerate(pattern):
        index = first_index + offset
        events += [(index, e) for e in endpointer.push_voiced(frame(index), mark == "#")]
    return events


def pcm_of(indices: range) -> bytes:
    return b"".join(frame(i).pcm for i in indices)


def test_it_declares_a_start_once_start_ms_of_speech_has_run() -> None:
    endpointer = Endpointer(SHORT)

    assert feed(endpointer, "..##") == []
    assert feed(endpointer, "#", first_index=4) == [(4, SpeechStart(stream_ms=40))]
    assert endpointer.state is VadState.SPEAKING


def test_brief_noise_blips_do_not_start_speech() -> None:
    endpointer = Endpointer(SHORT)

    assert feed(endpointer, "..#..##..#.##...#.") == []
    assert endpointer.state is VadState.QUIET


def test_it_declares_the_end_only_after_end_silence_ms_of_trailing_silence() -> None:
    endpointer = Endpointer(SHORT)
    feed(endpointer, "###....")

    assert endpointer.in_trailing_silence
    [(index, end)] = feed(endpointer, ".", first_index=7)
    assert index == 7
    assert isinstance(end, SpeechEnd)
    assert end.stream_ms == 60
    assert endpointer.state is VadState.QUIET
    assert not endpointer.in_trailing_silence


def test_speech_resuming_within_the_trailing_silence_keeps_one_segment() -> None:
    endpointer = Endpointer(SHORT)

    events = feed(endpointer, "###....##....##.....")

    assert [type(e) for _, e in events] == [SpeechStart, SpeechEnd]
    assert events[1][1].stream_ms == 300


def test_in_trailing_silence_is_true_only_between_speech_and_its_declared_end() -> None:
    endpointer = Endpointer(SHORT)
    seen = []
    for index, mark in enumerate("###..##......"):
        endpointer.push_voiced(frame(index), mark == "#")
        seen.append(endpointer.in_trailing_silence)

    assert seen == [False] * 3 + [True] * 2 + [False] * 2 + [True] * 4 + [False] * 2


def test_the_segment_audio_includes_the_pre_roll_and_the_trailing_silence() -> None:
    endpointer = Endpointer(SHORT)

    events = feed(endpointer, "......###.....")

    end = events[-1][1]
    assert isinstance(end, SpeechEnd)
    assert end.pcm == pcm_of(range(4, 14))
    assert end.segment_ms == 200


def test_the_pre_roll_holds_only_what_the_stream_has_at_its_very_start() -> None:
    endpointer = Endpointer(SHORT)

    *_, (_, end) = feed(endpointer, "###.....")

    assert isinstance(end, SpeechEnd)
    assert end.pcm == pcm_of(range(8))


def test_the_segment_so_far_is_available_for_speculative_recognition() -> None:
    endpointer = Endpointer(SHORT)
    feed(endpointer, "...####..")

    assert endpointer.in_trailing_silence
    assert endpointer.segment_pcm == pcm_of(range(1, 9))


def test_max_segment_ms_forces_an_end_during_unbroken_speech() -> None:
    endpointer = Endpointer(SHORT)

    events = feed(endpointer, "#" * 30)

    assert events == [
        (2, SpeechStart(stream_ms=0)),
        (24, SpeechEnd(stream_ms=500, segment_ms=500, pcm=pcm_of(range(25)))),
        (27, SpeechStart(stream_ms=500)),
    ]


def test_stream_time_comes_from_frame_indices() -> None:
    endpointer = Endpointer(SHORT)

    events = feed(endpointer, "###.....", first_index=1000)

    assert [e.stream_ms for _, e in events] == [20_000, 20_060]


@pytest.mark.parametrize(
    "config",
    [
        {"aggressiveness": 4},
        {"start_ms": 0},
        {"end_silence_ms": -20},
        {"pre_roll_ms": -1},
        {"max_segment_ms": 0},
    ],
)
def test_it_refuses_a_config_out_of_range(config: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        VadConfig(**config)


def noise(seconds: float, dbfs: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(round(seconds * SAMPLE_RATE)) * 32767 * 10 ** (dbfs / 20)


def pcm16(samples: np.ndarray) -> bytes:
    return np.clip(samples, -32768, 32767).astype("<i2").tobytes()


def endpoint(pcm: bytes, config: VadConfig | None = None) -> list[VadEvent]:
    endpointer = Endpointer(config)
    return [event for f in split_frames(pcm) for event in endpointer.push(f)]


def test_webrtcvad_hears_no_speech_in_digital_silence() -> None:
    assert endpoint(b"\0" * FRAME_BYTES * 100) == []


@pytest.mark.parametrize("dbfs", [-50.0, -40.0, -30.0])
def test_webrtcvad_hears_no_speech_in_low_background_noise_even_as_it_adapts(dbfs: float) -> None:
    assert endpoint(pcm16(noise(3.0, dbfs, seed=11))) == []


@pytest.mark.models
def test_it_cuts_synthesized_speech_between_noisy_pauses_at_the_true_boundaries() -> None:
    from lab.speech.tts import synthesize

    utterances = [
        "Book me something Tuesday morning, please.",
        "Actually, make that Thursday afternoon.",
        "Yes, confirm.",
    ]
    pause = np.zeros(round(0.8 * SAMPLE_RATE))
    track: list[np.ndarray] = [pause]
    truth_ms: list[tuple[float, float]] = []
    offset = pause.size
    for text in utterances:
        clip = np.frombuffer(synthesize(text), dtype="<i2").astype(np.float64)
        # The truth is where the clean clip rises above the noise floor (-40 dBFS).
        loud = np.flatnonzero(np.abs(clip) > 32767 * 10 ** (-40 / 20))
        truth_ms.append(((offset + loud[0]) / 16, (offset + loud[-1]) / 16))
        track += [clip, pause]
        offset += clip.size + pause.size
    signal = np.concatenate(track) + noise(offset / SAMPLE_RATE, -40.0, seed=7)

    events = endpoint(pcm16(signal))

    assert [type(e) for e in events] == [SpeechStart, SpeechEnd] * len(utterances)
    found_ms = [(s.stream_ms, e.stream_ms) for s, e in zip(events[::2], events[1::2], strict=True)]
    for (start, end), (true_start, true_end) in zip(found_ms, truth_ms, strict=True):
        assert abs(start - true_start) <= 150
        assert abs(end - true_end) <= 150
    for start_event, end_event in zip(events[::2], events[1::2], strict=True):
        assert isinstance(end_event, SpeechEnd)
        # Pre-roll before the start and the trailing silence after the end are kept.
        assert end_event.segment_ms >= end_event.stream_ms - start_event.stream_ms + 500
