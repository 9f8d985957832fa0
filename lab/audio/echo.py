"""Is this mic audio the agent's own voice? Envelope cross-correlation over a lag window.

Pure: PCM and times in, a score out. Loudness envelopes (10 ms RMS) survive what a room and
a browser do to a waveform; the agent's envelope, delayed by the best lag in the window, is
compared with the mic's by Pearson correlation, and what the scaled echo leaves unexplained of
the mic's energy is the residual. Echo alone correlates near 1 with almost nothing left over;
a caller speaking, over the echo or alone, leaves their own voice in the residual.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from lab.audio.frames import BYTES_PER_MS

HOP_MS = 10
HOP_BYTES = HOP_MS * BYTES_PER_MS
# Echo arrives 0-500 ms after the audio left: network both ways, the player's buffer, the room.
MAX_LAG_MS = 500
# Measured on piper's voice over 500 ms windows (docs/architecture.md, Barge-in): echo alone at
# -6 to -20 dB, delayed 50-250 ms, correlates >= 0.99 and leaves <= 0.03 of its energy; a caller
# line over that echo leaves >= 0.15, a caller alone >= 0.16 (and correlates up to 0.94 by
# chance over 50 lags, so correlation alone cannot tell them apart).
ECHO_SCORE = 0.9
ECHO_RESIDUAL = 0.1
# Mic hops this much quieter than the loudest are left out: room noise says nothing.
_FLOOR_RATIO = 0.05

Envelope = npt.NDArray[np.float64]


def envelope(pcm: bytes) -> Envelope:
    """RMS of each whole 10 ms hop of PCM16 mono."""
    hops = len(pcm) // HOP_BYTES
    samples = np.frombuffer(pcm[: hops * HOP_BYTES], dtype="<i2").astype(np.float64)
    return np.sqrt(np.mean(samples.reshape(hops, -1) ** 2, axis=1)) if hops else np.zeros(0)


@dataclass(frozen=True)
class EchoMatch:
    score: float
    lag_ms: int
    residual: float

    @property
    def is_echo(self) -> bool:
        return self.score >= ECHO_SCORE and self.residual <= ECHO_RESIDUAL


NO_MATCH = EchoMatch(score=0.0, lag_ms=0, residual=1.0)


def echo_match(mic: Envelope, reference: Envelope) -> EchoMatch:
    """Best correlation of `mic` with `reference` delayed by 0..MAX_LAG_MS.

    `reference` covers the same span as `mic` plus MAX_LAG_MS before it, hop for hop: its last
    len(mic) hops are at lag 0.
    """
    count = len(mic)
    lags = min(MAX_LAG_MS // HOP_MS, len(reference) - count)
    if count < 4 or lags < 0 or float(np.max(mic)) <= 0.0:
        return NO_MATCH
    end = len(reference)
    scores = [
        _correlation(mic, reference[end - lag - count : end - lag]) for lag in range(lags + 1)
    ]
    lag = int(np.argmax(scores))
    residual = _residual(mic, reference[end - lag - count : end - lag])
    return EchoMatch(score=round(scores[lag], 3), lag_ms=lag * HOP_MS, residual=round(residual, 3))


def _correlation(mic: Envelope, reference: Envelope) -> float:
    """Pearson correlation over the hops where either side is audible."""
    loud = (mic > _FLOOR_RATIO * float(np.max(mic))) | (
        reference > _FLOOR_RATIO * max(float(np.max(reference)), 1e-9)
    )
    if int(np.count_nonzero(loud)) < 4:
        return 0.0
    a, b = mic[loud], reference[loud]
    a, b = a - a.mean(), b - b.mean()
    scale = float(np.sqrt(np.dot(a, a) * np.dot(b, b)))
    return float(np.dot(a, b)) / scale if scale > 0 else 0.0


def _residual(mic: Envelope, reference: Envelope) -> float:
    """Share of the mic's energy the reference, scaled by its median gain, does not explain."""
    loud = reference > _FLOOR_RATIO * max(float(np.max(reference)), 1e-9)
    total = float(np.sum(mic**2))
    if int(np.count_nonzero(loud)) < 4 or total <= 0.0:
        return 1.0
    gain = float(np.median(mic[loud] / reference[loud]))
    left = np.clip(mic**2 - (gain * reference) ** 2, 0.0, None)
    return float(np.sum(left)) / total
