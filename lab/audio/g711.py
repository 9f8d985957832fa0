"""G.711 μ-law and the 8 kHz ↔ 16 kHz conversion every phone line needs (pure numpy).

The codec is bit-exact with CPython's `audioop.lin2ulaw` / `ulaw2lin` (the code pipecat's
serializers and `audioop-lts` run), checked over every input in tests/audio/test_g711.py.
"""

from __future__ import annotations

import functools

import numpy as np

PHONE_RATE = 8_000
WIDE_RATE = 16_000
# audioop works on 14-bit magnitudes: bias 0x84 >> 2, clip at 8159, segment ends below.
_BIAS = 0x21
_CLIP = 8159
_SEGMENT_ENDS = np.array([0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF, 0x1FFF])
# A half-band low-pass for the 2:1 rate change: 4 kHz is 8 kHz's Nyquist frequency, so the pass
# band ends at 3.6 kHz and the stop band (>= 60 dB down, Kaiser beta 6) starts by 4.4 kHz.
_TAPS = 63
_CUTOFF = 0.25  # of the 16 kHz rate: 4 kHz


def ulaw_encode(pcm: np.ndarray) -> np.ndarray:
    """16-bit linear samples to 8-bit μ-law codes, as audioop.lin2ulaw."""
    value = pcm.astype(np.int32) >> 2
    negative = value < 0
    magnitude = np.minimum(np.where(negative, -value, value), _CLIP) + _BIAS
    segment = np.searchsorted(_SEGMENT_ENDS, magnitude, side="left")
    mantissa = (magnitude >> (np.minimum(segment, 7) + 1)) & 0x0F
    code = np.where(segment >= 8, 0x7F, (segment << 4) | mantissa)
    mask = np.where(negative, 0x7F, 0xFF)
    codes: np.ndarray = (code ^ mask).astype(np.uint8)
    return codes


def ulaw_decode(codes: np.ndarray) -> np.ndarray:
    """8-bit μ-law codes to 16-bit linear samples, as audioop.ulaw2lin."""
    code = ~codes.astype(np.int32) & 0xFF
    exponent = (code >> 4) & 0x07
    magnitude = (((code & 0x0F) << 3) + 0x84 << exponent) - 0x84
    return np.where(code & 0x80, -magnitude, magnitude).astype(np.int16)


@functools.cache
def _halfband() -> np.ndarray:
    n = np.arange(_TAPS) - (_TAPS - 1) / 2
    taps = 2 * _CUTOFF * np.sinc(2 * _CUTOFF * n) * np.kaiser(_TAPS, 6.0)
    result: np.ndarray = taps / taps.sum()
    return result


def _to_pcm(samples: np.ndarray) -> np.ndarray:
    return np.clip(np.round(samples), -32768, 32767).astype(np.int16)


class RateChanger:
    """A streaming 2:1 rate change (16k → 8k, or 8k → 16k) that keeps its filter's history, so
    20 ms chunks join without clicks; each chunk comes out delayed by the same group delay."""

    def __init__(self, *, up: bool) -> None:
        self.up = up
        self.history = np.zeros(_TAPS - 1)

    def __call__(self, pcm: np.ndarray) -> np.ndarray:
        samples = pcm.astype(np.float64)
        if self.up:
            # Zero-stuffing doubles the rate and halves the level; the filter removes the image.
            stuffed = np.zeros(samples.size * 2)
            stuffed[::2] = samples * 2
            samples = stuffed
        joined = np.concatenate([self.history, samples])
        self.history = joined[joined.size - (_TAPS - 1) :]
        filtered = np.convolve(joined, _halfband(), mode="valid")
        return _to_pcm(filtered if self.up else filtered[::2])


def pcm16_to_ulaw(pcm: bytes, down: RateChanger) -> bytes:
    """16 kHz PCM16 (an even number of samples) to 8 kHz μ-law bytes."""
    samples = np.frombuffer(pcm, dtype="<i2")
    return ulaw_encode(down(samples)).tobytes()


def ulaw_to_pcm16(payload: bytes, up: RateChanger) -> bytes:
    """8 kHz μ-law bytes to 16 kHz PCM16."""
    codes = np.frombuffer(payload, dtype=np.uint8)
    return up(ulaw_decode(codes)).astype("<i2").tobytes()


def phone_low_edge(pcm: bytes, rate: int = WIDE_RATE, low_hz: float = 300.0) -> bytes:
    """PCM16 without what lies under a telephone channel's low edge (G.712: 300 Hz), removed
    in the frequency domain over the whole clip (an utterance: short)."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    if samples.size == 0:
        return pcm
    spectrum = np.fft.rfft(samples)
    spectrum[np.fft.rfftfreq(samples.size, 1 / rate) < low_hz] = 0
    return _to_pcm(np.fft.irfft(spectrum, samples.size)).astype("<i2").tobytes()
