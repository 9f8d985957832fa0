from __future__ import annotations

import warnings

import numpy as np

from lab.audio.g711 import RateChanger, phone_low_edge, ulaw_decode, ulaw_encode

with warnings.catch_warnings():
    # The reference implementation: deprecated in 3.11 (removed in 3.13), fine to compare with.
    warnings.simplefilter("ignore", DeprecationWarning)
    import audioop


def _tone(hz: float, rate: int, seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (np.sin(2 * np.pi * hz * t) * 10_000).astype(np.int16)


def _streamed(change: RateChanger, samples: np.ndarray, chunk: int) -> np.ndarray:
    pieces = [change(samples[i : i + chunk]) for i in range(0, samples.size, chunk)]
    return np.concatenate(pieces).astype(np.float64)


def test_the_codec_encodes_every_sample_as_audioop_does() -> None:
    pcm = np.arange(-32768, 32768, dtype=np.int16)
    reference = np.frombuffer(audioop.lin2ulaw(pcm.tobytes(), 2), dtype=np.uint8)
    assert np.array_equal(ulaw_encode(pcm), reference)


def test_the_codec_decodes_every_code_as_audioop_does() -> None:
    codes = np.arange(256, dtype=np.uint8)
    reference = np.frombuffer(audioop.ulaw2lin(codes.tobytes(), 2), dtype=np.int16)
    assert np.array_equal(ulaw_decode(codes), reference)


def test_down_to_8k_keeps_the_phone_band_and_removes_what_would_fold_back() -> None:
    for hz, (low_db, high_db) in {1000: (-1, 0.5), 3300: (-1, 0.5), 5000: (-200, -60)}.items():
        out = _streamed(RateChanger(up=False), _tone(hz, 16_000), 320)[100:]
        level_db = 20 * np.log10(max(np.abs(out).max(), 1e-9) / 10_000)
        assert low_db <= level_db <= high_db, (hz, level_db)


def test_up_to_16k_keeps_the_level_and_leaves_no_image_above_4k() -> None:
    out = _streamed(RateChanger(up=True), _tone(3000, 8_000), 160)[400:-400]
    spectrum = np.abs(np.fft.rfft(out))
    freqs = np.fft.rfftfreq(out.size, 1 / 16_000)
    image = spectrum[np.argmin(np.abs(freqs - 5000))]
    assert 20 * np.log10(image / spectrum.max()) < -60
    assert abs(20 * np.log10(np.abs(out).max() / 10_000)) < 0.5


def test_the_low_edge_removes_what_a_phone_channel_does_not_carry() -> None:
    t = np.arange(16_000) / 16_000
    hum = (np.sin(2 * np.pi * 100 * t) * 8000).astype("<i2")
    voice = (np.sin(2 * np.pi * 1000 * t) * 8000).astype("<i2")
    kept = np.frombuffer(phone_low_edge((hum + voice).tobytes()), dtype="<i2").astype(float)
    assert np.abs(kept - voice).max() < 50
