from __future__ import annotations

import numpy as np

from lab.speech.resample import resample


def tone(hz: float, rate: int, seconds: float = 0.5) -> np.ndarray:
    return np.sin(2 * np.pi * hz * np.arange(round(rate * seconds)) / rate)


def level_at(samples: np.ndarray, hz: float, rate: int) -> float:
    """Amplitude of the component at `hz` (a single-bin Fourier projection)."""
    t = np.arange(samples.size) / rate
    return float(2 * abs(np.mean(samples * np.exp(-2j * np.pi * hz * t))))


def test_it_keeps_the_duration_when_changing_the_rate() -> None:
    assert resample(tone(440, 22_050), 22_050, 16_000).size == 8_000


def test_a_speech_band_tone_passes_through_at_its_own_pitch_and_level() -> None:
    out = resample(tone(1_000, 22_050), 22_050, 16_000)

    assert level_at(out, 1_000, 16_000) > 0.95


def test_a_tone_above_the_new_nyquist_is_filtered_instead_of_folding_back() -> None:
    # 10 kHz at 16 kHz would alias to 6 kHz.
    out = resample(tone(10_000, 22_050), 22_050, 16_000)

    assert level_at(out, 6_000, 16_000) < 0.02


def test_the_same_rate_is_returned_untouched() -> None:
    samples = tone(440, 16_000)

    assert resample(samples, 16_000, 16_000) is samples
