"""Line impairments as pure transforms of 16 kHz PCM16 audio (numpy int16 arrays).

Pure: no I/O, no clock; every random choice comes from the numpy Generator passed in, so a seed
gives the same line every time. lab/audio/phone_line.py chains them for a scenario's line.
"""

from __future__ import annotations

import numpy as np

from lab.audio.frames import FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE

FULL_SCALE = 32767
# The band a telephone channel passes (ITU-T G.712), carried at G.711's 8 kHz.
PHONE_LOW_HZ, PHONE_HIGH_HZ = 300.0, 3400.0
PHONE_RATE = 8_000
_ULAW_BIAS = 0x84
_ULAW_CLIP = 32635
# Keypad (DTMF) tones: the row frequency and the column frequency of each key.
_DTMF_ROWS = (697.0, 770.0, 852.0, 941.0)
_DTMF_COLS = (1209.0, 1336.0, 1477.0, 1633.0)
_KEYPAD = ("123A", "456B", "789C", "*0#D")
KEYPAD_KEYS = "".join(_KEYPAD)


def _to_pcm(samples: np.ndarray) -> np.ndarray:
    return np.clip(np.round(samples), -FULL_SCALE - 1, FULL_SCALE).astype(np.int16)


def ulaw_encode(pcm: np.ndarray) -> np.ndarray:
    """G.711 μ-law: 16-bit linear samples to 8-bit codes (the segment table, as Sun's g711.c)."""
    linear = pcm.astype(np.int32)
    negative = linear < 0
    magnitude = np.minimum(np.where(negative, -linear, linear), _ULAW_CLIP) + _ULAW_BIAS
    # The segment is the position of the highest set bit above bit 7.
    exponent = np.clip(np.floor(np.log2(magnitude)).astype(np.int32) - 7, 0, 7)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    code = (negative.astype(np.int32) << 7) | (exponent << 4) | mantissa
    codes: np.ndarray = (~code & 0xFF).astype(np.uint8)
    return codes


def ulaw_decode(codes: np.ndarray) -> np.ndarray:
    """G.711 μ-law: 8-bit codes back to 16-bit linear samples."""
    code = ~codes.astype(np.int32) & 0xFF
    exponent = (code >> 4) & 0x07
    magnitude = (((code & 0x0F) << 3) + _ULAW_BIAS << exponent) - _ULAW_BIAS
    return np.where(code & 0x80, -magnitude, magnitude).astype(np.int16)


def _band(samples: np.ndarray, rate: int, low_hz: float, high_hz: float) -> np.ndarray:
    """Keep only low_hz..high_hz (a brick wall in the frequency domain: the clip is short)."""
    spectrum = np.fft.rfft(samples)
    freqs = np.fft.rfftfreq(samples.size, 1 / rate)
    spectrum[(freqs < low_hz) | (freqs > high_hz)] = 0
    return np.fft.irfft(spectrum, samples.size)


def telephone_band(pcm: np.ndarray) -> np.ndarray:
    """The caller as a phone network delivers them: 300-3400 Hz, 8 kHz μ-law, back to 16 kHz."""
    if pcm.size == 0:
        return pcm.copy()
    step = SAMPLE_RATE // PHONE_RATE
    filtered = _band(pcm.astype(np.float64), SAMPLE_RATE, PHONE_LOW_HZ, PHONE_HIGH_HZ)
    # Nothing is left above 4 kHz, so keeping every other sample aliases nothing.
    narrow = ulaw_decode(ulaw_encode(_to_pcm(filtered[::step]))).astype(np.float64)
    # Back up to 16 kHz: zeros between the samples, then the images above 4 kHz removed.
    wide = np.zeros(narrow.size * step)
    wide[::step] = narrow * step
    return _to_pcm(_band(wide, SAMPLE_RATE, 0.0, PHONE_RATE / 2)[: pcm.size])


def burst_loss(
    frames: int, rate: float, burst_frames: float, rng: np.random.Generator
) -> np.ndarray:
    """Which frames a lossy network drops: a Gilbert chain whose lost runs average burst_frames.

    In the long run a fraction `rate` of the frames is lost.
    """
    leave_bad = 1.0 / burst_frames
    enter_bad = min(1.0, rate * leave_bad / (1.0 - rate))
    draws = rng.random(frames)
    lost = np.zeros(frames, dtype=bool)
    bad = rng.random() < rate
    for index in range(frames):
        lost[index] = bad
        bad = draws[index] >= leave_bad if bad else draws[index] < enter_bad
    return lost


