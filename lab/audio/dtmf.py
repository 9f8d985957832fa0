"""Keypad presses heard in a caller's audio, as a phone network detects DTMF in band (pure).

A press is a run of 20 ms frames whose energy one row tone and one column tone hold; it is
reported once, at its first frame without them, as the key of its clearest frame (a frame the
press only partly covers may blur two neighbouring tones).
"""

from __future__ import annotations

import functools

import numpy as np

from lab.audio.frames import SAMPLE_RATE
from lab.audio.impairments import KEYPAD_KEYS, dtmf_pair

_KEYS = {dtmf_pair(key): key for key in KEYPAD_KEYS}
_ROWS = tuple(sorted({low for low, _ in _KEYS}))
_COLS = tuple(sorted({high for _, high in _KEYS}))
# A frame belongs to a press when the two tones hold this share of its energy together (speech
# spreads its energy over many harmonics), each at least _EACH of it (their levels differ
# little: a network allows some twist), and it is louder than _QUIET_RMS.
_TONAL = 0.7
_EACH = 0.2
_QUIET_RMS = 100.0


@functools.cache
def _basis(size: int) -> np.ndarray:
    """The DFT at each keypad frequency over `size` samples: a Goertzel filter per tone."""
    freqs = np.array(_ROWS + _COLS)
    result: np.ndarray = np.exp(-2j * np.pi * np.outer(freqs, np.arange(size)) / SAMPLE_RATE)
    return result


def frame_key(pcm: bytes) -> tuple[str, float] | None:
    """The key whose two tones fill this frame of 16 kHz PCM16, and their share of its energy."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    energy = float(samples @ samples)
    if not samples.size or energy < samples.size * _QUIET_RMS**2:
        return None
    # 1.0: all of the frame's energy is that one tone.
    shares = 2 * np.abs(_basis(samples.size) @ samples) ** 2 / (samples.size * energy)
    row, col = int(np.argmax(shares[: len(_ROWS)])), int(np.argmax(shares[len(_ROWS) :]))
    low, high = float(shares[row]), float(shares[len(_ROWS) + col])
    if low < _EACH or high < _EACH or low + high < _TONAL:
        return None
    return _KEYS[(_ROWS[row], _COLS[col])], low + high


class KeypadListener:
    """The presses in one caller's stream, frame by frame."""

    def __init__(self) -> None:
        self._press: tuple[str, float] | None = None  # the current press's clearest frame

    def hear(self, pcm: bytes) -> str | None:
        """The key of the press that ended before this frame (one call a frame, in order)."""
        heard = frame_key(pcm)
        if heard is not None:
            if self._press is None or heard[1] > self._press[1]:
                self._press = heard
            return None
        ended, self._press = self._press, None
        return ended[0] if ended is not None else None
