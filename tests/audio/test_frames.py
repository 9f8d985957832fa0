from __future__ import annotations

import pytest

from lab.audio.frames import (
    FRAME_BYTES,
    FRAME_MS,
    SAMPLE_RATE,
    AudioFrame,
    FrameError,
    parse_frame,
    split_frames,
)


def test_a_frame_is_20_ms_of_16_khz_pcm16() -> None:
    assert (SAMPLE_RATE, FRAME_MS, FRAME_BYTES) == (16_000, 20, 640)


def test_it_parses_a_well_formed_frame_with_its_index() -> None:
    frame = parse_frame(b"\x01\x00" * 320, 7)

    assert frame == AudioFrame(pcm=b"\x01\x00" * 320, index=7)
    assert frame.stream_ms == 140


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"", "empty"),
        (b"\0" * 639, "odd_length"),
        (b"\0" * 320, "wrong_size"),
        (b"\0" * 641, "too_large"),
        (b"\0" * 64_000, "too_large"),
    ],
)
def test_it_rejects_a_malformed_frame_with_a_kind_and_a_reason(data: bytes, kind: str) -> None:
    with pytest.raises(FrameError) as caught:
        parse_frame(data, 0)

    assert caught.value.kind == kind
    assert str(len(data)) in caught.value.reason or kind == "empty"


def test_split_frames_cuts_a_buffer_into_numbered_frames_and_pads_the_tail_with_silence() -> None:
    pcm = b"\x07\x00" * 400

    frames = split_frames(pcm, first_index=3)

    assert [f.index for f in frames] == [3, 4]
    assert all(len(f.pcm) == FRAME_BYTES for f in frames)
    assert frames[0].pcm + frames[1].pcm[:160] == pcm
    assert frames[1].pcm[160:] == b"\0" * (FRAME_BYTES - 160)


def test_split_frames_of_an_empty_buffer_is_no_frames() -> None:
    assert split_frames(b"") == []


def test_split_frames_refuses_a_buffer_of_half_samples() -> None:
    with pytest.raises(FrameError) as caught:
        split_frames(b"\0" * 641)

    assert caught.value.kind == "odd_length"
