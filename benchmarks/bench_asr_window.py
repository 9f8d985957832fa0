"""The encoder window: every scripted caller line as the voice path hands it to recognition
(benchmarks/voice_segments.py: the bare clip, the early and final segments with their pre-roll,
the impaired lines over their phone line), on Whisper's full 30 s window and on the short one,
with the words each gave, how often the short one was heard again, and the time each took.

--held-out speaks lines no window rule was tuned on (HELD_OUT), clean and over both scenarios'
impaired phone lines.

Run: nice .venv/bin/python -m benchmarks.bench_asr_window [--window-ms 15000] [--held-out]
(--limit N: the first N segments only)
"""

from __future__ import annotations

import argparse
import os
import re
import time

import numpy as np

# Lines no window rule was tuned on (2026-12-02: written, and their results read only after the
# margin guard's floor was fixed): times, days, amounts, names, yes and no.
HELD_OUT = (
    "Can I come in Friday afternoon instead?",
    "Make it Monday at nine thirty, please.",
    "No, not Wednesday. Thursday.",
    "The order number is seven three eight one.",
    "I paid sixty five dollars for it.",
    "Refund twelve fifty to my card, please.",
    "My name is Priya Raman.",
    "This is Daniel O'Connor calling.",
    "Yes, that's right.",
    "No, that's wrong.",
    "Nope, cancel that.",
    "Sure, go ahead and book it.",
    "Is Tuesday at two o'clock free?",
    "Let's do Saturday morning around ten.",
    "Could you move it to next Thursday?",
    "Forty two dollars and ten cents.",
    "Yes please, Tuesday works.",
    "I'd rather have the morning slot on Tuesday.",
    "Uh, no. Make that a refund of thirty dollars.",
    "Okay, confirm it.",
)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window-ms", type=int, default=15_000)
    parser.add_argument("--held-out", action="store_true")
    parser.add_argument("--limit", type=int, default=None, help="the first N segments only")
    options = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
    import django

    django.setup()
    from django.conf import settings

    from benchmarks import voice_segments
    from lab.scenarios.catalog import all_contracts
    from lab.speech import asr
    from lab.speech.windowing import FULL_WINDOW_FRAMES, window_frames

    if options.held_out:
        contracts = all_contracts()
        phones = [None, contracts["lossy_correction"].line, contracts["noisy_confirmation"].line]
        found = [
            voice_segments.Segment("held-out", n, say, f"{kind}/{p}", pcm)
            for n, say in enumerate(HELD_OUT)
            for p, phone in enumerate(phones)
            for kind, pcm in voice_segments.segments(say, phone, 0)
            if p == 0 or "early" in kind
        ]
    else:
        found = voice_segments.scenario_segments()
    found = found[: options.limit]
    asr.load_model()
    print(f"load average at start: {os.getloadavg()[0]:.1f}; {len(found)} segments")
    timings: dict[str, list[float]] = {"full": [], "short": []}
    differ = reheard = 0
    for segment in found:
        results = {}
        for name, window in (("full", 0), ("short", options.window_ms)):
            settings.LAB_ASR_WINDOW_MS = window
            started = time.perf_counter()
            results[name] = asr.transcribe(segment.pcm)
            timings[name].append((time.perf_counter() - started) * 1000)
        full, short = results["full"], results["short"]
        fits = window_frames(audio_ms=short.audio_ms, window_ms=options.window_ms)
        fits_short = fits < FULL_WINDOW_FRAMES
        reheard += fits_short and short.window_ms == FULL_WINDOW_FRAMES * 10
        if words(short.text) != words(full.text):
            differ += 1
            print(f"  {segment.kind} {segment.say!r}: full {full.text!r}, short {short.text!r}")
    settings.LAB_ASR_WINDOW_MS = 0
    print(
        f"{options.window_ms} ms window: {len(found)} segments, words differ on {differ}, heard "
        f"again on the full window {reheard}; full p50 {np.percentile(timings['full'], 50):.0f}"
        f" / p95 {np.percentile(timings['full'], 95):.0f} ms, short p50 "
        f"{np.percentile(timings['short'], 50):.0f} / p95 "
        f"{np.percentile(timings['short'], 95):.0f} ms"
    )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
