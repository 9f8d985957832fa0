"""The encoder window: every scripted caller line, clean and noisy, on the short window and on
Whisper's full 30 s one, with the words each gave and the time each took.

Run: .venv/bin/python -m benchmarks.bench_asr_window
"""

from __future__ import annotations

import os
import time

import numpy as np


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
    import django

    django.setup()
    from django.conf import settings

    from benchmarks import corpus
    from lab.scenarios.catalog import all_contracts
    from lab.speech import asr

    lines = sorted({line.say for c in all_contracts().values() for line in c.caller})
    asr.load_model()
    short_window = settings.LAB_ASR_WINDOW_MS
    print(f"load average at start: {os.getloadavg()[0]:.1f}; short window {short_window} ms")
    for variant in corpus.VARIANTS:
        timings: dict[str, list[float]] = {"full": [], "short": []}
        differ = fallbacks = 0
        for text, clip in corpus.build(lines, variant).items():
            results = {}
            for name, window in (("full", 0), ("short", short_window)):
                settings.LAB_ASR_WINDOW_MS = window
                started = time.perf_counter()
                transcript = asr.transcribe(clip.pcm)
                timings[name].append((time.perf_counter() - started) * 1000)
                results[name] = transcript
            settings.LAB_ASR_WINDOW_MS = short_window
            full, short = results["full"], results["short"]
            fallbacks += short.window_ms == 30000
            if short.text != full.text:
                differ += 1
                print(f"  {variant}: {text!r}: full {full.text!r}, short {short.text!r}")
        print(
            f"{variant}: {len(lines)} lines, words differ on {differ}, full window re-heard on "
            f"{fallbacks}; full p50 {np.percentile(timings['full'], 50):.0f} / p95 "
            f"{np.percentile(timings['full'], 95):.0f} ms, short p50 "
            f"{np.percentile(timings['short'], 50):.0f} / p95 "
            f"{np.percentile(timings['short'], 95):.0f} ms"
        )
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
