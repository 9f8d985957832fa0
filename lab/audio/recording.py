"""A run's two-channel recording: the caller left, the agent right, on the run's clock.

Pure: positions are sample indices on the run's clock (sample 0 = run.started) supplied by the
caller. Audio is mixed in a window that is held back a little (an interruption cuts the agent's
audio from where the caller began, which is already past), then taken out as WAV data to be
appended; a cap stops the recording, and what was beyond it is said to be truncated.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from lab.audio.frames import SAMPLE_BYTES, SAMPLE_RATE

CHANNELS = 2
FRAME_BYTES_STEREO = CHANNELS * SAMPLE_BYTES
WAV_HEADER_BYTES = 44
# Caller frames arriving within this much of the last one's end are taken as its continuation
# (network jitter); a longer gap means the client stopped sending, and silence fills it.
CALLER_GAP_SAMPLES = SAMPLE_RATE // 5
# How far ahead of the window agent audio may be queued (it is sent faster than it plays).
MAX_AHEAD_SAMPLES = SAMPLE_RATE * 120


def wav_header(data_bytes: int) -> bytes:
    """The 44-byte RIFF header of a 16 kHz PCM16 stereo WAV holding data_bytes of samples."""
    byte_rate = SAMPLE_RATE * FRAME_BYTES_STEREO
    return (
        b"RIFF"
        + struct.pack("<I", 36 + data_bytes)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, CHANNELS, SAMPLE_RATE, byte_rate, FRAME_BYTES_STEREO, 16)
        + b"data"
        + struct.pack("<I", data_bytes)
    )


@dataclass
class CallerPiece:
    """Caller frames received back to back: stream sample `stream` sits at run sample `at`."""

    stream: int
    at: int
    samples: int = 0


@dataclass
class AgentSpan:
    """Where one agent utterance's audio sits on the run clock, as sent and as played."""

    utterance_event_id: str
    start: int
    end: int
    played: int | None = None


@dataclass
class StereoMix:
    """The not yet written tail of the recording, from sample `written` onward."""

    max_data_bytes: int
    written: int = 0
    truncated: bool = False
    caller_pieces: list[CallerPiece] = field(default_factory=list)
    agent_spans: list[AgentSpan] = field(default_factory=list)
    _window: np.ndarray = field(default_factory=lambda: np.zeros((0, CHANNELS), dtype="<i2"))

    @property
    def max_samples(self) -> int:
        return self.max_data_bytes // FRAME_BYTES_STEREO

    def caller_frame(self, pcm: bytes, arrived: int, stream: int) -> None:
        """Caller stream samples from `stream` on, received (the last one) at run sample
        `arrived`."""
        samples = np.frombuffer(pcm, dtype="<i2")
        piece = self.caller_pieces[-1] if self.caller_pieces else None
        start = arrived - len(samples)
        if (
            piece is None
            or stream != piece.stream + piece.samples
            or start > piece.at + piece.samples + CALLER_GAP_SAMPLES
        ):
            piece = CallerPiece(stream=stream, at=max(start, 0))
            self.caller_pieces.append(piece)
        self._put(0, piece.at + piece.samples, samples)
        piece.samples += len(samples)

    def agent_audio(self, utterance_event_id: str, pcm: bytes, at: int) -> None:
        """A chunk of an agent utterance as sent, playing from run sample `at`."""
        samples = np.frombuffer(pcm, dtype="<i2")
        span = next(
            (s for s in self.agent_spans if s.utterance_event_id == utterance_event_id), None
        )
        if span is None:
            span = AgentSpan(utterance_event_id, start=at, end=at)
            self.agent_spans.append(span)
        self._put(1, at, samples)
        span.end = max(span.end, at + len(samples))

    def agent_cut(self, at: int) -> None:
        """An interruption: nothing of the agent plays from run sample `at` on."""
        self._silence(1, at, None)
        for span in self.agent_spans:
            span.end = max(span.start, min(span.end, at))

    def agent_played(self, utterance_event_id: str, played_samples: int) -> None:
        """The browser's account: it played this much of the utterance, and no more."""
        for span in self.agent_spans:
            if span.utterance_event_id == utterance_event_id:
                span.played = min(played_samples, span.end - span.start)
                self._silence(1, span.start + span.played, span.end)

    def take(self, until: int) -> bytes:
        """The interleaved PCM16 of [written, until), within the cap; the window moves on."""
        until = min(until, self.written + len(self._window), self.max_samples)
        if until <= self.written:
            self._stop_at_cap()
            return b""
        count = until - self.written
        data = self._window[:count].tobytes()
        self._window = self._window[count:]
        self.written = until
        self._stop_at_cap()
        return data

    def take_all(self) -> bytes:
        return self.take(self.written + len(self._window))

    def _stop_at_cap(self) -> None:
        if self.written >= self.max_samples and len(self._window):
            self.truncated = True
            self._window = self._window[:0]

    def _put(self, channel: int, at: int, samples: np.ndarray) -> None:
        if at < self.written:
            samples = samples[self.written - at :]
            at = self.written
        end = at + len(samples)
        if not len(samples):
            return
        if end > self.max_samples:
            self.truncated = True
            samples = samples[: max(0, self.max_samples - at)]
            end = at + len(samples)
        if end - self.written > MAX_AHEAD_SAMPLES:
            return  # a clock far in the future is a bug upstream, never a huge allocation
        offset = at - self.written
        if end - self.written > len(self._window):
            grown = np.zeros((end - self.written, CHANNELS), dtype="<i2")
            grown[: len(self._window)] = self._window
            self._window = grown
        self._window[offset : offset + len(samples), channel] = samples

    def _silence(self, channel: int, start: int, end: int | None) -> None:
        first = max(start - self.written, 0)
        last = len(self._window) if end is None else max(end - self.written, 0)
        if first < last:
            self._window[first:last, channel] = 0


def caller_ms_at(pieces: list[tuple[int, int]], stream_ms: int) -> int | None:
    """Where a caller stream time (vad.*'s stream_ms) sits on the run clock, from the pieces."""
    placed = [(stream, at) for stream, at in pieces if stream <= stream_ms]
    if not placed:
        return None
    stream, at = placed[-1]
    return at + stream_ms - stream
