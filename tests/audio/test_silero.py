"""Silero VAD v6 from the faster-whisper wheel: per-stream state, noise, and where speech ends."""

from __future__ import annotations

import numpy as np
import pytest

from lab.audio.frames import SAMPLE_RATE, split_frames
from lab.audio.loudness import loud_end_ms
from lab.audio.silero import WINDOW_SAMPLES, SileroStream
from lab.audio.vad import Endpointer, SpeechEnd, SpeechStart, VadConfig, engine_named
from tests.audio.test_vad import noise, pcm16

SILERO = VadConfig(engine="silero")


def pink(seconds: float, dbfs: float, seed: int) -> np.ndarray:
    """1/f noise at `dbfs` RMS, the room noise the corpus puts under its noisy lines."""
    white = np.fft.rfft(np.random.default_rng(seed).standard_normal(round(seconds * SAMPLE_RATE)))
    shaped = np.fft.irfft(white / np.sqrt(np.maximum(np.arange(white.size), 1)))
    return shaped / np.sqrt(np.mean(shaped**2)) * 32767 * 10 ** (dbfs / 20)


def endpoint(pcm: bytes) -> tuple[list[SpeechStart | SpeechEnd], Endpointer]:
    endpointer = Endpointer(SILERO)
    return [event for f in split_frames(pcm) for event in endpointer.push(f)], endpointer


def test_it_judges_one_32_ms_window_per_512_samples_as_frames_fill_it() -> None:
    stream = SileroStream()
    stream.push(bytes(640))
    assert stream.samples == 320 and stream.probability == 0.0  # no window judged yet
    stream.push(bytes(640))
    assert stream.samples == 640 and 0.0 < stream.probability < 0.5
    assert WINDOW_SAMPLES == 512


def test_each_stream_keeps_its_own_recurrent_state() -> None:
    speechlike = pcm16(pink(1.0, -20.0, seed=3))
    first, second, fresh = SileroStream(), SileroStream(), SileroStream()
    for frame in split_frames(speechlike):
        first.push(frame.pcm)
    for frame in split_frames(bytes(len(speechlike))):
        second.push(frame.pcm)
        fresh.push(frame.pcm)
    assert second.probability == fresh.probability  # untouched by the other stream's audio


@pytest.mark.parametrize("dbfs", [-50.0, -35.0, -25.0])
def test_silero_hears_no_speech_in_pink_or_white_noise(dbfs: float) -> None:
    assert endpoint(pcm16(pink(3.0, dbfs, seed=11)))[0] == []
    assert endpoint(pcm16(noise(3.0, dbfs, seed=11)))[0] == []


def test_an_unknown_engine_is_refused_by_name() -> None:
    assert engine_named("silero") == "silero"
    with pytest.raises(ValueError, match="silero, webrtcvad"):
        engine_named("rnnoise")
    with pytest.raises(ValueError):
        VadConfig(engine="rnnoise")  # type: ignore[arg-type]


@pytest.mark.models
def test_pink_noise_after_the_last_word_moves_neither_the_end_nor_its_clock() -> None:
    from lab.speech.tts import synthesize

    clip = np.frombuffer(synthesize("Actually, make that Thursday afternoon."), "<i2")
    lead = np.zeros(SAMPLE_RATE * 3 // 10)
    speech = np.concatenate([lead, clip.astype(np.float64)])
    true_end_ms = loud_end_ms(pcm16(speech)) or 0.0
    # The speech's level less 15 dB, from the last word on for two seconds.
    level = np.sqrt(np.mean(clip.astype(np.float64) ** 2))
    room = pink(2.0, 20 * np.log10(level / 32767) - 15, seed=5)
    pcm = pcm16(np.concatenate([speech, room]))

    events, endpointer = endpoint(pcm)

    assert [type(e) for e in events] == [SpeechStart, SpeechEnd]
    end = events[1]
    assert isinstance(end, SpeechEnd) and 0 <= end.stream_ms - true_end_ms <= 150
    clock_ms = endpointer.speech_end_ms()
    assert clock_ms is not None and abs(clock_ms - true_end_ms) <= 100
    # The loudness alone would have had the caller speak on through the noise.
    assert (loud_end_ms(pcm) or 0.0) - true_end_ms > 1900


def test_silero_runs_beside_webrtcvad_for_the_speech_end_and_can_be_left_out() -> None:
    beside = Endpointer(VadConfig(engine="webrtcvad"))
    alone = Endpointer(VadConfig(engine="webrtcvad", speech_clock=False))
    for frame in split_frames(bytes(6400)):
        beside.push(frame)
        alone.push(frame)
    assert beside.speech_probability is not None and beside.speech_end_ms() is None
    assert alone.speech_probability is None and alone.speech_end_ms() is None