def drop_frames(pcm: np.ndarray, lost: np.ndarray) -> np.ndarray:
    """A lost frame reaches the lab as silence: the gateway keeps the clock, conceals nothing."""
    out = pcm.copy()
    for index in np.flatnonzero(lost):
        out[index * FRAME_SAMPLES : (index + 1) * FRAME_SAMPLES] = 0
    return out


def jitter_delays(
    frames: int, rate: float, max_late_ms: int, rng: np.random.Generator
) -> list[int]:
    """How late each frame arrives: the line stalls now and then, and what it held comes bunched.

    A stall starts at a frame with chance `rate` and lasts up to max_late_ms; every frame due
    during it arrives when it ends, together. Order is kept and nothing arrives early.
    """
    delays = [0] * frames
    released_ms = 0
    steps = max(1, max_late_ms // FRAME_MS)
    for index in range(frames):
        due_ms = index * FRAME_MS
        if due_ms >= released_ms and rng.random() < rate:
            released_ms = due_ms + int(rng.integers(1, steps + 1)) * FRAME_MS
        delays[index] = max(0, released_ms - due_ms)
    return delays


def _pink(count: int, rng: np.random.Generator) -> np.ndarray:
    """Noise whose power falls 3 dB an octave (1/f), shaped from white noise."""
    spectrum = np.fft.rfft(rng.standard_normal(count))
    freqs = np.fft.rfftfreq(count, 1 / SAMPLE_RATE)
    spectrum[1:] /= np.sqrt(freqs[1:])
    spectrum[0] = 0
    return np.fft.irfft(spectrum, count)


def power(samples: np.ndarray) -> float:
    return float(np.mean(np.square(samples.astype(np.float64)))) if samples.size else 0.0


def noise_for(
    speech: np.ndarray,
    count: int,
    snr_db: float,
    color: str,
    rng: np.random.Generator,
    *,
    at: int = 0,
) -> np.ndarray:
    """count samples of background noise; over the speech's own samples (from `at`), the speech
    stands snr_db above it."""
    raw = _pink(count, rng) if color == "pink" else rng.standard_normal(count)
    under = power(raw[at : at + speech.size])
    if under == 0 or power(speech) == 0:
        return np.zeros(count)
    target = power(speech) / 10 ** (snr_db / 10)
    return np.asarray(raw * np.sqrt(target / under))


def add_noise(pcm: np.ndarray, noise: np.ndarray) -> np.ndarray:
    return _to_pcm(pcm.astype(np.float64) + noise)


def clip(pcm: np.ndarray, level: float, gain_db: float = 0.0) -> np.ndarray:
    """An overdriven input: gain_db of gain, then every sample held within level x full scale."""
    ceiling = round(level * FULL_SCALE)
    driven = pcm.astype(np.float64) * 10 ** (gain_db / 20)
    return _to_pcm(np.clip(driven, -ceiling, ceiling))


def silence(ms: int) -> np.ndarray:
    return np.zeros(SAMPLE_RATE * ms // 1000, dtype=np.int16)


def keypad(digits: str, tone_ms: int, gap_ms: int, level_dbfs: float = -10.0) -> np.ndarray:
    """Keypad presses as the network carries them: each key's two tones, then a gap."""
    amplitude = FULL_SCALE * 10 ** (level_dbfs / 20)
    t = np.arange(SAMPLE_RATE * tone_ms // 1000) / SAMPLE_RATE
    parts = []
    for key in digits:
        low, high = dtmf_pair(key)
        tone = amplitude * (np.sin(2 * np.pi * low * t) + np.sin(2 * np.pi * high * t))
        parts += [_to_pcm(tone), silence(gap_ms)]
    return np.concatenate(parts) if parts else silence(0)


def dtmf_pair(key: str) -> tuple[float, float]:
    """The two frequencies a key sends."""
    row = next(index for index, keys in enumerate(_KEYPAD) if key in keys)
    return _DTMF_ROWS[row], _DTMF_COLS[_KEYPAD[row].index(key)]
