"""Sample-rate conversion for mono float audio, in numpy alone."""

from __future__ import annotations

import functools

import numpy as np

_TAPS = 63
# Pass band ends a little below the new Nyquist frequency so the filter's roll-off
# is done before anything can fold back.
_CUTOFF_OF_NYQUIST = 0.9


@functools.cache
def _lowpass(ratio: float) -> np.ndarray:
    cutoff = 0.5 * ratio * _CUTOFF_OF_NYQUIST
    n = np.arange(_TAPS) - (_TAPS - 1) / 2
    taps = 2 * cutoff * np.sinc(2 * cutoff * n) * np.blackman(_TAPS)
    return taps / taps.sum()


def resample(samples: np.ndarray, from_rate: int, to_rate: int) -> np.ndarray:
    """Low-pass (when going down) then interpolate linearly onto the new rate's grid."""
    if from_rate == to_rate or samples.size == 0:
        return samples
    if to_rate < from_rate:
        samples = np.convolve(samples, _lowpass(to_rate / from_rate), mode="same")
    count = round(samples.size * to_rate / from_rate)
    positions = np.arange(count) * (from_rate / to_rate)
    return np.interp(positions, np.arange(samples.size), samples)
