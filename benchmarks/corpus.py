"""The spoken corpus: the scenarios' caller lines synthesized by piper, clean and noisy.

The noisy variant is another voice in another room: pitch lowered by resampling (slower too)
and pink noise over the whole clip, its trailing silence included, at a stated SNR. Where
speech ends is taken from the speech before noise is added (last sample above -40 dBFS).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lab.audio.frames import SAMPLE_RATE
from lab.audio.loudness import VOICED_DBFS, last_loud_sample
from lab.scenarios.catalog import all_contracts
from lab.speech import tts
from lab.speech.resample import resample

TAIL_MS = 1000
PITCH_SEMITONES = -2.0
SNR_DB = 15.0
VARIANTS = ("clean", "noisy")
_FULL_SCALE = 32767.0


@dataclass(frozen=True, slots=True)
class Clip:
    """One caller line as audio: speech, then TAIL_MS of its room's silence."""

    text: str
    variant: str
    pcm: bytes
    end_sample: int  # index of the last voiced sample of the speech

    @property
    def end_ms(self) -> float:
        return (self.end_sample + 1) * 1000 / SAMPLE_RATE


def caller_lines(scenarios: list[str]) -> list[str]:
    """Every scripted caller line of `scenarios`, in the order the scenarios say them."""
    contracts = all_contracts()
    return [line.say for s in scenarios for line in contracts[s].caller]


def pink_noise(samples: int, seed: int) -> np.ndarray:
    """Unit-RMS 1/f noise: white noise shaped by 1/sqrt(f) in the frequency domain."""
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(samples))
    spectrum /= np.sqrt(np.maximum(np.arange(spectrum.size), 1))
    noise = np.fft.irfft(spectrum, n=samples)
    return noise / np.sqrt(np.mean(noise**2))


def _seed(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def clip(text: str, variant: str) -> Clip:
    """`text` spoken by piper in `variant`; deterministic (piper runs without its noise)."""
    speech = np.frombuffer(tts.synthesize(text), dtype="<i2").astype(np.float64) / _FULL_SCALE
    if variant == "noisy":
        # Resampled up and played at the same rate: lower and slower, like a different speaker.
        stretched = round(SAMPLE_RATE * 2 ** (-PITCH_SEMITONES / 12))
        speech = resample(speech.astype(np.float32), SAMPLE_RATE, stretched).astype(np.float64)
    elif variant != "clean":
        raise ValueError(f"unknown variant {variant!r}: one of {', '.join(VARIANTS)}")
    audio = np.concatenate([speech, np.zeros(SAMPLE_RATE * TAIL_MS // 1000)])
    pcm16 = _pcm16(audio)
    end = last_loud_sample(pcm16, VOICED_DBFS)
    if end is None:
        raise ValueError(f"piper said nothing audible for {text!r}")
    if variant == "noisy":
        # The SNR is against the speech between its first and last voiced samples.
        first = int(np.flatnonzero(np.abs(speech) > 10 ** (VOICED_DBFS / 20))[0])
        rms = float(np.sqrt(np.mean(speech[first : end + 1] ** 2)))
        noise = pink_noise(audio.size, _seed(text)) * rms * 10 ** (-SNR_DB / 20)
        pcm16 = _pcm16(audio + noise)
    return Clip(text=text, variant=variant, pcm=pcm16, end_sample=end)


def _pcm16(audio: np.ndarray) -> bytes:
    return (np.clip(audio, -1.0, 1.0) * _FULL_SCALE).astype("<i2").tobytes()


def build(lines: list[str], variant: str) -> dict[str, Clip]:
    """One clip per distinct line."""
    return {text: clip(text, variant) for text in dict.fromkeys(lines)}


def write(clips: dict[str, Clip], folder: Path) -> dict[str, Path]:
    """Each clip as a raw PCM16 file in `folder`, for the pipecat side."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for number, (text, one) in enumerate(clips.items()):
        path = folder / f"{one.variant}-{number:02d}.pcm"
        path.write_bytes(one.pcm)
        paths[text] = path
    return paths
