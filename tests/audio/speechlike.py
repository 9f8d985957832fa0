"""Speech-like test signals: noise shaped by a random syllable envelope (no models needed)."""

from __future__ import annotations

import numpy as np

SAMPLE_RATE = 16_000


def speechlike(seconds: float, seed: int, level: float = 6000.0) -> np.ndarray:
    """Float samples whose loudness rises and falls like syllables (4-6 per second)."""
    rng = np.random.default_rng(seed)
    samples = round(seconds * SAMPLE_RATE)
    envelope = np.zeros(samples)
    at = 0
    while at < samples:
        length = int(rng.integers(1200, 3200))
        gap = int(rng.integers(200, 1600))
        end = min(samples, at + length)
        envelope[at:end] = np.hanning(length)[: end - at] * rng.uniform(0.4, 1.0)
        at = end + gap
    return rng.standard_normal(samples) * envelope * level


def pcm(samples: np.ndarray) -> bytes:
    return np.clip(samples, -32768, 32767).astype("<i2").tobytes()


def delayed(samples: np.ndarray, delay_ms: int, gain: float, length: int) -> np.ndarray:
    """`samples` attenuated and delayed, cut or padded to `length` samples."""
    out = np.zeros(length)
    shift = delay_ms * SAMPLE_RATE // 1000
    part = samples[: max(0, length - shift)] * gain
    out[shift : shift + len(part)] = part
    return out
