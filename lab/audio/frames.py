"""The audio wire format: 16 kHz mono PCM16 little-endian, cut into 20 ms frames."""

from __future__ import annotations

from dataclasses import dataclass

SAMPLE_RATE = 16_000
SAMPLE_BYTES = 2
FRAME_MS = 20
FRAME_SAMPLES = SAMPLE_RATE * FRAME_MS // 1000
FRAME_BYTES = FRAME_SAMPLES * SAMPLE_BYTES
BYTES_PER_MS = SAMPLE_RATE * SAMPLE_BYTES // 1000


class FrameError(ValueError):
    """A binary message that is not one well-formed audio frame."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(f"{kind}: {reason}")
        self.kind = kind
        self.reason = reason


@dataclass(slots=True)
class AudioFrame:
    """One 20 ms frame of PCM16 audio; `index` counts frames from the stream's start."""

    pcm: bytes
    index: int

    @property
    def stream_ms(self) -> int:
        return self.index * FRAME_MS


def parse_frame(data: bytes, index: int) -> AudioFrame:
    """Accept exactly one 640-byte frame, or raise FrameError saying what is wrong."""
    size = len(data)
    if size == 0:
        raise FrameError("empty", "an audio frame carried no bytes")
    # Checked before parity so an oversized message is reported as what it is.
    if size > FRAME_BYTES:
        raise FrameError("too_large", f"{size} bytes, a frame is {FRAME_BYTES}")
    if size % SAMPLE_BYTES:
        raise FrameError("odd_length", f"{size} bytes cannot hold whole 16-bit samples")
    if size != FRAME_BYTES:
        raise FrameError("wrong_size", f"{size} bytes, a frame is {FRAME_BYTES}")
    return AudioFrame(pcm=bytes(data), index=index)


def split_frames(pcm: bytes, first_index: int = 0) -> list[AudioFrame]:
    """Cut a PCM16 buffer into frames, padding the last one with silence."""
    if len(pcm) % SAMPLE_BYTES:
        raise FrameError("odd_length", f"{len(pcm)} bytes cannot hold whole 16-bit samples")
    frames = []
    for number, offset in enumerate(range(0, len(pcm), FRAME_BYTES)):
        chunk = pcm[offset : offset + FRAME_BYTES]
        frames.append(AudioFrame(pcm=chunk.ljust(FRAME_BYTES, b"\0"), index=first_index + number))
    return frames
