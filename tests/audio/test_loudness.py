from __future__ import annotations

import numpy as np

from lab.audio.loudness import last_loud_sample, loud_end_ms


def pcm(samples: list[int]) -> bytes:
    return np.array(samples, dtype="<i2").tobytes()


def test_the_end_is_the_last_sample_above_minus_40_dbfs() -> None:
    # -40 dBFS is 327.68 in PCM16: 328 counts, 327 does not, either sign.
    assert last_loud_sample(pcm([0, 5000, -328, 327, -327, 0])) == 2
    assert loud_end_ms(pcm([0] * 15 + [-400] + [0] * 100)) == 1.0


def test_silence_has_no_end() -> None:
    assert last_loud_sample(pcm([0, 100, -300])) is None
    assert loud_end_ms(b"") is None
