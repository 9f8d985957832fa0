"""Each line impairment by its exact properties: codec, band, loss, jitter, noise, clipping."""

from __future__ import annotations

import numpy as np
import pytest

from lab.audio import impairments as imp
from lab.audio.frames import FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE


def tone(hz: float, seconds: float = 1.0, amplitude: float = 8000.0) -> np.ndarray:
    t = np.arange(round(SAMPLE_RATE * seconds)) / SAMPLE_RATE
    return np.round(amplitude * np.sin(2 * np.pi * hz * t)).astype(np.int16)


def spectrum(pcm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.fft.rfftfreq(pcm.size, 1 / SAMPLE_RATE), np.abs(np.fft.rfft(pcm.astype(float))) ** 2


def test_ulaw_codes_match_g711_at_the_known_points() -> None:
    # The values of the standard 16-bit μ-law table (segment 7 starts at 16764, steps 1024).
    pcm = np.array([0, 32767, -32768, 16764, -16764, 15996], dtype=np.int16)
    assert imp.ulaw_encode(pcm).tolist() == [0xFF, 0x80, 0x00, 0x8F, 0x0F, 0x90]
    codes = np.array([0xFF, 0x80, 0x00, 0x7F, 0x0F, 0x10, 0x01], np.uint8)
    assert imp.ulaw_decode(codes).tolist() == [0, 32124, -32124, 0, -16764, -15996, -31100]


def test_ulaw_round_trip_keeps_each_sample_within_its_segment_step() -> None:
    pcm = np.arange(-32768, 32768, dtype=np.int32).astype(np.int16)
    back = imp.ulaw_decode(imp.ulaw_encode(pcm)).astype(np.int32)
    loud = np.abs(pcm.astype(np.int32)) > 1000
    # Logarithmic quantisation: the error stays a few percent of the sample, never more.
    relative = np.abs(back - pcm)[loud] / np.abs(pcm.astype(np.int32))[loud]
    assert relative.max() < 0.035
    assert np.abs(back - pcm)[~loud].max() <= 32


def test_the_telephone_band_removes_what_a_phone_line_cannot_carry() -> None:
    noise = np.round(np.random.default_rng(3).standard_normal(SAMPLE_RATE) * 3000).astype(np.int16)
    freqs, power = spectrum(imp.telephone_band(noise))
    total = power.sum()
    assert power[freqs > 4000].sum() / total < 1e-6
    assert power[freqs > 3500].sum() / total < 1e-3
    assert power[freqs < 250].sum() / total < 1e-3
    # Inside the band the speech is kept: most of the input's 300-3400 Hz power is there.
    in_band = (freqs > 400) & (freqs < 3300)
    assert power[in_band].sum() / spectrum(noise)[1][in_band].sum() == pytest.approx(1, abs=0.05)


def test_a_tone_inside_the_band_comes_through_at_mu_law_quality() -> None:
    clean = tone(1000)
    heard = imp.telephone_band(clean).astype(float)
    middle = slice(1000, -1000)
    error = heard[middle] - clean[middle]
    # G.711 μ-law quantisation noise sits near 38 dB under the signal.
    assert 10 * np.log10(imp.power(clean[middle]) / imp.power(error)) > 35
    assert imp.telephone_band(clean).size == clean.size


def test_a_tone_above_the_band_is_gone() -> None:
    heard = imp.telephone_band(tone(5000))
    assert imp.power(heard) < imp.power(tone(5000)) * 1e-6


def test_burst_loss_loses_the_rate_asked_for_in_bursts_of_the_length_asked_for() -> None:
    lost = imp.burst_loss(50_000, 0.05, 3.0, np.random.default_rng(7))
    assert lost.mean() == pytest.approx(0.05, abs=0.005)
    edges = np.diff(np.concatenate([[0], lost.astype(np.int8), [0]]))
    runs = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
    assert runs.mean() == pytest.approx(3.0, rel=0.15)
    assert runs.max() > 3


def test_burst_loss_is_the_same_for_a_seed_and_differs_between_seeds() -> None:
    first = imp.burst_loss(2000, 0.1, 2.0, np.random.default_rng(11))
    again = imp.burst_loss(2000, 0.1, 2.0, np.random.default_rng(11))
    other = imp.burst_loss(2000, 0.1, 2.0, np.random.default_rng(12))
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


def test_a_lost_frame_is_silence_and_every_other_frame_is_untouched() -> None:
    pcm = tone(440, seconds=0.2)
    lost = np.zeros(pcm.size // FRAME_SAMPLES, dtype=bool)
    lost[[2, 3, 7]] = True
    out = imp.drop_frames(pcm, lost)
    frames, kept = out.reshape(-1, FRAME_SAMPLES), pcm.reshape(-1, FRAME_SAMPLES)
    assert not frames[[2, 3, 7]].any()
    assert np.array_equal(frames[~lost], kept[~lost])


def test_jitter_holds_frames_back_and_releases_them_bunched_never_early() -> None:
    delays = imp.jitter_delays(1000, 0.05, 200, np.random.default_rng(5))
    assert delays == imp.jitter_delays(1000, 0.05, 200, np.random.default_rng(5))
    assert min(delays) == 0 and 0 < max(delays) <= 200
    arrivals = [index * FRAME_MS + delay for index, delay in enumerate(delays)]
    # Order kept, and some frames arrive together: bunched after a stall.
    assert arrivals == sorted(arrivals)
    assert len(set(arrivals)) < len(arrivals)
    assert sum(1 for delay in delays if delay) > 50


def test_noise_is_added_at_the_snr_asked_for_within_half_a_decibel() -> None:
    speech = tone(300, amplitude=6000) + tone(1700, amplitude=2000)
    for color in ("white", "pink"):
        for snr_db in (0.0, 10.0, 20.0):
            noise = imp.noise_for(speech, speech.size, snr_db, color, np.random.default_rng(2))
            noisy = imp.add_noise(speech, noise).astype(float)
            measured = 10 * np.log10(imp.power(speech) / imp.power(noisy - speech))
            assert measured == pytest.approx(snr_db, abs=0.5), (color, snr_db)


def test_pink_noise_has_more_power_low_than_high() -> None:
    noise = imp.noise_for(tone(1000), SAMPLE_RATE, 10.0, "pink", np.random.default_rng(4))
    freqs, power = spectrum(noise)
    low = power[(freqs > 100) & (freqs < 200)].mean()
    high = power[(freqs > 3200) & (freqs < 6400)].mean()
    # 1/f: five octaves apart, ~15 dB; white noise would be flat.
    assert 10 * np.log10(low / high) == pytest.approx(10 * np.log10(4800 / 150), abs=3)


def test_clipping_holds_every_sample_at_the_level_and_leaves_quieter_ones_alone() -> None:
    pcm = tone(500, amplitude=20000)
    out = imp.clip(pcm, 0.25)
    ceiling = round(0.25 * imp.FULL_SCALE)
    assert np.abs(out.astype(int)).max() == ceiling
    quiet = np.abs(pcm.astype(int)) < ceiling
    assert np.array_equal(out[quiet], pcm[quiet])
    driven = imp.clip(tone(500, amplitude=4000), 0.5, gain_db=20)
    assert np.abs(driven.astype(int)).max() == round(0.5 * imp.FULL_SCALE)


def test_a_keypad_press_sends_its_two_tones_and_nothing_else() -> None:
    press = imp.keypad("5", tone_ms=200, gap_ms=100)
    assert press.size == SAMPLE_RATE * 300 // 1000
    assert not press[SAMPLE_RATE * 200 // 1000 :].any()
    freqs, power = spectrum(press[: SAMPLE_RATE * 200 // 1000])
    peaks = sorted(freqs[np.argsort(power)[-2:]])
    assert peaks == pytest.approx(list(imp.dtmf_pair("5")), abs=10)
    assert imp.dtmf_pair("5") == (770.0, 1336.0)
    assert imp.keypad("12#", tone_ms=100, gap_ms=50).size == 3 * SAMPLE_RATE * 150 // 1000


def test_a_silence_is_that_long_and_silent() -> None:
    gap = imp.silence(2500)
    assert gap.size == SAMPLE_RATE * 5 // 2 and not gap.any()
