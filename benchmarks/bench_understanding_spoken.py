"""The phrase corpus spoken: piper says each phrase, at two speeds and over noise; webrtcvad
cuts it, faster-whisper writes it down, and the agent's understanding must still get it right.

Speeds are piper's own (its length scale: a faster and a slower talker, pitch unchanged);
noise is white, 15 dB below the speech. Only typed phrases are spoken (the Whisper-form ones
are already transcripts). CPU-heavy: run it niced.

Run with: nice -n 10 .venv/bin/python -m benchmarks.bench_understanding_spoken [--phrases 120]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import time
from collections import defaultdict

import numpy as np

from lab.audio.frames import SAMPLE_RATE, split_frames
from lab.audio.vad import Endpointer, SpeechEnd
from tests.language.phrasebook import STEPS, Entry, Judgement, judge, load

# Piper length scales: below 1 speaks faster, above 1 slower.
SPEEDS = (0.8, 1.25)
SNR_DB = 15.0
PAD_S = 0.6


def sample(entries: list[Entry], count: int, seed: int) -> list[Entry]:
    """About count speakable typed phrases, spread over the steps in the corpus's proportions."""
    speakable = [e for e in entries if e.form == "typed" and any(c.isalnum() for c in e.text)]
    by_step: defaultdict[str, list[Entry]] = defaultdict(list)
    for entry in speakable:
        by_step[entry.step].append(entry)
    rng = random.Random(seed)
    chosen: list[Entry] = []
    for step in STEPS:
        group = by_step[step]
        share = max(1, round(count * len(group) / len(speakable)))
        chosen += rng.sample(group, min(share, len(group)))
    return chosen


def said(text: str, speed: float) -> np.ndarray:
    """Piper saying text at a length scale, as float samples at the lab's 16 kHz."""
    from piper import SynthesisConfig

    from lab.speech.resample import resample
    from lab.speech.tts import load_voice

    config = SynthesisConfig(length_scale=speed, noise_scale=0.0, noise_w_scale=0.0)
    chunks = list(load_voice().synthesize(text, syn_config=config))
    parts = [resample(c.audio_float_array, c.sample_rate, SAMPLE_RATE) for c in chunks]
    return np.concatenate(parts) * 32767 if parts else np.zeros(0, np.float32)


def spoken(voice: np.ndarray, rng: np.random.Generator) -> bytes:
    """The phrase padded with quiet, over white noise SNR_DB below it, as PCM16."""
    pad = np.zeros(round(PAD_S * SAMPLE_RATE), np.float32)
    audio = np.concatenate([pad, voice, pad])
    speech_rms = float(np.sqrt(np.mean(voice**2))) or 1.0
    noise = rng.standard_normal(audio.size) * speech_rms / 10 ** (SNR_DB / 20)
    return np.clip(audio + noise, -32768, 32767).astype("<i2").tobytes()


def heard(pcm: bytes) -> str:
    """What recognition writes for the segments the VAD cut, joined."""
    from lab.speech.asr import transcribe

    endpointer = Endpointer()
    ends = [e for f in split_frames(pcm) for e in endpointer.push(f) if isinstance(e, SpeechEnd)]
    return " ".join(transcribe(end.pcm).text for end in ends).strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phrases", type=int, default=120)
    parser.add_argument("--seed", type=int, default=9)
    options = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
    entries = sample(load(), options.phrases, options.seed)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(
        f"{len(entries)} phrases x piper length scales {SPEEDS}, white noise at {SNR_DB:.0f} dB SNR"
    )
    rng = np.random.default_rng(options.seed)
    results: list[tuple[float, Judgement, str]] = []
    started = time.perf_counter()
    for entry in entries:
        for speed in SPEEDS:
            text = heard(spoken(said(entry.text, speed), rng))
            results.append((speed, judge(entry, text), text))
    elapsed = time.perf_counter() - started
    right = sum(j.correct for _, j, _ in results)
    print(f"\nspoken: {right}/{len(results)} = {right / len(results):.1%} ({elapsed:.0f} s)")
    for step in STEPS:
        group = [j for _, j, _ in results if j.entry.step == step]
        if group:
            hits = sum(j.correct for j in group)
            print(f"  {step:<18} {hits:>3}/{len(group):<3} {hits / len(group):6.1%}")
    for speed in SPEEDS:
        group = [j for s, j, _ in results if s == speed]
        hits = sum(j.correct for j in group)
        print(f"  length x{speed:<11} {hits:>3}/{len(group):<3} {hits / len(group):6.1%}")
    false_yes = [
        (j, text)
        for _, j, text in results
        if j.understood.confirmation.value == "confirm" != j.entry.expect.confirmation.value
    ]
    print(f"  not-confirm or unclear understood as confirm: {len(false_yes)}")
    print("  misses:")
    for speed, judgement, text in results:
        if not judgement.correct:
            print(
                f"    [{judgement.entry.step} x{speed}] {judgement.entry.text!r} heard {text!r}: "
                f"{'; '.join(judgement.problems)}"
            )


if __name__ == "__main__":
    main()
