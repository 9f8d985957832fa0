"""Where speech ends in the audio itself: the last sample above a loudness floor.

Pure. Measured from the samples, not from a VAD's frames (webrtcvad runs on ~135 ms past it).
"""

from __future__ import annotations

import numpy as np

from lab.audio.frames import SAMPLE_RATE

VOICED_DBFS = -40.0
_FULL_SCALE = 32768.0


def last_loud_sample(pcm: bytes, dbfs: float = VOICED_DBFS) -> int | None:
    """Index of the last PCM16 sample louder than `dbfs`, or None if none is."""
    samples = np.abs(np.frombuffer(pcm, dtype="<i2").astype(np.int32))
    loud = np.flatnonzero(samples > _FULL_SCALE * 10 ** (dbfs / 20))
    return int(loud[-1]) if loud.size else None


def loud_end_ms(pcm: bytes, dbfs: float = VOICED_DBFS) -> float | None:
    """Milliseconds from the start of `pcm` to just after its last loud sample."""
    index = last_loud_sample(pcm, dbfs)
    return None if index is None else (index + 1) * 1000 / SAMPLE_RATE
