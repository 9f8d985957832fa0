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
# Measured on piper's voice over 500 ms windows (docs/architecture.md, Barge-in), echo alone at
# -6 to -20 dB delayed 37-244 ms: correlation >= 0.96 and residual <= 0.14. A caller line over
# that echo leaves a residual >= 0.15 in 95% of windows (>= 0.25 in 81%), a caller alone correlates
# up to 0.96 by chance over 50 lags but leaves >= 0.1. So speech is taken for echo on a strict
# test (3% of echo windows miss it, under 1% of caller-over-echo windows and 3% of caller-alone
# windows pass it), and given up as the caller's once the echo at the lag it was found at
# leaves CALLER_RESIDUAL of a window unexplained.
ECHO_SCORE = 0.9
ECHO_RESIDUAL = 0.12
CALLER_RESIDUAL = 0.25
# The echo path's delay wanders with network jitter: it is looked for this far either side.
LAG_SLACK_HOPS = 4
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


def lagged(reference: Envelope, count: int) -> Envelope:
    """The candidates echo_match compares: row `lag` is `reference` delayed by that many hops.

    `reference` covers the mic's span plus MAX_LAG_MS before it; its last `count` hops are lag 0.
    """
    lags = min(MAX_LAG_MS // HOP_MS, len(reference) - count)
    end = len(reference)
    rows = [reference[end - lag - count : end - lag] for lag in range(max(lags + 1, 0))]
    return np.array(rows) if rows else np.zeros((0, count))


def echo_match(mic: Envelope, candidates: Envelope) -> EchoMatch:
    """Best correlation of `mic` with a row of `candidates` (the agent's envelope at each lag)."""
    if len(mic) < 4 or len(candidates) == 0 or float(np.max(mic)) <= 0.0:
        return NO_MATCH
    # Smoothed over three hops: echo whose delay falls between hops still lines up.
    mic = _smooth(mic)
    scores = [_correlation(mic, _smooth(row)) for row in candidates]
    lag = int(np.argmax(scores))
    residual = _residual(mic, _smooth(candidates[lag]))
    return EchoMatch(score=round(scores[lag], 3), lag_ms=lag * HOP_MS, residual=round(residual, 3))


def has_caller(mic: Envelope, candidates: Envelope, lag_ms: int) -> bool:
    """Whether the echo near `lag_ms` leaves CALLER_RESIDUAL of the mic unexplained, at best."""
    lag = lag_ms // HOP_MS
    rows = range(max(0, lag - LAG_SLACK_HOPS), min(len(candidates), lag + LAG_SLACK_HOPS + 1))
    if len(mic) < 4 or not rows:
        return False
    smooth = _smooth(mic)
    residuals = (_residual(smooth, _smooth(candidates[row]), slack=2) for row in rows)
    return min(residuals) >= CALLER_RESIDUAL


def _smooth(envelope: Envelope) -> Envelope:
    return np.convolve(envelope, np.ones(3) / 3, mode="same")


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


def _residual(mic: Envelope, reference: Envelope, *, slack: int = 0) -> float:
    """Share of the mic's energy the reference, scaled by its median gain, does not explain."""
    loud = reference > _FLOOR_RATIO * max(float(np.max(reference)), 1e-9)
    total = float(np.sum(mic**2))
    if int(np.count_nonzero(loud)) < 4 or total <= 0.0:
        return 1.0
    gain = float(np.median(mic[loud] / reference[loud]))
    # With slack, where the echo's timing slips by a hop or two (the player's chunks do not all
    # start on time) its loudest neighbour explains the mic; a caller's syllables stay unexplained.
    shifts = range(-slack, slack + 1)
    near = np.max(np.stack([np.roll(reference, shift) for shift in shifts]), axis=0)
    left = np.clip(mic**2 - (gain * near) ** 2, 0.0, None)
    return float(np.sum(left)) / total
