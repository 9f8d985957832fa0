"""Which encoder window keeps the words: every spoken corpus the lab has, in two voices, clean
and noisy, on Whisper's 30 s window and on short ones with their guards (issue 28).

Corpora: the scenarios' caller lines, bench_asr_window's held-out lines, and a fixed sample of
the phrasebook (tests/language/phrasebook.py). espeak-ng is not installed on these machines, so
the second voice is piper again, slower (length scale 1.25) and 3 semitones lower. Noisy: pink
noise 15 dB under the speech over the whole segment. Each segment is what recognition gets at
the candidate: 200 ms of pre-roll, the speech, 200 ms of pause.

A line is *wrong* when the lab's understanding of what was heard differs from its understanding
of the text said (the phrasebook's own expectation where it has one): kind, confirmation,
action and arguments. Word accuracy per window is load-independent; the times are not.

Run: nice .venv/bin/python -m benchmarks.bench_asr_corpora [--windows 8000,10000] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import zip_longest
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tests.language.phrasebook import Entry

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")

VOICES = {"piper": (1.0, 0.0), "piper-slow-low": (1.25, -3.0)}
SNR_DB = 15.0
PRE_MS, PAUSE_MS = 200, 200
PHRASES = 24


@dataclass(frozen=True, slots=True)
class Line:
    corpus: str
    text: str
    judge: Entry | None  # the phrasebook entry, where the line has one


def lines() -> list[Line]:
    from benchmarks.bench_asr_window import HELD_OUT
    from benchmarks.corpus import caller_lines
    from lab.scenarios.catalog import all_contracts
    from tests.language.phrasebook import load

    scenario_lines = dict.fromkeys(caller_lines(sorted(all_contracts())))
    found = [Line("scenarios", t, None) for t in scenario_lines]
    found += [Line("held-out", t, None) for t in HELD_OUT]
    typed = [e for e in load() if e.form == "typed" and any(c.isalnum() for c in e.text)]
    found += [Line("phrasebook", e.text, e) for e in random.Random(28).sample(typed, PHRASES)]
    # Round robin over the corpora, so a run cut short has measured each of them.
    by_corpus = [
        [line for line in found if line.corpus == c] for c in dict.fromkeys(x.corpus for x in found)
    ]
    return [line for group in zip_longest(*by_corpus) for line in group if line is not None]


def voiced(text: str, voice: str) -> np.ndarray:
    from benchmarks.bench_understanding_spoken import said
    from lab.audio.frames import SAMPLE_RATE
    from lab.speech.resample import resample

    speed, semitones = VOICES[voice]
    audio = said(text, speed) / 32767
    if semitones:
        # Resampled up and played at the same rate: lower and slower, another speaker.
        up = round(SAMPLE_RATE * 2 ** (-semitones / 12))
        audio = resample(audio.astype(np.float32), SAMPLE_RATE, up)
    return audio.astype(np.float64)


def segment(speech: np.ndarray, noisy: bool, seed: int) -> bytes:
    from benchmarks.corpus import pink_noise

    pad = lambda ms: np.zeros(16 * ms)  # noqa: E731
    audio = np.concatenate([pad(PRE_MS), speech, pad(PAUSE_MS)])
    if noisy:
        loud = speech[np.abs(speech) > 0.01]
        rms = float(np.sqrt(np.mean(loud**2))) if loud.size else 0.1
        audio = audio + pink_noise(audio.size, seed) * rms * 10 ** (-SNR_DB / 20)
    return (np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes()


def meaning(line: Line, heard: str) -> tuple[object, ...]:
    from lab.language.understanding import Context, understand
    from lab.scripted.setup import calendar_week

    if line.judge is not None:
        from tests.language.phrasebook import judge

        return (not judge(line.judge, heard).problems,)
    got = understand(heard, Context(week=calendar_week()))
    return (got.kind, got.confirmation, got.action, tuple(sorted(got.args.items())))


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--windows", default="8000,10000,15000")
    parser.add_argument("--limit", type=int, default=None)
    options = parser.parse_args()
    import django

    django.setup()
    from lab.audio.frames import BYTES_PER_MS
    from lab.speech import asr
    from lab.speech.windowing import FULL_WINDOW_FRAMES, looks_looped, near_tie, window_frames

    windows = [int(w) for w in options.windows.split(",")]
    asr.load_model()
    asr._word_tokens()
    found = lines()[: options.limit]
    print(f"load average at start: {os.getloadavg()}; {len(found)} lines, {len(VOICES)} voices")
    wrong: dict[str, Counter[str]] = defaultdict(Counter)
    reheard: Counter[str] = Counter()
    times: dict[str, list[float]] = defaultdict(list)
    total: Counter[str] = Counter()
    for number, line in enumerate(found):
        if number and not number % 10:
            print(f"\n{number} lines done, load average {os.getloadavg()[0]:.1f}")
            table(windows, total, wrong, reheard, times)
        for voice in VOICES:
            speech = voiced(line.text, voice)
            for noisy in (False, True):
                pcm = segment(speech, noisy, number)
                audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768
                audio_ms = len(pcm) // BYTES_PER_MS
                key = f"{line.corpus}/{voice}/{'noisy' if noisy else 'clean'}"
                total[key] += 1
                want = meaning(line, line.text) if line.judge is None else (True,)
                started = time.perf_counter()
                full = asr.decode_full(audio)
                full_ms = (time.perf_counter() - started) * 1000
                times["30000"].append(full_ms)
                if meaning(line, full) != want:
                    wrong["30000"][key] += 1
                    print(f"  30 s wrong [{key}] {line.text!r} heard {full!r}")
                for window in windows:
                    frames = window_frames(audio_ms=audio_ms, window_ms=window)
                    if frames == FULL_WINDOW_FRAMES:
                        short, margins, short_ms = full, [9.0], full_ms
                    else:
                        started = time.perf_counter()
                        short, margins = asr.decode_short(audio, frames=frames, audio_ms=audio_ms)
                        short_ms = (time.perf_counter() - started) * 1000
                    looped = looks_looped(short, audio_ms=audio_ms)
                    for guard, suspect in (
                        ("loop", looped),
                        ("loop+tie", looped or near_tie(margins)),
                    ):
                        name = f"{window}/{guard}"
                        text = full if suspect else short
                        reheard[name] += suspect
                        times[name].append(short_ms + (full_ms if suspect else 0))
                        if meaning(line, text) != want:
                            wrong[name][key] += 1
                            print(f"  {name} wrong [{key}] {line.text!r} heard {text!r}")
    print(f"\nload average at end: {os.getloadavg()}")
    table(windows, total, wrong, reheard, times)


def table(
    windows: list[int],
    total: Counter[str],
    wrong: dict[str, Counter[str]],
    reheard: Counter[str],
    times: dict[str, list[float]],
) -> None:
    from benchmarks.voice_aims import words_aim

    keys = sorted(total)
    header = ["window/guard", "lines wrong", "heard again", "p50 / p95 ms", *keys]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    names = ["30000", *(f"{w}/{g}" for w in windows for g in ("loop", "loop+tie"))]
    for name in names:
        cells = [str(wrong[name][k]) for k in keys]
        ms = times[name]
        print(
            f"| {name} | {sum(wrong[name].values())} of {sum(total.values())} | {reheard[name]} "
            f"| {statistics.median(ms):.0f} / {np.percentile(ms, 95):.0f} | "
            + " | ".join(cells)
            + " |"
        )
    print("segments per column: " + ", ".join(f"{k} {total[k]}" for k in keys))
    for name in names[1:]:
        print(f"{name}: " + words_aim(wrong[name], wrong["30000"]).line(), flush=True)


if __name__ == "__main__":
    main()
